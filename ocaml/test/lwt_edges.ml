(* lwt_edges: Mtrace_lwt's resolution bookkeeping at its edges, read back from the ring
   it wrote (512 local pages, never overwritten here): every thread created is resolved
   exactly once, FULFILLS or FAILS as Lwt resolved its promise; BECOMES only between
   created threads.  The cases are those a bind takes without an Lwt callback of its
   own: its promise rejected before its callback ran, its callback raising (pending
   and synchronously), returning an untraced pending promise, returning an older traced
   one, cancellation, two binds becoming one thread, a chain of binds each becoming the
   next, and a bind that is returned while pending and later becomes another.
   Exit 1 with what differs; the dune test ocaml-edges (ocaml/test/dune). *)

module L = Mtrace_lwt

(* enum mtrace_op (proto/mtrace-ring.h) *)
let op_creates = 0
and op_fulfills = 2
and op_fails = 3
and op_becomes = 4

let hdr = Cstruct.create Mtrace_ring.page_size
let data = Cstruct.create (Mtrace_ring.page_size * 512)
let ring = Mtrace_ring.init ~hdr ~data ()
let failed = ref false

let bad fmt =
  Printf.ksprintf
    (fun s ->
      prerr_endline ("lwt_edges: " ^ s);
      failed := true)
    fmt

(* the records written since [from]: (op, thread, arg) *)
let records from =
  let head = Mtrace_ring.head ring in
  let rec go o acc =
    if o >= head then List.rev acc
    else
      let len = Cstruct.LE.get_uint16 data o and op = Cstruct.get_uint8 data (o + 2) in
      let thread = Int64.to_int (Cstruct.LE.get_uint64 data (o + 16)) in
      let arg = Int64.to_int (Cstruct.LE.get_uint64 data (o + 24)) in
      go (o + len) ((op, thread, arg) :: acc)
  in
  go from []

(* run [f] traced; then check the threads it created: [fails] of them FAILS, the rest
   FULFILLS, each once; [becomes] BECOMES *)
let case name ~fails ~becomes f =
  let from = Mtrace_ring.head ring in
  (try Lwt_main.run (f ()) with _ -> ());
  let created = Hashtbl.create 16 and resolved = Hashtbl.create 16 in
  let nf = ref 0 and nb = ref 0 in
  List.iter
    (fun (op, _, arg) ->
      if op = op_creates then Hashtbl.replace created arg ()
      else if op = op_fulfills || op = op_fails then begin
        if op = op_fails then incr nf;
        Hashtbl.replace resolved arg (1 + try Hashtbl.find resolved arg with Not_found -> 0)
      end)
    (records from);
  List.iter
    (fun (op, thread, arg) ->
      if op = op_becomes then begin
        incr nb;
        if not (Hashtbl.mem created thread && Hashtbl.mem created arg) then
          bad "%s: BECOMES %d -> %d between threads not created here" name thread arg
      end)
    (records from);
  Hashtbl.iter
    (fun t () ->
      match Hashtbl.find_opt resolved t with
      | Some 1 -> ()
      | Some n -> bad "%s: thread %d resolved %d times" name t n
      | None -> bad "%s: thread %d never resolved" name t)
    created;
  Hashtbl.iter (fun t _ -> if not (Hashtbl.mem created t) then bad "%s: %d resolved, not created" name t) resolved;
  if !nf <> fails then bad "%s: %d FAILS, want %d" name !nf fails;
  if !nb <> becomes then bad "%s: %d BECOMES, want %d" name !nb becomes;
  Printf.printf "%-34s %3d threads, %d FAILS, %d BECOMES\n" name (Hashtbl.length created) !nf !nb

let rec chain i = if i = 0 then Lwt.return_unit else L.bind (Lwt.pause ()) (fun () -> chain (i - 1))

let () =
  L.enable ring;
  case "rejected before the callback" ~fails:2 ~becomes:0 (fun () ->
      let p, u = L.wait () in
      let b = L.bind p (fun () -> Lwt.return_unit) in
      Lwt.wakeup_exn u Exit;
      b);
  case "bound to a failed promise" ~fails:1 ~becomes:0 (fun () ->
      L.bind (Lwt.fail Exit) (fun () -> Lwt.return_unit));
  case "callback raises (pending)" ~fails:1 ~becomes:0 (fun () ->
      L.bind (Lwt.pause ()) (fun () -> raise Exit));
  case "callback raises (at once)" ~fails:1 ~becomes:0 (fun () ->
      L.bind Lwt.return_unit (fun () -> raise Exit));
  case "returns an untraced pending one" ~fails:0 ~becomes:0 (fun () ->
      let p, u = Lwt.wait () in
      let b = L.bind (Lwt.pause ()) (fun () -> p) in
      Lwt.async (fun () -> Lwt.bind (Lwt.pause ()) (fun () -> Lwt.pause ()) |> Lwt.map (fun () -> Lwt.wakeup u ()));
      b);
  case "returns an older traced one" ~fails:0 ~becomes:0 (fun () ->
      let p, u = L.wait () in
      let b =
        L.bind (Lwt.pause ()) (fun () ->
            let _later, w = L.wait () in
            Lwt.wakeup w ();
            p)
      in
      Lwt.async (fun () -> Lwt.map (fun () -> Lwt.wakeup u ()) (Lwt.pause ()));
      b);
  case "cancelled" ~fails:2 ~becomes:0 (fun () ->
      let p, _ = L.task () in
      let b = L.bind p (fun () -> Lwt.return_unit) in
      Lwt.cancel b;
      Lwt.catch (fun () -> b) (fun _ -> Lwt.return_unit));
  case "two binds become one thread" ~fails:0 ~becomes:2 (fun () ->
      let shared = ref Lwt.return_unit and u = ref None in
      let a =
        L.bind (Lwt.pause ()) (fun () ->
            let p, w = L.wait () in
            shared := p;
            u := Some w;
            p)
      in
      let b = L.bind a (fun () -> Lwt.return_unit) in
      let c = L.bind (Lwt.pause ()) (fun () -> !shared) in
      Lwt.async (fun () ->
          Lwt.map (fun () -> Option.iter (fun w -> Lwt.wakeup w ()) !u) (Lwt.pause ()));
      Lwt.join [ b; c ]);
  case "a chain of 1000 binds" ~fails:0 ~becomes:999 (fun () -> chain 1000);
  case "returned pending, then becomes" ~fails:0 ~becomes:2 (fun () ->
      let inner = ref Lwt.return_unit in
      let outer =
        L.bind Lwt.return_unit (fun () ->
            (* created last: the outer bind becomes it while its callback waits *)
            inner := L.bind (Lwt.pause ()) (fun () -> chain 1);
            !inner)
      in
      outer);
  case "failure through a chain" ~fails:3 ~becomes:2 (fun () ->
      let rec down i = if i = 0 then Lwt.fail Exit else L.bind (Lwt.pause ()) (fun () -> down (i - 1)) in
      down 3);
  L.disable ();
  if !failed then exit 1;
  print_endline "ok: every thread resolved once"
