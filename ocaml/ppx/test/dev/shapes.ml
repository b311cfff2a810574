(* Unqualified names under a module-level open Lwt (its names rewritten, its open kept
   from warning 33 by the ppx), and the program's own names over Lwt's. *)
open Lwt

let twice p = join [ p; p ] >|= fun () -> 2
let first l = pick l
let chain = bind
let own_join = let join a b = a + b in join 1 2
let untraced x = (x >>= fun v -> return (v + 1)) [@mtrace.untraced]

let check int =
  int "open Lwt: join" (Lwt_main.run (twice return_unit)) 2;
  int "open Lwt: pick" (Lwt_main.run (first [ return 3; fst (wait ()) ])) 3;
  int "open Lwt: bare bind" (Lwt_main.run (chain (return 4) (fun x -> return (x + 1)))) 5;
  int "own join" own_join 3;
  int "untraced" (Lwt_main.run (untraced (return 1))) 2

[@@@mtrace.untraced]

let _untraced () = let%lwt x = Lwt.return 1 in Lwt.return x >>= Lwt.return
