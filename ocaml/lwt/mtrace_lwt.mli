(** Lwt threads traced into an mtrace ring, in the spirit of mirage-profile's
    [MProf.Trace], over an unmodified Lwt 5 (which has no per-promise hooks).

    Opt-in: a program (or {!Ppx_mtrace}, which rewrites [let%lwt], [>>=], [>|=],
    [Lwt.bind], [Lwt.map], [Lwt.async]) calls these in place of Lwt's.  Until
    {!enable}, and after {!disable}, each wrapper costs one branch and calls Lwt's.

    {b Thread identity.}  Every traced promise gets a thread id (from 1; 0 is the
    program's main thread).  "The current thread" is a global set around every traced
    callback and restored after it (as mirage-profile's Lwt_tracing kept it), so it
    follows the traced forms: a bind creates its thread (type [Bind]) where it is
    called; its callback runs with that thread current and READs the thread whose
    resolution woke it; if the callback returns the promise of the traced thread
    created last, the bind BECOMES it; the bind's resolution is FULFILLS or FAILS
    (with [Printexc.to_string]) by the thread running when it resolves (0 outside
    traced callbacks).  A bind that BECAME a thread still pending is resolved with
    it, in the order Lwt resolves them, with that one resolution's timestamp.  An
    untraced callback (Lwt's own, or one registered with [Lwt.on_success] ...) runs
    as whichever thread is current when Lwt runs it.

    {b Sites.}  [?site] is an id from {!site}; its name is written (SITE_NAME) once
    per ring, before the first CREATES that carries it. *)

val enable : Mtrace_ring.t -> unit
(** Trace into this ring from now on (site names are written again into it). *)

val disable : unit -> unit
val set_ring : Mtrace_ring.t option -> unit
val enabled : unit -> bool

val site : string -> int
(** Register a creation site by name ("file:line:col"): a fresh non-zero id. *)

val current : unit -> int
(** The current thread: 0 outside any traced callback. *)

val stats : unit -> (string * int) list
(** Records written through this module, per op as [mtrace-cat -f json] names them
    ("creates", "site" for a CREATES's site extension, "site_name", "read", ...),
    sorted by op. *)

(** {2 Promises} *)

val wait : ?site:int -> unit -> 'a Lwt.t * 'a Lwt.u
val task : ?site:int -> unit -> 'a Lwt.t * 'a Lwt.u
val bind : ?site:int -> 'a Lwt.t -> ('a -> 'b Lwt.t) -> 'b Lwt.t
val map : ?site:int -> ('a -> 'b) -> 'a Lwt.t -> 'b Lwt.t
val catch : ?site:int -> (unit -> 'a Lwt.t) -> (exn -> 'a Lwt.t) -> 'a Lwt.t

val try_bind :
  ?site:int -> (unit -> 'a Lwt.t) -> ('a -> 'b Lwt.t) -> (exn -> 'b Lwt.t) -> 'b Lwt.t

val join : ?site:int -> unit Lwt.t list -> unit Lwt.t
val pick : ?site:int -> 'a Lwt.t list -> 'a Lwt.t
val choose : ?site:int -> 'a Lwt.t list -> 'a Lwt.t
val async : ?site:int -> (unit -> unit Lwt.t) -> unit

val track : ?site:int -> Mtrace_ring.thread_type -> (unit -> 'a Lwt.t) -> 'a Lwt.t
(** [track ty f]: [f ()]'s promise as a thread of type [ty] created here, [f] running
    with it current (for wrapping other primitives: Lwt_mvar, Lwt_stream, ...). *)

(** {2 Annotations} *)

val label : string -> unit
(** Label the current thread. *)

val label_thread : int -> string -> unit
val counter : string -> int -> unit
val increase : string -> int -> unit

val notify : port:int -> unit
(** An event-channel style notification sent by the current thread. *)

val notified : port:int -> unit
(** ... and received. *)

val switch : int -> unit
(** SWITCH to thread [n] ({!Mtrace_ring.thread_none} for idle). *)

(** {2 Lwt's other primitives}  Each blocking operation is a thread of its own (created
    where it is called, resolved when it returns), of the type mtrace has for it. *)

module Mvar : sig
  val take : ?site:int -> 'a Lwt_mvar.t -> 'a Lwt.t
  val put : ?site:int -> 'a Lwt_mvar.t -> 'a -> unit Lwt.t
end

module Condition : sig
  val wait : ?site:int -> ?mutex:Lwt_mutex.t -> 'a Lwt_condition.t -> 'a Lwt.t

  val signal : 'a Lwt_condition.t -> 'a -> unit
  (** [Lwt_condition.signal], recorded as a SIGNAL by the current thread. *)

  val broadcast : 'a Lwt_condition.t -> 'a -> unit
end

module Mutex : sig
  val lock : ?site:int -> Lwt_mutex.t -> unit Lwt.t
  val with_lock : ?site:int -> Lwt_mutex.t -> (unit -> 'a Lwt.t) -> 'a Lwt.t
end

module Stream : sig
  val next : ?site:int -> 'a Lwt_stream.t -> 'a Lwt.t
  val get : ?site:int -> 'a Lwt_stream.t -> 'a option Lwt.t
end
