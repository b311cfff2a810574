let sleep ?site d = Mtrace_lwt.track ?site Mtrace_ring.Task (fun () -> Lwt_unix.sleep d)
let timeout ?site d = Mtrace_lwt.track ?site Mtrace_ring.Task (fun () -> Lwt_unix.timeout d)

(* Lwt_unix.with_timeout d f is Lwt.pick [timeout d; Lwt.apply f ()]: f runs at once,
   inside the track, as the thread *)
let with_timeout ?site d f =
  Mtrace_lwt.track ?site Mtrace_ring.Pick (fun () -> Lwt_unix.with_timeout d f)

let yield ?site () =
  Mtrace_lwt.track ?site Mtrace_ring.Task (fun () -> (Lwt_unix.yield [@warning "-3"]) ())

let installed = ref false

let install_switch_hooks () =
  if not !installed then begin
    installed := true;
    ignore (Lwt_main.Enter_iter_hooks.add_last (fun () -> Mtrace_lwt.switch Mtrace_ring.thread_none));
    ignore (Lwt_main.Leave_iter_hooks.add_last (fun () -> Mtrace_lwt.switch 0))
  end
