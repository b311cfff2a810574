(* The traced forms of Lwt_unix's functions are Mtrace_lwt's generic calls, as
   ppx_mtrace writes them (so a direct call and a rewritten one record the same);
   ocaml/ppx/test/vocab_check.ml reads these bodies to check that they agree. *)

let sleep ?site d = Mtrace_lwt.call ?site Mtrace_ring.Task Lwt_unix.sleep d
let timeout ?site d = Mtrace_lwt.call ?site Mtrace_ring.Task Lwt_unix.timeout d

(* Lwt_unix.with_timeout d f is Lwt.pick [timeout d; Lwt.apply f ()]: f runs at once,
   inside the call, as the thread *)
let with_timeout ?site d f = Mtrace_lwt.call2 ?site Mtrace_ring.Pick Lwt_unix.with_timeout d f
let yield ?site () = Mtrace_lwt.call ?site Mtrace_ring.Task (Lwt_unix.yield [@warning "-3"]) ()

let installed = ref false

let install_switch_hooks () =
  if not !installed then begin
    installed := true;
    ignore (Lwt_main.Enter_iter_hooks.add_last (fun () -> Mtrace_lwt.switch Mtrace_ring.thread_none));
    ignore (Lwt_main.Leave_iter_hooks.add_last (fun () -> Mtrace_lwt.switch 0))
  end
