(* An Lwt guest for tests/ocaml/test-lwt.sh, built with ppx_mtrace: it opens a session
   through Mtrace_guest, traces with Mtrace_lwt, and runs BATCHES batches of 100 small
   Lwt computations (each a few threads from let%lwt, >>=, >|=, Lwt.wait, Lwt.catch and Lwt.async) and
   once each of Lwt.pick/choose/try_bind/task, Lwt_mvar, Lwt_condition, Lwt_mutex, Lwt_stream and Lwt_unix.sleep; between
   batches it waits for mtraced to read the ring down, so nothing is overwritten.
   It prints what it wrote as JSON ({"events": total, "threads": n, "overwritten": n,
   "per_op": {...}}).  The test checks the creation sites against this source.
   Usage: lwt_threads.exe BATCHES PAGES WAIT_S LINGER_S [BUDGET_S]: with BUDGET_S, no
   batch is started once that many seconds have passed since the first (a slow host, as
   the real-Xen suite's TCG, runs fewer; "batches" in the JSON says how many ran). *)

module R = Mtrace_ring

let unit_work i =
  let p, u = Lwt.wait () in
  let a = p >>= fun v -> Lwt.return (v + 1) in
  let m = a >|= fun v -> v * 2 in
  Lwt.wakeup u i;
  let%lwt x = m and y = Lwt.return i in
  let%lwt z = Lwt.return (x + y) in
  if z mod 7 = 0 then Lwt.fail (Failure (string_of_int z)) else Lwt.return z

let mvar = Lwt_mvar.create_empty ()
let cond = Lwt_condition.create ()
let mutex = Lwt_mutex.create ()

(* the other primitives, once a batch; the sleep makes Lwt_main iterate (switches) *)
let primitives b =
  let got = Lwt_mvar.take mvar in
  let put = Lwt_mvar.put mvar b in
  let woken = Lwt_condition.wait cond in
  Lwt_condition.signal cond ();
  let locked = Lwt_mutex.with_lock mutex (fun () -> Lwt_unix.sleep 0.) in
  let s = Lwt_stream.of_list [ b ] in
  let%lwt first = Lwt_stream.next s in
  let%lwt () = Lwt.join [ put; woken; locked ] in
  let%lwt v = got in
  let%lwt w = Lwt.pick [ fst (Lwt.task ()); Lwt.return 1 ] in
  let%lwt c = Lwt.choose [ Lwt.return 2 ] in
  let%lwt t = Lwt.try_bind (fun () -> Lwt.return b) Lwt.return (fun _ -> Lwt.return 0) in
  Mtrace_lwt.label (Printf.sprintf "batch-%d" (b mod 4));
  Mtrace_lwt.counter "batch" b;
  Mtrace_lwt.notify ~port:1;
  Lwt.return (first + v + w + c + t)

let batch b =
  let done_, wake = Lwt.wait () in
  Lwt.async (fun () -> done_ >|= ignore);
  let ts = List.init 100 (fun i -> Lwt.catch (fun () -> unit_work ((b * 100) + i)) (fun _ -> Lwt.return 0)) in
  (* untraced: Lwt.all is in the vocabulary but Mtrace_lwt has no all yet *)
  let%lwt l = (Lwt.all ts [@mtrace.untraced]) in
  let%lwt p = primitives b in
  Lwt.wakeup wake ();
  Lwt.return (p + List.fold_left ( + ) 0 l)

let () =
  let arg i d = if Array.length Sys.argv > i then Sys.argv.(i) else d in
  let batches = int_of_string (arg 1 "100") and pages = int_of_string (arg 2 "64") in
  let wait_s = float_of_string (arg 3 "10") and linger_s = float_of_string (arg 4 "10") in
  let budget_s = float_of_string (arg 5 "inf") in
  (* the domain stays until this file exists: mtraced's statistics list a domain's sites
     only while it is there, and a reader that samples them every 250 ms must see one *)
  let release = arg 6 "" in
  let g = Mtrace_guest.create ~rings:1 ~pages () in
  let r = Mtrace_guest.ring g 0 in
  let until limit cond =
    let t0 = Unix.gettimeofday () in
    while (not (cond ())) && Unix.gettimeofday () -. t0 < limit do
      Unix.sleepf 0.002
    done
  in
  until wait_s (fun () -> R.req_event r <> 0 || R.reader_pos r <> 0);
  Mtrace_lwt.enable r;
  Mtrace_lwt_unix.install_switch_hooks ();
  let sum = ref 0 and ran = ref 0 in
  let t0 = Unix.gettimeofday () in
  while !ran < batches && (!ran = 0 || Unix.gettimeofday () -. t0 < budget_s) do
    incr ran;
    sum := !sum + Lwt_main.run (batch !ran);
    (* a batch writes well under a quarter of the ring: keep the reader within half *)
    until linger_s (fun () -> R.head r - R.reader_pos r < R.data_size r / 2)
  done;
  Mtrace_lwt.disable ();
  (* off, the same program writes nothing *)
  let before = R.events r in
  ignore (Lwt_main.run (batch 0));
  if R.events r <> before then begin
    prerr_endline "lwt_threads: events written with tracing off";
    exit 1
  end;
  until linger_s (fun () -> R.reader_pos r >= R.head r);
  let ops = ("ring_start", 1) :: Mtrace_lwt.stats () (* ring_start: the C library's *) in
  let total = List.fold_left (fun a (_, v) -> a + v) 0 ops in
  Printf.printf
    "{\"events\": %d, \"written\": %d, \"overwritten\": %d, \"threads\": %d, \"batches\": %d, \"seconds\": %.1f, \"sum\": %d, \"per_op\": {%s}}\n%!"
    total (R.events r) (R.overwritten r) (List.assoc "creates" ops) !ran (Unix.gettimeofday () -. t0) !sum
    (String.concat ", " (List.map (fun (k, v) -> Printf.sprintf "\"%s\": %d" k v) ops));
  if release <> "" then until 120. (fun () -> Sys.file_exists release);
  Mtrace_guest.close g
