(* lwt_vocab's cases for Lwt_list, Lwt_pool, Lwt_stream and Lwt_seq (see lwt_vocab.ml).
   The callbacks return their value after a trip through Lwt_main's loop, so a
   sequential form runs its next callback from Lwt's loop, where only the wrapper can
   have made the call's thread current. *)

open Vocab_harness
module L = Mtrace_lwt

let later v = Lwt.map (fun () -> v) (Lwt.pause ())
let xs = [ 1; 2; 3 ]

let f x =
  probe ();
  notei x;
  later (x * 10)

let fu x = Lwt.map ignore (f x)
let fb x = Lwt.map (fun v -> v mod 20 = 10) (f x)
let fo x = Lwt.map (fun v -> if v = 20 then None else Some v) (f x)
let fi i x = f ((10 * i) + x)
let fiu i x = fu ((10 * i) + x)
let fa acc x = Lwt.map (fun v -> (acc * 100) + v) (f x)
let fr x acc = fa acc x
let n = List.length xs

let list_cases () =
  let c ?(probes = n) name lwt traced = case ~probes name (fun () -> lwt xs) (fun site -> traced ~site xs) in
  c "List.iter_s" (Lwt_list.iter_s fu) (fun ~site -> L.List.iter_s ~site fu);
  c "List.iter_p" (Lwt_list.iter_p fu) (fun ~site -> L.List.iter_p ~site fu);
  c "List.iteri_s" (Lwt_list.iteri_s fiu) (fun ~site -> L.List.iteri_s ~site fiu);
  c "List.iteri_p" (Lwt_list.iteri_p fiu) (fun ~site -> L.List.iteri_p ~site fiu);
  c "List.map_s" (Lwt_list.map_s f) (fun ~site -> L.List.map_s ~site f);
  c "List.map_p" (Lwt_list.map_p f) (fun ~site -> L.List.map_p ~site f);
  c "List.mapi_s" (Lwt_list.mapi_s fi) (fun ~site -> L.List.mapi_s ~site fi);
  c "List.mapi_p" (Lwt_list.mapi_p fi) (fun ~site -> L.List.mapi_p ~site fi);
  c "List.rev_map_s" (Lwt_list.rev_map_s f) (fun ~site -> L.List.rev_map_s ~site f);
  c "List.rev_map_p" (Lwt_list.rev_map_p f) (fun ~site -> L.List.rev_map_p ~site f);
  c "List.fold_left_s" (Lwt_list.fold_left_s fa 7) (fun ~site -> L.List.fold_left_s ~site fa 7);
  c "List.fold_right_s" (fun l -> Lwt_list.fold_right_s fr l 7) (fun ~site l ->
      L.List.fold_right_s ~site fr l 7);
  c ~probes:2 "List.for_all_s" (Lwt_list.for_all_s fb) (fun ~site -> L.List.for_all_s ~site fb);
  c "List.for_all_p" (Lwt_list.for_all_p fb) (fun ~site -> L.List.for_all_p ~site fb);
  c ~probes:2 "List.exists_s" (Lwt_list.exists_s (fun x -> Lwt.map not (fb x))) (fun ~site ->
      L.List.exists_s ~site (fun x -> Lwt.map not (fb x)));
  c "List.exists_p" (Lwt_list.exists_p fb) (fun ~site -> L.List.exists_p ~site fb);
  c ~probes:2 "List.find_s" (Lwt_list.find_s (fun x -> Lwt.map not (fb x))) (fun ~site ->
      L.List.find_s ~site (fun x -> Lwt.map not (fb x)));
  c "List.find_s, not found" (Lwt_list.find_s (fun x -> Lwt.map (fun _ -> false) (f x))) (fun ~site ->
      L.List.find_s ~site (fun x -> Lwt.map (fun _ -> false) (f x)));
  c "List.filter_s" (Lwt_list.filter_s fb) (fun ~site -> L.List.filter_s ~site fb);
  c "List.filter_p" (Lwt_list.filter_p fb) (fun ~site -> L.List.filter_p ~site fb);
  c "List.filter_map_s" (Lwt_list.filter_map_s fo) (fun ~site -> L.List.filter_map_s ~site fo);
  c "List.filter_map_p" (Lwt_list.filter_map_p fo) (fun ~site -> L.List.filter_map_p ~site fo);
  c "List.partition_s" (Lwt_list.partition_s fb) (fun ~site -> L.List.partition_s ~site fb);
  c "List.partition_p" (Lwt_list.partition_p fb) (fun ~site -> L.List.partition_p ~site fb);
  c ~probes:1 "List.iter_s raising" (Lwt_list.iter_s (fun x -> ignore (f x); raise Exit)) (fun ~site ->
      L.List.iter_s ~site (fun x -> ignore (f x); raise Exit))

(* Lwt_pool.use: the pool's one member is busy, so [g] runs later, when an untraced
   use releases it; the pick [g] makes hangs off the use's thread *)
let pool_cases () =
  let use use g =
    let created = ref 0 in
    let pool =
      Lwt_pool.create 1 (fun () ->
          incr created;
          later (10 * !created))
    in
    let busy = Lwt_pool.use pool (fun _ -> Lwt.pause ()) in
    let p = use pool g in
    Lwt.bind busy (fun () -> p)
  in
  let g x =
    let t, _ = Lwt.task () in
    Lwt.map
      (fun v ->
        note (state t);
        v)
      (L.pick [ later (x + 1); t ])
  in
  case "Pool.use with a pick" (fun () -> use Lwt_pool.use g) (fun site -> use (L.Pool.use ~site) g);
  let h x =
    ignore (f x);
    Lwt.fail Exit
  in
  case "Pool.use failing" (fun () -> use Lwt_pool.use h) (fun site -> use (L.Pool.use ~site) h)

(* a stream of 1, 2, 3, each after a trip through Lwt's loop *)
let src () =
  let i = ref 0 in
  Lwt_stream.from (fun () ->
      incr i;
      later (if !i <= n then Some !i else None))

let seq () = Lwt_seq.of_list xs

let stream_cases () =
  let c ?(probes = n) name lwt traced =
    case ~probes name (fun () -> lwt (src ())) (fun site -> traced ~site (src ()))
  in
  let r name lwt traced = c ~probes:0 name lwt traced in
  r "Stream.next" Lwt_stream.next (fun ~site -> L.Stream.next ~site);
  r "Stream.get" Lwt_stream.get (fun ~site -> L.Stream.get ~site);
  r "Stream.peek" Lwt_stream.peek (fun ~site -> L.Stream.peek ~site);
  r "Stream.junk" Lwt_stream.junk (fun ~site -> L.Stream.junk ~site);
  r "Stream.to_list" Lwt_stream.to_list (fun ~site -> L.Stream.to_list ~site);
  r "Stream.is_empty" Lwt_stream.is_empty (fun ~site -> L.Stream.is_empty ~site);
  r "Stream.nget" (Lwt_stream.nget 2) (fun ~site -> L.Stream.nget ~site 2);
  r "Stream.npeek" (Lwt_stream.npeek 2) (fun ~site -> L.Stream.npeek ~site 2);
  r "Stream.njunk" (Lwt_stream.njunk 2) (fun ~site -> L.Stream.njunk ~site 2);
  let pushed read =
    let s, push = Lwt_stream.create () in
    push (Some 1);
    push (Some 2);
    let p = read s in
    Lwt.async (fun () ->
        Lwt.map
          (fun () ->
            push (Some 3);
            push None)
          (Lwt.pause ()));
    p
  in
  let p name lwt traced = case ~probes:0 name (fun () -> pushed lwt) (fun site -> pushed (traced ~site)) in
  p "Stream.last_new" Lwt_stream.last_new (fun ~site -> L.Stream.last_new ~site);
  p "Stream.junk_old" Lwt_stream.junk_old (fun ~site -> L.Stream.junk_old ~site);
  p "Stream.closed" Lwt_stream.closed (fun ~site -> L.Stream.closed ~site);
  let chars () = Lwt_stream.of_string "abc" in
  case ~probes:0 "Stream.to_string" (fun () -> Lwt_stream.to_string (chars ())) (fun site ->
      L.Stream.to_string ~site (chars ()));
  let lt2 x =
    probe ();
    x < 2
  in
  let lt2_s x = Lwt.map (fun b -> b && x < 2) (fb x) in
  c ~probes:2 "Stream.get_while" (Lwt_stream.get_while lt2) (fun ~site -> L.Stream.get_while ~site lt2);
  c ~probes:2 "Stream.get_while_s" (Lwt_stream.get_while_s lt2_s) (fun ~site ->
      L.Stream.get_while_s ~site lt2_s);
  c ~probes:2 "Stream.junk_while" (Lwt_stream.junk_while lt2) (fun ~site -> L.Stream.junk_while ~site lt2);
  c ~probes:2 "Stream.junk_while_s" (Lwt_stream.junk_while_s lt2_s) (fun ~site ->
      L.Stream.junk_while_s ~site lt2_s);
  let it x =
    probe ();
    notei x
  in
  c "Stream.iter" (Lwt_stream.iter it) (fun ~site -> L.Stream.iter ~site it);
  c "Stream.iter_s" (Lwt_stream.iter_s fu) (fun ~site -> L.Stream.iter_s ~site fu);
  c "Stream.iter_p" (Lwt_stream.iter_p fu) (fun ~site -> L.Stream.iter_p ~site fu);
  c "Stream.iter_n" (Lwt_stream.iter_n ~max_concurrency:2 fu) (fun ~site ->
      L.Stream.iter_n ~site ~max_concurrency:2 fu);
  c ~probes:0 "Stream.iter_n 0" (Lwt_stream.iter_n ~max_concurrency:0 fu) (fun ~site ->
      L.Stream.iter_n ~site ~max_concurrency:0 fu);
  let eq2 x =
    probe ();
    x = 2
  in
  c ~probes:2 "Stream.find" (Lwt_stream.find eq2) (fun ~site -> L.Stream.find ~site eq2);
  let eq2_s x = Lwt.map (fun _ -> x = 2) (f x) in
  c ~probes:2 "Stream.find_s" (Lwt_stream.find_s eq2_s) (fun ~site -> L.Stream.find_s ~site eq2_s);
  let fm x = if eq2 x then Some "two" else None in
  c ~probes:2 "Stream.find_map" (Lwt_stream.find_map fm) (fun ~site -> L.Stream.find_map ~site fm);
  let fm_s x =
    let r = fm x in
    Lwt.map (fun _ -> r) (f x)
  in
  c ~probes:4 "Stream.find_map_s" (Lwt_stream.find_map_s fm_s) (fun ~site -> L.Stream.find_map_s ~site fm_s);
  let add x acc =
    probe ();
    acc + x
  in
  c "Stream.fold" (fun s -> Lwt_stream.fold add s 100) (fun ~site s -> L.Stream.fold ~site add s 100);
  c "Stream.fold_s" (fun s -> Lwt_stream.fold_s fr s 5) (fun ~site s -> L.Stream.fold_s ~site fr s 5);
  let parse s =
    probe ();
    Lwt_stream.nget 2 s
  in
  c ~probes:1 "Stream.parse" (fun s -> Lwt_stream.parse s parse) (fun ~site s -> L.Stream.parse ~site s parse);
  (* transformers: no thread of their own; callbacks as the thread current at the call
     (a track here), run whenever the (untraced) consumer reads *)
  let t ?(probes = n) name lwt traced =
    case ~probes name
      (fun () -> Lwt_stream.to_list (lwt (src ())))
      (fun site -> L.track ~site Mtrace_ring.Promise (fun () -> Lwt_stream.to_list (traced (src ()))))
  in
  t "Stream.map_s" (Lwt_stream.map_s f) (L.Stream.map_s ~site:probe_site f);
  t "Stream.filter_s" (Lwt_stream.filter_s fb) (L.Stream.filter_s fb);
  t "Stream.filter_map_s" (Lwt_stream.filter_map_s fo) (L.Stream.filter_map_s fo);
  let fl x = Lwt.map (fun v -> [ v; -v ]) (f x) in
  t "Stream.map_list_s" (Lwt_stream.map_list_s fl) (L.Stream.map_list_s fl);
  let gen () =
    let i = ref 0 in
    fun () ->
      incr i;
      probe ();
      later (if !i <= n then Some !i else None)
  in
  t ~probes:(n + 1) "Stream.from"
    (fun _ -> Lwt_stream.from (gen ()))
    (fun _ -> L.Stream.from (gen ()))

let seq_cases () =
  let c ?(probes = n) name lwt traced =
    case ~probes name (fun () -> lwt (seq ())) (fun site -> traced ~site (seq ()))
  in
  let it x =
    probe ();
    notei x
  in
  c "Seq.iter" (Lwt_seq.iter it) (fun ~site -> L.Seq.iter ~site it);
  c "Seq.iter_s" (Lwt_seq.iter_s fu) (fun ~site -> L.Seq.iter_s ~site fu);
  c "Seq.iter_p" (Lwt_seq.iter_p fu) (fun ~site -> L.Seq.iter_p ~site fu);
  c "Seq.iter_n" (Lwt_seq.iter_n ~max_concurrency:2 fu) (fun ~site -> L.Seq.iter_n ~site ~max_concurrency:2 fu);
  let add acc x =
    probe ();
    acc + x
  in
  c "Seq.fold_left" (Lwt_seq.fold_left add 100) (fun ~site -> L.Seq.fold_left ~site add 100);
  c "Seq.fold_left_s" (Lwt_seq.fold_left_s fa 5) (fun ~site -> L.Seq.fold_left_s ~site fa 5);
  c ~probes:0 "Seq.to_list" Lwt_seq.to_list (fun ~site -> L.Seq.to_list ~site);
  let t ?(probes = n) name lwt traced =
    case ~probes name
      (fun () -> Lwt_seq.to_list (lwt (seq ())))
      (fun site -> L.track ~site Mtrace_ring.Promise (fun () -> Lwt_seq.to_list (traced (seq ()))))
  in
  t "Seq.map_s" (Lwt_seq.map_s f) (L.Seq.map_s f);
  t "Seq.filter_s" (Lwt_seq.filter_s fb) (L.Seq.filter_s fb);
  t "Seq.filter_map_s" (Lwt_seq.filter_map_s fo) (L.Seq.filter_map_s fo);
  let unfold i =
    probe ();
    later (if i > n then None else Some (i * 10, i + 1))
  in
  t ~probes:(n + 1) "Seq.unfold_lwt" (fun _ -> Lwt_seq.unfold_lwt unfold 1) (fun _ -> L.Seq.unfold_lwt unfold 1)

(* Lwt.cancel on the call's promise, as untraced: it reaches the callback's or the
   read's pending task, and the call's thread FAILS "Lwt.Canceled" *)
let cancel_cases () =
  let cancelled ?(probes = 1) name lwt traced =
    let run call =
      let t, _ = Lwt.task () in
      let p =
        call (fun _ ->
            probe ();
            t)
      in
      Lwt.cancel p;
      note ("task " ^ state t);
      p
    in
    case ~probes ~cancels:1 name (fun () -> run lwt) (fun site -> run (traced ~site))
  in
  cancelled "cancel List.iter_s" (fun g -> Lwt_list.iter_s g xs) (fun ~site g -> L.List.iter_s ~site g xs);
  cancelled ~probes:n "cancel List.map_p" (fun g -> Lwt_list.map_p g xs) (fun ~site g ->
      L.List.map_p ~site g xs);
  let pool () = Lwt_pool.create 1 (fun () -> Lwt.return 0) in
  cancelled "cancel Pool.use" (fun g -> Lwt_pool.use (pool ()) g) (fun ~site g -> L.Pool.use ~site (pool ()) g);
  let empty () = fst (Lwt_stream.create ()) in
  cancelled ~probes:0 "cancel Stream.next" (fun _ -> Lwt_stream.next (empty ())) (fun ~site _ ->
      L.Stream.next ~site (empty ()));
  cancelled ~probes:0 "cancel Stream.iter_s" (fun g -> Lwt_stream.iter_s g (src ())) (fun ~site g ->
      L.Stream.iter_s ~site g (src ()));
  cancelled "cancel Seq.iter_s" (fun g -> Lwt_seq.iter_s g (seq ())) (fun ~site g ->
      L.Seq.iter_s ~site g (seq ()))

let cases () =
  list_cases ();
  cancel_cases ();
  pool_cases ();
  stream_cases ();
  seq_cases ()
