(* Mtrace_lwt's machinery: the ring, the current thread, thread records, their
   resolution, and the helpers every wrapper is made of (see mtrace_lwt.mli for the
   model).  Each wrapper reads [ring] once: [None] and it calls Lwt's own function. *)

module R = Mtrace_ring

external reraise : exn -> 'a = "%reraise"

(* None = off: every wrapper's first (and, off, only) test *)
let ring : R.t option ref = ref None

(* The current thread: set around every traced callback and restored after it, as
   mirage-profile's Lwt_tracing kept its current thread in a ref (Lwt 5 has no hook
   to do it from inside, and an Lwt.with_value per callback allocated a storage map
   node and closure per bind).  Outside traced callbacks it is 0. *)
let cur = ref 0
let current () = !cur

(* The threads that BECAME a thread and so resolve with it, as linked lists of ints in
   one growable Bigarray (node n: id at 2n, next node at 2n+1, -1 ends a list; freed
   nodes on a free list): a loop of binds that each become the next holds every one
   of them pending until the last resolves, and as OCaml lists they were promoted and
   marked by the major GC, one cell per bind. *)
module Deps = struct
  type a = (int, Bigarray.int_elt, Bigarray.c_layout) Bigarray.Array1.t

  let arena : a ref = ref (Bigarray.Array1.create Bigarray.int Bigarray.c_layout 512)
  let free = ref (-1)
  let used = ref 0

  (* the arena twice as large (its nodes where they were) *)
  let grow () =
    let a = !arena in
    let b = Bigarray.Array1.create Bigarray.int Bigarray.c_layout (2 * Bigarray.Array1.dim a) in
    Bigarray.Array1.blit a (Bigarray.Array1.sub b 0 (Bigarray.Array1.dim a));
    arena := b

  (* a node holding [id], followed by node [next]: a freed one, else the next never used *)
  let[@inline] alloc id next =
    let n = !free in
    let n =
      if n >= 0 then begin
        free := Bigarray.Array1.unsafe_get !arena ((2 * n) + 1);
        n
      end
      else begin
        let n = !used in
        if (2 * n) + 2 > Bigarray.Array1.dim !arena then grow ();
        used := n + 1;
        n
      end
    in
    let a = !arena in
    Bigarray.Array1.unsafe_set a (2 * n) id;
    Bigarray.Array1.unsafe_set a ((2 * n) + 1) next;
    n

  let[@inline] id n = Bigarray.Array1.unsafe_get !arena (2 * n)
  let[@inline] next n = Bigarray.Array1.unsafe_get !arena ((2 * n) + 1)
  let[@inline] set_next n m = Bigarray.Array1.unsafe_set !arena ((2 * n) + 1) m

  let[@inline] release n =
    set_next n !free;
    free := n
end

(* A traced thread as the wrappers know it.  [p] is its promise once made (to tell
   whether a callback returned it); [dh]/[dt] the first and last node of the threads
   that BECAME it (-1: none), in the order Lwt will resolve them (a bind's promise
   that proxies this one resolves with it: they are recorded when it resolves,
   without an Lwt callback of their own); [open_] is false once they have been
   written or handed on. *)
type th = { id : int; mutable p : Obj.t; mutable dh : int; mutable dt : int; mutable open_ : bool }

let none = { id = 0; p = Obj.repr 0; dh = -1; dt = -1; open_ = false }
let next_id = ref 0

let[@inline] fresh () =
  incr next_id;
  { id = !next_id; p = Obj.repr 0; dh = -1; dt = -1; open_ = true }

(* [th] became [l]: [th] and its list go at the end of [l]'s *)
let[@inline] hand_on th l =
  let n = Deps.alloc th.id th.dh in
  let tail = if th.dh < 0 then n else th.dt in
  if l.dh < 0 then l.dh <- n else Deps.set_next l.dt n;
  l.dt <- tail;
  th.dh <- -1;
  th.open_ <- false

(* Lwt 5 tells nobody which promise woke a callback, so the wrappers remember the
   thread whose resolution they last recorded (callbacks run synchronously inside
   it) and the thread they last created (a callback that returns that thread's
   promise BECOMES it). *)
let last_resolved = ref 0
let last_created = ref none

(* per-op counts of what this module wrote *)
let ops =
  [| "creates"; "site"; "site_name"; "read"; "fulfills"; "fails"; "becomes"; "label";
     "counter"; "increase"; "evtchn_send"; "evtchn_recv"; "switch"; "signal" |]

let counts = Array.make (Array.length ops) 0
let[@inline] count i = Array.unsafe_set counts i (Array.unsafe_get counts i + 1)

(* a CREATES with a site counts as "site" only: "creates" is both kinds (one
   increment a thread rather than two) *)
let stats () =
  Array.to_list
    (Array.mapi (fun i op -> (op, if i = 0 then counts.(0) + counts.(1) else counts.(i))) ops)
  |> List.filter (fun (_, n) -> n > 0)
  |> List.sort compare

(* sites: names registered at module initialisation, written once per ring *)
let site_names = ref [| "" |]
let site_written = ref (Bytes.make 1 '\000')
let n_sites = ref 1

let site name =
  if !n_sites = Array.length !site_names then begin
    let a = Array.make (2 * !n_sites) "" in
    Array.blit !site_names 0 a 0 !n_sites;
    site_names := a;
    let b = Bytes.make (2 * !n_sites) '\000' in
    Bytes.blit !site_written 0 b 0 !n_sites;
    site_written := b
  end;
  let id = !n_sites in
  !site_names.(id) <- name;
  incr n_sites;
  id

let set_ring r =
  Bytes.fill !site_written 0 (Bytes.length !site_written) '\000';
  ring := r

let enable r = set_ring (Some r)
let disable () = set_ring None
let enabled () = !ring <> None

let name_site r site =
  R.site_name r ~site !site_names.(site);
  count 2;
  Bytes.set !site_written site '\001'

let creates r th ty site =
  last_created := th;
  let thread = !cur and child = th.id in
  if site <= 0 || site >= !n_sites then begin
    R.creates r ~thread ~child ~ty;
    count 0
  end
  else begin
    if Bytes.unsafe_get !site_written site = '\000' then name_site r site;
    R.creates_named r ~thread ~child ~ty ~site;
    count 1
  end

(* a new thread of type [ty], created here by the current thread *)
let[@inline] start r ty site =
  let th = fresh () in
  creates r th ty site;
  th

let read r id =
  R.read r ~thread:id ~source:!last_resolved;
  count 3

(* Lwt.Canceled is Lwt.Resolution_loop.Canceled to Printexc: written as it is spelt.
   The text of the exception last written is kept (by identity): a rejection goes
   through a chain of threads (binds, a catch) one resolution after another, and
   Printexc.to_string's sprintf costs more than the record it goes in. *)
exception Nothing_written

let last_exn = ref Nothing_written
let last_text = ref ""

let exn_text e =
  if e == !last_exn then !last_text
  else begin
    let s = match e with Lwt.Canceled -> "Lwt.Canceled" | e -> Printexc.to_string e in
    last_exn := e;
    last_text := s;
    s
  end

(* [th]'s promise resolved: FULFILLS/FAILS of it and of the threads that became it
   (one resolution, so one timestamp), by the thread running now *)
let resolved th res =
  if th.open_ then begin
    th.open_ <- false;
    match !ring with
    | None ->
      let n = ref th.dh in
      while !n >= 0 do
        let m = !n in
        n := Deps.next m;
        Deps.release m
      done
    | Some r when th.dh < 0 -> (
      (* one record: timestamped in the ring's C call (no clock call of its own) *)
      let thread = !cur in
      match res with
      | Ok () ->
        R.fulfills r ~thread ~resolvee:th.id;
        count 4;
        last_resolved := th.id
      | Error e ->
        R.fails r ~thread ~resolvee:th.id (exn_text e);
        count 5;
        last_resolved := th.id)
    | Some r -> (
      let ts = R.now r and thread = !cur in
      let n = ref th.dh in
      (* with the threads that became it: published together *)
      R.hold r;
      match res with
      | Ok () ->
        R.fulfills_ts r ~ts ~thread ~resolvee:th.id;
        count 4;
        last_resolved := th.id;
        while !n >= 0 do
          let m = !n and id = Deps.id !n in
          R.fulfills_ts r ~ts ~thread ~resolvee:id;
          count 4;
          last_resolved := id;
          n := Deps.next m;
          Deps.release m
        done;
        R.release r
      | Error e ->
        let s = exn_text e in
        R.fails_ts r ~ts ~thread ~resolvee:th.id s;
        count 5;
        last_resolved := th.id;
        while !n >= 0 do
          let m = !n and id = Deps.id !n in
          R.fails_ts r ~ts ~thread ~resolvee:id s;
          count 5;
          last_resolved := id;
          n := Deps.next m;
          Deps.release m
        done;
        R.release r)
  end

let ok = Ok ()

(* [th] resolved as [p] (resolved) is *)
let resolve_as th p =
  match Lwt.state p with
  | Lwt.Fail e -> resolved th (Error e)
  | _ -> resolved th ok

(* FULFILLS/FAILS of [th] when [p] resolves (now, if it already has): one closure,
   which reads the outcome from [p] itself *)
let watch th p =
  th.p <- Obj.repr p;
  if Lwt.is_sleeping p then Lwt.on_termination p (fun () -> resolve_as th p) else resolve_as th p;
  p

(* [th]'s callback returned [q]: BECOMES, if [q] is the promise of the traced thread
   created last (the one a callback returns, when traced, is that: its arguments are
   made before the call) *)
let[@inline] becomes r th q =
  let l = !last_created in
  if l != th && l.p == Obj.repr q then begin
    R.becomes r ~thread:th.id ~other:l.id;
    count 6;
    l
  end
  else none

(* ... and, for a bind, [th]'s promise now resolves with [q]: at once if [q] has;
   with [q]'s thread if [q] is a traced thread's still open (no Lwt callback: [th]
   and what became it join that thread's deps, which Lwt resolves in this order);
   else when Lwt resolves [q] *)
let settle th l q =
  if Lwt.is_sleeping q then begin
    if l.open_ then hand_on th l else Lwt.on_termination q (fun () -> resolve_as th q)
  end
  else resolve_as th q

(* {2 Running the user's code as a thread}  No closure of their own: the current
   thread is saved on the stack and restored on return or exception. *)

let[@inline] run0 id f =
  let s = !cur in
  cur := id;
  match f () with
  | v ->
    cur := s;
    v
  | exception e ->
    cur := s;
    reraise e

let[@inline] run1 id f x =
  let s = !cur in
  cur := id;
  match f x with
  | v ->
    cur := s;
    v
  | exception e ->
    cur := s;
    reraise e

let[@inline] run2 id f x y =
  let s = !cur in
  cur := id;
  match f x y with
  | v ->
    cur := s;
    v
  | exception e ->
    cur := s;
    reraise e

(* the user's callback, to be called by Lwt later, as thread [id] (one closure) *)
let[@inline] cb0 id f = fun () -> run0 id f
let[@inline] cb1 id f = fun x -> run1 id f x
let[@inline] cb2 id f = fun x y -> run2 id f x y

(* a handler of thread [th] woken by a resolution (catch, try_bind, finalize): READ,
   the body; with [bec], BECOMES what it returned if that is the thread created last *)
let handler bec th f x =
  let s = !cur in
  cur := th.id;
  (match !ring with Some r -> read r th.id | None -> ());
  match f x with
  | q ->
    (if bec then match !ring with Some r -> ignore (becomes r th q) | None -> ());
    cur := s;
    q
  | exception e ->
    cur := s;
    reraise e

(* {2 A thread's promise}  [lwt_f]'s promise as [th]'s, recorded when it resolves; if
   [lwt_f] raises, [th] FAILS with it (and the exception goes on, as untraced).  The
   [in_*] forms call [lwt_f] with [th] current: what it runs at once (the user's
   callbacks, a pool's constructor) is [th]'s. *)

let[@inline] watch1 th lwt_f a =
  match lwt_f a with
  | p -> watch th p
  | exception e ->
    resolved th (Error e);
    reraise e

let[@inline] watch2 th lwt_f a b =
  match lwt_f a b with
  | p -> watch th p
  | exception e ->
    resolved th (Error e);
    reraise e

let[@inline] in1 th lwt_f a =
  let s = !cur in
  cur := th.id;
  match lwt_f a with
  | p ->
    cur := s;
    watch th p
  | exception e ->
    cur := s;
    resolved th (Error e);
    reraise e

let[@inline] in2 th lwt_f a b =
  let s = !cur in
  cur := th.id;
  match lwt_f a b with
  | p ->
    cur := s;
    watch th p
  | exception e ->
    cur := s;
    resolved th (Error e);
    reraise e

let[@inline] in3 th lwt_f a b c =
  let s = !cur in
  cur := th.id;
  match lwt_f a b c with
  | p ->
    cur := s;
    watch th p
  | exception e ->
    cur := s;
    resolved th (Error e);
    reraise e

let track ?(site = 0) ty f =
  match !ring with
  | None -> f ()
  | Some r -> in1 (start r ty site) f ()

(* [call ty f x]: [f x] as a thread of type [ty]; what ppx_mtrace makes of a traced
   function of a library mtrace.lwt cannot depend on (Lwt_unix.sleep d is
   [call Task Lwt_unix.sleep d]), so a program gets only mtrace.lwt from the ppx *)
let call ?(site = 0) ty f x =
  match !ring with
  | None -> f x
  | Some r -> in1 (start r ty site) f x

let call2 ?(site = 0) ty f x y =
  match !ring with
  | None -> f x y
  | Some r -> in2 (start r ty site) f x y

(* {2 Annotations} *)

let label_thread t s =
  match !ring with
  | None -> ()
  | Some r ->
    R.label r ~thread:t s;
    count 7

let label s = label_thread (current ()) s

let counter name v =
  match !ring with
  | None -> ()
  | Some r ->
    R.counter r ~thread:(current ()) name v;
    count 8

let increase name v =
  match !ring with
  | None -> ()
  | Some r ->
    R.increase r ~thread:(current ()) name v;
    count 9

let notify ~port =
  match !ring with
  | None -> ()
  | Some r ->
    R.evtchn_send r ~thread:(current ()) ~port;
    count 10

let notified ~port =
  match !ring with
  | None -> ()
  | Some r ->
    R.evtchn_recv r ~thread:(current ()) ~port;
    count 11

let switch t =
  match !ring with
  | None -> ()
  | Some r ->
    R.switch r ~thread:t;
    count 12

let signal_current () =
  match !ring with
  | None -> ()
  | Some r ->
    (* a SIGNAL's source is the thread signalling (the waiter is not known to Lwt 5) *)
    R.signal r ~thread:(current ()) ~source:(current ());
    count 13
