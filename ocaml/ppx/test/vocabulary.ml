(* Every value of ppx_mtrace's vocabulary (ocaml/ppx/vocab.ml), each as a value in a
   tuple (so eta-expanded): vocabulary.expected.ml is the output, checked as expected.ml is
   by the dune test ocaml-ppx (ocaml/ppx/test/dune). *)
let v_lwt =
  ( Lwt.bind, Lwt.map, Lwt.catch, Lwt.try_bind, Lwt.finalize, Lwt.both, Lwt.all, Lwt.join,
    Lwt.pick, Lwt.npick, Lwt.choose, Lwt.nchoose, Lwt.nchoose_split, Lwt.pause, Lwt.wrap,
    Lwt.wrap1, Lwt.wrap2, Lwt.wrap3, Lwt.wrap4, Lwt.wrap5, Lwt.wrap6, Lwt.wrap7, Lwt.apply,
    Lwt.on_success, Lwt.on_failure, Lwt.on_termination, Lwt.on_any, Lwt.async, Lwt.dont_wait,
    Lwt.wait, Lwt.task, Lwt.protected, Lwt.no_cancel )
let v_list =
  ( Lwt_list.iter_s, Lwt_list.iter_p, Lwt_list.iteri_s, Lwt_list.iteri_p, Lwt_list.map_s,
    Lwt_list.map_p, Lwt_list.mapi_s, Lwt_list.mapi_p, Lwt_list.rev_map_s, Lwt_list.rev_map_p,
    Lwt_list.fold_left_s, Lwt_list.fold_right_s, Lwt_list.for_all_s, Lwt_list.for_all_p,
    Lwt_list.exists_s, Lwt_list.exists_p, Lwt_list.find_s, Lwt_list.filter_s, Lwt_list.filter_p,
    Lwt_list.filter_map_s, Lwt_list.filter_map_p, Lwt_list.partition_s, Lwt_list.partition_p )
let v_stream =
  ( Lwt_stream.next, Lwt_stream.get, Lwt_stream.peek, Lwt_stream.junk, Lwt_stream.nget,
    Lwt_stream.npeek, Lwt_stream.njunk, Lwt_stream.last_new, Lwt_stream.to_list, Lwt_stream.iter,
    Lwt_stream.iter_s, Lwt_stream.iter_p, Lwt_stream.iter_n, Lwt_stream.fold, Lwt_stream.fold_s,
    Lwt_stream.find, Lwt_stream.find_s, Lwt_stream.find_map, Lwt_stream.find_map_s,
    Lwt_stream.map_s, Lwt_stream.filter_s, Lwt_stream.filter_map_s, Lwt_stream.map_list_s,
    Lwt_stream.junk_old, Lwt_stream.is_empty, Lwt_stream.closed, Lwt_stream.to_string,
    Lwt_stream.get_while, Lwt_stream.get_while_s, Lwt_stream.junk_while, Lwt_stream.junk_while_s,
    Lwt_stream.parse, Lwt_stream.from )
let v_seq =
  ( Lwt_seq.iter, Lwt_seq.iter_s, Lwt_seq.iter_p, Lwt_seq.iter_n, Lwt_seq.fold_left,
    Lwt_seq.fold_left_s, Lwt_seq.to_list, Lwt_seq.map_s, Lwt_seq.filter_s, Lwt_seq.filter_map_s,
    Lwt_seq.unfold_lwt )
let v_result =
  ( Lwt_result.bind, Lwt_result.bind_error, Lwt_result.bind_lwt, Lwt_result.bind_result, Lwt_result.bind_lwt_error,
    Lwt_result.bind_lwt_err, Lwt_result.map, Lwt_result.map_error, Lwt_result.map_err,
    Lwt_result.catch, Lwt_result.both, Lwt_result.iter, Lwt_result.iter_error )
let v_rest =
  ( Lwt_pool.use, Lwt_mvar.take, Lwt_mvar.put, Lwt_condition.wait, Lwt_condition.signal,
    Lwt_condition.broadcast, Lwt_mutex.lock, Lwt_mutex.with_lock, Lwt_unix.sleep,
    Lwt_unix.with_timeout, Lwt_unix.timeout, Lwt_unix.yield )
