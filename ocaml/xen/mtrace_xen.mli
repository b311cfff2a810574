(** A guest's tracing session as a functor over the Xen glue, so that a MirageOS
    unikernel builds it from mirage-xen's own modules and a Linux guest from
    {!Mtrace_xen_linux}'s (libxenif: real Xen or mtrace-simxen).

    [Make (Xen) (Eventchn) (Xs)] does what guest/guest.c does for the C producer
    (docs/ring-protocol.md sections 2 and 7): per ring it shares one header page
    (writable by dom0: [req_event], [reader_pos]) and [pages] data pages (read-only),
    formats the ring with {!Mtrace_ring.init} and the data pages' grant refs in the
    header, binds one unbound event-channel port for dom0, writes every ring's
    RING_START and then the xenstore announcement under
    [/local/domain/<domid>/data/mtrace] in one transaction.  {!S.close} withdraws it.

    The module types are subsets of mirage-xen's (v6 and later: [Xen_os.Xen],
    [Xen_os.Eventchn], [Xen_os.Xs] = ocaml-xenstore's [Xs_client_lwt.Client]); each
    value names the function it mirrors.  Nothing here uses Unix or C of its own. *)

(** Grant sharing: [Xen_os.Xen] (its [Gntref] and [Export] submodules). *)
module type XEN = sig
  module Gntref : sig
    type t
    (** A grant reference ([Xen_os.Xen.Gntref.t]). *)

    val to_string : t -> string
    (** [Xen_os.Xen.Gntref.to_string]: unsigned decimal, the xenstore value. *)

    val to_int32 : t -> int32
    (** [Xen_os.Xen.Gntref.to_int32]: the u32 a header's [data_refs] holds. *)
  end

  module Export : sig
    type t
    (** Pages shared with one foreign domain ([Xen_os.Xen.Export.t]). *)

    val share_pages :
      domid:int -> count:int -> writable:bool -> (t, [> `Grant_table_full ]) result
    (** [Xen_os.Xen.Export.share_pages]: [count] fresh zeroed, contiguous pages granted
        to [domid], read-only unless [writable]. *)

    val refs : t -> Gntref.t list
    (** [Xen_os.Xen.Export.refs]: the grant refs, in page order. *)

    val mapping : t -> Cstruct.buffer
    (** [Xen_os.Xen.Export.mapping]: the pages ([Io_page.t] is this Bigarray). *)

    val unshare : release_refs:bool -> t -> unit Lwt.t
    (** [Xen_os.Xen.Export.unshare]: end the grants (waiting while dom0 still maps them
        where the platform says so). *)
  end
end

(** Event channels: [Xen_os.Eventchn]. *)
module type EVTCHN = sig
  type handle
  type t

  val init : unit -> handle
  (** [Xen_os.Eventchn.init]. *)

  val bind_unbound_port : handle -> int -> t
  (** [Xen_os.Eventchn.bind_unbound_port h remote_domid]: a port dom0 will bind with
      bind_interdomain. *)

  val notify : handle -> t -> unit
  (** [Xen_os.Eventchn.notify]. *)

  val unbind : handle -> t -> unit
  (** [Xen_os.Eventchn.unbind]. *)

  val to_int : t -> int
  (** [Xen_os.Eventchn.to_int]: the port number announced as [event-channel]. *)
end

(** The xenstore client: [Xen_os.Xs] ([Xs_client_lwt.Client]'s result), plus its
    not-found exception, which mirage's client raises from [Xs_protocol]
    ([exception Enoent = Xs_protocol.Enoent] is the whole adapter). *)
module type XS = sig
  type client
  type handle

  exception Enoent of string
  (** [Xs_protocol.Enoent]: the node (or its parent, for [rm]) does not exist. *)

  val make : unit -> client Lwt.t
  (** [Xen_os.Xs.make]. *)

  val immediate : client -> (handle -> 'a Lwt.t) -> 'a Lwt.t
  (** [Xen_os.Xs.immediate]: operations outside any transaction. *)

  val transaction : client -> (handle -> 'a Lwt.t) -> 'a Lwt.t
  (** [Xen_os.Xs.transaction]: the function's operations in one transaction, the whole
      function run again when the commit conflicts (EAGAIN); aborted if it raises. *)

  val read : handle -> string -> string Lwt.t
  (** [Xen_os.Xs.read]; a relative path is under the domain's home
      ([read h "domid"] is how a guest learns its domid).  @raise Enoent *)

  val write : handle -> string -> string -> unit Lwt.t
  (** [Xen_os.Xs.write]. *)

  val rm : handle -> string -> unit Lwt.t
  (** [Xen_os.Xs.rm]: the node and everything below it. *)
end

(** The session the functor builds. *)
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
  (** Share [rings] (default 1, 1..64) rings of [pages] data pages each (default 64, a
      power of two in 1..512) with domain [backend] (default 0), bind the event channel,
      write each ring's RING_START and announce them.  [clock_id] is the header's and
      the announcement's clock ({!Mtrace_ring.clock_monotonic} (default),
      [clock_xen] or [clock_realtime]; [clock_tsc] needs the calibrated time block of
      section 8 and is refused here); [clock] is what each ring reads its timestamps
      from (default {!Mtrace_ring.monotonic_ns}; a unikernel gives Xen system time).
      [clock_sync] reads [clock] and Xen system time together:
      [Some (ring_ns, xen_ns, width_ns)] (the uncertainty is width/2), or [None] where
      Xen's time cannot be read; a measure goes into the announcement as [clock-sync] =
      ["<seq> <ring_ns> <xen_ns> <width_ns>"] (docs/xen-time.md), so that dom0 can put
      the rings on its timeline.  Default: none (no key: dom0 says it cannot map
      them).  A unikernel whose [clock] is Xen system time gives
      [fun () -> let t = now () in Some (t, t, 0)].
      On any failure what was shared or bound is released before the exception goes
      on.
      @raise Invalid_argument on bad arguments
      @raise Failure when this is the backend's own domain or the grant table is full *)

  val ring : t -> int -> Mtrace_ring.t
  (** Ring [i]'s writer (one writer per ring at a time); its notify hook is the
      session's event channel. *)

  val rings : t -> int
  val pages : t -> int

  val domid : t -> int
  (** This domain, as read from xenstore ([domid]) at create or the last
      {!reannounce}. *)

  val port : t -> int
  (** The event-channel port offered to the backend. *)

  val notify_failures : t -> int
  (** Notifications that raised (counted, not raised into a traced call). *)

  val reannounce : t -> unit Lwt.t
  (** Write the announcement again (after resume or migration: the domid is read
      again), as mtrace_guest_reannounce. *)

  val clock_check : t -> unit Lwt.t
  (** Measure [clock_sync] again if a second of [clock] passed since the last measure,
      and rewrite [clock-sync] (seq + 1) when the relation moved by more than 50 us and
      more than the two measures' uncertainty (guest/clock-sync.c's rule).  Cheap
      otherwise: call it as often as convenient (the C library does it on a thread of
      its own once a second). *)

  val clock_sync : t -> (int * int * int * int) option
  (** What [clock-sync] says now: [(seq, ring_ns, xen_ns, width_ns)]. *)

  val close : t -> unit Lwt.t
  (** Withdraw: [state = closed] in a transaction, then the directory removed; then
      every page unshared and the port unbound, even when xenstore failed (its
      exception goes on after).  The rings must not be written after. *)
end

module Make (Xen : XEN) (Evtchn : EVTCHN) (Xs : XS) : S

(** {2 The announcement, shared with the tests} *)

val xs_dir : string
(** ["data/mtrace"] (MTRACE_XS_DIR). *)

val clock_name : int -> string
(** The [clock] value of a clock id: ["monotonic"], ["xen"], ["realtime"], ["tsc"]. *)

val max_rings : int
(** 64 (MTRACE_MAX_RINGS). *)

val hdr_size : int
(** 256: where a header page's [data_refs] start. *)
