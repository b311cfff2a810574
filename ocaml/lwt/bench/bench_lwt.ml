(* bench_lwt [BINDS] [RUNS]: ns per bind, median of RUNS, for three variants; prints
   the traced-on / untraced ratio (goal <= 1.5).  Figures only on a quiet machine. *)
let binds = try int_of_string Sys.argv.(1) with _ -> 1_000_000
let runs = try int_of_string Sys.argv.(2) with _ -> 7

let rec plain i = if i = 0 then Lwt.return_unit else Lwt.bind (Lwt.pause ()) (fun () -> plain (i - 1))

let site = lazy (Mtrace_lwt.site "bench_lwt.ml:bind")

let rec traced i =
  if i = 0 then Lwt.return_unit
  else Mtrace_lwt.bind ~site:(Lazy.force site) (Lwt.pause ()) (fun () -> traced (i - 1))

let time f =
  let t0 = Mtrace_ring.monotonic_ns () in
  Lwt_main.run (f binds);
  float (Mtrace_ring.monotonic_ns () - t0) /. float binds

let median f =
  let a = Array.init runs (fun _ -> time f) in
  Array.sort compare a;
  a.(runs / 2)

let () =
  let untraced = median plain in
  Mtrace_lwt.set_ring None;
  let off = median traced in
  let hdr = Cstruct.create Mtrace_ring.page_size in
  let data = Cstruct.create (Mtrace_ring.page_size * 64) in
  Mtrace_lwt.set_ring (Some (Mtrace_ring.init ~hdr ~data ()));
  let on = median traced in
  Printf.printf "binds=%d runs=%d ns/bind: untraced %.1f  ring-off %.1f  ring-on %.1f  ratio on/untraced %.2f\n"
    binds runs untraced off on (on /. untraced)
