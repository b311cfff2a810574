let notice_after = 2.

(* Nobody reading is not an error (the ring is a flight recorder), but a first run with
   mtraced down should not look like tracing: say it once, without holding the program
   up (a timer of Lwt_main's, not a wait).  The timer is cancelled when the session
   closes: the ring must not be looked at after that. *)
let notice_no_reader g =
  let timer = Lwt_unix.sleep notice_after in
  Lwt.on_success timer (fun () ->
      if not (Mtrace_guest.wait_reader g 0.) then
        Printf.eprintf
          "mtrace: no reader has attached to domain %d's ring in %g s (is mtraced \
           running?); tracing goes on, the ring keeping its latest records until one does\n\
           %!"
          (Mtrace_guest.domid g) notice_after);
  timer

let run ?pages ?clock ?wait_reader main =
  Mtrace_guest.with_session ~rings:1 ?pages ?clock (function
    | None -> Lwt_main.run (main ())
    | Some g ->
        (match wait_reader with Some s -> ignore (Mtrace_guest.wait_reader g s) | None -> ());
        Mtrace_lwt.enable (Mtrace_guest.ring g 0);
        Mtrace_lwt_unix.install_switch_hooks ();
        let timer = ref Lwt.return_unit in
        Fun.protect
          ~finally:(fun () ->
            Lwt.cancel !timer;
            Mtrace_lwt.disable ())
          (fun () ->
            Lwt_main.run
              (timer := notice_no_reader g;
               main ())))
