(** Traced Lwt, in the spirit of mirage-profile's MProf.Trace.  Lwt 5.6 has no
    per-promise hooks, so the current thread travels in an Lwt implicit key
    ([Lwt.new_key]/[with_value]) across callbacks; every wrapper mints a thread id.
    With no ring set ({!set_ring}) the wrappers cost one check. *)

val set_ring : Mtrace_ring.t option -> unit
val current : unit -> int
(** The current thread ([Mtrace_ring.thread_none] outside any traced callback). *)

val site : string -> int
(** [site "file:line:col expr"] registers a creation site once, returns its id. *)

val wait : ?site:int -> unit -> 'a Lwt.t * 'a Lwt.u
val task : ?site:int -> unit -> 'a Lwt.t * 'a Lwt.u
val bind : ?site:int -> 'a Lwt.t -> ('a -> 'b Lwt.t) -> 'b Lwt.t
val map : ?site:int -> ('a -> 'b) -> 'a Lwt.t -> 'b Lwt.t
val catch : ?site:int -> (unit -> 'a Lwt.t) -> (exn -> 'a Lwt.t) -> 'a Lwt.t
val async : ?site:int -> (unit -> unit Lwt.t) -> unit
val join : ?site:int -> unit Lwt.t list -> unit Lwt.t
val pick : ?site:int -> 'a Lwt.t list -> 'a Lwt.t
val choose : ?site:int -> 'a Lwt.t list -> 'a Lwt.t
val sleep : ?site:int -> float -> unit Lwt.t
val label : string -> unit
val counter : string -> int -> unit
val notify_send : port:int -> unit
val notify_recv : port:int -> unit
val install_switch_hooks : unit -> unit
(** SWITCH records from Lwt_main's enter/leave iteration hooks. *)
