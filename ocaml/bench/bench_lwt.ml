(* bench_lwt [BINDS] [RUNS]: ns per bind of a bind loop (each bind waits on an
   Lwt.pause, so every one goes through Lwt_main's loop), median of RUNS, for three
   variants: untraced Lwt, Mtrace_lwt with no ring (off), Mtrace_lwt writing every
   event into a real 64-page ring (on; no reader, so the flight recorder overwrites),
   and the same into a ring whose clock is the TSC (on-tsc).  The variants alternate
   run by run, so a noisy machine weighs on all alike.  Prints the on/untraced ratio (goal <= 1.5) and
   the events written per traced bind.  Times are process CPU time.
   BENCH_LWT_ONLY=untraced|off|on|on-tsc runs one variant once (for callgrind or perf
   record: bench/README.md, "ocaml", has the instruction counts);
   BENCH_LWT_NO_CLOCK=1 gives the ring a constant clock (what the clock costs). *)
let binds = try int_of_string Sys.argv.(1) with _ -> 1_000_000
let runs = try int_of_string Sys.argv.(2) with _ -> 7

let rec plain i = if i = 0 then Lwt.return_unit else Lwt.bind (Lwt.pause ()) (fun () -> plain (i - 1))

let site = lazy (Mtrace_lwt.site "bench_lwt.ml:bind")

let rec traced i =
  if i = 0 then Lwt.return_unit
  else Mtrace_lwt.bind ~site:(Lazy.force site) (Lwt.pause ()) (fun () -> traced (i - 1))

(* process CPU time (user + system: each bind's trip through Lwt_main polls the
   kernel), not wall time: on a shared machine another process's turn on the CPU
   is not this one's cost *)
let cpu () =
  let t = Unix.times () in
  t.Unix.tms_utime +. t.Unix.tms_stime

let time f =
  let t0 = cpu () in
  Lwt_main.run (f binds);
  (cpu () -. t0) *. 1e9 /. float binds

let hdr = Cstruct.create Mtrace_ring.page_size
let data = Cstruct.create (Mtrace_ring.page_size * 64)
let ring = Mtrace_ring.init ~hdr ~data ()
let () = if Sys.getenv_opt "BENCH_LWT_NO_CLOCK" <> None then Mtrace_ring.set_clock ring (fun () -> 0)

(* the same, the header's clock the TSC (clock_tsc: Mtrace_ring.rdtsc per event) *)
let tsc_hdr = Cstruct.create Mtrace_ring.page_size
let tsc_data = Cstruct.create (Mtrace_ring.page_size * 64)
let tsc_ring = Mtrace_ring.init ~clock_id:Mtrace_ring.clock_tsc ~hdr:tsc_hdr ~data:tsc_data ()

let median a =
  let a = Array.copy a in
  Array.sort compare a;
  a.(Array.length a / 2)

let () =
  match Sys.getenv_opt "BENCH_LWT_ONLY" with
  | Some "untraced" ->
    ignore (time plain);
    exit 0
  | Some "off" ->
    ignore (time traced);
    exit 0
  | Some "on" ->
    Mtrace_lwt.set_ring (Some ring);
    ignore (time traced);
    exit 0
  | Some "on-tsc" ->
    Mtrace_lwt.set_ring (Some tsc_ring);
    ignore (time traced);
    exit 0
  | Some v -> failwith ("BENCH_LWT_ONLY: untraced, off, on or on-tsc, not " ^ v)
  | None -> ()

let () =
  let untraced = Array.make runs 0. and off = Array.make runs 0. and on = Array.make runs 0. in
  let tsc = Array.make runs 0. in
  for i = 0 to runs - 1 do
    untraced.(i) <- time plain;
    Mtrace_lwt.set_ring None;
    off.(i) <- time traced;
    Mtrace_lwt.set_ring (Some ring);
    on.(i) <- time traced;
    Mtrace_lwt.set_ring (Some tsc_ring);
    tsc.(i) <- time traced;
    Mtrace_lwt.set_ring None
  done;
  let untraced = median untraced and off = median off and on = median on and tsc = median tsc in
  Printf.printf
    "binds=%d runs=%d ns/bind (median, CPU time): untraced %.1f  ring-off %.1f  ring-on %.1f  ring-on-tsc %.1f\n\
     ratio on/untraced %.2f  on/off %.2f  on-tsc/untraced %.2f  (%.2f events/bind)\n"
    binds runs untraced off on tsc (on /. untraced) (on /. off) (tsc /. untraced)
    (float (Mtrace_ring.events ring) /. float (runs * binds))
