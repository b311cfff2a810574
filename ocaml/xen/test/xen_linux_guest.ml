(* The guest of tests/ocaml/test-xen-e2e.sh: Mtrace_xen.Make over the Linux instance
   (Mtrace_xen_linux.Session: xenif, here the simulated Xen), run as a domain under
   mtrace-simxen with the real mtraced.  Announces RINGS rings, waits for the test's
   go-ahead (it writes data/e2e-go in our xenstore home once it has read the
   announcement) and for the reader to attach to all rings, writes ROUNDS known events
   on each (the script below, which
   test-xen-e2e.sh regenerates to compare with mtrace-cat), waits for the reader to catch
   up, prints a JSON summary, closes the session (withdrawal), says "closed" and stays
   alive HOLD_S seconds so that the test can look at xenstore meanwhile.
   Usage: xen_linux_guest.exe ROUNDS RINGS PAGES WAIT_S LINGER_S HOLD_S *)

module R = Mtrace_ring
module S = Mtrace_xen_linux.Session

(* Round i of ring r; test-xen-e2e.sh's expect() is the same table. *)
let script w r i =
  let th = (r * 1_000_000) + i in
  match i mod 6 with
  | 0 -> R.creates w ~thread:th ~child:(th + 1) ~ty:R.Task
  | 1 -> R.read w ~thread:th ~source:(th - 1)
  | 2 -> R.fails w ~thread:th ~resolvee:(th + 1) (Printf.sprintf "E%d.%d" r i)
  | 3 -> R.label w ~thread:th (Printf.sprintf "l%d" (i mod 7))
  | 4 -> R.counter w ~thread:th "depth" (-i)
  | _ -> R.evtchn_send w ~thread:th ~port:(i land 7)

let () =
  let arg i = int_of_string Sys.argv.(i) in
  if Array.length Sys.argv <> 7 then begin
    prerr_endline "usage: xen_linux_guest.exe ROUNDS RINGS PAGES WAIT_S LINGER_S HOLD_S";
    exit 2
  end;
  let rounds = arg 1 and rings = arg 2 and pages = arg 3 in
  let wait_s = float (arg 4) and linger_s = float (arg 5) and hold_s = float (arg 6) in
  let t = Lwt_main.run (S.create ~rings ~pages ()) in
  Printf.printf "{\"backend\": \"%s\", \"domid\": %d, \"port\": %d}\n%!"
    (Mtrace_xen_linux.backend ()) (S.domid t) (S.port t);
  let ws = List.init rings (S.ring t) in
  let until limit cond =
    let t0 = Unix.gettimeofday () in
    while (not (cond ())) && Unix.gettimeofday () -. t0 < limit do
      Unix.sleepf 0.01
    done;
    cond ()
  in
  let xs = Lwt_main.run (Mtrace_xen_linux.Xs.make ()) in
  let go () =
    Lwt_main.run
      Mtrace_xen_linux.Xs.(
        immediate xs (fun h ->
            Lwt.catch
              (fun () -> Lwt.map (fun _ -> true) (read h "data/e2e-go"))
              (function Enoent _ -> Lwt.return false | e -> Lwt.fail e)))
  in
  let went = until wait_s go in
  (* mtraced writes req_event when it attaches a ring: then no event is missed *)
  let attached = until wait_s (fun () -> List.for_all (fun w -> R.req_event w <> 0) ws) in
  for i = 1 to rounds do
    List.iteri (fun r w -> script w r i) ws
  done;
  let caught_up = until linger_s (fun () -> List.for_all (fun w -> R.reader_pos w >= R.head w) ws) in
  let sum f = List.fold_left (fun a w -> a + f w) 0 ws in
  Printf.printf
    "{\"go\": %b, \"attached\": %b, \"caught_up\": %b, \"written\": %d, \"overwritten\": %d, \"notifies\": %d, \
     \"notify_failures\": %d}\n\
     %!"
    went attached caught_up (sum R.events) (sum R.overwritten) (sum R.notifies) (S.notify_failures t);
  Lwt_main.run (S.close t);
  print_endline "closed";
  Unix.sleepf hold_s
