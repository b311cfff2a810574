(* Lwt's own vocabulary (module Lwt) and Lwt_mvar, Lwt_condition, Lwt_mutex, traced:
   each wrapper creates its thread, calls Lwt's function with the user's arguments
   (callbacks wrapped to run as that thread) and returns Lwt's promise itself, so
   results, ordering and cancellation are Lwt's. *)

open Mtrace_lwt_core
module R = Mtrace_ring

let new_promise ty site mk =
  match !ring with
  | None -> mk ()
  | Some r ->
    let th = start r ty site in
    let ((p, _) as pu) = mk () in
    ignore (watch th p);
    pu

let wait ?(site = 0) () = new_promise R.Wait site Lwt.wait
let task ?(site = 0) () = new_promise R.Task site Lwt.task

(* a bind's callback: READ, the body, BECOMES; the bind's resolution follows from what
   the body returned (or raised), so a bind registers no Lwt callback of its own *)
let bind_callback th f x =
  match !ring with
  | None ->
    (* traced off since the bind: let go of what waits on it (writes nothing) *)
    resolved th ok;
    f x
  | Some r -> (
    let saved = !cur in
    cur := th.id;
    read r th.id;
    match f x with
    | q ->
      let l = becomes r th q in
      cur := saved;
      settle th l q;
      q
    | exception e ->
      cur := saved;
      resolved th (Error e);
      reraise e)

(* a bind as a thread of type [ty] (Lwt_result's binds are binds too) *)
let bind_t r ty site e f =
  let th = start r ty site in
  (* try_bind, not bind: [e]'s rejection is the bind's too, and this handler records
     it without an Lwt callback more *)
  let p =
    Lwt.try_bind
      (fun () -> e)
      (fun x -> bind_callback th f x)
      (fun exn ->
        resolved th (Error exn);
        Lwt.fail exn)
  in
  th.p <- Obj.repr p;
  p

let bind ?(site = 0) e f =
  match !ring with
  | None -> Lwt.bind e f
  | Some r -> bind_t r R.Bind site e f

(* Lwt.map's semantics through Lwt.try_bind (as Lwt.map, the result promise
   propagates cancellation to [e] and is resolved, without deferral, with f's value or
   exception, or [e]'s rejection), so that the map's resolution is recorded where it
   happens, with no Lwt callback of its own: READ, [f] as the thread, FULFILLS/FAILS *)
let map_callback th f x =
  let s = !cur in
  cur := th.id;
  (match !ring with Some r -> read r th.id | None -> ());
  match f x with
  | v ->
    cur := s;
    resolved th ok;
    Lwt.return v
  | exception e ->
    cur := s;
    resolved th (Error e);
    Lwt.fail e

let map_t r ty site f e =
  let th = start r ty site in
  let p =
    Lwt.try_bind
      (fun () -> e)
      (fun x -> map_callback th f x)
      (fun exn ->
        resolved th (Error exn);
        Lwt.fail exn)
  in
  th.p <- Obj.repr p;
  p

let map ?(site = 0) f e =
  match !ring with
  | None -> Lwt.map f e
  | Some r -> map_t r R.Map site f e

(* catch, try_bind, finalize: the body runs at once (Lwt calls it first thing) with
   the thread current; the handlers READ as it *)
let catch ?(site = 0) f h =
  match !ring with
  | None -> Lwt.catch f h
  | Some r ->
    let th = start r R.Try site in
    in2 th Lwt.catch f (fun e -> handler true th h e)

(* try_bind's promise is what its handler returns (Lwt calls one of them whatever
   becomes of f's promise): resolved as a bind's is, from that, without a watch *)
let try_bind ?(site = 0) f g h =
  match !ring with
  | None -> Lwt.try_bind f g h
  | Some r ->
    let th = start r R.Try site in
    let s = !cur in
    cur := th.id;
    match Lwt.try_bind f (fun x -> bind_callback th g x) (fun e -> bind_callback th h e) with
    | p ->
      cur := s;
      th.p <- Obj.repr p;
      p
    | exception e ->
      cur := s;
      resolved th (Error e);
      reraise e

let finalize ?(site = 0) f f' =
  match !ring with
  | None -> Lwt.finalize f f'
  | Some r ->
    let th = start r R.Try site in
    in2 th Lwt.finalize f (fun () -> handler false th f' ())

(* combinators: no callback, Lwt's promise watched *)
let both ?(site = 0) a b =
  match !ring with
  | None -> Lwt.both a b
  | Some r -> watch2 (start r R.Join site) Lwt.both a b

let[@inline] combine ty lwt_f site l =
  match !ring with
  | None -> lwt_f l
  | Some r -> watch1 (start r ty site) lwt_f l

let all ?(site = 0) l = combine R.Join Lwt.all site l
let join ?(site = 0) l = combine R.Join Lwt.join site l
let pick ?(site = 0) l = combine R.Pick Lwt.pick site l
let npick ?(site = 0) l = combine R.Pick Lwt.npick site l
let choose ?(site = 0) l = combine R.Choose Lwt.choose site l
let nchoose ?(site = 0) l = combine R.Choose Lwt.nchoose site l
let nchoose_split ?(site = 0) l = combine R.Choose Lwt.nchoose_split site l

(* protected p is a fresh task resolved with p, no_cancel p a fresh wait (lwt.ml) *)
let protected ?(site = 0) p = combine R.Task Lwt.protected site p
let no_cancel ?(site = 0) p = combine R.Wait Lwt.no_cancel site p

let pause ?(site = 0) () =
  match !ring with
  | None -> Lwt.pause ()
  | Some r -> watch (start r R.Task site) (Lwt.pause ())

(* wrap*, apply: Lwt turns the function's exception into a rejection (type Try); the
   function runs at once, as the thread *)
let apply ?(site = 0) f x =
  match !ring with
  | None -> Lwt.apply f x
  | Some r -> in2 (start r R.Try site) Lwt.apply f x

let wrap ?(site = 0) f =
  match !ring with
  | None -> Lwt.wrap f
  | Some r -> in1 (start r R.Try site) Lwt.wrap f

let wrap1 ?(site = 0) f a =
  match !ring with
  | None -> Lwt.wrap1 f a
  | Some r -> in2 (start r R.Try site) Lwt.wrap1 f a

let wrap2 ?(site = 0) f a b =
  match !ring with
  | None -> Lwt.wrap2 f a b
  | Some r -> in3 (start r R.Try site) Lwt.wrap2 f a b

(* Lwt.wrapN catch every exception of f: nothing to restore on one *)
let[@inline] enter th =
  let s = !cur in
  cur := th.id;
  s

let[@inline] leave th s p =
  cur := s;
  watch th p

let wrap3 ?(site = 0) f a b c =
  match !ring with
  | None -> Lwt.wrap3 f a b c
  | Some r ->
    let th = start r R.Try site in
    let s = enter th in
    leave th s (Lwt.wrap3 f a b c)

let wrap4 ?(site = 0) f a b c d =
  match !ring with
  | None -> Lwt.wrap4 f a b c d
  | Some r ->
    let th = start r R.Try site in
    let s = enter th in
    leave th s (Lwt.wrap4 f a b c d)

let wrap5 ?(site = 0) f a b c d e =
  match !ring with
  | None -> Lwt.wrap5 f a b c d e
  | Some r ->
    let th = start r R.Try site in
    let s = enter th in
    leave th s (Lwt.wrap5 f a b c d e)

let wrap6 ?(site = 0) f a b c d e g =
  match !ring with
  | None -> Lwt.wrap6 f a b c d e g
  | Some r ->
    let th = start r R.Try site in
    let s = enter th in
    leave th s (Lwt.wrap6 f a b c d e g)

let wrap7 ?(site = 0) f a b c d e g h =
  match !ring with
  | None -> Lwt.wrap7 f a b c d e g h
  | Some r ->
    let th = start r R.Try site in
    let s = enter th in
    leave th s (Lwt.wrap7 f a b c d e g h)

(* on_success & co: a thread of type On_* created at registration; the handler runs
   as it and it resolves when the handler returns (FAILS if it raises: the exception
   still goes to Lwt.async_exception_hook), or, when [p]'s outcome is not the
   handler's, when [p] resolves.  One Lwt.on_termination, the outcome read from [p]:
   Lwt runs it where it would have run Lwt's on_success & co. *)
let handle th f x =
  let s = !cur in
  cur := th.id;
  match f x with
  | () ->
    cur := s;
    resolved th ok
  | exception e ->
    cur := s;
    resolved th (Error e);
    reraise e

let on_success ?(site = 0) p f =
  match !ring with
  | None -> Lwt.on_success p f
  | Some r ->
    let th = start r R.On_success site in
    Lwt.on_termination p (fun () ->
        match Lwt.state p with
        | Lwt.Return v -> handle th f v
        | _ -> resolved th ok)

let on_failure ?(site = 0) p f =
  match !ring with
  | None -> Lwt.on_failure p f
  | Some r ->
    let th = start r R.On_failure site in
    Lwt.on_termination p (fun () ->
        match Lwt.state p with
        | Lwt.Fail e -> handle th f e
        | _ -> resolved th ok)

let on_termination ?(site = 0) p f =
  match !ring with
  | None -> Lwt.on_termination p f
  | Some r ->
    let th = start r R.On_termination site in
    Lwt.on_termination p (fun () -> handle th f ())

let on_any ?(site = 0) p f g =
  match !ring with
  | None -> Lwt.on_any p f g
  | Some r ->
    let th = start r R.On_any site in
    Lwt.on_termination p (fun () ->
        match Lwt.state p with
        | Lwt.Return v -> handle th f v
        | Lwt.Fail e -> handle th g e
        | Lwt.Sleep -> resolved th ok)

(* async, dont_wait: the function runs at once as a thread of type Async, resolved
   with its promise; dont_wait's handler runs as it too *)
let async ?(site = 0) f =
  match !ring with
  | None -> Lwt.async f
  | Some r ->
    let th = start r R.Async site in
    Lwt.async (fun () -> in1 th f ())

let dont_wait ?(site = 0) f h =
  match !ring with
  | None -> Lwt.dont_wait f h
  | Some r ->
    let th = start r R.Async site in
    Lwt.dont_wait (fun () -> in1 th f ()) (cb1 th.id h)

(* {2 Lwt's other primitives}  Each blocking operation is a thread of its own. *)

module Mvar = struct
  let take ?(site = 0) m =
    match !ring with
    | None -> Lwt_mvar.take m
    | Some r -> watch1 (start r R.Promise site) Lwt_mvar.take m

  let put ?(site = 0) m v =
    match !ring with
    | None -> Lwt_mvar.put m v
    | Some r -> watch2 (start r R.Promise site) Lwt_mvar.put m v
end

module Condition = struct
  let wait ?(site = 0) ?mutex c =
    match !ring with
    | None -> Lwt_condition.wait ?mutex c
    | Some r -> (
      let th = start r R.Condition site in
      match Lwt_condition.wait ?mutex c with
      | p -> watch th p
      | exception e ->
        resolved th (Error e);
        reraise e)

  let signal c v =
    signal_current ();
    Lwt_condition.signal c v

  let broadcast c v =
    signal_current ();
    Lwt_condition.broadcast c v
end

module Mutex = struct
  let lock ?(site = 0) m =
    match !ring with
    | None -> Lwt_mutex.lock m
    | Some r -> watch1 (start r R.Mutex site) Lwt_mutex.lock m

  (* [f] runs once the lock is taken, often later: as the thread *)
  let with_lock ?(site = 0) m f =
    match !ring with
    | None -> Lwt_mutex.with_lock m f
    | Some r ->
      let th = start r R.Mutex site in
      in2 th Lwt_mutex.with_lock m (cb0 th.id f)
end
