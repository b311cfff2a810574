(** A Linux guest's tracing session through the C guest library (libmtrace-guest):
    the rings are shared with dom0 by grants, an event channel is offered and the
    whole is announced in xenstore, on real Xen or on the simulated Xen
    ([mtrace-simxen create --name X -- PROGRAM]: backend chosen from the environment).
    The OCaml writer ({!Mtrace_ring}) then writes the pages the library mapped. *)

type t

val create : ?rings:int -> ?pages:int -> ?clock:int -> ?backend:string -> unit -> t
(** mtrace_guest_open: [rings] (default 1, 1..64) rings of [pages] data pages each
    (default 64, a power of two), [clock] an {!Mtrace_ring} clock id (default
    monotonic; [clock_tsc] falls back to monotonic where the TSC cannot be used),
    [backend] "xen" or "sim" (default: auto).  Each ring already holds its RING_START.
    @raise Failure with the library's message. *)

val ring : t -> int -> Mtrace_ring.t
(** Ring [i]'s writer (the same value on every call): its clock is the session's, its
    notify hook the session's event channel.  One writer per ring at a time. *)

val rings : t -> int
val domid : t -> int
val port : t -> int
val clock : t -> int

val close : t -> unit
(** Withdraw the announcement and unshare: the rings must not be written after. *)
