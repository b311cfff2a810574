let sleep ?site d = Mtrace_lwt.track ?site Mtrace_ring.Task (fun () -> Lwt_unix.sleep d)

let installed = ref false

let install_switch_hooks () =
  if not !installed then begin
    installed := true;
    ignore (Lwt_main.Enter_iter_hooks.add_last (fun () -> Mtrace_lwt.switch Mtrace_ring.thread_none));
    ignore (Lwt_main.Leave_iter_hooks.add_last (fun () -> Mtrace_lwt.switch 0))
  end
