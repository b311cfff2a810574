(** A Linux guest's tracing session through the C guest library (libmtrace-guest):
    the rings are shared with dom0 by grants, an event channel is offered and the
    whole is announced in xenstore, on real Xen or on the simulated Xen
    ([mtrace-simxen create --name NAME -- PROGRAM]: backend chosen from the environment).
    The OCaml writer ({!Mtrace_ring}) then writes the pages the library mapped.

    A program's main is usually {!with_session} (or, for Lwt, [Mtrace_lwt_guest.run]
    of [mtrace.lwt_guest]): it honours [MTRACE=off] and closes the session at the end. *)

type t

exception Unavailable of string
(** There is no domain to trace into: the program runs outside any Xen domain with no
    simulated Xen chosen ([MTRACE_SIM_DIR] unset), or in the reader's own domain (a
    shell of dom0, or of the simulated host).  The message says how to run it: in a Xen
    domU, or as a simulated domain ([mtrace-simxen create --name NAME -- PROG ARGS]).
    Uncaught, it prints as [Mtrace_guest.Unavailable: MESSAGE]. *)

val create : ?rings:int -> ?pages:int -> ?clock:int -> ?backend:string -> unit -> t
(** mtrace_guest_open: [rings] (default 1, 1..64) rings of [pages] data pages each
    (default 64, a power of two), [clock] an {!Mtrace_ring} clock id (default
    monotonic; [clock_tsc] falls back to monotonic where the TSC cannot be used),
    [backend] "xen" or "sim" (default: auto).  Each ring already holds its RING_START.
    [MTRACE] is not looked at: see {!start}.
    @raise Unavailable outside any domain (above).
    @raise Failure with the library's message otherwise. *)

val off : unit -> bool
(** The environment asks for no tracing: [MTRACE=off] (or [0], [no], [false]).  Unset,
    empty, [on], [1], [yes] or [true] mean tracing.
    @raise Failure for any other value (a typo must not silently trace or not). *)

val start : ?rings:int -> ?pages:int -> ?clock:int -> ?backend:string -> unit -> t option
(** [None] when {!off} (the program runs untraced), else [Some (create ...)].
    @raise Unavailable as {!create}, its message adding that [MTRACE=off] runs the
    program untraced. *)

val with_session :
  ?rings:int -> ?pages:int -> ?clock:int -> ?backend:string -> (t option -> 'a) -> 'a
(** [with_session f]: {!start}, then [f] with the session ([None]: untraced), then
    {!close} (also when [f] raises). *)

val wait_reader : t -> float -> bool
(** Wait up to this many seconds for a reader (mtraced) to attach a ring: [true] once
    one has (it sets the header's req_event at attach).  Nothing else waits for one: a
    session without a reader runs on, each ring a flight recorder keeping its latest
    records and overwriting the oldest, until mtraced attaches and reads from the oldest
    record still there (it counts the overwritten ones as lost). *)

val ring : t -> int -> Mtrace_ring.t
(** Ring [i]'s writer (the same value on every call): its clock is the session's, its
    notify hook the session's event channel.  One writer per ring at a time. *)

val rings : t -> int
val domid : t -> int
val port : t -> int
val clock : t -> int

val close : t -> unit
(** Withdraw the announcement and unshare: the rings must not be written after. *)
