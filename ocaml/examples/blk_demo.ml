(* blk_demo: the 2014 MirageOS block-read test (seed-mirage-tracing-2014.txt) as an Lwt
   program traced into mtrace: a "Process data" loop reads sector after sector through
   a block front end (blkfront.read) whose responses a polling thread (blkfront.poll)
   hands back; the back end (blkback, dom0's half in a real guest, here a thread of the
   same program over a simulated disk) serves the requests.  The two halves notify each
   other as over event channels: a request is a send on port 1 that blkback receives,
   a response a send on port 2 that blkfront.poll receives.  Every Lwt form below goes
   through ppx_mtrace, so each thread's creation site is its line in this file.

   Usage: blk_demo.exe [READS [PAGES [LATENCY_S]]]: READS sectors read (0, the default:
   until stopped), a ring of PAGES data pages (default 64), LATENCY_S of simulated disk
   time per request (default 0.01).  At the end it prints what it wrote as JSON
   ({"events": n, "threads": n, "reads": n, "per_op": {...}}). *)

module R = Mtrace_ring

let port_request = 1 (* blkfront -> blkback *)
let port_response = 2 (* blkback -> blkfront *)

(* the shared ring of the simulated device, and an event channel each way *)
let requests : (int * int) Queue.t = Queue.create () (* id, sector *)
let responses : (int * string) Queue.t = Queue.create () (* id, data *)
let to_back = Lwt_condition.create ()
let to_front = Lwt_condition.create ()

let send port chan =
  Mtrace_lwt.notify ~port;
  Lwt_condition.signal chan ()

(* block until the other side has put work on the ring *)
let rec await port chan ready =
  if ready () then Lwt.return ()
  else
    let%lwt () = Lwt_condition.wait chan in
    Mtrace_lwt.notified ~port;
    await port chan ready

(* Each loop below runs one iteration per thread: an iteration starts the next
   (Lwt.async) and resolves, so that a program running for hours leaves no chain of
   pending threads behind (a tail-recursive bind would keep every iteration pending,
   BECOME the next, until the loop ends). *)

(* the back end: one request at a time, each after the disk's latency *)
let rec blkback latency served =
  Lwt.async (fun () ->
      let%lwt () = await port_request to_back (fun () -> not (Queue.is_empty requests)) in
      Mtrace_lwt.label "blkback";
      let id, sector = Queue.pop requests in
      let%lwt () = Lwt_unix.sleep latency in
      Queue.push (id, Printf.sprintf "sector %d" sector) responses;
      Mtrace_lwt.counter "blkback.served" (served + 1);
      send port_response to_front;
      blkback latency (served + 1);
      Lwt.return ())

(* the front end: reads wait on a promise that the polling thread resolves *)
let pending : (int, string Lwt.u) Hashtbl.t = Hashtbl.create 16
let next_id = ref 0

let rec poll () =
  Lwt.async (fun () ->
      let%lwt () = await port_response to_front (fun () -> not (Queue.is_empty responses)) in
      Mtrace_lwt.label "blkfront.poll";
      Queue.iter
        (fun (id, data) ->
          match Hashtbl.find_opt pending id with
          | Some u ->
            Hashtbl.remove pending id;
            Lwt.wakeup u data
          | None -> ())
        responses;
      Queue.clear responses;
      poll ();
      Lwt.return ())

let read sector =
  incr next_id;
  let id = !next_id in
  let reply, u = Lwt.wait () in
  Hashtbl.replace pending id u;
  Queue.push (id, sector) requests;
  send port_request to_back;
  let%lwt data = reply in
  Mtrace_lwt.label "blkfront.read";
  Lwt.return data

let bytes = ref 0

(* the test's loop: LEFT more sectors (negative: until stopped), then [finished] *)
let rec process_data sector left finished =
  if left = 0 then Lwt.wakeup finished ()
  else
    Lwt.async (fun () ->
        let%lwt data = read sector in
        Mtrace_lwt.label "Process data";
        Mtrace_lwt.counter "sectors read" (sector + 1);
        bytes := !bytes + String.length data;
        process_data (sector + 1) (left - 1) finished;
        Lwt.return ())

let () =
  let arg i d = if Array.length Sys.argv > i then Sys.argv.(i) else d in
  let reads = int_of_string (arg 1 "0") and pages = int_of_string (arg 2 "64") in
  let latency = float_of_string (arg 3 "0.01") in
  let g = Mtrace_guest.create ~rings:1 ~pages () in
  let r = Mtrace_guest.ring g 0 in
  let until limit cond =
    let t0 = Unix.gettimeofday () in
    while (not (cond ())) && Unix.gettimeofday () -. t0 < limit do
      Unix.sleepf 0.002
    done
  in
  (* mtraced attaches within moments: wait for it so the first reads are seen *)
  until 10. (fun () -> R.req_event r <> 0 || R.reader_pos r <> 0);
  Mtrace_lwt.enable r;
  Mtrace_lwt_unix.install_switch_hooks ();
  blkback latency 0;
  poll ();
  let finished, wake = Lwt.wait () in
  process_data 0 (if reads = 0 then -1 else reads) wake;
  Lwt_main.run finished;
  Mtrace_lwt.disable ();
  until 10. (fun () -> R.reader_pos r >= R.head r);
  let ops = ("ring_start", 1) :: Mtrace_lwt.stats () (* ring_start: the C library's *) in
  let total = List.fold_left (fun a (_, v) -> a + v) 0 ops in
  Printf.printf "{\"events\": %d, \"threads\": %d, \"reads\": %d, \"bytes\": %d, \"per_op\": {%s}}\n%!" total
    (List.assoc "creates" ops) reads !bytes
    (String.concat ", " (List.map (fun (k, v) -> Printf.sprintf "\"%s\": %d" k v) ops));
  Mtrace_guest.close g
