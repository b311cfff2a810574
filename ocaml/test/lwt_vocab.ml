(* lwt_vocab: every function of Mtrace_lwt's vocabulary against Lwt 5.6's own, through
   Vocab_harness (results, logs and ordering as Lwt's; nothing written off; on, every
   thread a callback creates has the call's thread as parent; every thread resolved
   once; "Lwt.Canceled" on cancellation).  This file: module Lwt, Lwt_mvar,
   Lwt_condition, Lwt_mutex, Lwt_result, Lwt_unix; Vocab_lists: Lwt_list, Lwt_pool,
   Lwt_stream, Lwt_seq.  Exit 1 with what differs; the dune test ocaml-vocab (ocaml/test/dune). *)

open Vocab_harness
module L = Mtrace_lwt
module U = Mtrace_lwt_unix

(* a value after a trip through Lwt_main's loop: what follows runs from Lwt's loop *)
let later v = Lwt.map (fun () -> v) (Lwt.pause ())
let fail_later e = Lwt.bind (Lwt.pause ()) (fun () -> Lwt.fail e)
let two_rounds () = Lwt.bind (Lwt.pause ()) Lwt.pause

(* callbacks: each creates a thread (probe) and notes what it got *)
let k x =
  probe ();
  notei x;
  later (x + 1)

let k_exn e =
  probe ();
  note (text e);
  later 0

let plus1 x =
  probe ();
  notei x;
  x + 1

let lwt_cases () =
  case "bind" (fun () -> Lwt.bind (later 1) k) (fun site -> L.bind ~site (later 1) k);
  case ~probes:0 "bind on a failure" (fun () -> Lwt.bind (fail_later Exit) k) (fun site ->
      L.bind ~site (fail_later Exit) k);
  case "bind raising" (fun () -> Lwt.bind (later 1) (fun x -> ignore (k x); raise Exit)) (fun site ->
      L.bind ~site (later 1) (fun x -> ignore (k x); raise Exit));
  case "map" (fun () -> Lwt.map plus1 (later 2)) (fun site -> L.map ~site plus1 (later 2));
  case "map raising" (fun () -> Lwt.map (fun x -> ignore (plus1 x); failwith "m") (later 2)) (fun site ->
      L.map ~site (fun x -> ignore (plus1 x); failwith "m") (later 2));
  let body () =
    probe ();
    fail_later Exit
  in
  case ~probes:2 "catch" (fun () -> Lwt.catch body k_exn) (fun site -> L.catch ~site body k_exn);
  case ~probes:2 "try_bind ok" (fun () -> Lwt.try_bind (fun () -> k 1) k k_exn) (fun site ->
      L.try_bind ~site (fun () -> k 1) k k_exn);
  case ~probes:2 "try_bind error" (fun () -> Lwt.try_bind body k k_exn) (fun site ->
      L.try_bind ~site body k k_exn);
  let fin () =
    probe ();
    note "finally";
    Lwt.pause ()
  in
  case ~probes:2 "finalize" (fun () -> Lwt.finalize (fun () -> k 1) fin) (fun site ->
      L.finalize ~site (fun () -> k 1) fin);
  case ~probes:2 "finalize failing" (fun () -> Lwt.finalize body fin) (fun site ->
      L.finalize ~site body fin);
  case ~probes:0 "both" (fun () -> Lwt.both (later 1) (later "a")) (fun site ->
      L.both ~site (later 1) (later "a"));
  case ~probes:0 "both failing" (fun () -> Lwt.both (later 1) (fail_later Exit)) (fun site ->
      L.both ~site (later 1) (fail_later Exit));
  let three () = [ later 1; later 2; later 3 ] in
  case ~probes:0 "all" (fun () -> Lwt.all (three ())) (fun site -> L.all ~site (three ()));
  case ~probes:0 "all []" (fun () -> Lwt.all []) (fun site -> L.all ~site ([] : int Lwt.t list));
  case ~probes:0 "join" (fun () -> Lwt.join [ Lwt.pause (); two_rounds () ]) (fun site ->
      L.join ~site [ Lwt.pause (); two_rounds () ]);
  case ~probes:0 "join failing" (fun () -> Lwt.join [ fail_later Exit; two_rounds () ]) (fun site ->
      L.join ~site [ fail_later Exit; two_rounds () ]);
  (* pick and npick cancel the others; choose and nchoose leave them *)
  let with_task f =
    let t, _ = Lwt.task () in
    Lwt.map
      (fun v ->
        note (state t);
        v)
      (f [ later 1; t; later 2 ])
  in
  case ~probes:0 "pick" (fun () -> with_task Lwt.pick) (fun site -> with_task (L.pick ~site));
  case ~probes:0 "npick" (fun () -> with_task Lwt.npick) (fun site -> with_task (L.npick ~site));
  case ~probes:0 "choose" (fun () -> with_task Lwt.choose) (fun site -> with_task (L.choose ~site));
  case ~probes:0 "nchoose" (fun () -> with_task Lwt.nchoose) (fun site -> with_task (L.nchoose ~site));
  let split f = Lwt.map (fun (l, pending) -> (l, List.length pending)) (with_task f) in
  case ~probes:0 "nchoose_split" (fun () -> split Lwt.nchoose_split) (fun site ->
      split (L.nchoose_split ~site));
  case ~probes:0 "pick []" (fun () -> Lwt.pick []) (fun site -> L.pick ~site ([] : int Lwt.t list));
  case ~probes:0 "choose failing" (fun () -> Lwt.choose [ fail_later Exit; two_rounds () ]) (fun site ->
      L.choose ~site [ fail_later Exit; two_rounds () ]);
  case ~probes:0 "pause" Lwt.pause (fun site -> L.pause ~site ());
  let wait mk =
    let p, u = mk () in
    Lwt.async (fun () -> Lwt.map (fun () -> Lwt.wakeup u 3) (Lwt.pause ()));
    p
  in
  case ~probes:0 "wait" (fun () -> wait Lwt.wait) (fun site -> wait (L.wait ~site));
  case ~probes:0 "task" (fun () -> wait Lwt.task) (fun site -> wait (L.task ~site));
  case "apply" (fun () -> Lwt.apply k 1) (fun site -> L.apply ~site k 1);
  case "apply raising" (fun () -> Lwt.apply (fun x -> ignore (k x); raise Exit) 1) (fun site ->
      L.apply ~site (fun x -> ignore (k x); raise Exit) 1);
  let w0 () = plus1 0 in
  case "wrap" (fun () -> Lwt.wrap w0) (fun site -> L.wrap ~site w0);
  case "wrap raising" (fun () -> Lwt.wrap (fun () -> ignore (w0 ()); raise Exit)) (fun site ->
      L.wrap ~site (fun () -> ignore (w0 ()); raise Exit));
  case "wrap1" (fun () -> Lwt.wrap1 plus1 1) (fun site -> L.wrap1 ~site plus1 1);
  let sum l = plus1 (List.fold_left ( + ) 0 l) in
  let w2 a b = sum [ a; b ] and w3 a b c = sum [ a; b; c ] and w4 a b c d = sum [ a; b; c; d ] in
  let w5 a b c d e = sum [ a; b; c; d; e ] and w6 a b c d e f = sum [ a; b; c; d; e; f ] in
  let w7 a b c d e f g = sum [ a; b; c; d; e; f; g ] in
  case "wrap2" (fun () -> Lwt.wrap2 w2 1 2) (fun site -> L.wrap2 ~site w2 1 2);
  case "wrap3" (fun () -> Lwt.wrap3 w3 1 2 3) (fun site -> L.wrap3 ~site w3 1 2 3);
  case "wrap4" (fun () -> Lwt.wrap4 w4 1 2 3 4) (fun site -> L.wrap4 ~site w4 1 2 3 4);
  case "wrap5" (fun () -> Lwt.wrap5 w5 1 2 3 4 5) (fun site -> L.wrap5 ~site w5 1 2 3 4 5);
  case "wrap6" (fun () -> Lwt.wrap6 w6 1 2 3 4 5 6) (fun site -> L.wrap6 ~site w6 1 2 3 4 5 6);
  case "wrap7" (fun () -> Lwt.wrap7 w7 1 2 3 4 5 6 7) (fun site ->
      L.wrap7 ~site w7 1 2 3 4 5 6 7);
  (* on_success & co: the handler runs later, as the On_* thread; [d] resolves after *)
  let on reg input =
    let d, w = Lwt.wait () in
    let wake () = if Lwt.is_sleeping d then Lwt.wakeup w "woken" in
    let h s =
      probe ();
      note s;
      wake ()
    in
    reg (input ()) (fun v -> h ("value " ^ string_of_int v)) (fun e -> h ("exn " ^ text e)) h;
    Lwt.async (fun () -> Lwt.map wake (two_rounds ()));
    d
  in
  let ok () = later 4 and ko () = fail_later Exit in
  let on_success on_success p f _ _ = on_success p f in
  let on_failure on_failure p _ g _ = on_failure p g in
  let on_termination on_termination p _ _ h = on_termination p (fun () -> h "terminated") in
  let on_any on_any p f g _ = on_any p f g in
  case "on_success" (fun () -> on (on_success Lwt.on_success) ok) (fun site ->
      on (on_success (L.on_success ~site)) ok);
  case ~probes:0 "on_success, failed" (fun () -> on (on_success Lwt.on_success) ko) (fun site ->
      on (on_success (L.on_success ~site)) ko);
  case "on_failure" (fun () -> on (on_failure Lwt.on_failure) ko) (fun site ->
      on (on_failure (L.on_failure ~site)) ko);
  case ~probes:0 "on_failure, fulfilled" (fun () -> on (on_failure Lwt.on_failure) ok) (fun site ->
      on (on_failure (L.on_failure ~site)) ok);
  case "on_termination" (fun () -> on (on_termination Lwt.on_termination) ko) (fun site ->
      on (on_termination (L.on_termination ~site)) ko);
  case "on_any ok" (fun () -> on (on_any Lwt.on_any) ok) (fun site -> on (on_any (L.on_any ~site)) ok);
  case "on_any failed" (fun () -> on (on_any Lwt.on_any) ko) (fun site -> on (on_any (L.on_any ~site)) ko);
  let raising on_success =
    let d, w = Lwt.wait () in
    on_success (later 1) (fun v ->
        probe ();
        Lwt.wakeup w v;
        raise Exit);
    d
  in
  case ~t_res:(`Fails (text Exit)) "on_success raising" (fun () -> raising Lwt.on_success) (fun site ->
      raising (L.on_success ~site));
  (* async, dont_wait: the function runs at once and later as the Async thread *)
  let async async =
    let d, w = Lwt.wait () in
    async (fun () ->
        probe ();
        L.bind (Lwt.pause ()) (fun () ->
            probe ();
            Lwt.wakeup w 1;
            Lwt.return_unit));
    d
  in
  case ~probes:2 ~nested:true "async" (fun () -> async Lwt.async) (fun site -> async (L.async ~site));
  let async_failing async =
    async (fun () ->
        probe ();
        fail_later Exit);
    two_rounds ()
  in
  case ~t_res:(`Fails (text Exit)) "async failing" (fun () -> async_failing Lwt.async) (fun site ->
      async_failing (L.async ~site));
  let dont_wait dont_wait =
    dont_wait
      (fun () ->
        probe ();
        fail_later Exit)
      (fun e ->
        probe ();
        note ("handled " ^ text e));
    two_rounds ()
  in
  case ~probes:2 ~t_res:(`Fails (text Exit)) "dont_wait" (fun () -> dont_wait Lwt.dont_wait) (fun site ->
      dont_wait (L.dont_wait ~site));
  case ~probes:0 "protected" (fun () -> Lwt.protected (later 1)) (fun site -> L.protected ~site (later 1));
  case ~probes:0 "no_cancel" (fun () -> Lwt.no_cancel (later 1)) (fun site -> L.no_cancel ~site (later 1))

(* Lwt.cancel on the call's promise: as untraced (what it cancels, and how it ends),
   and the call's thread FAILS "Lwt.Canceled" when Lwt's promise is canceled *)
let cancel_cases () =
  let cancelled ?(probes = 0) ?(cancels = 1) name mk_lwt mk_traced =
    let run mk =
      let t, u = Lwt.task () in
      let p = mk t in
      Lwt.cancel p;
      note ("input " ^ state t);
      note ("call " ^ state p);
      if Lwt.is_sleeping t then Lwt.wakeup u 1;
      p
    in
    case ~probes ~cancels name (fun () -> run mk_lwt) (fun site -> run (mk_traced site))
  in
  cancelled "cancel bind" (fun t -> Lwt.bind t k) (fun site t -> L.bind ~site t k);
  cancelled "cancel map" (fun t -> Lwt.map plus1 t) (fun site t -> L.map ~site plus1 t);
  cancelled ~probes:1 ~cancels:0 "cancel catch" (fun t -> Lwt.catch (fun () -> t) k_exn) (fun site t ->
      L.catch ~site (fun () -> t) k_exn);
  cancelled ~probes:1 ~cancels:0 "cancel try_bind" (fun t -> Lwt.try_bind (fun () -> t) k k_exn)
    (fun site t -> L.try_bind ~site (fun () -> t) k k_exn);
  let fin () =
    probe ();
    Lwt.return_unit
  in
  cancelled ~probes:1 "cancel finalize" (fun t -> Lwt.finalize (fun () -> t) fin) (fun site t ->
      L.finalize ~site (fun () -> t) fin);
  cancelled "cancel pick" (fun t -> Lwt.pick [ t; fst (Lwt.task ()) ]) (fun site t ->
      L.pick ~site [ t; fst (Lwt.task ()) ]);
  cancelled "cancel npick" (fun t -> Lwt.npick [ t ]) (fun site t -> L.npick ~site [ t ]);
  cancelled "cancel choose" (fun t -> Lwt.choose [ t ]) (fun site t -> L.choose ~site [ t ]);
  cancelled "cancel nchoose" (fun t -> Lwt.nchoose [ t ]) (fun site t -> L.nchoose ~site [ t ]);
  let fsts f t = Lwt.map (fun (l, _) -> l) (f [ t ]) in
  cancelled "cancel nchoose_split" (fsts Lwt.nchoose_split) (fun site -> fsts (L.nchoose_split ~site));
  cancelled "cancel all" (fun t -> Lwt.all [ t ]) (fun site t -> L.all ~site [ t ]);
  cancelled "cancel both" (fun t -> Lwt.both t t) (fun site t -> L.both ~site t t);
  let units t = [ Lwt.map ignore t ] in
  cancelled "cancel join" (fun t -> Lwt.join (units t)) (fun site t -> L.join ~site (units t));
  cancelled "cancel apply" (fun t -> Lwt.apply (fun () -> t) ()) (fun site t -> L.apply ~site (fun () -> t) ());
  (* protected: cancels its own promise, not the input; no_cancel: nothing *)
  cancelled "cancel protected" Lwt.protected (fun site -> L.protected ~site);
  cancelled ~cancels:0 "cancel no_cancel" Lwt.no_cancel (fun site -> L.no_cancel ~site);
  let own mk =
    let p, u = mk () in
    Lwt.cancel p;
    note (state p);
    if Lwt.is_sleeping p then Lwt.wakeup u 2;
    p
  in
  case ~probes:0 ~cancels:1 "cancel task" (fun () -> own Lwt.task) (fun site -> own (L.task ~site));
  case ~probes:0 "cancel wait" (fun () -> own Lwt.wait) (fun site -> own (L.wait ~site));
  let pause pause =
    let p = pause () in
    Lwt.cancel p;
    p
  in
  case ~probes:0 ~cancels:1 "cancel pause" (fun () -> pause Lwt.pause) (fun site -> pause (L.pause ~site))

let prim_cases () =
  let take take =
    let m = Lwt_mvar.create_empty () in
    let got = take m in
    Lwt.bind (later ()) (fun () -> Lwt.bind (Lwt_mvar.put m 5) (fun () -> got))
  in
  case ~probes:0 "Mvar.take" (fun () -> take Lwt_mvar.take) (fun site -> take (L.Mvar.take ~site));
  let put put =
    let m = Lwt_mvar.create 1 in
    let p = put m 2 in
    note (state p);
    Lwt.bind (Lwt_mvar.take m) (fun a -> Lwt.bind p (fun () -> Lwt.map (fun b -> (a, b)) (Lwt_mvar.take m)))
  in
  case ~probes:0 "Mvar.put" (fun () -> put Lwt_mvar.put) (fun site -> put (L.Mvar.put ~site));
  let cond wait signal broadcast =
    let c = Lwt_condition.create () and m = Lwt_mutex.create () in
    let a = wait ?mutex:None c in
    let b = Lwt.bind (Lwt_mutex.lock m) (fun () -> wait ?mutex:(Some m) c) in
    Lwt.async (fun () ->
        Lwt.map
          (fun () ->
            signal c 1;
            broadcast c 2)
          (two_rounds ()));
    Lwt.both a b
  in
  case ~probes:2 "Condition" (fun () -> cond Lwt_condition.wait Lwt_condition.signal Lwt_condition.broadcast)
    (fun site ->
      L.track ~site Mtrace_ring.Condition (fun () ->
          cond (L.Condition.wait ~site:probe_site) L.Condition.signal L.Condition.broadcast));
  let mutex lock with_lock f =
    let m = Lwt_mutex.create () in
    Lwt.bind (lock m) (fun () ->
        let p = with_lock m f in
        Lwt.async (fun () -> Lwt.map (fun () -> Lwt_mutex.unlock m) (Lwt.pause ()));
        p)
  in
  let f () = later 1 and g () = k 1 in
  case ~probes:0 "Mutex.lock" (fun () -> mutex Lwt_mutex.lock Lwt_mutex.with_lock f) (fun site ->
      mutex (L.Mutex.lock ~site) Lwt_mutex.with_lock f);
  case "Mutex.with_lock" (fun () -> mutex Lwt_mutex.lock Lwt_mutex.with_lock g) (fun site ->
      mutex Lwt_mutex.lock (L.Mutex.with_lock ~site) g);
  let cancel_it p =
    Lwt.cancel p;
    p
  in
  case ~probes:0 ~cancels:1 "cancel Condition.wait"
    (fun () -> cancel_it (Lwt_condition.wait (Lwt_condition.create ())))
    (fun site -> cancel_it (L.Condition.wait ~site (Lwt_condition.create ())));
  case ~cancels:1 "cancel Mutex.with_lock"
    (fun () -> cancel_it (Lwt_mutex.with_lock (Lwt_mutex.create ()) (fun () -> k 1)))
    (fun site -> cancel_it (L.Mutex.with_lock ~site (Lwt_mutex.create ()) (fun () -> k 1)));
  case ~probes:0 ~cancels:1 "cancel Lwt_unix.sleep"
    (fun () -> cancel_it (Lwt_unix.sleep 10.))
    (fun site -> cancel_it (U.sleep ~site 10.));
  case ~probes:0 ~cancels:1 "cancel Lwt_unix.with_timeout"
    (fun () -> cancel_it (Lwt_unix.with_timeout 10. (fun () -> fst (Lwt.task ()))))
    (fun site -> cancel_it (U.with_timeout ~site 10. (fun () -> fst (Lwt.task ()))));
  case ~probes:0 ~cancels:1 "cancel Mvar.take"
    (fun () ->
      let p = Lwt_mvar.take (Lwt_mvar.create_empty ()) in
      Lwt.cancel p;
      p)
    (fun site ->
      let p = L.Mvar.take ~site (Lwt_mvar.create_empty ()) in
      Lwt.cancel p;
      p)

let result_cases () =
  let module R = Lwt_result in
  let module LR = L.Result in
  let ok () = later (Ok 1) and ko () = later (Error "e") in
  let f x = Lwt.map (fun v -> Ok v) (k x) in
  let g e = Lwt.map (fun v -> Error (e ^ string_of_int v)) (k 1) in
  case "Result.bind" (fun () -> R.bind (ok ()) f) (fun site -> LR.bind ~site (ok ()) f);
  case ~probes:0 "Result.bind Error" (fun () -> R.bind (ko ()) f) (fun site -> LR.bind ~site (ko ()) f);
  case "Result.bind_error" (fun () -> R.bind_error (ko ()) g) (fun site -> LR.bind_error ~site (ko ()) g);
  case "Result.bind_lwt" (fun () -> R.bind_lwt (ok ()) k) (fun site -> LR.bind_lwt ~site (ok ()) k);
  let h e = Lwt.map (fun _ -> e ^ "!") (k 2) in
  case "Result.bind_lwt_error" (fun () -> R.bind_lwt_error (ko ()) h) (fun site ->
      LR.bind_lwt_error ~site (ko ()) h);
  case "Result.bind_lwt_err" (fun () -> (R.bind_lwt_err [@alert "-deprecated"]) (ko ()) h) (fun site ->
      (LR.bind_lwt_err [@alert "-deprecated"]) ~site (ko ()) h);
  let r x = if plus1 x > 1 then Ok (x * 2) else Error "small" in
  case "Result.bind_result" (fun () -> R.bind_result (ok ()) r) (fun site -> LR.bind_result ~site (ok ()) r);
  case "Result.map" (fun () -> R.map plus1 (ok ())) (fun site -> LR.map ~site plus1 (ok ()));
  let e s =
    probe ();
    s ^ "?"
  in
  case "Result.map_error" (fun () -> R.map_error e (ko ())) (fun site -> LR.map_error ~site e (ko ()));
  case "Result.map_err" (fun () -> (R.map_err [@alert "-deprecated"]) e (ko ())) (fun site ->
      (LR.map_err [@alert "-deprecated"]) ~site e (ko ()));
  let caught c = Lwt.map (function Ok v -> Ok v | Error x -> Error (text x)) (c (fail_later Exit)) in
  case ~probes:0 "Result.catch" (fun () -> caught R.catch) (fun site -> caught (LR.catch ~site));
  case ~probes:0 "Result.both" (fun () -> R.both (ok ()) (later (Ok "b"))) (fun site ->
      LR.both ~site (ok ()) (later (Ok "b")));
  case ~probes:0 "Result.both Error" (fun () -> R.both (ok ()) (ko ())) (fun site ->
      LR.both ~site (ok ()) (ko ()));
  let u x = Lwt.map ignore (k x) in
  case "Result.iter" (fun () -> R.iter u (ok ())) (fun site -> LR.iter ~site u (ok ()));
  let ue s = u (String.length s) in
  case "Result.iter_error" (fun () -> R.iter_error ue (ko ())) (fun site -> LR.iter_error ~site ue (ko ()))

let unix_cases () =
  case ~probes:0 "Lwt_unix.sleep" (fun () -> Lwt_unix.sleep 0.001) (fun site -> U.sleep ~site 0.001);
  case ~probes:0 "Lwt_unix.timeout" (fun () -> Lwt_unix.timeout 0.001) (fun site -> U.timeout ~site 0.001);
  let timed f () =
    probe ();
    f ()
  in
  case "Lwt_unix.with_timeout, in time" (fun () -> Lwt_unix.with_timeout 1. (timed (fun () -> k 1)))
    (fun site -> U.with_timeout ~site 1. (timed (fun () -> k 1)));
  let hang () =
    let t, _ = Lwt.task () in
    Lwt.on_cancel t (fun () -> note "f's promise canceled");
    t
  in
  case "Lwt_unix.with_timeout, late" (fun () -> Lwt_unix.with_timeout 0.001 (timed hang)) (fun site ->
      U.with_timeout ~site 0.001 (timed hang));
  case ~probes:0 "Lwt_unix.yield" (fun () -> (Lwt_unix.yield [@alert "-deprecated"]) ()) (fun site ->
      (U.yield [@alert "-deprecated"]) ~site ())

let () =
  lwt_cases ();
  cancel_cases ();
  prim_cases ();
  result_cases ();
  unix_cases ();
  Vocab_lists.cases ();
  finish ()
