(* bench_mix [BATCHES] [RUNS]: a mixed Lwt workload (the shape of test/lwt_threads.ml's
   batches: wait/wakeup, binds, maps, both, catch with failures, all, async, and a
   Lwt_list.map_p, pick and pause a batch) written once over a module of Lwt's
   functions, run untraced (Lwt's own) and traced (Mtrace_lwt's, each call with its
   site, into a 64-page ring without reader), alternating; prints ns per batch and the
   ratio (median of RUNS, process CPU time).
   BENCH_MIX_ONLY=untraced|on runs one variant once (for callgrind or perf record). *)

module type V = sig
  val wait : unit -> 'a Lwt.t * 'a Lwt.u
  val bind : 'a Lwt.t -> ('a -> 'b Lwt.t) -> 'b Lwt.t
  val map : ('a -> 'b) -> 'a Lwt.t -> 'b Lwt.t
  val both : 'a Lwt.t -> 'b Lwt.t -> ('a * 'b) Lwt.t
  val catch : (unit -> 'a Lwt.t) -> (exn -> 'a Lwt.t) -> 'a Lwt.t
  val all : 'a Lwt.t list -> 'a list Lwt.t
  val async : (unit -> unit Lwt.t) -> unit
  val pick : 'a Lwt.t list -> 'a Lwt.t
  val pause : unit -> unit Lwt.t
  val map_p : ('a -> 'b Lwt.t) -> 'a list -> 'b list Lwt.t
end

module Work (M : V) = struct
  let unit_work i =
    let p, u = M.wait () in
    let a = M.bind p (fun v -> Lwt.return (v + 1)) in
    let m = M.map (fun v -> v * 2) a in
    Lwt.wakeup u i;
    M.bind (M.both m (Lwt.return i)) (fun (x, y) ->
        M.bind (Lwt.return (x + y)) (fun z ->
            if z mod 7 = 0 then Lwt.fail (Failure "seven") else Lwt.return z))

  let batch b =
    let done_, wake = M.wait () in
    M.async (fun () -> M.map ignore done_);
    let ts = List.init 100 (fun i -> M.catch (fun () -> unit_work ((b * 100) + i)) (fun _ -> Lwt.return 0)) in
    M.bind (M.all ts) (fun l ->
        M.bind (M.map_p (fun x -> M.map (fun () -> x) (M.pause ())) [ 1; 2; 3 ]) (fun l' ->
            M.bind (M.pick [ M.map (fun () -> 1) (M.pause ()); fst (Lwt.task ()) ]) (fun w ->
                Lwt.wakeup wake ();
                Lwt.return (w + List.fold_left ( + ) 0 (l @ l')))))
end

module Plain = Work (struct
  let wait = Lwt.wait
  let bind = Lwt.bind
  let map = Lwt.map
  let both = Lwt.both
  let catch = Lwt.catch
  let all = Lwt.all
  let async = Lwt.async
  let pick = Lwt.pick
  let pause = Lwt.pause
  let map_p = Lwt_list.map_p
end)

module L = Mtrace_lwt

let s = Array.init 10 (fun i -> L.site (Printf.sprintf "bench_mix.ml:%d" i))

module Traced = Work (struct
  let wait () = L.wait ~site:s.(0) ()
  let bind e f = L.bind ~site:s.(1) e f
  let map f e = L.map ~site:s.(2) f e
  let both a b = L.both ~site:s.(3) a b
  let catch f h = L.catch ~site:s.(4) f h
  let all l = L.all ~site:s.(5) l
  let async f = L.async ~site:s.(6) f
  let pick l = L.pick ~site:s.(7) l
  let pause () = L.pause ~site:s.(8) ()
  let map_p f l = L.List.map_p ~site:s.(9) f l
end)

let batches = try int_of_string Sys.argv.(1) with _ -> 2000
let runs = try int_of_string Sys.argv.(2) with _ -> 5

let cpu () =
  let t = Unix.times () in
  t.Unix.tms_utime +. t.Unix.tms_stime

let time batch =
  let t0 = cpu () in
  for b = 1 to batches do
    ignore (Lwt_main.run (batch b))
  done;
  (cpu () -. t0) *. 1e9 /. float batches

let hdr = Cstruct.create Mtrace_ring.page_size
let data = Cstruct.create (Mtrace_ring.page_size * 64)
let ring = Mtrace_ring.init ~hdr ~data ()

let median a =
  let a = Array.copy a in
  Array.sort compare a;
  a.(Array.length a / 2)

let () =
  match Sys.getenv_opt "BENCH_MIX_ONLY" with
  | Some "untraced" ->
    ignore (time Plain.batch);
    exit 0
  | Some "on" ->
    L.enable ring;
    ignore (time Traced.batch);
    exit 0
  | _ -> ()

let () =
  let untraced = Array.make runs 0. and on = Array.make runs 0. in
  for i = 0 to runs - 1 do
    untraced.(i) <- time Plain.batch;
    L.enable ring;
    on.(i) <- time Traced.batch;
    L.disable ()
  done;
  let u = median untraced and o = median on in
  Printf.printf
    "batches=%d runs=%d ns/batch (median, CPU time): untraced %.0f  on %.0f  ratio %.2f  \
     (%.0f events/batch)\n"
    batches runs u o (o /. u)
    (float (Mtrace_ring.events ring) /. float (runs * batches))
