(* Lwt threads traced into an mtrace ring (see the .mli for the model): the machinery
   is Mtrace_lwt_core, the wrappers Mtrace_lwt_promise (module Lwt, Lwt_mvar,
   Lwt_condition, Lwt_mutex), Mtrace_lwt_list (Lwt_list, Lwt_pool), Mtrace_lwt_stream
   (Lwt_stream, Lwt_seq) and Mtrace_lwt_result (Lwt_result). *)

include Mtrace_lwt_core
include Mtrace_lwt_promise
module List = Mtrace_lwt_list.List
module Pool = Mtrace_lwt_list.Pool
module Stream = Mtrace_lwt_stream.Stream
module Seq = Mtrace_lwt_stream.Seq
module Result = Mtrace_lwt_result.Result
