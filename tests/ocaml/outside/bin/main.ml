(* The program around the shop: a request mix over two store kinds, bytes through a
   pipe, and the rest of Lwt's vocabulary as a user reaches for it.
   Usage: main.exe [ROUNDS]; prints one JSON line of what it did. *)
open Lwt.Infix
open Lwt.Syntax

let rounds = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 20

(* bytes through a pipe: a writer and a reader that wait on the event loop *)
let pipe_echo n =
  let r, w = Lwt_unix.pipe () in
  let buf = Bytes.create 64 in
  let line i = string_of_int i ^ "\n" in
  let writer =
    Lwt_list.iter_s (fun s -> Lwt_unix.write_string w s 0 (String.length s) >|= ignore)
      (List.init n line)
    >>= fun () -> Lwt_unix.close w
  in
  let rec reader acc =
    let%lwt got = Lwt_unix.read r buf 0 64 in
    if got = 0 then Lwt.return acc
    else begin
      let%lwt () = Lwt.pause () in
      reader (acc + got)
    end
  in
  let* (), total = Lwt.both writer (reader 0) in
  Lwt_unix.close r >|= fun () -> total

(* a shop of one store kind, given as a first-class module *)
let run_shop (module S : Shop.STORE) round =
  let module M = Shop.Make (S) in
  let t = M.create ~conns:3 in
  M.serve t ~workers:4;
  let keys = List.init 8 (fun i -> Printf.sprintf "%s-%d-%d" S.name round i) in
  let* present, timed = M.audit t keys
  and* slow = M.ask t (Shop.Get "slow:key")
  and* _ = M.ask t (Shop.Put ("", "refused")) in
  let+ () = M.close t in
  (present, timed, slow = Shop.Timed_out, t.M.stats)

(* the first answers win, the rest are cancelled *)
let guesses () =
  let guess d v = Lwt_unix.sleep d >|= fun () -> v in
  let* firsts = Lwt.npick [ guess 0.001 1; guess 0.002 1; guess 0.3 2 ] in
  let* some = Lwt.nchoose [ guess 0.001 1; Lwt.return 1 ] in
  let* ready, rest = Lwt.nchoose_split [ guess 0.0 1; guess 0.3 2 ] in
  List.iter Lwt.cancel rest;
  let* one = Lwt.choose [ guess 0.001 1; guess 0.3 2 ] in
  let+ late = Lwt_unix.with_timeout 0.002 (fun () -> guess 0.3 2) |> Lwt_result.catch in
  List.length firsts + List.length some + List.length ready + one
  + (match late with Error Lwt_unix.Timeout -> 1 | _ -> 0)

(* plain computations made promises, and their promises joined *)
let wraps () =
  let sum = List.fold_left ( + ) 0 in
  let* ones =
    Lwt.all
      [ Lwt.wrap (fun () -> 1); Lwt.wrap1 succ 0; Lwt.wrap2 ( - ) 2 1;
        Lwt.wrap3 (fun a b c -> a + b + c) 1 0 0;
        Lwt.wrap4 (fun a b c d -> sum [ a; b; c; d ]) 1 0 0 0;
        Lwt.wrap5 (fun a b c d e -> sum [ a; b; c; d; e ]) 1 0 0 0 0;
        Lwt.wrap6 (fun a b c d e f -> sum [ a; b; c; d; e; f ]) 1 0 0 0 0 0;
        Lwt.wrap7 (fun a b c d e f g -> sum [ a; b; c; d; e; f; g ]) 1 0 0 0 0 0 0;
        Lwt.apply (fun x -> Lwt.return x) 1 ]
  in
  let* two = Lwt.return 1 |> Lwt.map succ in
  let open Lwt in
  join [ pause (); map ignore (return ()) ] >|= fun () -> sum ones + two

(* callbacks on promises, errors and cancellation *)
let reactions () =
  let hits = ref 0 in
  let hit _ = incr hits in
  let p, u = Lwt.wait () in
  Lwt.on_success p hit;
  Lwt.on_any p hit (fun _ -> ());
  Lwt.on_termination p (fun () -> incr hits);
  Lwt.wakeup_later u 1;
  let q, _ = Lwt.task () in
  Lwt.on_failure q hit;
  Lwt.cancel (Lwt.protected q);
  Lwt.cancel (Lwt.no_cancel q);
  Lwt.cancel q;
  Lwt.dont_wait (fun () -> Lwt.fail_with "dropped") hit;
  let* r =
    Lwt.try_bind
      (fun () -> Lwt.fail Not_found)
      (fun () -> Lwt.return 0)
      (fun _ -> Lwt.return 1)
  in
  Lwt.bind (Lwt_unix.timeout 0.001 |> Lwt_result.catch) @@ fun t ->
  let c = match t with Error Lwt_unix.Timeout -> 1 | _ -> 0 in
  Lwt.return (!hits + r + c)

(* the list combinators over a small list *)
let lists () =
  let l = List.init 6 Fun.id in
  let ok x = Lwt.return (x mod 2 = 0) in
  let n = ref 0 in
  let* () = Lwt_list.iter_p (fun x -> n := !n + x; Lwt.return_unit) l in
  let* () = Lwt_list.iteri_s (fun i _ -> n := !n + i; Lwt.return_unit) l in
  let* () = Lwt_list.iteri_p (fun i _ -> n := !n - i; Lwt.return_unit) l in
  let* a = Lwt_list.map_s (fun x -> Lwt.return (x * 2)) l in
  let* b = Lwt_list.mapi_p (fun i x -> Lwt.return (i + x)) l in
  let* c = Lwt_list.rev_map_s (fun x -> Lwt.return x) l in
  let* d = Lwt_list.rev_map_p (fun x -> Lwt.return x) l in
  let* e = Lwt_list.fold_left_s (fun acc x -> Lwt.return (acc + x)) 0 l in
  let* f = Lwt_list.fold_right_s (fun x acc -> Lwt.return (acc + x)) l 0 in
  let* g = Lwt_list.for_all_s ok l and* h = Lwt_list.for_all_p ok l in
  let* i = Lwt_list.exists_p ok l in
  let* j = Lwt_list.find_s ok l in
  let* k = Lwt_list.filter_s ok l in
  let* m = Lwt_list.filter_map_s (fun x -> Lwt.return (if x > 2 then Some x else None)) l in
  let* o = Lwt_list.filter_map_p (fun x -> Lwt.return (Some x)) l in
  let* p1, _ = Lwt_list.partition_s ok l in
  let+ p2, _ = Lwt_list.partition_p ok l in
  let len = List.length in
  !n + len a + len b + len c + len d + e + f + Bool.to_int g + Bool.to_int h
  + Bool.to_int i + j + len k + len m + len o + len p1 + len p2

(* a stream of numbers and a sequence, consumed every way *)
let streams () =
  let s () = Lwt_stream.of_list (List.init 10 Fun.id) in
  let* a = Lwt_stream.next (s ()) and* b = Lwt_stream.get (s ()) in
  let* c = Lwt_stream.to_list (Lwt_stream.map_s (fun x -> Lwt.return (x + 1)) (s ())) in
  let* d = Lwt_stream.to_list (Lwt_stream.filter_s (fun x -> Lwt.return (x > 4)) (s ())) in
  let* () = Lwt_stream.iter_s (fun _ -> Lwt.return_unit) (s ()) in
  let* () = Lwt_stream.iter_p (fun _ -> Lwt.return_unit) (s ()) in
  let* e = Lwt_stream.fold_s (fun x acc -> Lwt.return (x + acc)) (s ()) 0 in
  let* f = Lwt_stream.find_s (fun x -> Lwt.return (x = 3)) (s ()) in
  let q = Lwt_seq.unfold_lwt (fun i -> Lwt.return (if i < 5 then Some (i, i + 1) else None)) 0 in
  let* g = Lwt_seq.fold_left_s (fun acc x -> Lwt.return (acc + x)) 0 q in
  let* () = Lwt_seq.iter_s (fun _ -> Lwt.return_unit) (Lwt_seq.map_s Lwt.return q) in
  let+ () = Lwt_seq.iter_p (fun _ -> Lwt.return_unit) q in
  a + Option.get b + List.length c + List.length d + e + Option.get f + g

(* results: the errors a caller handles *)
let results () =
  let half x = if x mod 2 = 0 then Lwt_result.return (x / 2) else Lwt_result.fail "odd" in
  let r =
    let open Lwt_result.Syntax in
    let* a = half 8 in
    let* b = half a and* c = half 4 in
    let+ d = half (b + c) in
    d
  in
  let* v = Lwt_result.bind r half |> Lwt_result.map succ in
  let* e = Lwt_result.map_error String.length (half 3) in
  let* w = Lwt_result.bind_lwt (half 2) (fun x -> Lwt.return (x + 1)) in
  let* x = Lwt_result.bind_result (half 2) (fun x -> Ok x) in
  let* y = Lwt_result.bind_lwt_error (half 1) (fun s -> Lwt.return (String.length s)) in
  let* z = Lwt_result.both (half 2) (half 4) in
  let* () = Lwt_result.iter (fun _ -> Lwt.return_unit) (half 2) in
  let+ () = Lwt_result.iter_error (fun _ -> Lwt.return_unit) (half 1) in
  List.length (List.filter Fun.id
    Result.[ is_ok v; is_error e; is_ok w; is_ok x; is_error y; is_ok z ])

(* the classic operators, as older Lwt code writes them *)
let classic () =
  let a = Lwt.return 1 and b = Lwt.return 2 in
  let c = (fun x -> Lwt.return (x + 1)) =<< a in
  let d = succ =|< b in
  let* () = Lwt.return_unit <&> Lwt.return_unit in
  let* e = a <?> b in
  let* f = Lwt.( >>= ) c (fun x -> Lwt.return (x * 2)) in
  let* g = Lwt.Infix.( d >|= fun x -> x + 1 ) in
  let* h = Lwt.map succ d in
  let* i = (Lwt.catch (fun () -> raise Exit) (fun _ -> Lwt.return 1)) in
  let m = Lwt_mvar.create_empty () and cond = Lwt_condition.create () in
  let signalled = Lwt_condition.wait cond in
  (Lwt.async @@ fun () -> Lwt_mvar.put m 1 >|= fun () -> Lwt_condition.signal cond ());
  let* j = Lwt_mvar.take m in
  let+ () = signalled in
  e + f + g + h + i + j

let main () =
  let* () = Lwt.pause () in (* root: the program's first forms run outside any thread *)
  let stats = ref [] in
  let* () =
    Lwt_list.iter_s
      (fun round ->
        Lwt_list.iter_s
          (fun store ->
            let+ ((_, _, _, st) as r) = run_shop store round in
            stats := r :: !stats;
            ignore st)
          Shop.stores)
      (List.init rounds Fun.id)
  in
  let* echoed = pipe_echo 200 in
  let* parts = Lwt.all [ guesses (); wraps (); reactions (); lists (); streams (); results (); classic () ] in
  let served = List.fold_left (fun n (_, _, _, st) -> n + st.Shop.served) 0 !stats
  and timeouts = List.fold_left (fun n (_, _, _, st) -> n + st.Shop.timeouts) 0 !stats in
  Lwt.return (served, timeouts, echoed, parts)

(* the figures a run ends with, and what the tracing wrote (per op, as mtrace-cat names
   them): the test holds the trace to them *)
let report (served, timeouts, echoed, parts) =
  let ops = Mtrace_lwt.stats () |> List.map (fun (op, n) -> Printf.sprintf "%S:%d" op n) in
  Printf.printf
    "{\"rounds\":%d,\"cpu_s\":%.4f,\"served\":%d,\"timeouts\":%d,\"echoed\":%d,\"parts\":[%s],\"per_op\":{%s}}\n%!"
    rounds (Sys.time ()) served timeouts echoed (String.concat "," (List.map string_of_int parts))
    (String.concat "," ops)

(* SHOP_CLOCK=tsc: the ring on the TSC (bench/ocaml) *)
let clock = match Sys.getenv_opt "SHOP_CLOCK" with Some "tsc" -> Some Mtrace_ring.clock_tsc | _ -> None

let () = report (Mtrace_lwt_guest.run ?clock ~wait_reader:10. main)
