(** The Linux instance of {!Mtrace_xen}'s module types, over the project's xenif seam
    (libxengntshr, libxenevtchn and libxenstore on real Xen, or mtrace-simxen): the same
    functor then runs in a Linux domU, or as a simulated domain
    ([mtrace-simxen create --name X -- PROGRAM], MTRACE_SIM_DIR set).

    One Xen handle per process, opened at the first call (or by {!init}); calls are
    synchronous (their promises are already resolved) and must come from one thread at
    a time.  Errors other than those mirage-xen answers with a value raise [Failure]
    with the call and the errno text. *)

val init : ?backend:string -> unit -> unit
(** Open the handle now with [backend] "xen" or "sim" (default: "sim" when
    MTRACE_SIM_DIR is set, else "xen").  Optional: the first call opens it otherwise.
    @raise Failure if it cannot be opened, or is open with another backend. *)

val backend : unit -> string
(** "xen" or "sim": the backend in use (opens the handle). *)

(** [Mtrace_xen.XEN]: grant refs are ints (u32). *)
module Xen : sig
  module Gntref : sig
    type t = int

    val to_string : t -> string
    val to_int32 : t -> int32
    val of_int32 : int32 -> t
  end

  module Export : sig
    type t

    val share_pages :
      domid:int -> count:int -> writable:bool -> (t, [> `Grant_table_full ]) result
    (** gntshr_share: [Error `Grant_table_full] on ENOSPC (gntalloc's limit). *)

    val refs : t -> Gntref.t list
    val mapping : t -> Cstruct.buffer

    val unshare : release_refs:bool -> t -> unit Lwt.t
    (** gntshr_unshare (the pages are unmapped here; [release_refs] is moot: Linux
        frees the refs with the pages).  A second call does nothing. *)
  end
end

(** [Mtrace_xen.EVTCHN]: ports are ints. *)
module Eventchn : sig
  type handle
  type t = int

  val init : unit -> handle
  val bind_unbound_port : handle -> int -> t
  val notify : handle -> t -> unit
  val unbind : handle -> t -> unit
  val to_int : t -> int
  val of_int : int -> t
end

(** [Mtrace_xen.XS] (plus [directory], for readers): a handle is a transaction id, 0
    outside any. *)
module Xs : sig
  type client
  type handle

  exception Enoent of string

  val make : unit -> client Lwt.t
  val immediate : client -> (handle -> 'a Lwt.t) -> 'a Lwt.t

  val transaction : client -> (handle -> 'a Lwt.t) -> 'a Lwt.t
  (** Run again from the start when the commit conflicts (EAGAIN), up to 64 times as
      guest.c; aborted when the function raises. *)

  val read : handle -> string -> string Lwt.t
  val write : handle -> string -> string -> unit Lwt.t
  val rm : handle -> string -> unit Lwt.t
  val directory : handle -> string -> string list Lwt.t
end

val clock_sync : clock_id:int -> unit -> (int * int * int) option
(** Xen system time and the clock a ring of [clock_id] reads by default (CLOCK_REALTIME
    for {!Mtrace_ring.clock_realtime}, else CLOCK_MONOTONIC), read together through
    xenif: [Some (ring_ns, xen_ns, width_ns)], or [None] where Xen's time cannot be read
    (docs/xen-time.md). *)

(** [Mtrace_xen.Make (Xen) (Eventchn) (Xs)], whose [create] announces clock-sync by
    default with {!clock_sync} (none when the program gives its own [clock] and no
    [clock_sync]). *)
module Session : Mtrace_xen.S
