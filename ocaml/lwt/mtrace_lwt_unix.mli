(** The Unix half of {!Mtrace_lwt}: Lwt_unix's timers and switches from [Lwt_main].
    The timers are {!Mtrace_lwt.call}s of Lwt_unix's functions, exactly what
    ppx_mtrace makes of them (a rewritten program needs no mtrace.lwt_unix), here for
    a program that calls the traced forms itself. *)

val sleep : ?site:int -> float -> unit Lwt.t
(** [Lwt_unix.sleep] as a traced thread (type Task). *)

val timeout : ?site:int -> float -> 'a Lwt.t
(** [Lwt_unix.timeout] (type Task: a sleep that fails with [Lwt_unix.Timeout]). *)

val with_timeout : ?site:int -> float -> (unit -> 'a Lwt.t) -> 'a Lwt.t
(** [Lwt_unix.with_timeout] (type Pick: it picks between the timeout and [f]); [f] runs
    as the thread. *)

val yield : ?site:int -> unit -> unit Lwt.t
  [@@deprecated "Use Lwt.pause instead"]
(** [Lwt_unix.yield] (type Task), deprecated as Lwt's is. *)

val install_switch_hooks : unit -> unit
(** SWITCH to idle ({!Mtrace_ring.thread_none}) when [Lwt_main] enters an iteration
    (about to wait for I/O or timers) and back to the main thread (0) when it leaves. *)
