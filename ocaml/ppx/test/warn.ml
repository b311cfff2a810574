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
let a12 mk = Lwt_pool.create 2 ~validate:(fun _ -> Lwt.return_true) mk
let a13 = Lwt_pool.create 2
let a14 f = Lwt_stream.from_direct f

(* silent *)
let b1 x = (let* y = x in y) [@mtrace.untraced]
let b2 p f = (Lwt.on_cancel p f) [@mtrace.untraced]
let b3 a = let open Foo.Syntax in let* x = a in x
let b4 a f = let open Foo.Infix in a >>= f
let b5 p f = Lwt.on_cancel p f [@@mtrace.untraced]
let b6 a = let ( let* ) = Option.bind in let* x = a in Some x
(* callback-takers whose callback runs at once, as the caller (Vocab.no_form) *)
let b8 mk = Lwt_pool.create 2 mk
let b9 mk = let open Lwt_pool in create 2 mk
let b10 k f = Lwt.with_value k (Some 1) f
let b11 f x = Lwt_unix.handle_unix_error f x
let b12 f = (Lwt_unix.with_async_none f, Lwt_unix.with_async_detach f, Lwt_unix.with_async_switch f)
let b13 p = (Lwt_stream.create_bounded 3, Lwt.wrap_in_cancelable p, Lwt_main.run p)
[@@@mtrace.untraced]
let b7 x = let* y = x in y
