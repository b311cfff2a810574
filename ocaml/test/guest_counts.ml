(* An OCaml guest for the end-to-end test (tests/ocaml/test-e2e.sh): opens a session
   through Mtrace_guest (the C library's grants, event channel and xenstore), writes N
   rounds of every op with Mtrace_ring, counting what it wrote, and prints the counts
   as JSON ({"events": total, "per_op": {...}}) for the test to compare with mtrace-cat.
   Usage: guest_counts.exe ROUNDS PAGES WAIT_S LINGER_S *)

module R = Mtrace_ring

let () =
  let arg i d = if Array.length Sys.argv > i then Sys.argv.(i) else d in
  let rounds = int_of_string (arg 1 "1000") and pages = int_of_string (arg 2 "64") in
  let wait_s = float_of_string (arg 3 "10") and linger_s = float_of_string (arg 4 "10") in
  let g = Mtrace_guest.create ~rings:1 ~pages () in
  let r = Mtrace_guest.ring g 0 in
  let per_op = Hashtbl.create 16 in
  let count op = Hashtbl.replace per_op op (1 + try Hashtbl.find per_op op with Not_found -> 0) in
  count "ring_start" (* written by the C library at open *);
  let until limit cond =
    let t0 = Unix.gettimeofday () in
    while (not (cond ())) && Unix.gettimeofday () -. t0 < limit do
      Unix.sleepf 0.01
    done
  in
  until wait_s (fun () -> R.req_event r <> 0 || R.reader_pos r <> 0);
  R.site_name r ~site:1 "guest_counts.ml:30 main";
  count "site_name";
  for i = 1 to rounds do
    let me = i and child = 1_000_000 + i in
    R.switch r ~thread:me; count "switch";
    R.creates r ~thread:me ~child ~ty:R.Bind; count "creates";
    R.creates_named r ~thread:me ~child:(child + 1_000_000) ~ty:R.Task ~site:1;
    count "creates"; count "site";
    R.read r ~thread:me ~source:child; count "read";
    R.try_read r ~thread:me ~source:child; count "try_read";
    R.becomes r ~thread:child ~other:me; count "becomes";
    R.signal r ~thread:me ~source:child; count "signal";
    R.evtchn_send r ~thread:me ~port:(i land 7); count "evtchn_send";
    R.evtchn_recv r ~thread:me ~port:(i land 7); count "evtchn_recv";
    if i mod 10 = 0 then begin
      R.label r ~thread:child (Printf.sprintf "ocaml-%d" (i mod 3)); count "label";
      R.increase r ~thread:me "bytes" i; count "increase";
      R.counter r ~thread:me "depth" (-i); count "counter";
      R.fails r ~thread:me ~resolvee:child "Not_found"; count "fails"
    end
    else begin
      R.fulfills r ~thread:me ~resolvee:child; count "fulfills"
    end;
    R.switch r ~thread:R.thread_none; count "switch"
  done;
  until linger_s (fun () -> R.reader_pos r >= R.head r);
  let ops = Hashtbl.fold (fun k v acc -> (k, v) :: acc) per_op [] |> List.sort compare in
  let total = List.fold_left (fun a (_, v) -> a + v) 0 ops in
  Printf.printf "{\"events\": %d, \"written\": %d, \"overwritten\": %d, \"per_op\": {%s}}\n%!" total
    (R.events r) (R.overwritten r)
    (String.concat ", " (List.map (fun (k, v) -> Printf.sprintf "\"%s\": %d" k v) ops));
  Mtrace_guest.close g
