let f p = p >>= fun x -> Lwt.return (x + 1)
let g p = p >|= succ
let h () =
  let%lwt a = Lwt.return 1 in
  Lwt.return a
let k () = try%lwt Lwt.return 0 with Not_found -> Lwt.return 1
