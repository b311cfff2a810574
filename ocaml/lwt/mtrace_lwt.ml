module R = Mtrace_ring

let ring : R.t option ref = ref None
let set_ring r = ring := r
let key : int Lwt.key = Lwt.new_key ()
let none = R.thread_none
let current () = match Lwt.get key with Some t -> t | None -> none
let next_id = ref 0

let mint () =
  incr next_id;
  !next_id

(* Site names are written once per ring; the table maps name -> id. *)
let sites : (string, int) Hashtbl.t = Hashtbl.create 64

let site name =
  match Hashtbl.find_opt sites name with
  | Some s -> s
  | None ->
      let s = Hashtbl.length sites + 1 in
      Hashtbl.add sites name s;
      (match !ring with Some r -> R.site_name r ~site:s name | None -> ());
      s

let created r ty site =
  let child = mint () in
  let thread = current () in
  (match site with
  | Some site -> R.creates_named r ~thread ~child ~ty ~site
  | None -> R.creates r ~thread ~child ~ty);
  child

(* Resolution of [p] (thread [id]) is recorded by whoever resolves it. *)
let note_resolution r id p =
  Lwt.on_any p
    (fun _ -> R.fulfills r ~thread:(current ()) ~resolvee:id)
    (fun e -> R.fails r ~thread:(current ()) ~resolvee:id (Printexc.to_string e))

let traced_pair ty ?site mk () =
  match !ring with
  | None -> mk ()
  | Some r ->
      let id = created r ty site in
      let p, u = mk () in
      note_resolution r id p;
      (p, u)

let wait ?site () = traced_pair R.Wait ?site Lwt.wait ()
let task ?site () = traced_pair R.Task ?site Lwt.task ()

(* The callback runs as thread [id]: it READs the source, and its result promise
   is the one the bind's thread BECOMES. *)
let in_thread r id src_id f x =
  Lwt.with_value key (Some id) (fun () ->
      if src_id <> id then R.read r ~thread:id ~source:src_id;
      f x)

let bind ?site p f =
  match !ring with
  | None -> Lwt.bind p f
  | Some r ->
      let src = current () in
      let id = created r R.Bind site in
      let q =
        Lwt.bind p (fun x ->
            let before = !next_id in
            let q' = in_thread r id src f x in
            (* No per-promise ids in Lwt 5.6: the promise the callback returned is
               taken to be the last thread it created (a tail bind's, typically). *)
            (match Lwt.state q' with
            | Lwt.Sleep when !next_id > before -> R.becomes r ~thread:id ~other:!next_id
            | _ -> ());
            q')
      in
      note_resolution r id q;
      q

let map ?site f p =
  match !ring with
  | None -> Lwt.map f p
  | Some r ->
      let src = current () in
      let id = created r R.Map site in
      let q = Lwt.map (fun x -> in_thread r id src f x) p in
      note_resolution r id q;
      q

let catch ?site f h =
  match !ring with
  | None -> Lwt.catch f h
  | Some r ->
      let id = created r R.Try site in
      let q =
        Lwt.with_value key (Some id) (fun () ->
            Lwt.catch f (fun e -> Lwt.with_value key (Some id) (fun () -> h e)))
      in
      note_resolution r id q;
      q

let async ?site f =
  match !ring with
  | None -> Lwt.async f
  | Some r ->
      let id = created r R.Async site in
      Lwt.async (fun () -> Lwt.with_value key (Some id) f)

let combine ty lwt ?site ps =
  match !ring with
  | None -> lwt ps
  | Some r ->
      let id = created r ty site in
      let q = lwt ps in
      note_resolution r id q;
      q

let join ?site ps = combine R.Join Lwt.join ?site ps
let pick ?site ps = combine R.Pick Lwt.pick ?site ps
let choose ?site ps = combine R.Choose Lwt.choose ?site ps
let sleep ?site d = combine R.Task (fun d -> Lwt_unix.sleep d) ?site d

let label s =
  match !ring with Some r -> R.label r ~thread:(current ()) s | None -> ()

let counter name v =
  match !ring with Some r -> R.counter r ~thread:(current ()) name v | None -> ()

let notify_send ~port =
  match !ring with Some r -> R.evtchn_send r ~thread:(current ()) ~port | None -> ()

let notify_recv ~port =
  match !ring with Some r -> R.evtchn_recv r ~thread:(current ()) ~port | None -> ()

let install_switch_hooks () =
  ignore
    (Lwt_main.Enter_iter_hooks.add_first (fun () ->
         match !ring with Some r -> R.switch r ~thread:0 | None -> ()));
  ignore
    (Lwt_main.Leave_iter_hooks.add_first (fun () ->
         match !ring with Some r -> R.switch r ~thread:none | None -> ()))
