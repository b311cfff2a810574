(* The harness of lwt_vocab: one case runs a form three times, as Lwt's own function
   (tracing off), as Mtrace_lwt's with tracing off, and as Mtrace_lwt's into a local
   ring (512 pages, never overwritten here), and checks:
   - the three give the same result (value or exception text) and the same log (what
     the callbacks noted, in order: Lwt's ordering);
   - off, nothing is written (ring head and Mtrace_lwt.stats unchanged);
   - on, exactly one thread carries the case's site (the call's thread T, or a track
     around the call for a form that makes no thread); every other thread created in
     the run has T as parent (callbacks run as T, at once or later from Lwt's loop;
     they [probe], which creates a thread), or with [nested], a thread created in the
     run after T (a traced form inside a callback); at least [probes] children of T; every
     thread is resolved exactly once; T's resolution is the result's (FAILS with the
     exception's text, "Lwt.Canceled" for Lwt.Canceled) unless [t_res] says otherwise;
     the current thread is 0 again after the run. *)

module L = Mtrace_lwt

let hdr = Cstruct.create Mtrace_ring.page_size
let data = Cstruct.create (Mtrace_ring.page_size * 512)
let ring = Mtrace_ring.init ~hdr ~data ()
let failed = ref false
let n_cases = ref 0
let n_threads = ref 0

let bad fmt =
  Printf.ksprintf
    (fun s ->
      prerr_endline ("lwt_vocab: " ^ s);
      failed := true)
    fmt

(* enum mtrace_op (proto/mtrace-ring.h) *)
let op_creates = 0
and op_fulfills = 2
and op_fails = 3

type rcd = { op : int; thread : int; arg : int; site : int; text : string }

(* the records written since [from]: CREATES with its site extension (0: none), FAILS
   with its text *)
let records from =
  let head = Mtrace_ring.head ring in
  let rec go o acc =
    if o >= head then List.rev acc
    else
      let len = Cstruct.LE.get_uint16 data o and op = Cstruct.get_uint8 data (o + 2) in
      let u64 at = Int64.to_int (Cstruct.LE.get_uint64 data (o + at)) in
      let site = if op = op_creates && len >= 48 then u64 32 else 0 in
      let text =
        if op <> op_fails then ""
        else
          let s = Cstruct.to_string (Cstruct.sub data (o + 32) (len - 32)) in
          String.sub s 0 (String.index s '\000')
      in
      go (o + len) ({ op; thread = u64 16; arg = u64 24; site; text } :: acc)
  in
  go from []

(* what callbacks note, in order *)
let log = ref []
let note s = log := s :: !log
let notei i = note (string_of_int i)

(* a thread created inside a callback: its parent is the callback's current thread *)
let probe_site = L.site "probe"

let probe () =
  let _, u = L.wait ~site:probe_site () in
  Lwt.wakeup u ()

(* exceptions as text; Lwt.async_exception_hook only notes them *)
let text e = Printexc.to_string e
let () = Lwt.async_exception_hook := fun e -> note ("hook " ^ text e)

let state p =
  match Lwt.state p with
  | Lwt.Return _ -> "fulfilled"
  | Lwt.Fail e -> "failed " ^ text e
  | Lwt.Sleep -> "pending"

let outcome f =
  log := [];
  let v = try Ok (Lwt_main.run (f ())) with e -> Error (text e) in
  (v, List.rev !log)

let head () = Mtrace_ring.head ring

let count_by f l = List.length (List.filter f l)

let check_run name site (res, _) ~probes ~t_res ~nested from =
  let rs = records from in
  let creates = List.filter (fun r -> r.op = op_creates) rs in
  n_threads := !n_threads + List.length creates;
  (match List.filter (fun r -> r.site = site) creates with
  | [ t ] ->
    let tid = t.arg in
    let others = List.filter (fun r -> r.arg <> tid) creates in
    List.iter
      (fun r ->
        if r.thread = tid then ()
        else if nested && List.exists (fun c -> c.arg = r.thread) others then ()
        else bad "%s: thread %d created by %d, not by the call's thread %d" name r.arg r.thread tid)
      others;
    let children = count_by (fun r -> r.thread = tid) others in
    if children < probes then
      bad "%s: %d threads created in callbacks, want at least %d" name children probes;
    let res_of id = List.filter (fun r -> (r.op = op_fulfills || r.op = op_fails) && r.arg = id) rs in
    List.iter
      (fun c ->
        match res_of c.arg with
        | [ _ ] -> ()
        | l -> bad "%s: thread %d resolved %d times" name c.arg (List.length l))
      creates;
    let want =
      match (t_res, res) with
      | `Outcome, Ok _ | `Ok, _ -> None
      | `Outcome, Error s -> Some (if s = text Lwt.Canceled then "Lwt.Canceled" else s)
      | `Fails s, _ -> Some s
    in
    (match (res_of tid, want) with
    | [ { op; _ } ], None when op = op_fulfills -> ()
    | [ { op; text; _ } ], Some s when op = op_fails && text = s -> ()
    | [ { op; text; _ } ], _ ->
      bad "%s: the call's thread %s %S, want %s" name
        (if op = op_fails then "FAILS" else "FULFILLS")
        text
        (match want with None -> "FULFILLS" | Some s -> "FAILS " ^ s)
    | _ -> ())
  | l -> bad "%s: %d threads with the case's site, want 1" name (List.length l));
  List.iter
    (fun r ->
      if (r.op = op_fulfills || r.op = op_fails) && not (List.exists (fun c -> c.arg = r.arg) creates)
      then bad "%s: thread %d resolved, not created in the run" name r.arg)
    rs;
  count_by (fun r -> r.op = op_fails && r.text = "Lwt.Canceled") rs

(* [lwt ()]: the form as Lwt's; [traced site]: as Mtrace_lwt's, with that site.
   [cancels]: at least that many FAILS "Lwt.Canceled" in the traced run. *)
let case ?(probes = 1) ?(t_res = `Outcome) ?(cancels = 0) ?(nested = false) name (lwt : unit -> 'a Lwt.t)
    (traced : int -> 'a Lwt.t) =
  incr n_cases;
  let site = L.site name in
  L.disable ();
  let a = outcome lwt in
  let h0 = head () and st0 = L.stats () in
  let b = outcome (fun () -> traced site) in
  if head () <> h0 || L.stats () <> st0 then bad "%s: tracing off wrote records" name;
  L.enable ring;
  let from = head () in
  let c = outcome (fun () -> traced site) in
  L.disable ();
  if L.current () <> 0 then bad "%s: current thread %d after the run" name (L.current ());
  let show (v, l) =
    (match v with Ok _ -> "ok" | Error s -> "exn " ^ s) ^ " [" ^ String.concat "; " l ^ "]"
  in
  if a <> b then bad "%s: off gives %s, Lwt %s" name (show b) (show a);
  if a <> c then bad "%s: on gives %s, Lwt %s" name (show c) (show a);
  let nc = check_run name site c ~probes ~t_res ~nested from in
  if nc < cancels then bad "%s: %d FAILS Lwt.Canceled, want %d" name nc cancels

let finish () =
  if Mtrace_ring.overwritten ring <> 0 then bad "the ring overwrote records: raise its size";
  if !failed then exit 1;
  Printf.printf "ok: %d cases, %d threads, each as Lwt, parented and resolved once\n" !n_cases
    !n_threads
