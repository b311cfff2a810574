(** The Unix half of {!Mtrace_lwt}: [Lwt_unix.sleep] and switches from [Lwt_main]. *)

val sleep : ?site:int -> float -> unit Lwt.t
(** [Lwt_unix.sleep] as a traced thread (type Task). *)

val install_switch_hooks : unit -> unit
(** SWITCH to idle ({!Mtrace_ring.thread_none}) when [Lwt_main] enters an iteration
    (about to wait for I/O or timers) and back to the main thread (0) when it leaves. *)
