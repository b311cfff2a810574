(* The forms ppx_mtrace rewrites, in every shape (its expect test: expected.ml is the
   output, each site's "file:line:col" the position of the form's own token). *)

(* let%lwt, also with and *)
let f x =
  let%lwt a = x in
  let%lwt b = Lwt.return a and c = x in
  Lwt.return (a + b + c)

(* operators with nothing opened: Lwt's *)
let g x = x >>= fun v -> Lwt.return (v + 1)
let h x = x >|= succ
let h2 x = succ =|< x
let h3 x = (fun v -> Lwt.return v) =<< x
let h4 a b = a <&> b
let h5 a b = a <?> b

(* calls *)
let i x = Lwt.bind x (fun v -> Lwt.map succ (Lwt.return v))
let () = Lwt.async (fun () -> f (Lwt.return 1) >>= fun _ -> Lwt.return_unit)
let untouched x = Lwt.return x
let j m c mx s = Lwt.join [ Lwt_mvar.take m; Lwt_condition.wait ~mutex:mx c; Lwt_stream.next s >|= ignore ]
let k c = Lwt_condition.signal c (); Lwt.wait ()
let l () = Lwt.catch (fun () -> Lwt_unix.sleep 0.) (fun _ -> Lwt.return_unit)

(* positions: never a surrounding parenthesis or begin *)
let p1 f x = (Lwt.map f x)
let p2 x = (x >>= Lwt.return)
let p3 c x = if c then x else begin let%lwt y = x in Lwt.return y end
let p4 x = begin match%lwt x with 0 -> Lwt.return 1 | n -> Lwt.return n end
let p5 x = (let%lwt y = x in Lwt.return y)
let p6 x = (Lwt.Syntax.(let* y = x in Lwt.return y))
let p7 x = begin
  Lwt.Infix.( ( >>= ) x Lwt.return )
end
let p8 x = if true then x else begin x >|= succ end

(* application shapes *)
let s1 l = List.iter Lwt.async l
let s2 () = Lwt.async @@ fun () -> Lwt.return_unit
let s3 f p = p |> Lwt.map f
let s4 p f = Lwt.( >>= ) p f
let s5 p f = Lwt.Infix.( >>= ) p f
let s6 p f = ( >>= ) p f
let s7 p = ( >|= ) p
let s8 = ( <&> )
let s9 = Lwt.bind
let s10 s = Lwt_stream.iter_n ~max_concurrency:2 (fun _ -> Lwt.return_unit) s
let s11 f = Lwt_list.iter_p f
let s12 a = ( <?> ) a (Lwt.return 1)
let s13 f = f =|< Lwt.return 1 |> ignore
let s14 p = Lwt.pause () >>= fun () -> p
let s15 = Lwt_condition.wait
let s16 = Lwt_stream.iter_n
let ( >>=! ) = Lwt.( >>= )

(* opens: local, let open, module-level; what they shadow *)
let o1 a b = Lwt.Infix.(a >>= fun x -> b >|= fun y -> x + y)
let o2 a = Lwt.(join [ a; a ])
let o3 a = let open Lwt.Syntax in let* x = a in let+ y = a in x + y
let o4 a b = let open Lwt.Syntax in let* x = a and* y = b and+ z = a in Lwt.return (x + y + z)
let o5 a = let open Lwt in join [ a; wait () |> fst ]
let o6 r = let open Lwt_result.Syntax in let* x = r in let+ y = r in x + y
let o7 r = let open Lwt_result.Infix in r >>= fun x -> Lwt_result.return x >|= succ
let o8 r = let open Lwt_result in r >>= Lwt_result.return
let o9 l = let open Lwt_list in iter_s (fun _ -> Lwt.return_unit) l
let o10 = let open Lwt in let open Infix in ( >|= )
let o12 = let open! Lwt in pause
module M1 = struct
  open Lwt.Infix
  let f a = a >>= Lwt.return
end
module M2 = struct
  open Lwt.Syntax
  let f a = let+ x = a and+ y = a in x + y
end
module M3 = struct
  open Lwt
  let f a = pick [ a ] >|= succ
  let g = bind
  let h = return
end
module M4 = struct
  open Lwt_unix
  let f () = sleep 1. >>= fun () -> yield ()
  let g = wait
  let h = Lwt.wait
end
module L = Lwt
let al a = L.join [ a ]

(* shadowing: the program's own names *)
let sh1 a = let ( >>= ) x f = f x in a >>= fun x -> x
let sh2 a = let open Lwt in let join = List.concat in join [ a ]
let sh3 = let open Lwt.Syntax in let ( let* ) x f = f x in let* y = 1 in y
module Opt = struct let ( let* ) = Option.bind end
let sh4 o = let open Opt in let* x = o in Some x
let sh5 a = let open Lwt in fun join -> join a
let sh6 = let open Lwt.Syntax in let open Opt in let* x = Some 1 in Some x
let sh7 a = let open Lwt.Infix in let open Lwt_result.Infix in a >>= fun x -> Lwt_result.return x
let sh8 = let open Lwt in match 1 with async -> async

(* the %lwt forms *)
let w1 x = match%lwt x with 0 -> Lwt.return "zero" | exception Not_found -> Lwt.return "nf" | _ -> Lwt.return "other"
let w2 f = try%lwt f () with Not_found -> Lwt.return 0
let w3 c = if%lwt c then Lwt.return_unit
let w4 a b = a ;%lwt b
let w5 n f = for%lwt i = 1 to n do f i done
let w6 c f = while%lwt c () do f () done
let w7 x = assert%lwt x
let w8 f g = (f ()) [%finally g ()]
let w9 f = for%lwt _ = 3 downto 1 do f () done
let w10 x = match%lwt x with exception e -> Lwt.return 0 | n -> Lwt.return n

(* opting out: an expression, a binding, the rest of the structure *)
let u1 x = (x >>= Lwt.return) [@mtrace.untraced]
let u2 x = let%lwt[@mtrace.untraced] y = x in Lwt.return y >>= Lwt.return
let u3 x = Lwt.map succ x [@@mtrace.untraced]
[@@@mtrace.untraced]
let u4 x = Lwt.map succ x >>= fun y -> let%lwt z = Lwt.on_cancel x ignore in y
