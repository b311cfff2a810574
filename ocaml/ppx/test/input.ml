(* The forms ppx_mtrace rewrites (its expect test: expected.ml is the output). *)
let f x =
  let%lwt a = x in
  let%lwt b = Lwt.return a and c = x in
  Lwt.return (a + b + c)

let g x = x >>= fun v -> Lwt.return (v + 1)
let h x = x >|= succ
let i x = Lwt.bind x (fun v -> Lwt.map succ (Lwt.return v))
let () = Lwt.async (fun () -> f (Lwt.return 1) >>= fun _ -> Lwt.return_unit)
let untouched x = Lwt.return x
let j m c mx s = Lwt.join [ Lwt_mvar.take m; Lwt_condition.wait ~mutex:mx c; Lwt_stream.next s >|= ignore ]
let k c = Lwt_condition.signal c (); Lwt.wait ()
let l () = Lwt.catch (fun () -> Lwt_unix.sleep 0.) (fun _ -> Lwt.return_unit)
