(* Forms ppx_mtrace cannot trace: each is said on stderr (warn.expected) and left as it
   is; the ones after "silent" are not said. *)
let a1 x = let* y = x in Lwt.return y
let a2 p f = Lwt.on_cancel p f
let a3 s = Lwt_stream.map succ s
let a4 s = let open Lwt in let open Lwt_stream in map succ s
let a5 a = let open Lwt in let open Foo in join [ a ]
let a6 a f = let open Lwt.Infix in let open Foo.Infix in a >>= f
let a7 a = let open Lwt.Syntax in let open Foo.Syntax in let* x = a in x
let a8 y z = let%lwt rec x = y in z
let a9 p f = Lwt.backtrace_bind (fun e -> e) p f
let a10 p f = Lwt.( >|= ) ~p f
let a11 a b = let open Import in let+ x = a and+ y = b in x + y

(* silent *)
let b1 x = (let* y = x in y) [@mtrace.untraced]
let b2 p f = (Lwt.on_cancel p f) [@mtrace.untraced]
let b3 a = let open Foo.Syntax in let* x = a in x
let b4 a f = let open Foo.Infix in a >>= f
let b5 p f = Lwt.on_cancel p f [@@mtrace.untraced]
let b6 a = let ( let* ) = Option.bind in let* x = a in Some x
[@@@mtrace.untraced]
let b7 x = let* y = x in y
