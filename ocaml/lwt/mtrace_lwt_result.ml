(* Lwt_result, traced: each function is written as lwt_result.ml writes it, over the
   traced Lwt.bind / Lwt.map (so a bind is a thread of type Bind with READ, BECOMES and
   its resolution as Mtrace_lwt.bind records them, a map one of type Map); catch is a
   Try thread, both a Join thread. *)

open Mtrace_lwt_core
module P = Mtrace_lwt_promise
module R = Mtrace_ring

module Result = struct
  let bind ?(site = 0) e f =
    match !ring with
    | None -> Lwt_result.bind e f
    | Some r ->
      P.bind_t r R.Bind site e (function
        | Error e -> Lwt.return (Error e)
        | Ok x -> f x)

  let bind_error ?(site = 0) e f =
    match !ring with
    | None -> Lwt_result.bind_error e f
    | Some r ->
      P.bind_t r R.Bind site e (function
        | Error e -> f e
        | Ok x -> Lwt.return (Ok x))

  let bind_lwt ?(site = 0) e f =
    match !ring with
    | None -> Lwt_result.bind_lwt e f
    | Some r ->
      P.bind_t r R.Bind site e (function
        | Ok x -> Lwt_result.ok (f x)
        | Error e -> Lwt_result.fail e)

  let bind_lwt_error ?(site = 0) e f =
    match !ring with
    | None -> Lwt_result.bind_lwt_error e f
    | Some r ->
      P.bind_t r R.Bind site e (function
        | Error e -> Lwt.bind (f e) Lwt_result.fail
        | Ok x -> Lwt_result.return x)

  let bind_lwt_err = bind_lwt_error

  (* a map that computes a result (Lwt_result.bind_result is Lwt.map) *)
  let bind_result ?(site = 0) e f =
    match !ring with
    | None -> Lwt_result.bind_result e f
    | Some r ->
      P.map_t r R.Bind site
        (function
          | Error e -> Error e
          | Ok x -> f x)
        e

  let map ?(site = 0) f e =
    match !ring with
    | None -> Lwt_result.map f e
    | Some r ->
      P.map_t r R.Map site
        (function
          | Error e -> Error e
          | Ok x -> Ok (f x))
        e

  let map_error ?(site = 0) f e =
    match !ring with
    | None -> Lwt_result.map_error f e
    | Some r ->
      P.map_t r R.Map site
        (function
          | Error e -> Error (f e)
          | Ok x -> Ok x)
        e

  let map_err = map_error

  let catch ?(site = 0) e =
    match !ring with
    | None -> Lwt_result.catch e
    | Some r -> watch1 (start r R.Try site) Lwt_result.catch e

  let both ?(site = 0) a b =
    match !ring with
    | None -> Lwt_result.both a b
    | Some r -> watch2 (start r R.Join site) Lwt_result.both a b

  let iter ?(site = 0) f e =
    match !ring with
    | None -> Lwt_result.iter f e
    | Some r ->
      P.bind_t r R.Bind site e (function
        | Ok x -> f x
        | Error _ -> Lwt.return_unit)

  let iter_error ?(site = 0) f e =
    match !ring with
    | None -> Lwt_result.iter_error f e
    | Some r ->
      P.bind_t r R.Bind site e (function
        | Error e -> f e
        | Ok _ -> Lwt.return_unit)
end
