(* The Lwt forms ppx_mtrace rewrites, each in the shapes a program writes it, built with
   dune's dev-profile warnings as errors (./dune) under module-level opens of Lwt.Infix
   and Lwt.Syntax whose names are all rewritten: the build shows the rewritten program
   draws no warning, the run that it computes what the source says (tracing off:
   Mtrace_lwt's forms then are Lwt's).  Prints "forms: N checks" and exits 1 on a
   difference. *)
open Lwt.Infix
open Lwt.Syntax

let checks = ref 0
let fails = ref 0

let check name got want =
  incr checks;
  if got <> want then (
    incr fails;
    Printf.printf "%s: got %s, want %s\n" name got want)

let int name got want = check name (string_of_int got) (string_of_int want)
let run = Lwt_main.run
let raises p = match run p with _ -> "no exception" | exception e -> Printexc.to_string e

let operators () =
  int ">>=" (run (Lwt.return 1 >>= fun x -> Lwt.return (x + 1))) 2;
  int ">|=" (run (Lwt.return 1 >|= succ)) 2;
  int "=<<" (run ((fun x -> Lwt.return (x * 3)) =<< Lwt.return 2)) 6;
  int "=|<" (run (succ =|< Lwt.return 2)) 3;
  let r = ref 0 in
  run ((r := !r + 1; Lwt.return_unit) <&> (r := !r + 10; Lwt.return_unit));
  int "<&>" !r 11;
  int "<?>" (run (Lwt.return 4 <?> fst (Lwt.wait ()))) 4;
  int "chain" (run (Lwt.return 1 >>= (fun x -> Lwt.return (x * 10)) >|= succ >>= fun y -> Lwt.return (y - 1))) 10

let letops () =
  int "let*" (run (let* x = Lwt.return 2 in let* y = Lwt.return 3 in Lwt.return (x * y))) 6;
  int "let+" (run (let+ x = Lwt.return 2 in x + 5)) 7;
  int "let open Lwt.Syntax" (run (let open Lwt.Syntax in let* x = Lwt.return 1 in Lwt.return (x + 1))) 2

let sum a b = let%lwt x = a and y = b in Lwt.return (x + y)
let classify p = match%lwt p with 0 -> Lwt.return "zero" | exception Not_found -> Lwt.return "nf" | _ -> Lwt.return "other"
let safe f = try%lwt f () with Not_found -> Lwt.return (-1)

let lwt_forms () =
  int "let%lwt and" (run (sum (Lwt.return 1) (Lwt.return 2))) 3;
  check "match%lwt" (run (classify (Lwt.return 0))) "zero";
  check "match%lwt exception" (run (classify (Lwt.fail Not_found))) "nf";
  check "match%lwt other" (run (classify (Lwt.return 5))) "other";
  int "try%lwt" (run (safe (fun () -> raise Not_found))) (-1);
  int "try%lwt ok" (run (safe (fun () -> Lwt.return 3))) 3;
  check "try%lwt reraise" (raises (safe (fun () -> Lwt.fail Exit))) "Stdlib.Exit";
  int "if%lwt" (run (if%lwt Lwt.return false then Lwt.return 1 else Lwt.return 2)) 2;
  let order = ref [] in
  let note n = order := n :: !order; Lwt.return_unit in
  run (note 1 ;%lwt note 2);
  check ";%lwt" (String.concat "," (List.rev_map string_of_int !order)) "1,2";
  let acc = ref 0 in
  run (for%lwt i = 1 to 4 do acc := !acc + i; Lwt.return_unit done);
  int "for%lwt to" !acc 10;
  let seen = ref [] in
  run (for%lwt i = 3 downto 1 do seen := i :: !seen; Lwt.return_unit done);
  check "for%lwt downto" (String.concat "," (List.rev_map string_of_int !seen)) "3,2,1";
  let n = ref 0 in
  run (while%lwt !n < 5 do incr n; Lwt.return_unit done);
  int "while%lwt" !n 5;
  run (assert%lwt true);
  check "assert%lwt" (match run (assert%lwt false) with () -> "()" | exception Assert_failure _ -> "Assert_failure") "Assert_failure"

let functions () =
  let p, u = Lwt.wait () in
  Lwt.wakeup u 5;
  int "Lwt.wait" (run p) 5;
  let p, u = Lwt.task () in
  Lwt.wakeup u 6;
  int "Lwt.task" (run p) 6;
  int "Lwt.bind" (run (Lwt.bind (Lwt.return 2) (fun x -> Lwt.return (x + 1)))) 3;
  int "Lwt.map" (run (Lwt.map succ (Lwt.return 2))) 3;
  int "Lwt.catch" (run (Lwt.catch (fun () -> Lwt.fail Exit) (fun _ -> Lwt.return 9))) 9;
  int "Lwt.try_bind" (run (Lwt.try_bind (fun () -> Lwt.return 1) (fun x -> Lwt.return (x + 1)) (fun _ -> Lwt.return 0))) 2;
  int "Lwt.pick" (run (Lwt.pick [ Lwt.return 1; fst (Lwt.wait ()) ])) 1;
  int "Lwt.choose" (run (Lwt.choose [ fst (Lwt.wait ()); Lwt.return 2 ])) 2;
  let r = ref 0 in
  run (Lwt.join [ (incr r; Lwt.return_unit); (incr r; Lwt.return_unit) ]);
  int "Lwt.join" !r 2;
  let mv = Lwt_mvar.create_empty () in
  let got = Lwt_mvar.take mv in
  run (Lwt_mvar.put mv 7);
  int "Lwt_mvar" (run got) 7;
  let c = Lwt_condition.create () in
  let w = Lwt_condition.wait c in
  Lwt_condition.signal c 3;
  int "Lwt_condition.signal" (run w) 3;
  let w = Lwt_condition.wait c in
  Lwt_condition.broadcast c 4;
  int "Lwt_condition.broadcast" (run w) 4;
  let mx = Lwt_mutex.create () in
  run (Lwt_mutex.lock mx);
  (* the wait unlocks the mutex, and locks it again before it returns *)
  let w = Lwt_condition.wait ~mutex:mx c in
  Lwt_condition.signal c 8;
  int "Lwt_condition.wait ~mutex" (run w) 8;
  Lwt_mutex.unlock mx;
  int "Lwt_mutex.with_lock" (run (Lwt_mutex.with_lock mx (fun () -> Lwt.return 4))) 4;
  let s = Lwt_stream.of_list [ 1; 2 ] in
  int "Lwt_stream.next" (run (Lwt_stream.next s)) 1;
  check "Lwt_stream.get" (match run (Lwt_stream.get s) with Some x -> string_of_int x | None -> "None") "2";
  run (Lwt_unix.sleep 0.001)

(* traced functions as values: as polymorphic as Lwt's, usable at several types *)
let my_bind = Lwt.bind
let ( >>=! ) = Lwt.( >>= )
let cwait = Lwt_condition.wait

let shapes () =
  int "let-bound Lwt.bind, int" (run (my_bind (Lwt.return 1) (fun x -> Lwt.return (x + 1)))) 2;
  check "let-bound Lwt.bind, string" (run (my_bind (Lwt.return "a") (fun x -> Lwt.return (x ^ "b")))) "ab";
  check "let-bound ( >>= )" (run (Lwt.return 1 >>=! fun x -> Lwt.return (string_of_int x))) "1";
  let c = Lwt_condition.create () and mx = Lwt_mutex.create () in
  run (Lwt_mutex.lock mx);
  let w = cwait ~mutex:mx c in
  Lwt_condition.signal c "s";
  check "let-bound Lwt_condition.wait ~mutex" (run w) "s";
  Lwt_mutex.unlock mx;
  let hits = ref 0 in
  let hit () = incr hits; Lwt.return_unit in
  List.iter Lwt.async [ hit; hit ];
  (Lwt.async @@ fun () -> hit ());
  int "bare Lwt.async, @@" !hits 3;
  int "|>" (run (Lwt.return 2 |> Lwt.map succ)) 3;
  int "@@" (run (Lwt.map succ @@ Lwt.return 2)) 3;
  int "Lwt.( >>= )" (run (Lwt.( >>= ) (Lwt.return 2) (fun x -> Lwt.return (x * 2)))) 4;
  int "Lwt.Infix.( >|= )" (run (Lwt.Infix.( >|= ) (Lwt.return 2) succ)) 3;
  int "( >>= )" (run (( >>= ) (Lwt.return 2) Lwt.return)) 2;
  let m = ( >|= ) (Lwt.return 2) in
  int "( >|= ) p" (run (m succ)) 3;
  let flip = ( =<< ) in
  int "( =<< )" (run (flip (fun x -> Lwt.return (x + 1)) (Lwt.return 1))) 2;
  let both = ( <&> ) in
  run (both Lwt.return_unit Lwt.return_unit);
  let b = Lwt.bind in
  int "bare Lwt.bind" (run (b (Lwt.return 1) (fun x -> Lwt.return (x + 1)))) 2;
  int "partial Lwt.map" (run (List.fold_left (fun acc f -> f acc) (Lwt.return 1) [ Lwt.map succ; Lwt.map (( * ) 3) ])) 6;
  int "Lwt.Infix.( )" (run Lwt.Infix.(Lwt.return 1 >>= fun x -> Lwt.return x >|= succ)) 2;
  int "Lwt.( )" (run Lwt.(join [ return_unit; return_unit ] >|= fun () -> 5)) 5;
  run (let open Lwt in join [ Lwt.return_unit ]);
  int "(Lwt.map f x)" (run (Lwt.map succ (Lwt.return 0))) 1;
  int "begin let%lwt end" (run (if false then Lwt.return 0 else begin let%lwt x = Lwt.return 1 in Lwt.return x end)) 1

(* Lwt_unix's, rewritten into Mtrace_lwt.call/call2 (the program links no mtrace.lwt_unix):
   as values (as polymorphic as Lwt_unix's), partially applied, under a local open, and
   with an attribute on the function ([@warning "-3"] on the deprecated yield: warning 3
   is an error here, so it must stay on it) *)
let my_sleep = Lwt_unix.sleep
let my_timeout = Lwt_unix.timeout
let my_with_timeout = Lwt_unix.with_timeout

let unix_forms () =
  run (my_sleep 0.001);
  check "Lwt_unix.timeout" (raises (Lwt_unix.timeout 0.001)) "Lwt_unix.Timeout";
  check "let-bound Lwt_unix.timeout, int" (raises (my_timeout 0.001 >|= succ)) "Lwt_unix.Timeout";
  check "let-bound Lwt_unix.timeout, string" (raises (my_timeout 0.001 >|= String.length)) "Lwt_unix.Timeout";
  int "Lwt_unix.with_timeout, in time" (run (Lwt_unix.with_timeout 1. (fun () -> Lwt.return 3))) 3;
  check "Lwt_unix.with_timeout, late" (raises (Lwt_unix.with_timeout 0.001 (fun () -> fst (Lwt.wait ())))) "Lwt_unix.Timeout";
  int "let-bound Lwt_unix.with_timeout, int" (run (my_with_timeout 1. (fun () -> Lwt.return 4))) 4;
  check "let-bound Lwt_unix.with_timeout, string" (run (my_with_timeout 1. (fun () -> Lwt.return "s"))) "s";
  let wt = Lwt_unix.with_timeout 1. in
  int "partial Lwt_unix.with_timeout" (run (wt (fun () -> Lwt.return 5))) 5;
  run ((Lwt_unix.yield [@warning "-3"]) ());
  int "Lwt_unix.( )" (run Lwt_unix.(sleep 0.001 >|= fun () -> 6)) 6;
  run (Lwt.join (List.map Lwt_unix.sleep [ 0.001; 0.002 ]));
  check "Lwt_result.map_err [@warning]" (match run ((Lwt_result.map_err [@warning "-3"]) succ (Lwt_result.fail 1)) with Error e -> string_of_int e | Ok () -> "ok") "2"

(* The order a program's promises start in is its behaviour (which request takes a lock
   first, which worker a stream hands an item to): the rewritten forms start them as
   the compiler reads the source (the bindings of let* ... and* ..., and of let%lwt ...
   and ..., left to right, as lwt_ppx does) *)
let order () =
  let said = Buffer.create 16 in
  let say s = Buffer.add_string said s; Lwt.return s in
  let seen f = Buffer.clear said; ignore (run (f ())); Buffer.contents said in
  check "let* and* and* order" (seen (fun () -> let* a = say "1" and* b = say "2" and* c = say "3" in Lwt.return (a ^ b ^ c))) "123";
  check "let+ and+ order" (seen (fun () -> let+ a = say "1" and+ b = say "2" in a ^ b)) "12";
  check "Lwt_result.Syntax order"
    (seen (fun () ->
         let open Lwt_result.Syntax in
         let* a = Lwt_result.ok (say "1") and* b = Lwt_result.ok (say "2") in
         Lwt_result.return (a ^ b)))
    "12";
  let k s = Buffer.add_string said s; fun x -> Lwt.return (x ^ s) in
  let m s = Buffer.add_string said s; fun x -> x ^ s in
  check "=<< order" (seen (fun () -> k "f" =<< say "x")) "xf";
  check ">|= order" (seen (fun () -> say "x" >|= m "f")) "fx";
  check ">>= order" (seen (fun () -> say "x" >>= k "f")) "fx";
  check "=|< order" (seen (fun () -> m "f" =|< say "x")) "xf";
  check "let%lwt and order" (seen (fun () -> let%lwt a = say "1" and b = say "2" and c = say "3" in Lwt.return (a ^ b ^ c))) "123";
  (* as lwt_ppx: bound one after the other, so a rejection ends it once what comes before
     it is fulfilled, whatever comes after it *)
  let never, _ = Lwt.wait () in
  let p = let%lwt a = Lwt.fail Exit and b = never in Lwt.return (a + b) in
  check "let%lwt and, first rejected" (match Lwt.state p with Lwt.Fail e -> Printexc.to_string e | _ -> "pending") "Stdlib.Exit";
  let p = let%lwt a = never and b = Lwt.fail Exit in Lwt.return (a + b) in
  check "let%lwt and, an earlier one pending" (match Lwt.state p with Lwt.Sleep -> "pending" | _ -> "resolved") "pending"

let () =
  operators ();
  letops ();
  order ();
  lwt_forms ();
  functions ();
  unix_forms ();
  shapes ();
  Shapes.check int;
  Printf.printf "forms: %d checks, %d failed\n" !checks !fails;
  exit (if !fails = 0 then 0 else 1)
