(* Lwt threads traced into an mtrace ring (see the .mli for the model). *)

module R = Mtrace_ring

(* None = off: every wrapper's first (and, off, only) test *)
let ring : R.t option ref = ref None

(* the current thread follows Lwt callbacks: Lwt captures implicit values when a
   callback is registered and restores them when it runs *)
let key : int Lwt.key = Lwt.new_key ()
let current () = match Lwt.get key with Some t -> t | None -> 0

(* the thread running now, for FULFILLS/FAILS: a resolution's callbacks run with their
   registrant's implicit values, but the resolving thread is whoever is running *)
let running = ref 0
let next_id = ref 0

let fresh () =
  incr next_id;
  !next_id

(* Lwt 5 tells nobody which promise woke a callback, so the wrappers remember the
   thread whose resolution they last recorded (callbacks run synchronously inside
   it) and the thread they last created (a callback's returned promise is, when
   traced, the last one its body created: arguments are created before the call). *)
let last_resolved = ref 0
let last_created = ref 0

(* per-op counts of what this module wrote *)
let ops =
  [| "creates"; "site"; "site_name"; "read"; "fulfills"; "fails"; "becomes"; "label";
     "counter"; "increase"; "evtchn_send"; "evtchn_recv"; "switch"; "signal" |]

let counts = Array.make (Array.length ops) 0
let count i = counts.(i) <- counts.(i) + 1

let stats () =
  Array.to_list (Array.mapi (fun i op -> (op, counts.(i))) ops)
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

let creates r ~thread ~child ty site =
  last_created := child;
  if site <= 0 || site >= !n_sites then R.creates r ~thread ~child ~ty
  else begin
    if Bytes.get !site_written site = '\000' then begin
      R.site_name r ~site !site_names.(site);
      count 2;
      Bytes.set !site_written site '\001'
    end;
    R.creates_named r ~thread ~child ~ty ~site;
    count 1
  end;
  count 0

let read r ~thread =
  R.read r ~thread ~source:!last_resolved;
  count 3

let resolved r id = function
  | Ok _ ->
    R.fulfills r ~thread:!running ~resolvee:id;
    count 4;
    last_resolved := id
  | Error e ->
    R.fails r ~thread:!running ~resolvee:id (Printexc.to_string e);
    count 5;
    last_resolved := id

(* FULFILLS/FAILS of [id] when [p] resolves (now, if it already has) *)
let watch r id p =
  (match Lwt.state p with
   | Lwt.Return _ -> resolved r id (Ok ())
   | Lwt.Fail e -> resolved r id (Error e)
   | Lwt.Sleep ->
     Lwt.on_any p (fun _ -> resolved r id (Ok ())) (fun e -> resolved r id (Error e)));
  p

(* the callback's returned promise, if traced (created during the callback) *)
let becomes r id before =
  let q = !last_created in
  if q <> before then begin
    R.becomes r ~thread:id ~other:q;
    count 6
  end

let with_thread id f =
  let saved = !running in
  running := id;
  match Lwt.with_value key (Some id) f with
  | v ->
    running := saved;
    v
  | exception e ->
    running := saved;
    raise e

let new_promise ty site mk =
  match !ring with
  | None -> mk ()
  | Some r ->
    let id = fresh () in
    creates r ~thread:(current ()) ~child:id ty site;
    let ((p, _) as pu) = mk () in
    ignore (watch r id p);
    pu

let wait ?(site = 0) () = new_promise R.Wait site Lwt.wait
let task ?(site = 0) () = new_promise R.Task site Lwt.task

(* run a callback as thread [id]: READ, the body, BECOMES *)
let callback r id f x =
  with_thread id (fun () ->
      read r ~thread:id;
      let before = !last_created in
      let q = f x in
      becomes r id before;
      q)

let bind ?(site = 0) e f =
  match !ring with
  | None -> Lwt.bind e f
  | Some r ->
    let id = fresh () in
    creates r ~thread:(current ()) ~child:id R.Bind site;
    watch r id (Lwt.bind e (callback r id f))

let map ?(site = 0) f e =
  match !ring with
  | None -> Lwt.map f e
  | Some r ->
    let id = fresh () in
    creates r ~thread:(current ()) ~child:id R.Map site;
    watch r id
      (Lwt.map
         (fun x ->
           with_thread id (fun () ->
               read r ~thread:id;
               f x))
         e)

let catch ?(site = 0) f h =
  match !ring with
  | None -> Lwt.catch f h
  | Some r ->
    let id = fresh () in
    creates r ~thread:(current ()) ~child:id R.Try site;
    watch r id (Lwt.catch (fun () -> with_thread id f) (callback r id h))

let try_bind ?(site = 0) f g h =
  match !ring with
  | None -> Lwt.try_bind f g h
  | Some r ->
    let id = fresh () in
    creates r ~thread:(current ()) ~child:id R.Try site;
    watch r id (Lwt.try_bind (fun () -> with_thread id f) (callback r id g) (callback r id h))

let combine ty lwt_f site l =
  match !ring with
  | None -> lwt_f l
  | Some r ->
    let id = fresh () in
    creates r ~thread:(current ()) ~child:id ty site;
    watch r id (lwt_f l)

let join ?(site = 0) l = combine R.Join Lwt.join site l
let pick ?(site = 0) l = combine R.Pick Lwt.pick site l
let choose ?(site = 0) l = combine R.Choose Lwt.choose site l

let track ?(site = 0) ty f =
  match !ring with
  | None -> f ()
  | Some r ->
    let id = fresh () in
    creates r ~thread:(current ()) ~child:id ty site;
    watch r id (with_thread id f)

let async ?(site = 0) f =
  match !ring with
  | None -> Lwt.async f
  | Some _ -> Lwt.async (fun () -> track ~site R.Async f)

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

module Mvar = struct
  let take ?site m = track ?site R.Promise (fun () -> Lwt_mvar.take m)
  let put ?site m v = track ?site R.Promise (fun () -> Lwt_mvar.put m v)
end

module Condition = struct
  let wait ?site ?mutex c = track ?site R.Condition (fun () -> Lwt_condition.wait ?mutex c)

  let signal c v =
    signal_current ();
    Lwt_condition.signal c v

  let broadcast c v =
    signal_current ();
    Lwt_condition.broadcast c v
end

module Mutex = struct
  let lock ?site m = track ?site R.Mutex (fun () -> Lwt_mutex.lock m)
  let with_lock ?site m f = track ?site R.Mutex (fun () -> Lwt_mutex.with_lock m f)
end

module Stream = struct
  let next ?site s = track ?site R.Stream (fun () -> Lwt_stream.next s)
  let get ?site s = track ?site R.Stream (fun () -> Lwt_stream.get s)
end
