(** Lwt threads traced into an mtrace ring, in the spirit of mirage-profile's
    [MProf.Trace], over an unmodified Lwt 5 (which has no per-promise hooks).

    Opt-in: a program (or {!Ppx_mtrace}, which rewrites Lwt's forms into these) calls
    these in place of Lwt's: [Lwt.f] is [Mtrace_lwt.f], [Lwt_list.f] is
    [Mtrace_lwt.List.f], and so on, each with Lwt 5.6's type and [?site] first.  Until
    {!enable}, and after {!disable}, each wrapper costs one branch and calls Lwt's.

    {b Thread identity.}  Every traced promise gets a thread id (from 1; 0 is the
    program's main thread).  "The current thread" is a global set around every traced
    callback and restored after it (as mirage-profile's Lwt_tracing kept it), so it
    follows the traced forms: a bind creates its thread (type [Bind]) where it is
    called; its callback runs with that thread current and READs the thread whose
    resolution woke it; if the callback returns the promise of the traced thread
    created last, the bind BECOMES it; the bind's resolution is FULFILLS or FAILS
    (with [Printexc.to_string], but "Lwt.Canceled" for [Lwt.Canceled]) by the thread
    running when it resolves (0 outside traced callbacks).  A bind that BECAME a
    thread still pending is resolved with it, in the order Lwt resolves them, with
    that one resolution's timestamp.  Every callback handed to a wrapper runs as the
    thread that call created (or, for a stream transformer, as the thread current at
    the call), so what it creates has that thread as parent; an untraced callback
    (Lwt's own, or one given to Lwt directly) runs as whichever thread is current
    when Lwt runs it.

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

(** {2 Module Lwt}  Each has Lwt's type with [?site] first, and returns the promise
    Lwt's function returns ([map]: an [Lwt.try_bind]'s, which behaves as [Lwt.map]'s),
    so results, ordering and cancellation are Lwt's ([Lwt.cancel] on it does what it
    does untraced).  Thread types: [wait] Wait, [task] Task, [bind] Bind, [map] Map,
    [catch]/[try_bind]/[finalize] Try, [both]/[all]/[join] Join, [pick]/[npick] Pick,
    [choose]/[nchoose]/[nchoose_split] Choose, [pause] Task, [wrap*]/[apply] Try (Lwt
    turns the function's exception into a rejection), [protected] Task and [no_cancel]
    Wait (what Lwt makes them: a fresh task / wait resolved with the promise),
    [on_success]/[on_failure]/[on_termination]/[on_any] On_success/... and
    [async]/[dont_wait] Async.  The functions Lwt calls at once ([catch]'s body,
    [wrap]'s function, [async]'s ...) and those it calls later (handlers, a bind's or
    map's callback) all run as the call's thread; a handler woken by a resolution
    (bind, map, catch, try_bind, finalize's finalizer) READs first.  A thread is
    resolved with Lwt's promise (FAILS with Lwt's exception, "Lwt.Canceled" for
    [Lwt.Canceled]), or FAILS if Lwt's function raises (as [Lwt.pick []]).
    [on_success] & co: the thread is created at registration, the handler runs as it,
    and it resolves when the handler returns (FAILS if it raises; the exception still
    goes to [Lwt.async_exception_hook]) or, if the promise's outcome is not the
    handler's, when the promise resolves.  [dont_wait]'s exception handler runs as the
    Async thread too. *)

val wait : ?site:int -> unit -> 'a Lwt.t * 'a Lwt.u
val task : ?site:int -> unit -> 'a Lwt.t * 'a Lwt.u
val bind : ?site:int -> 'a Lwt.t -> ('a -> 'b Lwt.t) -> 'b Lwt.t
val map : ?site:int -> ('a -> 'b) -> 'a Lwt.t -> 'b Lwt.t
val catch : ?site:int -> (unit -> 'a Lwt.t) -> (exn -> 'a Lwt.t) -> 'a Lwt.t

val try_bind :
  ?site:int -> (unit -> 'a Lwt.t) -> ('a -> 'b Lwt.t) -> (exn -> 'b Lwt.t) -> 'b Lwt.t

val finalize : ?site:int -> (unit -> 'a Lwt.t) -> (unit -> unit Lwt.t) -> 'a Lwt.t
val both : ?site:int -> 'a Lwt.t -> 'b Lwt.t -> ('a * 'b) Lwt.t
val all : ?site:int -> 'a Lwt.t list -> 'a list Lwt.t
val join : ?site:int -> unit Lwt.t list -> unit Lwt.t
val pick : ?site:int -> 'a Lwt.t list -> 'a Lwt.t
val npick : ?site:int -> 'a Lwt.t list -> 'a list Lwt.t
val choose : ?site:int -> 'a Lwt.t list -> 'a Lwt.t
val nchoose : ?site:int -> 'a Lwt.t list -> 'a list Lwt.t
val nchoose_split : ?site:int -> 'a Lwt.t list -> ('a list * 'a Lwt.t list) Lwt.t
val pause : ?site:int -> unit -> unit Lwt.t
val apply : ?site:int -> ('a -> 'b Lwt.t) -> 'a -> 'b Lwt.t
val wrap : ?site:int -> (unit -> 'a) -> 'a Lwt.t
val wrap1 : ?site:int -> ('a -> 'b) -> 'a -> 'b Lwt.t
val wrap2 : ?site:int -> ('a -> 'b -> 'c) -> 'a -> 'b -> 'c Lwt.t
val wrap3 : ?site:int -> ('a -> 'b -> 'c -> 'd) -> 'a -> 'b -> 'c -> 'd Lwt.t
val wrap4 : ?site:int -> ('a -> 'b -> 'c -> 'd -> 'e) -> 'a -> 'b -> 'c -> 'd -> 'e Lwt.t

val wrap5 :
  ?site:int -> ('a -> 'b -> 'c -> 'd -> 'e -> 'f) -> 'a -> 'b -> 'c -> 'd -> 'e -> 'f Lwt.t

val wrap6 :
  ?site:int ->
  ('a -> 'b -> 'c -> 'd -> 'e -> 'f -> 'g) ->
  'a ->
  'b ->
  'c ->
  'd ->
  'e ->
  'f ->
  'g Lwt.t

val wrap7 :
  ?site:int ->
  ('a -> 'b -> 'c -> 'd -> 'e -> 'f -> 'g -> 'h) ->
  'a ->
  'b ->
  'c ->
  'd ->
  'e ->
  'f ->
  'g ->
  'h Lwt.t

val on_success : ?site:int -> 'a Lwt.t -> ('a -> unit) -> unit
val on_failure : ?site:int -> _ Lwt.t -> (exn -> unit) -> unit
val on_termination : ?site:int -> _ Lwt.t -> (unit -> unit) -> unit
val on_any : ?site:int -> 'a Lwt.t -> ('a -> unit) -> (exn -> unit) -> unit
val async : ?site:int -> (unit -> unit Lwt.t) -> unit
val dont_wait : ?site:int -> (unit -> unit Lwt.t) -> (exn -> unit) -> unit
val protected : ?site:int -> 'a Lwt.t -> 'a Lwt.t
val no_cancel : ?site:int -> 'a Lwt.t -> 'a Lwt.t

val track : ?site:int -> Mtrace_ring.thread_type -> (unit -> 'a Lwt.t) -> 'a Lwt.t
(** [track ty f]: [f ()]'s promise as a thread of type [ty] created here, [f] running
    with it current (for wrapping other primitives). *)

val call : ?site:int -> Mtrace_ring.thread_type -> ('a -> 'b Lwt.t) -> 'a -> 'b Lwt.t
(** [call ty f x]: [f x]'s promise as a thread of type [ty] created here, [f] running
    with it current (so a callback [f] runs at once runs as that thread).  ppx_mtrace
    rewrites the traced functions of Lwt_unix into it, so that the rewritten code needs
    mtrace.lwt alone: [Lwt_unix.sleep d] is [call Task Lwt_unix.sleep d], and so are
    [timeout] and [yield] (Task). *)

val call2 :
  ?site:int -> Mtrace_ring.thread_type -> ('a -> 'b -> 'c Lwt.t) -> 'a -> 'b -> 'c Lwt.t
(** [call2 ty f x y]: {!call} for [f x y]; [Lwt_unix.with_timeout d f] is
    [call2 Pick Lwt_unix.with_timeout d f] ([f] runs as the Pick thread). *)

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

(** {2 Lwt's other modules}  [Lwt_m.f] is [Mtrace_lwt.M.f] (Lwt_mvar: [Mvar], ...),
    with its type and [?site] first.  A call that returns a promise is a thread, its
    callback (run at once or later, from Lwt's resolution loop) runs as it: Lwt_mvar's
    take/put Promise, Lwt_condition.wait Condition, Lwt_mutex Mutex, Lwt_list's [_s]
    forms Bind (a chain of binds) and its [_p] forms Join, Lwt_pool.use Semaphore
    ([f] runs as it once it has a member, and so does what it creates, as a pick),
    Lwt_stream's and Lwt_seq's reads, iterations and folds Stream.  The Lwt_result
    functions are Lwt_result's own bodies over the traced [bind]/[map] (types Bind and
    Map; [catch] Try, [both] Join).  A transformer that returns a stream or a sequence
    ([map_s], [filter_s], [filter_map_s], [map_list_s], [Stream.from],
    [Seq.unfold_lwt]) makes no thread (nothing would resolve it; its [site] is
    unused): its callback runs, whenever the stream is read, as the thread current at
    the call. *)

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

module List : sig
  val iter_s : ?site:int -> ('a -> unit Lwt.t) -> 'a list -> unit Lwt.t
  val iter_p : ?site:int -> ('a -> unit Lwt.t) -> 'a list -> unit Lwt.t
  val iteri_s : ?site:int -> (int -> 'a -> unit Lwt.t) -> 'a list -> unit Lwt.t
  val iteri_p : ?site:int -> (int -> 'a -> unit Lwt.t) -> 'a list -> unit Lwt.t
  val map_s : ?site:int -> ('a -> 'b Lwt.t) -> 'a list -> 'b list Lwt.t
  val map_p : ?site:int -> ('a -> 'b Lwt.t) -> 'a list -> 'b list Lwt.t
  val mapi_s : ?site:int -> (int -> 'a -> 'b Lwt.t) -> 'a list -> 'b list Lwt.t
  val mapi_p : ?site:int -> (int -> 'a -> 'b Lwt.t) -> 'a list -> 'b list Lwt.t
  val rev_map_s : ?site:int -> ('a -> 'b Lwt.t) -> 'a list -> 'b list Lwt.t
  val rev_map_p : ?site:int -> ('a -> 'b Lwt.t) -> 'a list -> 'b list Lwt.t
  val fold_left_s : ?site:int -> ('a -> 'b -> 'a Lwt.t) -> 'a -> 'b list -> 'a Lwt.t
  val fold_right_s : ?site:int -> ('a -> 'b -> 'b Lwt.t) -> 'a list -> 'b -> 'b Lwt.t
  val for_all_s : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> bool Lwt.t
  val for_all_p : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> bool Lwt.t
  val exists_s : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> bool Lwt.t
  val exists_p : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> bool Lwt.t
  val find_s : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> 'a Lwt.t
  val filter_s : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> 'a list Lwt.t
  val filter_p : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> 'a list Lwt.t
  val filter_map_s : ?site:int -> ('a -> 'b option Lwt.t) -> 'a list -> 'b list Lwt.t
  val filter_map_p : ?site:int -> ('a -> 'b option Lwt.t) -> 'a list -> 'b list Lwt.t
  val partition_s : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> ('a list * 'a list) Lwt.t
  val partition_p : ?site:int -> ('a -> bool Lwt.t) -> 'a list -> ('a list * 'a list) Lwt.t
end

module Pool : sig
  val use : ?site:int -> 'a Lwt_pool.t -> ('a -> 'b Lwt.t) -> 'b Lwt.t
end

module Stream : sig
  val next : ?site:int -> 'a Lwt_stream.t -> 'a Lwt.t
  val get : ?site:int -> 'a Lwt_stream.t -> 'a option Lwt.t
  val peek : ?site:int -> 'a Lwt_stream.t -> 'a option Lwt.t
  val junk : ?site:int -> 'a Lwt_stream.t -> unit Lwt.t
  val last_new : ?site:int -> 'a Lwt_stream.t -> 'a Lwt.t
  val junk_old : ?site:int -> 'a Lwt_stream.t -> unit Lwt.t
  val is_empty : ?site:int -> 'a Lwt_stream.t -> bool Lwt.t
  val closed : ?site:int -> 'a Lwt_stream.t -> unit Lwt.t
  val to_list : ?site:int -> 'a Lwt_stream.t -> 'a list Lwt.t
  val to_string : ?site:int -> char Lwt_stream.t -> string Lwt.t
  val nget : ?site:int -> int -> 'a Lwt_stream.t -> 'a list Lwt.t
  val npeek : ?site:int -> int -> 'a Lwt_stream.t -> 'a list Lwt.t
  val njunk : ?site:int -> int -> 'a Lwt_stream.t -> unit Lwt.t
  val get_while : ?site:int -> ('a -> bool) -> 'a Lwt_stream.t -> 'a list Lwt.t
  val get_while_s : ?site:int -> ('a -> bool Lwt.t) -> 'a Lwt_stream.t -> 'a list Lwt.t
  val junk_while : ?site:int -> ('a -> bool) -> 'a Lwt_stream.t -> unit Lwt.t
  val junk_while_s : ?site:int -> ('a -> bool Lwt.t) -> 'a Lwt_stream.t -> unit Lwt.t
  val iter : ?site:int -> ('a -> unit) -> 'a Lwt_stream.t -> unit Lwt.t
  val iter_s : ?site:int -> ('a -> unit Lwt.t) -> 'a Lwt_stream.t -> unit Lwt.t
  val iter_p : ?site:int -> ('a -> unit Lwt.t) -> 'a Lwt_stream.t -> unit Lwt.t

  val iter_n :
    ?site:int -> ?max_concurrency:int -> ('a -> unit Lwt.t) -> 'a Lwt_stream.t -> unit Lwt.t

  val find : ?site:int -> ('a -> bool) -> 'a Lwt_stream.t -> 'a option Lwt.t
  val find_s : ?site:int -> ('a -> bool Lwt.t) -> 'a Lwt_stream.t -> 'a option Lwt.t
  val find_map : ?site:int -> ('a -> 'b option) -> 'a Lwt_stream.t -> 'b option Lwt.t
  val find_map_s : ?site:int -> ('a -> 'b option Lwt.t) -> 'a Lwt_stream.t -> 'b option Lwt.t
  val fold : ?site:int -> ('a -> 'b -> 'b) -> 'a Lwt_stream.t -> 'b -> 'b Lwt.t
  val fold_s : ?site:int -> ('a -> 'b -> 'b Lwt.t) -> 'a Lwt_stream.t -> 'b -> 'b Lwt.t
  val parse : ?site:int -> 'a Lwt_stream.t -> ('a Lwt_stream.t -> 'b Lwt.t) -> 'b Lwt.t
  val from : ?site:int -> (unit -> 'a option Lwt.t) -> 'a Lwt_stream.t
  val map_s : ?site:int -> ('a -> 'b Lwt.t) -> 'a Lwt_stream.t -> 'b Lwt_stream.t
  val filter_s : ?site:int -> ('a -> bool Lwt.t) -> 'a Lwt_stream.t -> 'a Lwt_stream.t
  val filter_map_s : ?site:int -> ('a -> 'b option Lwt.t) -> 'a Lwt_stream.t -> 'b Lwt_stream.t
  val map_list_s : ?site:int -> ('a -> 'b list Lwt.t) -> 'a Lwt_stream.t -> 'b Lwt_stream.t
end

module Seq : sig
  val iter : ?site:int -> ('a -> unit) -> 'a Lwt_seq.t -> unit Lwt.t
  val iter_s : ?site:int -> ('a -> unit Lwt.t) -> 'a Lwt_seq.t -> unit Lwt.t
  val iter_p : ?site:int -> ('a -> unit Lwt.t) -> 'a Lwt_seq.t -> unit Lwt.t

  val iter_n :
    ?site:int -> ?max_concurrency:int -> ('a -> unit Lwt.t) -> 'a Lwt_seq.t -> unit Lwt.t

  val fold_left : ?site:int -> ('a -> 'b -> 'a) -> 'a -> 'b Lwt_seq.t -> 'a Lwt.t
  val fold_left_s : ?site:int -> ('a -> 'b -> 'a Lwt.t) -> 'a -> 'b Lwt_seq.t -> 'a Lwt.t
  val to_list : ?site:int -> 'a Lwt_seq.t -> 'a list Lwt.t
  val map_s : ?site:int -> ('a -> 'b Lwt.t) -> 'a Lwt_seq.t -> 'b Lwt_seq.t
  val filter_s : ?site:int -> ('a -> bool Lwt.t) -> 'a Lwt_seq.t -> 'a Lwt_seq.t
  val filter_map_s : ?site:int -> ('a -> 'b option Lwt.t) -> 'a Lwt_seq.t -> 'b Lwt_seq.t
  val unfold_lwt : ?site:int -> ('b -> ('a * 'b) option Lwt.t) -> 'b -> 'a Lwt_seq.t
end

module Result : sig
  val bind :
    ?site:int -> ('a, 'e) Lwt_result.t -> ('a -> ('b, 'e) Lwt_result.t) -> ('b, 'e) Lwt_result.t

  val bind_error :
    ?site:int ->
    ('a, 'e1) Lwt_result.t ->
    ('e1 -> ('a, 'e2) Lwt_result.t) ->
    ('a, 'e2) Lwt_result.t

  val bind_lwt : ?site:int -> ('a, 'e) Lwt_result.t -> ('a -> 'b Lwt.t) -> ('b, 'e) Lwt_result.t

  val bind_lwt_error :
    ?site:int -> ('a, 'e1) Lwt_result.t -> ('e1 -> 'e2 Lwt.t) -> ('a, 'e2) Lwt_result.t

  val bind_lwt_err :
    ?site:int -> ('a, 'e1) Lwt_result.t -> ('e1 -> 'e2 Lwt.t) -> ('a, 'e2) Lwt_result.t
    [@@deprecated "Alias to bind_lwt_error"]

  val bind_result :
    ?site:int -> ('a, 'e) Lwt_result.t -> ('a -> ('b, 'e) result) -> ('b, 'e) Lwt_result.t

  val map : ?site:int -> ('a -> 'b) -> ('a, 'e) Lwt_result.t -> ('b, 'e) Lwt_result.t
  val map_error : ?site:int -> ('e1 -> 'e2) -> ('a, 'e1) Lwt_result.t -> ('a, 'e2) Lwt_result.t

  val map_err : ?site:int -> ('e1 -> 'e2) -> ('a, 'e1) Lwt_result.t -> ('a, 'e2) Lwt_result.t
    [@@deprecated "Alias to map_error"]

  val catch : ?site:int -> 'a Lwt.t -> ('a, exn) Lwt_result.t

  val both :
    ?site:int -> ('a, 'e) Lwt_result.t -> ('b, 'e) Lwt_result.t -> ('a * 'b, 'e) Lwt_result.t

  val iter : ?site:int -> ('a -> unit Lwt.t) -> ('a, 'e) Lwt_result.t -> unit Lwt.t
  val iter_error : ?site:int -> ('e -> unit Lwt.t) -> ('a, 'e) Lwt_result.t -> unit Lwt.t
end
