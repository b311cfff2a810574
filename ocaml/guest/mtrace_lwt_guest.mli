(** An Lwt program traced from one line of its main:
    {[ let () = Mtrace_lwt_guest.run main ]}
    instead of [let () = Lwt_main.run (main ())].  Link [mtrace.lwt_guest]; the files
    whose threads are to be traced are preprocessed by [ppx_mtrace]. *)

val run : ?pages:int -> ?clock:int -> ?wait_reader:float -> (unit -> 'a Lwt.t) -> 'a
(** [run main] is [Lwt_main.run (main ())], traced: a session of one ring
    ({!Mtrace_guest.start}: [pages], [clock]), {!Mtrace_lwt.enable} on it, SWITCH
    records from [Lwt_main]'s iterations ({!Mtrace_lwt_unix.install_switch_hooks});
    at the end (also on an exception) tracing is disabled and the session closed.
    With [wait_reader], it first waits up to that many seconds for mtraced to attach,
    so that not even the first records can be overwritten before it reads them.
    If no reader has attached 2 s into the run, one line on stderr says so (tracing
    goes on, the ring keeping the latest records: {!Mtrace_guest.wait_reader}).
    [MTRACE=off]: plain [Lwt_main.run (main ())], untraced.
    @raise Mtrace_guest.Unavailable outside any domain (its message says how to run
    the program). *)
