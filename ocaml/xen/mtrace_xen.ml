(* The Xen glue of an OCaml guest as a functor: guest/guest.c's session (grants, event
   channel, xenstore announcement) over module types shaped like mirage-xen's, so that a
   unikernel instantiates it with Xen_os's modules and a Linux guest with
   Mtrace_xen_linux's.  See mtrace_xen.mli for what each type mirrors. *)

module type XEN = sig
  module Gntref : sig
    type t

    val to_string : t -> string
    val to_int32 : t -> int32
  end

  module Export : sig
    type t

    val share_pages :
      domid:int -> count:int -> writable:bool -> (t, [> `Grant_table_full ]) result

    val refs : t -> Gntref.t list
    val mapping : t -> Cstruct.buffer
    val unshare : release_refs:bool -> t -> unit Lwt.t
  end
end

module type EVTCHN = sig
  type handle
  type t

  val init : unit -> handle
  val bind_unbound_port : handle -> int -> t
  val notify : handle -> t -> unit
  val unbind : handle -> t -> unit
  val to_int : t -> int
end

module type XS = sig
  type client
  type handle

  exception Enoent of string

  val make : unit -> client Lwt.t
  val immediate : client -> (handle -> 'a Lwt.t) -> 'a Lwt.t
  val transaction : client -> (handle -> 'a Lwt.t) -> 'a Lwt.t
  val read : handle -> string -> string Lwt.t
  val write : handle -> string -> string -> unit Lwt.t
  val rm : handle -> string -> unit Lwt.t
end

module type S = sig
  type t

  val create :
    ?backend:int ->
    ?rings:int ->
    ?pages:int ->
    ?clock_id:int ->
    ?clock:(unit -> int) ->
    ?clock_sync:(unit -> (int * int * int) option) ->
    unit ->
    t Lwt.t

  val ring : t -> int -> Mtrace_ring.t
  val rings : t -> int
  val pages : t -> int
  val domid : t -> int
  val port : t -> int
  val notify_failures : t -> int
  val reannounce : t -> unit Lwt.t
  val clock_check : t -> unit Lwt.t
  val clock_sync : t -> (int * int * int * int) option
  val close : t -> unit Lwt.t
end

(* proto/mtrace-ring.h *)
let xs_dir = "data/mtrace"
let max_rings = 64
let max_pages = 512
let hdr_size = 256

(* guest/clock-sync.h *)
let clock_sync_period_ns = 1_000_000_000
let clock_sync_move_ns = 50_000

let clock_name c =
  if c = Mtrace_ring.clock_xen then "xen"
  else if c = Mtrace_ring.clock_realtime then "realtime"
  else if c = Mtrace_ring.clock_tsc then "tsc"
  else "monotonic"

(* xenstore's domid, as strictly as xenif-xen.c reads it: digits only, below
   DOMID_FIRST_RESERVED. *)
let parse_domid v =
  let n = String.length v in
  let rec digits i = i = n || (v.[i] >= '0' && v.[i] <= '9' && digits (i + 1)) in
  match if n > 0 && n <= 5 && digits 0 then int_of_string_opt v else None with
  | Some d when d < 0x7ff0 -> d
  | _ -> failwith (Printf.sprintf "Mtrace_xen: xenstore's domid is %S" v)

module Make (Xen : XEN) (Evtchn : EVTCHN) (Xs : XS) = struct
  open Lwt.Infix

  type ring = { w : Mtrace_ring.t; hdr : Xen.Export.t; data : Xen.Export.t }

  (* the ring clock against Xen system time (guest/clock-sync.c): the last measure, the
     one announced and its seq *)
  type sync = {
    pair : unit -> (int * int * int) option;
    mutable now : (int * int * int) option;
    mutable put : (int * int * int) option;
    mutable seq : int;
    mutable checked : int option; (* the ring clock at the last measure *)
  }

  type t = {
    xs : Xs.client;
    clock : unit -> int;
    sync : sync;
    evh : Evtchn.handle;
    evtchn : Evtchn.t;
    clock_id : int;
    npages : int;
    rs : ring array;
    mutable dom : int;
    mutable failures : int;
    mutable closed : bool;
  }

  let base domid = Printf.sprintf "/local/domain/%d/%s" domid xs_dir
  let read_domid xs = Xs.immediate xs (fun h -> Xs.read h "domid") >|= parse_domid

  (* rm of a node that is not there: xenstored answers ENOENT only when its parent is
     missing too, and guest.c goes on either way (the writes create the path). *)
  let rm_if_there h path =
    Lwt.catch (fun () -> Xs.rm h path) (function Xs.Enoent _ -> Lwt.return_unit | e -> Lwt.fail e)

  let hdr_ref r =
    match Xen.Export.refs r.hdr with
    | [ g ] -> Xen.Gntref.to_string g
    | _ -> failwith "Mtrace_xen: a header share has not one grant ref"

  (* guest.c's announce_tx, key for key and in its order; run by Xs.transaction, which
     runs it again from the start when the commit conflicts. *)
  let announce_tx t h =
    let b = base t.dom in
    let w key v = Xs.write h (b ^ "/" ^ key) v in
    (* a previous announcement may have had more rings: start from nothing *)
    rm_if_there h b >>= fun () ->
    (* version 2 goes with clock tsc only, which create refuses *)
    w "version" "1" >>= fun () ->
    w "clock" (clock_name t.clock_id) >>= fun () ->
    w "event-channel" (string_of_int (Evtchn.to_int t.evtchn)) >>= fun () ->
    w "rings" (string_of_int (Array.length t.rs)) >>= fun () ->
    (* the ring clock against Xen system time, when a source answered *)
    (match t.sync.now with
    | Some (r, x, wd) ->
        t.sync.seq <- t.sync.seq + 1;
        t.sync.put <- t.sync.now;
        w "clock-sync" (Printf.sprintf "%d %d %d %d" t.sync.seq r x wd)
    | None -> Lwt.return_unit)
    >>= fun () ->
    let rec each i =
      if i = Array.length t.rs then Lwt.return_unit
      else
        w (Printf.sprintf "ring/%d/ref" i) (hdr_ref t.rs.(i)) >>= fun () ->
        w (Printf.sprintf "ring/%d/pages" i) (string_of_int t.npages) >>= fun () -> each (i + 1)
    in
    each 0 >>= fun () ->
    (* last: dom0 reads nothing before it sees "ready" *)
    w "state" "ready"

  (* A pair the contract can carry: four decimals below 2^62 (OCaml's ints). *)
  let measure s =
    s.now <-
      (match s.pair () with
      | Some (r, x, w) when r >= 0 && x >= 0 && w >= 0 -> Some (r, x, w)
      | Some _ | None | (exception _) -> None)

  let reannounce t =
    if t.closed then Lwt.fail_invalid_arg "Mtrace_xen.reannounce: closed"
    else begin
      (* after resume or migration Xen's time is another host's: measured again *)
      measure t.sync;
      t.sync.checked <- Some (t.clock ());
      (* after resume or migration the domid may have changed *)
      read_domid t.xs >>= fun d ->
      t.dom <- d;
      Xs.transaction t.xs (announce_tx t)
    end

  (* guest/clock-sync.c's clock_sync_moved: more than 50 us, and more than the two
     measures' noise *)
  let moved s =
    match (s.now, s.put) with
    | None, _ -> false
    | Some _, None -> true
    | Some (r, x, w), Some (r', x', w') ->
        let by = abs (x - r - (x' - r')) in
        by > clock_sync_move_ns && by > (w + w' + 1) / 2

  let clock_check t =
    let s = t.sync in
    let now = t.clock () in
    let due = match s.checked with None -> true | Some c -> now - c >= clock_sync_period_ns in
    if t.closed || not due then Lwt.return_unit
    else begin
      s.checked <- Some now;
      measure s;
      if not (moved s) then Lwt.return_unit
      else
        match s.now with
        | None -> Lwt.return_unit
        | Some (r, x, w) ->
            let v = Printf.sprintf "%d %d %d %d" (s.seq + 1) r x w in
            Xs.immediate t.xs (fun h -> Xs.write h (base t.dom ^ "/clock-sync") v) >|= fun () ->
            s.seq <- s.seq + 1;
            s.put <- s.now
    end

  let clock_sync t =
    match t.sync.put with Some (r, x, w) -> Some (t.sync.seq, r, x, w) | None -> None

  (* The header page holds the data pages' grant refs after its 256 bytes; init has
     zeroed it, so they go in after (as guest.c's share_ring). *)
  let put_refs hdr data pages =
    let refs = Xen.Export.refs data in
    if List.length refs <> pages then failwith "Mtrace_xen: a data share has the wrong ref count";
    List.iteri (fun k g -> Cstruct.LE.set_uint32 hdr (hdr_size + (4 * k)) (Xen.Gntref.to_int32 g)) refs

  let view e len = Cstruct.of_bigarray ~off:0 ~len (Xen.Export.mapping e)

  (* Most recent first: data before header, as guest_free. *)
  let unshare_all shared = Lwt_list.iter_s (Xen.Export.unshare ~release_refs:true) shared

  let check_args ~backend ~rings ~pages ~clock_id =
    if rings < 1 || rings > max_rings then Some (Printf.sprintf "rings must be 1..%d" max_rings)
    else if pages < 1 || pages > max_pages || pages land (pages - 1) <> 0 then
      Some (Printf.sprintf "data pages must be a power of two in 1..%d" max_pages)
    else if clock_id = Mtrace_ring.clock_tsc then
      Some "clock tsc needs the calibrated time block (guest library only)"
    else if
      clock_id <> Mtrace_ring.clock_monotonic
      && clock_id <> Mtrace_ring.clock_xen
      && clock_id <> Mtrace_ring.clock_realtime
    then Some (Printf.sprintf "unknown clock %d" clock_id)
    else if backend < 0 then Some "backend domid must be >= 0"
    else None

  let create ?(backend = 0) ?(rings = 1) ?(pages = 64) ?(clock_id = Mtrace_ring.clock_monotonic)
      ?clock ?(clock_sync = fun () -> None) () =
    match check_args ~backend ~rings ~pages ~clock_id with
    | Some why -> Lwt.fail_invalid_arg ("Mtrace_xen.create: " ^ why)
    | None ->
        Xs.make () >>= fun xs ->
        read_domid xs >>= fun dom ->
        (* the reader's own domain would announce rings nobody reads *)
        if dom = backend then
          Lwt.fail
            (Failure
               (Printf.sprintf
                  "Mtrace_xen: not running in a guest domain (this is domain %d, the \
                   reader's own)"
                  dom))
        else
          let evh = Evtchn.init () in
          let shared = ref [] and bound = ref None in
          let share ~count ~writable =
            match Xen.Export.share_pages ~domid:backend ~count ~writable with
            | Ok e ->
                shared := e :: !shared;
                e
            | Error `Grant_table_full ->
                failwith (Printf.sprintf "Mtrace_xen: grant table full (sharing %d pages)" count)
          in
          let make_ring i =
            (* dom0 writes req_event in the header; the data it only reads *)
            let hdr = share ~count:1 ~writable:true in
            let data = share ~count:pages ~writable:false in
            let hv = view hdr Mtrace_ring.page_size in
            let w =
              Mtrace_ring.init ~clock_id ~index:i ~name:(Printf.sprintf "ring%d" i) ~hdr:hv
                ~data:(view data (pages * Mtrace_ring.page_size))
                ()
            in
            put_refs hv data pages;
            Option.iter (Mtrace_ring.set_clock w) clock;
            { w; hdr; data }
          in
          let setup () =
            let rs = Array.init rings make_ring in
            let evtchn = Evtchn.bind_unbound_port evh backend in
            bound := Some evtchn;
            let sync = { pair = clock_sync; now = None; put = None; seq = 0; checked = None } in
            let ring_clock = Option.value clock ~default:Mtrace_ring.monotonic_ns in
            measure sync;
            sync.checked <- Some (ring_clock ());
            let t =
              {
                xs;
                clock = ring_clock;
                sync;
                evh;
                evtchn;
                clock_id;
                npages = pages;
                rs;
                dom;
                failures = 0;
                closed = false;
              }
            in
            (* A failed notification must not raise into the traced call that crossed
               req_event: dom0's periodic drain still finds the records. *)
            let kick () =
              try Evtchn.notify evh evtchn with _ -> t.failures <- t.failures + 1
            in
            Array.iter (fun r -> Mtrace_ring.set_notify r.w kick) rs;
            Array.iter (fun r -> Mtrace_ring.ring_start r.w) rs;
            Xs.transaction xs (announce_tx t) >|= fun () -> t
          in
          (* the first error is the one to report: releasing is best effort *)
          Lwt.catch setup (fun e ->
              Lwt.catch (fun () -> unshare_all !shared) (fun _ -> Lwt.return_unit) >>= fun () ->
              (try Option.iter (Evtchn.unbind evh) !bound with _ -> ());
              Lwt.fail e)

  let ring t i =
    if i < 0 || i >= Array.length t.rs then invalid_arg "Mtrace_xen.ring";
    t.rs.(i).w

  let rings t = Array.length t.rs
  let pages t = t.npages
  let domid t = t.dom
  let port t = Evtchn.to_int t.evtchn
  let notify_failures t = t.failures

  let close t =
    if t.closed then Lwt.return_unit
    else begin
      t.closed <- true;
      let b = base t.dom in
      (* "closed" first, so that a watching dom0 stops before the keys vanish *)
      let withdraw () =
        Xs.transaction t.xs (fun h -> Xs.write h (b ^ "/state") "closed") >>= fun () ->
        Xs.immediate t.xs (fun h -> rm_if_there h b)
      in
      let release () =
        unshare_all (List.concat_map (fun r -> [ r.data; r.hdr ]) (Array.to_list t.rs))
        >|= fun () -> Evtchn.unbind t.evh t.evtchn
      in
      Lwt.finalize withdraw release
    end
end
