(* Lwt_list and Lwt_pool.use, traced: a call is one thread, its callback (one closure
   a call) runs as that thread, whether Lwt_list calls it at once or later from the
   resolution loop (iter_s runs f after the previous f's promise resolved).  Type: a
   sequential iterator (_s) is a chain of binds (Bind); a parallel one (_p) joins the
   callbacks' promises (Join, as Lwt_list.iter_p is Lwt.join); a pool use waits for a
   member as on a semaphore (Semaphore). *)

open Mtrace_lwt_core
module R = Mtrace_ring

module List = struct
  (* [lwt_f f l] as a thread of type [ty], [f] as it *)
  let[@inline] it1 ty site lwt_f f l =
    match !ring with
    | None -> lwt_f f l
    | Some r ->
      let th = start r ty site in
      in2 th lwt_f (cb1 th.id f) l

  let[@inline] it2 ty site lwt_f f l =
    match !ring with
    | None -> lwt_f f l
    | Some r ->
      let th = start r ty site in
      in2 th lwt_f (cb2 th.id f) l

  let iter_s ?(site = 0) f l = it1 R.Bind site Lwt_list.iter_s f l
  let iter_p ?(site = 0) f l = it1 R.Join site Lwt_list.iter_p f l
  let iteri_s ?(site = 0) f l = it2 R.Bind site Lwt_list.iteri_s f l
  let iteri_p ?(site = 0) f l = it2 R.Join site Lwt_list.iteri_p f l
  let map_s ?(site = 0) f l = it1 R.Bind site Lwt_list.map_s f l
  let map_p ?(site = 0) f l = it1 R.Join site Lwt_list.map_p f l
  let mapi_s ?(site = 0) f l = it2 R.Bind site Lwt_list.mapi_s f l
  let mapi_p ?(site = 0) f l = it2 R.Join site Lwt_list.mapi_p f l
  let rev_map_s ?(site = 0) f l = it1 R.Bind site Lwt_list.rev_map_s f l
  let rev_map_p ?(site = 0) f l = it1 R.Join site Lwt_list.rev_map_p f l

  let fold_left_s ?(site = 0) f acc l =
    match !ring with
    | None -> Lwt_list.fold_left_s f acc l
    | Some r ->
      let th = start r R.Bind site in
      in3 th Lwt_list.fold_left_s (cb2 th.id f) acc l

  let fold_right_s ?(site = 0) f l acc =
    match !ring with
    | None -> Lwt_list.fold_right_s f l acc
    | Some r ->
      let th = start r R.Bind site in
      in3 th Lwt_list.fold_right_s (cb2 th.id f) l acc

  let for_all_s ?(site = 0) f l = it1 R.Bind site Lwt_list.for_all_s f l
  let for_all_p ?(site = 0) f l = it1 R.Join site Lwt_list.for_all_p f l
  let exists_s ?(site = 0) f l = it1 R.Bind site Lwt_list.exists_s f l
  let exists_p ?(site = 0) f l = it1 R.Join site Lwt_list.exists_p f l
  let find_s ?(site = 0) f l = it1 R.Bind site Lwt_list.find_s f l
  let filter_s ?(site = 0) f l = it1 R.Bind site Lwt_list.filter_s f l
  let filter_p ?(site = 0) f l = it1 R.Join site Lwt_list.filter_p f l
  let filter_map_s ?(site = 0) f l = it1 R.Bind site Lwt_list.filter_map_s f l
  let filter_map_p ?(site = 0) f l = it1 R.Join site Lwt_list.filter_map_p f l
  let partition_s ?(site = 0) f l = it1 R.Bind site Lwt_list.partition_s f l
  let partition_p ?(site = 0) f l = it1 R.Join site Lwt_list.partition_p f l
end

module Pool = struct
  (* Lwt_pool.use runs with the thread current (a member it creates or validates at
     once is the use's doing), [f] as the thread when a member is there *)
  let use ?(site = 0) p f =
    match !ring with
    | None -> Lwt_pool.use p f
    | Some r ->
      let th = start r R.Semaphore site in
      in2 th Lwt_pool.use p (cb1 th.id f)
end
