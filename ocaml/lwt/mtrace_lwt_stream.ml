(* Lwt_stream and Lwt_seq, traced.  What returns a promise (a read, an iteration, a
   fold) is a thread of type Stream, run with it current (a stream's source that a
   read pulls at once is the read's doing) and its callback (one closure a call) as
   it, at once or later.  A transformer that returns a stream or a sequence (map_s,
   filter_s, ..., Lwt_stream.from, Lwt_seq.unfold_lwt) has no thread: nothing
   resolves it; its callback runs, whenever the stream is read, as the thread that
   was current when the transformer was called. *)

open Mtrace_lwt_core
module R = Mtrace_ring

(* a read: [lwt_f s] as a thread *)
let[@inline] rd site lwt_f s =
  match !ring with
  | None -> lwt_f s
  | Some r -> in1 (start r R.Stream site) lwt_f s

let[@inline] rdn site lwt_f n s =
  match !ring with
  | None -> lwt_f n s
  | Some r -> in2 (start r R.Stream site) lwt_f n s

(* an iteration: [lwt_f f s], [f] as the thread *)
let[@inline] it1 site lwt_f f s =
  match !ring with
  | None -> lwt_f f s
  | Some r ->
    let th = start r R.Stream site in
    in2 th lwt_f (cb1 th.id f) s

(* a transformer: [f] as the thread current now *)
let[@inline] tr lwt_f f s =
  match !ring with
  | None -> lwt_f f s
  | Some _ -> lwt_f (cb1 !cur f) s

module Stream = struct
  let next ?(site = 0) s = rd site Lwt_stream.next s
  let get ?(site = 0) s = rd site Lwt_stream.get s
  let peek ?(site = 0) s = rd site Lwt_stream.peek s
  let junk ?(site = 0) s = rd site Lwt_stream.junk s
  let last_new ?(site = 0) s = rd site Lwt_stream.last_new s
  let junk_old ?(site = 0) s = rd site Lwt_stream.junk_old s
  let is_empty ?(site = 0) s = rd site Lwt_stream.is_empty s
  let closed ?(site = 0) s = rd site Lwt_stream.closed s
  let to_list ?(site = 0) s = rd site Lwt_stream.to_list s
  let to_string ?(site = 0) s = rd site Lwt_stream.to_string s
  let nget ?(site = 0) n s = rdn site Lwt_stream.nget n s
  let npeek ?(site = 0) n s = rdn site Lwt_stream.npeek n s
  let njunk ?(site = 0) n s = rdn site Lwt_stream.njunk n s
  let get_while ?(site = 0) f s = it1 site Lwt_stream.get_while f s
  let get_while_s ?(site = 0) f s = it1 site Lwt_stream.get_while_s f s
  let junk_while ?(site = 0) f s = it1 site Lwt_stream.junk_while f s
  let junk_while_s ?(site = 0) f s = it1 site Lwt_stream.junk_while_s f s
  let iter ?(site = 0) f s = it1 site Lwt_stream.iter f s
  let iter_s ?(site = 0) f s = it1 site Lwt_stream.iter_s f s
  let iter_p ?(site = 0) f s = it1 site Lwt_stream.iter_p f s
  let find ?(site = 0) f s = it1 site Lwt_stream.find f s
  let find_s ?(site = 0) f s = it1 site Lwt_stream.find_s f s
  let find_map ?(site = 0) f s = it1 site Lwt_stream.find_map f s
  let find_map_s ?(site = 0) f s = it1 site Lwt_stream.find_map_s f s

  let iter_n ?(site = 0) ?max_concurrency f s =
    match !ring with
    | None -> Lwt_stream.iter_n ?max_concurrency f s
    | Some r ->
      let th = start r R.Stream site in
      in2 th (Lwt_stream.iter_n ?max_concurrency) (cb1 th.id f) s

  let fold ?(site = 0) f s acc =
    match !ring with
    | None -> Lwt_stream.fold f s acc
    | Some r ->
      let th = start r R.Stream site in
      in3 th Lwt_stream.fold (cb2 th.id f) s acc

  let fold_s ?(site = 0) f s acc =
    match !ring with
    | None -> Lwt_stream.fold_s f s acc
    | Some r ->
      let th = start r R.Stream site in
      in3 th Lwt_stream.fold_s (cb2 th.id f) s acc

  let parse ?(site = 0) s f =
    match !ring with
    | None -> Lwt_stream.parse s f
    | Some r ->
      let th = start r R.Stream site in
      in2 th Lwt_stream.parse s (cb1 th.id f)

  let from ?site:_ f =
    match !ring with
    | None -> Lwt_stream.from f
    | Some _ -> Lwt_stream.from (cb0 !cur f)

  let map_s ?site:_ f s = tr Lwt_stream.map_s f s
  let filter_s ?site:_ f s = tr Lwt_stream.filter_s f s
  let filter_map_s ?site:_ f s = tr Lwt_stream.filter_map_s f s
  let map_list_s ?site:_ f s = tr Lwt_stream.map_list_s f s
end

module Seq = struct
  let iter ?(site = 0) f s = it1 site Lwt_seq.iter f s
  let iter_s ?(site = 0) f s = it1 site Lwt_seq.iter_s f s
  let iter_p ?(site = 0) f s = it1 site Lwt_seq.iter_p f s

  let iter_n ?(site = 0) ?max_concurrency f s =
    match !ring with
    | None -> Lwt_seq.iter_n ?max_concurrency f s
    | Some r ->
      let th = start r R.Stream site in
      in2 th (Lwt_seq.iter_n ?max_concurrency) (cb1 th.id f) s

  let fold_left ?(site = 0) f acc s =
    match !ring with
    | None -> Lwt_seq.fold_left f acc s
    | Some r ->
      let th = start r R.Stream site in
      in3 th Lwt_seq.fold_left (cb2 th.id f) acc s

  let fold_left_s ?(site = 0) f acc s =
    match !ring with
    | None -> Lwt_seq.fold_left_s f acc s
    | Some r ->
      let th = start r R.Stream site in
      in3 th Lwt_seq.fold_left_s (cb2 th.id f) acc s

  let to_list ?(site = 0) s = rd site Lwt_seq.to_list s
  let map_s ?site:_ f s = tr Lwt_seq.map_s f s
  let filter_s ?site:_ f s = tr Lwt_seq.filter_s f s
  let filter_map_s ?site:_ f s = tr Lwt_seq.filter_map_s f s
  let unfold_lwt ?site:_ f b = tr Lwt_seq.unfold_lwt f b
end
