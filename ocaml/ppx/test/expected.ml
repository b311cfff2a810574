let __mtrace_site_0 = Mtrace_lwt.site "input.ml:7:2"
let __mtrace_site_1 = Mtrace_lwt.site "input.ml:6:2"
let __mtrace_site_2 = Mtrace_lwt.site "input.ml:11:12"
let __mtrace_site_3 = Mtrace_lwt.site "input.ml:12:12"
let __mtrace_site_4 = Mtrace_lwt.site "input.ml:13:16"
let __mtrace_site_5 = Mtrace_lwt.site "input.ml:14:35"
let __mtrace_site_6 = Mtrace_lwt.site "input.ml:15:15"
let __mtrace_site_7 = Mtrace_lwt.site "input.ml:16:15"
let __mtrace_site_8 = Mtrace_lwt.site "input.ml:19:31"
let __mtrace_site_9 = Mtrace_lwt.site "input.ml:19:10"
let __mtrace_site_10 = Mtrace_lwt.site "input.ml:20:47"
let __mtrace_site_11 = Mtrace_lwt.site "input.ml:20:9"
let __mtrace_site_12 = Mtrace_lwt.site "input.ml:22:28"
let __mtrace_site_13 = Mtrace_lwt.site "input.ml:22:45"
let __mtrace_site_14 = Mtrace_lwt.site "input.ml:22:77"
let __mtrace_site_15 = Mtrace_lwt.site "input.ml:22:95"
let __mtrace_site_16 = Mtrace_lwt.site "input.ml:22:17"
let __mtrace_site_17 = Mtrace_lwt.site "input.ml:23:37"
let __mtrace_site_18 = Mtrace_lwt.site "input.ml:24:32"
let __mtrace_site_19 = Mtrace_lwt.site "input.ml:24:11"
let __mtrace_site_20 = Mtrace_lwt.site "input.ml:27:14"
let __mtrace_site_21 = Mtrace_lwt.site "input.ml:28:14"
let __mtrace_site_22 = Mtrace_lwt.site "input.ml:29:36"
let __mtrace_site_23 = Mtrace_lwt.site "input.ml:30:17"
let __mtrace_site_24 = Mtrace_lwt.site "input.ml:31:12"
let __mtrace_site_25 = Mtrace_lwt.site "input.ml:32:24"
let __mtrace_site_26 = Mtrace_lwt.site "input.ml:34:16"
let __mtrace_site_27 = Mtrace_lwt.site "input.ml:36:39"
let __mtrace_site_28 = Mtrace_lwt.site "input.ml:39:21"
let __mtrace_site_29 = Mtrace_lwt.site "input.ml:40:12"
let __mtrace_site_30 = Mtrace_lwt.site "input.ml:41:18"
let __mtrace_site_31 = Mtrace_lwt.site "input.ml:42:13"
let __mtrace_site_32 = Mtrace_lwt.site "input.ml:43:13"
let __mtrace_site_33 = Mtrace_lwt.site "input.ml:44:15"
let __mtrace_site_34 = Mtrace_lwt.site "input.ml:45:13"
let __mtrace_site_35 = Mtrace_lwt.site "input.ml:46:11"
let __mtrace_site_36 = Mtrace_lwt.site "input.ml:47:9"
let __mtrace_site_37 = Mtrace_lwt.site "input.ml:48:12"
let __mtrace_site_38 = Mtrace_lwt.site "input.ml:49:12"
let __mtrace_site_39 = Mtrace_lwt.site "input.ml:50:14"
let __mtrace_site_40 = Mtrace_lwt.site "input.ml:51:14"
let __mtrace_site_41 = Mtrace_lwt.site "input.ml:52:12"
let __mtrace_site_42 = Mtrace_lwt.site "input.ml:52:25"
let __mtrace_site_43 = Mtrace_lwt.site "input.ml:53:10"
let __mtrace_site_44 = Mtrace_lwt.site "input.ml:54:10"
let __mtrace_site_45 = Mtrace_lwt.site "input.ml:55:15"
let __mtrace_site_46 = Mtrace_lwt.site "input.ml:58:41"
let __mtrace_site_47 = Mtrace_lwt.site "input.ml:58:26"
let __mtrace_site_48 = Mtrace_lwt.site "input.ml:59:16"
let __mtrace_site_49 = Mtrace_lwt.site "input.ml:60:48"
let __mtrace_site_50 = Mtrace_lwt.site "input.ml:60:34"
let __mtrace_site_51 = Mtrace_lwt.site "input.ml:61:47"
let __mtrace_site_52 = Mtrace_lwt.site "input.ml:61:58"
let __mtrace_site_53 = Mtrace_lwt.site "input.ml:61:36"
let __mtrace_site_54 = Mtrace_lwt.site "input.ml:62:37"
let __mtrace_site_55 = Mtrace_lwt.site "input.ml:62:27"
let __mtrace_site_56 = Mtrace_lwt.site "input.ml:63:55"
let __mtrace_site_57 = Mtrace_lwt.site "input.ml:63:41"
let __mtrace_site_58 = Mtrace_lwt.site "input.ml:64:75"
let __mtrace_site_59 = Mtrace_lwt.site "input.ml:64:42"
let __mtrace_site_60 = Mtrace_lwt.site "input.ml:65:36"
let __mtrace_site_61 = Mtrace_lwt.site "input.ml:66:32"
let __mtrace_site_62 = Mtrace_lwt.site "input.ml:67:46"
let __mtrace_site_63 = Mtrace_lwt.site "input.ml:68:27"
let __mtrace_site_64 = Mtrace_lwt.site "input.ml:71:14"
let __mtrace_site_65 = Mtrace_lwt.site "input.ml:75:23"
let __mtrace_site_66 = Mtrace_lwt.site "input.ml:75:12"
let __mtrace_site_67 = Mtrace_lwt.site "input.ml:79:12"
let __mtrace_site_68 = Mtrace_lwt.site "input.ml:79:23"
let __mtrace_site_69 = Mtrace_lwt.site "input.ml:80:10"
let __mtrace_site_70 = Mtrace_lwt.site "input.ml:85:13"
let __mtrace_site_71 = Mtrace_lwt.site "input.ml:85:36"
let __mtrace_site_72 = Mtrace_lwt.site "input.ml:85:22"
let __mtrace_site_73 = Mtrace_lwt.site "input.ml:87:10"
let __mtrace_site_74 = Mtrace_lwt.site "input.ml:90:11"
let __mtrace_site_75 = Mtrace_lwt.site "input.ml:100:65"
let __mtrace_site_76 = Mtrace_lwt.site "input.ml:104:11"
let __mtrace_site_77 = Mtrace_lwt.site "input.ml:105:11"
let __mtrace_site_78 = Mtrace_lwt.site "input.ml:106:11"
let __mtrace_site_79 = Mtrace_lwt.site "input.ml:107:15"
let __mtrace_site_80 = Mtrace_lwt.site "input.ml:108:13"
let __mtrace_site_81 = Mtrace_lwt.site "input.ml:109:13"
let __mtrace_site_82 = Mtrace_lwt.site "input.ml:111:20"
let __mtrace_site_83 = Mtrace_lwt.site "input.ml:112:11"
let __mtrace_site_84 = Mtrace_lwt.site "input.ml:113:12"
let __mtrace_site_85 = Mtrace_lwt.site "input.ml:117:13"
let __mtrace_site_86 = Mtrace_lwt.site "input.ml:118:11"
let __mtrace_site_87 = Mtrace_lwt.site "input.ml:119:9"
let __mtrace_site_88 = Mtrace_lwt.site "input.ml:120:13"
let __mtrace_site_89 = Mtrace_lwt.site "input.ml:121:22"
let __mtrace_site_90 = Mtrace_lwt.site "input.ml:121:45"
let __mtrace_site_91 = Mtrace_lwt.site "input.ml:121:31"
let __mtrace_site_92 = Mtrace_lwt.site "input.ml:122:20"
let __mtrace_site_93 = Mtrace_lwt.site "input.ml:123:14"
let __mtrace_site_94 = Mtrace_lwt.site "input.ml:127:59"
let __mtrace_site_95 = Mtrace_lwt.site "input.ml:129:55"
let f x =
  Mtrace_lwt.bind ~site:__mtrace_site_1 x
    (fun a ->
       let __mtrace_lwt_0 = Lwt.return a
       and __mtrace_lwt_1 = x in
       Mtrace_lwt.bind ~site:__mtrace_site_0 __mtrace_lwt_0
         (fun b ->
            Mtrace_lwt.bind ~site:__mtrace_site_0 __mtrace_lwt_1
              (fun c -> Lwt.return ((a + b) + c))))
let g x =
  Mtrace_lwt.bind ~site:__mtrace_site_2 x (fun v -> Lwt.return (v + 1))
let h x = Mtrace_lwt.map ~site:__mtrace_site_3 succ x
let h2 x = Mtrace_lwt.map ~site:__mtrace_site_4 succ x
let h3 x = Mtrace_lwt.bind ~site:__mtrace_site_5 x (fun v -> Lwt.return v)
let h4 a b = Mtrace_lwt.join ~site:__mtrace_site_6 [a; b]
let h5 a b = Mtrace_lwt.choose ~site:__mtrace_site_7 [a; b]
let i x =
  Mtrace_lwt.bind ~site:__mtrace_site_9 x
    (fun v -> Mtrace_lwt.map ~site:__mtrace_site_8 succ (Lwt.return v))
let () =
  Mtrace_lwt.async ~site:__mtrace_site_11
    (fun () ->
       Mtrace_lwt.bind ~site:__mtrace_site_10 (f (Lwt.return 1))
         (fun _ -> Lwt.return_unit))
let untouched x = Lwt.return x
let j m c mx s =
  Mtrace_lwt.join ~site:__mtrace_site_16
    [Mtrace_lwt.Mvar.take ~site:__mtrace_site_12 m;
    Mtrace_lwt.Condition.wait ~site:__mtrace_site_13 ~mutex:mx c;
    Mtrace_lwt.map ~site:__mtrace_site_15 ignore
      (Mtrace_lwt.Stream.next ~site:__mtrace_site_14 s)]
let k c =
  Mtrace_lwt.Condition.signal c (); Mtrace_lwt.wait ~site:__mtrace_site_17 ()
let l () =
  Mtrace_lwt.catch ~site:__mtrace_site_19
    (fun () ->
       Mtrace_lwt.call ~site:__mtrace_site_18 Mtrace_ring.Task Lwt_unix.sleep
         0.) (fun _ -> Lwt.return_unit)
let p1 f x = Mtrace_lwt.map ~site:__mtrace_site_20 f x
let p2 x = Mtrace_lwt.bind ~site:__mtrace_site_21 x Lwt.return
let p3 c x =
  if c
  then x
  else Mtrace_lwt.bind ~site:__mtrace_site_22 x (fun y -> Lwt.return y)
let p4 x =
  Mtrace_lwt.bind ~site:__mtrace_site_23 x
    (function | 0 -> Lwt.return 1 | n -> Lwt.return n)
let p5 x = Mtrace_lwt.bind ~site:__mtrace_site_24 x (fun y -> Lwt.return y)
let p6 x =
  let open Lwt.Syntax in
    Mtrace_lwt.bind ~site:__mtrace_site_25 x (fun y -> Lwt.return y)
let p7 x =
  let open Lwt.Infix in Mtrace_lwt.bind ~site:__mtrace_site_26 x Lwt.return
let p8 x = if true then x else Mtrace_lwt.map ~site:__mtrace_site_27 succ x
let s1 l = List.iter (Mtrace_lwt.async ~site:__mtrace_site_28) l
let s2 () =
  (Mtrace_lwt.async ~site:__mtrace_site_29) @@ (fun () -> Lwt.return_unit)
let s3 f p = p |> (Mtrace_lwt.map ~site:__mtrace_site_30 f)
let s4 p f = Mtrace_lwt.bind ~site:__mtrace_site_31 p f
let s5 p f = Mtrace_lwt.bind ~site:__mtrace_site_32 p f
let s6 p f = Mtrace_lwt.bind ~site:__mtrace_site_33 p f
let s7 p =
  let __mtrace_x = p in
  fun __mtrace_y ->
    Mtrace_lwt.map ~site:__mtrace_site_34 __mtrace_y __mtrace_x
let s8 __mtrace_x __mtrace_y =
  Mtrace_lwt.join ~site:__mtrace_site_35 [__mtrace_x; __mtrace_y]
let s9 __mtrace_x = Mtrace_lwt.bind ~site:__mtrace_site_36 __mtrace_x
let s10 s =
  Mtrace_lwt.Stream.iter_n ~site:__mtrace_site_37 ~max_concurrency:2
    (fun _ -> Lwt.return_unit) s
let s11 f = Mtrace_lwt.List.iter_p ~site:__mtrace_site_38 f
let s12 a = Mtrace_lwt.choose ~site:__mtrace_site_39 [a; Lwt.return 1]
let s13 f =
  (Mtrace_lwt.map ~site:__mtrace_site_40 f (Lwt.return 1)) |> ignore
let s14 p =
  Mtrace_lwt.bind ~site:__mtrace_site_42
    (Mtrace_lwt.pause ~site:__mtrace_site_41 ()) (fun () -> p)
let s15 ?mutex  __mtrace_x =
  Mtrace_lwt.Condition.wait ~site:__mtrace_site_43 ?mutex __mtrace_x
let s16 ?max_concurrency  __mtrace_x =
  Mtrace_lwt.Stream.iter_n ~site:__mtrace_site_44 ?max_concurrency __mtrace_x
let (>>=!) __mtrace_x = Mtrace_lwt.bind ~site:__mtrace_site_45 __mtrace_x
let o1 a b =
  let open Lwt.Infix in
    Mtrace_lwt.bind ~site:__mtrace_site_47 a
      (fun x -> Mtrace_lwt.map ~site:__mtrace_site_46 (fun y -> x + y) b)
let o2 a = let open Lwt in Mtrace_lwt.join ~site:__mtrace_site_48 [a; a]
let o3 a =
  let open Lwt.Syntax in
    Mtrace_lwt.bind ~site:__mtrace_site_50 a
      (fun x -> Mtrace_lwt.map ~site:__mtrace_site_49 (fun y -> x + y) a)
let o4 a b =
  let open Lwt.Syntax in
    let __mtrace_l = a in
    let __mtrace_r = b in
    let __mtrace_l =
      Mtrace_lwt.both ~site:__mtrace_site_51 __mtrace_l __mtrace_r in
    let __mtrace_r = a in
    let __mtrace_l =
      Mtrace_lwt.both ~site:__mtrace_site_52 __mtrace_l __mtrace_r in
    Mtrace_lwt.bind ~site:__mtrace_site_53 __mtrace_l
      (fun ((x, y), z) -> Lwt.return ((x + y) + z))
let o5 a =
  let open Lwt in
    Mtrace_lwt.join ~site:__mtrace_site_55
      [a; (Mtrace_lwt.wait ~site:__mtrace_site_54 ()) |> fst]
let o6 r =
  let open Lwt_result.Syntax in
    Mtrace_lwt.Result.bind ~site:__mtrace_site_57 r
      (fun x ->
         Mtrace_lwt.Result.map ~site:__mtrace_site_56 (fun y -> x + y) r)
let o7 r =
  let open Lwt_result.Infix in
    Mtrace_lwt.Result.bind ~site:__mtrace_site_59 r
      (fun x ->
         Mtrace_lwt.Result.map ~site:__mtrace_site_58 succ
           (Lwt_result.return x))
let o8 r =
  let open Lwt_result in
    Mtrace_lwt.Result.bind ~site:__mtrace_site_60 r Lwt_result.return
let o9 l =
  let open Lwt_list in
    Mtrace_lwt.List.iter_s ~site:__mtrace_site_61 (fun _ -> Lwt.return_unit)
      l
let o10 =
  let open Lwt in
    let open Infix in
      fun __mtrace_x ->
        fun __mtrace_y ->
          Mtrace_lwt.map ~site:__mtrace_site_62 __mtrace_y __mtrace_x
let o12 =
  let open! Lwt in
    fun __mtrace_x -> Mtrace_lwt.pause ~site:__mtrace_site_63 __mtrace_x
module M1 =
  struct
    open Lwt.Infix[@@ocaml.warning "-33"]
    let f a = Mtrace_lwt.bind ~site:__mtrace_site_64 a Lwt.return
  end
module M2 =
  struct
    open Lwt.Syntax[@@ocaml.warning "-33"]
    let f a =
      let __mtrace_l = a in
      let __mtrace_r = a in
      let __mtrace_l =
        Mtrace_lwt.both ~site:__mtrace_site_65 __mtrace_l __mtrace_r in
      Mtrace_lwt.map ~site:__mtrace_site_66 (fun (x, y) -> x + y) __mtrace_l
  end
module M3 =
  struct
    open Lwt[@@ocaml.warning "-33"]
    let f a =
      Mtrace_lwt.map ~site:__mtrace_site_68 succ
        (Mtrace_lwt.pick ~site:__mtrace_site_67 [a])
    let g __mtrace_x = Mtrace_lwt.bind ~site:__mtrace_site_69 __mtrace_x
    let h = return
  end
module M4 =
  struct
    open Lwt_unix
    let f () =
      Mtrace_lwt.bind ~site:__mtrace_site_72
        (Mtrace_lwt.call ~site:__mtrace_site_70 Mtrace_ring.Task sleep 1.)
        (fun () ->
           Mtrace_lwt.call ~site:__mtrace_site_71 Mtrace_ring.Task yield ())
    let g = wait
    let h __mtrace_x = Mtrace_lwt.wait ~site:__mtrace_site_73 __mtrace_x
  end
module L = Lwt
let al a = Mtrace_lwt.join ~site:__mtrace_site_74 [a]
let sh1 a = let (>>=) x f = f x in a >>= (fun x -> x)
let sh2 a = let open Lwt in let join = List.concat in join [a]
let sh3 = let open Lwt.Syntax in let ( let* ) x f = f x in let* y = 1
                                                            in y
module Opt = struct let ( let* ) = Option.bind end
let sh4 o = let open Opt in let* x = o
                             in Some x
let sh5 a = let open Lwt in fun join -> join a
let sh6 = let open Lwt.Syntax in let open Opt in let* x = Some 1
                                                  in Some x
let sh7 a =
  let open Lwt.Infix in
    let open Lwt_result.Infix in
      Mtrace_lwt.Result.bind ~site:__mtrace_site_75 a
        (fun x -> Lwt_result.return x)
let sh8 = let open Lwt in match 1 with | async -> async
let w1 x =
  Mtrace_lwt.try_bind ~site:__mtrace_site_76 (fun () -> x)
    (function | 0 -> Lwt.return "zero" | _ -> Lwt.return "other")
    (function | Not_found -> Lwt.return "nf" | exn -> Lwt.fail exn)
let w2 f =
  Mtrace_lwt.catch ~site:__mtrace_site_77 (fun () -> f ())
    (function | Not_found -> Lwt.return 0 | exn -> Lwt.fail exn)
let w3 c =
  Mtrace_lwt.bind ~site:__mtrace_site_78 c
    (function | true -> Lwt.return_unit | false -> Lwt.return_unit)
let w4 a b = Mtrace_lwt.bind ~site:__mtrace_site_79 a (fun () -> b)
let w5 n f =
  let __mtrace_bound : int = n in
  let rec __mtrace_loop i =
    if Stdlib.(>) i __mtrace_bound
    then Lwt.return_unit
    else
      Mtrace_lwt.bind ~site:__mtrace_site_80 (f i)
        (fun () -> __mtrace_loop (Stdlib.(+) i 1)) in
  __mtrace_loop 1
let w6 c f =
  let rec __mtrace_loop () =
    if c ()
    then Mtrace_lwt.bind ~site:__mtrace_site_81 (f ()) __mtrace_loop
    else Lwt.return_unit in
  __mtrace_loop ()
let w7 x = try Lwt.return (assert x) with | exn -> Lwt.fail exn
let w8 f g =
  Mtrace_lwt.finalize ~site:__mtrace_site_82 (fun () -> f ())
    (fun () -> g ())
let w9 f =
  let __mtrace_bound : int = 1 in
  let rec __mtrace_loop __mtrace_i =
    if Stdlib.(<) __mtrace_i __mtrace_bound
    then Lwt.return_unit
    else
      Mtrace_lwt.bind ~site:__mtrace_site_83 (f ())
        (fun () -> __mtrace_loop (Stdlib.(-) __mtrace_i 1)) in
  __mtrace_loop 3
let w10 x =
  Mtrace_lwt.try_bind ~site:__mtrace_site_84 (fun () -> x)
    (function | n -> Lwt.return n) (function | e -> Lwt.return 0)
let x1 d f =
  Mtrace_lwt.call2 ~site:__mtrace_site_85 Mtrace_ring.Pick
    Lwt_unix.with_timeout d f
let x2 d =
  Mtrace_lwt.call2 ~site:__mtrace_site_86 Mtrace_ring.Pick
    Lwt_unix.with_timeout d
let x3 __mtrace_x =
  Mtrace_lwt.call ~site:__mtrace_site_87 Mtrace_ring.Task Lwt_unix.timeout
    __mtrace_x
let x4 () =
  Mtrace_lwt.call ~site:__mtrace_site_88 Mtrace_ring.Task ((Lwt_unix.yield)
    [@warning "-3"]) ()
let x5 () =
  let open Lwt_unix in
    Mtrace_lwt.bind ~site:__mtrace_site_91
      (Mtrace_lwt.call ~site:__mtrace_site_89 Mtrace_ring.Task sleep 1.)
      (fun () ->
         Mtrace_lwt.call ~site:__mtrace_site_90 Mtrace_ring.Task timeout 2.)
let x6 l =
  List.map
    (Mtrace_lwt.call ~site:__mtrace_site_92 Mtrace_ring.Task Lwt_unix.sleep)
    l
let x7 f p =
  ((Mtrace_lwt.Result.map_err)[@warning "-3"]) ~site:__mtrace_site_93 f p
let u1 x = ((x >>= Lwt.return)[@mtrace.untraced ])
let u2 x =
  Lwt.bind x
    (fun y ->
       Mtrace_lwt.bind ~site:__mtrace_site_94 (Lwt.return y) Lwt.return)
let u3 x = Lwt.map succ x[@@mtrace.untraced ]
let u5 p f =
  ((Lwt.bind)[@mtrace.untraced ]) p
    (fun x -> Mtrace_lwt.map ~site:__mtrace_site_95 f (Lwt.return x))
[@@@mtrace.untraced ]
let u4 x =
  (Lwt.map succ x) >>=
    (fun y -> Lwt.bind (Lwt.on_cancel x ignore) (fun z -> y))
