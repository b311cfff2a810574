(* Mtrace_xen.Make driven by its second instance (Fake_xen, in memory), checked from
   dom0's side the way mtraced would see it: the announcement read back from xenstore
   (docs/ring-protocol.md section 7, parsed as daemon/announce.c does), the pages mapped
   by the announced grefs with the rights of section 2, the records decoded from them and
   compared with what was written, the pages compared byte for byte with rings written
   directly through Mtrace_ring, the notification counted at the port; then withdrawal,
   re-announcement under a new domid, and every failure path releasing what it took.
   Prints ok:/FAIL: lines; exits 1 if any check failed. *)

module R = Mtrace_ring
module F = Fake_xen
module T = Mtrace_xen.Make (F.Xen) (F.Eventchn) (F.Xs)

let failed = ref 0

let check name ok =
  if ok then Printf.printf "ok: %s\n%!" name
  else begin
    incr failed;
    Printf.printf "FAIL: %s\n%!" name
  end

let check_eq name show want got =
  if want = got then check name true
  else begin
    check name false;
    Printf.printf "  want %s\n  got  %s\n%!" (show want) (show got)
  end

let str_list l = "[" ^ String.concat "; " l ^ "]"

(* The fake's promises are resolved when returned: nothing here waits. *)
let run p =
  match Lwt.state p with
  | Lwt.Return v -> Ok v
  | Lwt.Fail e -> Error e
  | Lwt.Sleep -> failwith "a promise of the in-memory instance is pending"

let run_exn p = match run p with Ok v -> v | Error e -> raise e

(* {2 dom0's side} *)

(* announce_parse_dec: decimal, no sign or leading zero, at most 10 digits, <= max *)
let parse_dec v max =
  let n = String.length v in
  let rec digits i = i = n || (v.[i] >= '0' && v.[i] <= '9' && digits (i + 1)) in
  if n = 0 || n > 10 || (n > 1 && v.[0] = '0') || not (digits 0) then None
  else match int_of_string_opt v with Some x when x <= max -> Some x | _ -> None

type announcement = { clock : string; port : int; refs : int list; pages : int list }

let read_announcement domid =
  let b = Printf.sprintf "/local/domain/%d/data/mtrace" domid in
  let get k = F.Xs.get (b ^ "/" ^ k) in
  let dec k max =
    match Option.bind (get k) (fun v -> parse_dec v max) with
    | Some n -> n
    | None -> failwith (k ^ ": " ^ Option.value (get k) ~default:"(missing)")
  in
  if get "state" <> Some "ready" then Error "state is not ready"
  else if get "version" <> Some "1" then Error "version is not 1"
  else
    match
      let clock = Option.value (get "clock") ~default:"" in
      if not (List.mem clock [ "monotonic"; "xen"; "realtime" ]) then failwith ("clock " ^ clock);
      let port = dec "event-channel" 0xffff in
      let n = dec "rings" Mtrace_xen.max_rings in
      if n = 0 || port = 0 then failwith "zero rings or port";
      let refs = List.init n (fun i -> dec (Printf.sprintf "ring/%d/ref" i) 0xffff_ffff) in
      let pages = List.init n (fun i -> dec (Printf.sprintf "ring/%d/pages" i) 512) in
      { clock; port; refs; pages }
    with
    | a -> Ok a
    | exception Failure why -> Error why

let map ~writable gref =
  match F.Xen.map ~domid:0 ~writable gref with Ok p -> p | Error e -> failwith e

(* One ring as mtraced maps it: the header read-write, then the data pages read-only by
   the refs the header lists after its 256 bytes (the pages themselves: concatenate them
   when reading). *)
let map_ring gref pages =
  let hdr = map ~writable:true gref in
  let refs =
    List.init pages (fun k ->
        Int32.to_int (Cstruct.LE.get_uint32 hdr (Mtrace_xen.hdr_size + (4 * k))) land 0xffff_ffff)
  in
  (hdr, refs, List.map (map ~writable:false) refs)

(* {2 The records} *)

type ev = { seq : int; ts : int; op : int; ty : int; thread : int; arg : int; str : string }

let show_ev e =
  Printf.sprintf "{seq=%d ts=%d op=%d ty=%d thread=%d arg=%d str=%S}" e.seq e.ts e.op e.ty e.thread
    e.arg e.str

let string_ops = [ 3; 5; 6; 11; 66; 68; 69 ]

(* Every record in [tail, head) (proto/mtrace-ring.h), PADs skipped. *)
let decode hdr data =
  let head = Int64.to_int (Cstruct.LE.get_uint64 hdr 128)
  and tail = Int64.to_int (Cstruct.LE.get_uint64 hdr 136) in
  let mask = Cstruct.length data - 1 in
  let rec go pos acc =
    if pos >= head then List.rev acc
    else
      let o = pos land mask in
      let len = Cstruct.LE.get_uint16 data o and op = Cstruct.get_uint8 data (o + 2) in
      if len < 8 || len land 7 <> 0 then failwith (Printf.sprintf "bad record length %d" len)
      else if op = 255 then go (pos + len) acc
      else
        let u64 at = Int64.to_int (Cstruct.LE.get_uint64 data (o + at)) in
        let str =
          if List.mem op string_ops then
            let s = Cstruct.to_string (Cstruct.sub data (o + 32) (len - 32)) in
            match String.index_opt s '\000' with Some i -> String.sub s 0 i | None -> s
          else ""
        in
        let e =
          {
            seq = Int32.to_int (Cstruct.LE.get_uint32 data (o + 4)) land 0xffff_ffff;
            ts = u64 8;
            op;
            ty = Cstruct.get_uint8 data (o + 3);
            thread = u64 16;
            arg = u64 24;
            str;
          }
        in
        go (pos + len) (e :: acc)
  in
  go tail []

(* What a ring of the test gets: its k-th action, applied and expected. *)
let now = ref 5000
let clock () = !now

let action r k =
  let th = (1000 * (r + 1)) + k in
  match k mod 9 with
  | 0 -> `Creates (th, th + 1)
  | 1 -> `Read (th, th - 1)
  | 2 -> `Fulfills (th, th + 1)
  | 3 -> `Fails (th, th + 2, Printf.sprintf "Failure(\"ring %d, %d\")" r k)
  | 4 -> `Label (th, String.make (k mod 23) (Char.chr (97 + (k mod 26))))
  | 5 -> `Increase (th, "bytes", 3 * k)
  | 6 -> `Counter (th, "depth", -k)
  | 7 -> `Switch (if k mod 2 = 0 then R.thread_none else th)
  | _ -> `Evtchn_send (th, 5)

let apply w = function
  | `Creates (th, ch) -> R.creates w ~thread:th ~child:ch ~ty:R.Bind
  | `Read (th, s) -> R.read w ~thread:th ~source:s
  | `Fulfills (th, x) -> R.fulfills w ~thread:th ~resolvee:x
  | `Fails (th, x, s) -> R.fails w ~thread:th ~resolvee:x s
  | `Label (th, s) -> R.label w ~thread:th s
  | `Increase (th, n, a) -> R.increase w ~thread:th n a
  | `Counter (th, n, v) -> R.counter w ~thread:th n v
  | `Switch th -> R.switch w ~thread:th
  | `Evtchn_send (th, p) -> R.evtchn_send w ~thread:th ~port:p

(* (op, type, thread, arg, string) of an action's record *)
let expect = function
  | `Creates (th, ch) -> (0, R.thread_type_code R.Bind, th, ch, "")
  | `Read (th, s) -> (1, 0, th, s, "")
  | `Fulfills (th, x) -> (2, 0, th, x, "")
  | `Fails (th, x, s) -> (3, 0, th, x, s)
  | `Label (th, s) -> (5, 0, th, 0, s)
  | `Increase (th, n, a) -> (6, 0, th, a, n)
  | `Counter (th, n, v) -> (11, 0, th, v, n)
  | `Switch th -> (7, 0, th, 0, "")
  | `Evtchn_send (th, p) -> (64, 0, th, p, "")

let ev_of seq ts (op, ty, thread, arg, str) = { seq; ts; op; ty; thread; arg; str }

(* {2 The scenarios} *)

let base d = Printf.sprintf "/local/domain/%d/data/mtrace" d

let show_op = function
  | F.Xs.Write (p, v) -> Printf.sprintf "write %s=%s" p v
  | F.Xs.Rm p -> "rm " ^ p
  | F.Xs.Commit -> "commit"
  | F.Xs.Conflict -> "conflict"
  | F.Xs.Abort -> "abort"

let show_ops l = str_list (List.map show_op l)
let show_ints l = str_list (List.map string_of_int l)

(* A domain with its home, domid and data directory, and nothing else. *)
let fresh ?(domid = 7) ?(capacity = 64) () =
  F.own_domid := domid;
  F.grant_capacity := capacity;
  F.conflicts := 0;
  F.fail_write := "";
  F.Xen.reset ();
  F.Eventchn.reset ();
  F.Xs.reset ();
  let home = Printf.sprintf "/local/domain/%d" domid in
  F.Xs.set F.Xs.tree (home ^ "/domid") (string_of_int domid);
  F.Xs.set F.Xs.tree (home ^ "/data") ""

let rings = 3
let pages = 2
let counts = [| 40; 41; 600 |] (* ring 2 (8 KiB) is overwritten several times *)

let main_scenario () =
  fresh ();
  let b = base 7 in
  (* a previous announcement with 8 rings: nothing of it may stay *)
  List.iter
    (fun (k, v) -> F.Xs.set F.Xs.tree (b ^ "/" ^ k) v)
    [ ("rings", "8"); ("ring/7/ref", "99"); ("ring/7/pages", "4"); ("state", "ready") ];
  F.conflicts := 1;
  now := 5000;
  let t = run_exn (T.create ~rings ~pages ~clock_id:R.clock_xen ~clock ()) in
  let a =
    match read_announcement 7 with
    | Ok a -> a
    | Error why ->
        check ("the announcement parses: " ^ why) false;
        exit 1
  in
  check "the announcement parses as mtraced's" true;
  check_eq "clock" Fun.id "xen" a.clock;
  check_eq "event-channel is the one bound port" show_ints (F.Eventchn.bound ()) [ a.port ];
  check_eq "the port is T.port" string_of_int a.port (T.port t);
  check_eq "the port is offered to dom0" string_of_int 0 (F.Eventchn.remote a.port);
  check_eq "rings" string_of_int rings (List.length a.refs);
  check_eq "ring/i/pages" show_ints (List.init rings (fun _ -> pages)) a.pages;
  check_eq "domid" string_of_int 7 (T.domid t);
  let ring_keys i = List.map (Printf.sprintf "ring/%d%s" i) [ ""; "/pages"; "/ref" ] in
  let want_keys =
    List.sort compare
      (List.map
         (fun k -> b ^ "/" ^ k)
         ([ "clock"; "event-channel"; "ring"; "rings"; "state"; "version" ]
         @ List.concat (List.init rings ring_keys)))
  in
  check_eq "exactly the keys of section 7 (the stale ring/7 is gone)" str_list want_keys
    (F.Xs.keys_below b);
  let w k v = F.Xs.Write (b ^ "/" ^ k, v) in
  let want_log =
    [ F.Xs.Conflict; F.Xs.Rm b; w "version" "1"; w "clock" "xen" ]
    @ [ w "event-channel" (string_of_int a.port); w "rings" (string_of_int rings) ]
    @ List.concat
        (List.mapi
           (fun i r ->
             [ w (Printf.sprintf "ring/%d/ref" i) (string_of_int r); w (Printf.sprintf "ring/%d/pages" i) "2" ])
           a.refs)
    @ [ w "state" "ready"; F.Xs.Commit ]
  in
  check_eq "one transaction, run again after a conflict: rm, then guest.c's order, state last"
    show_ops want_log (F.Xs.ops ());
  (* section 2: the header writable by dom0, the data read-only, both to dom0 only *)
  let mapped = List.map2 map_ring a.refs a.pages in
  let data_refs = List.concat_map (fun (_, refs, _) -> refs) mapped in
  check_eq "grants: a header and its data pages per ring, all distinct" string_of_int
    (rings * (1 + pages))
    (List.length (List.sort_uniq compare (a.refs @ data_refs)));
  check_eq "every granted page is one of them" string_of_int (rings * (1 + pages)) (F.Xen.granted ());
  check "data pages are read-only to dom0"
    (List.for_all (fun r -> Result.is_error (F.Xen.map ~domid:0 ~writable:true r)) data_refs);
  check "no page is granted to another domain"
    (List.for_all (fun r -> Result.is_error (F.Xen.map ~domid:1 ~writable:false r)) (a.refs @ data_refs));
  (* the same records written directly, at the same instants *)
  let dh = Array.init rings (fun _ -> Cstruct.create R.page_size) in
  let dd = Array.init rings (fun _ -> Cstruct.create (pages * R.page_size)) in
  let direct =
    Array.init rings (fun i ->
        let w =
          R.init ~clock_id:R.clock_xen ~index:i ~name:(Printf.sprintf "ring%d" i) ~hdr:dh.(i)
            ~data:dd.(i) ()
        in
        R.set_clock w clock;
        R.ring_start w;
        w)
  in
  let expected =
    Array.init rings (fun i ->
        ref [ { seq = 0; ts = 5000; op = 66; ty = 0; thread = -1; arg = i; str = Printf.sprintf "ring%d" i } ])
  in
  let write r k =
    now := !now + 13;
    let act = action r k in
    apply (T.ring t r) act;
    apply direct.(r) act;
    expected.(r) := ev_of (k + 1) !now (expect act) :: !(expected.(r))
  in
  for r = 0 to rings - 1 do
    for k = 0 to 9 do
      write r k
    done
  done;
  check_eq "no notification before a reader asks (req_event 0)" string_of_int 0
    (F.Eventchn.notified a.port);
  (* dom0 asks to be woken at the next record, in the page it maps *)
  let hdr0, _, _ = List.hd mapped in
  let req = Int64.of_int (R.head (T.ring t 0) + 1) in
  Cstruct.LE.set_uint64 hdr0 192 req;
  Cstruct.LE.set_uint64 dh.(0) 192 req;
  write 0 10;
  check_eq "the record crossing req_event notifies the port once" string_of_int 1
    (F.Eventchn.notified a.port);
  check_eq "the writer counted it" string_of_int 1 (R.notifies (T.ring t 0));
  check_eq "the header's notifies, as dom0 reads it" string_of_int 1
    (Int64.to_int (Cstruct.LE.get_uint64 hdr0 144));
  for r = 0 to rings - 1 do
    for k = (if r = 0 then 11 else 10) to counts.(r) - 1 do
      write r k
    done
  done;
  check_eq "no further notification (req_event stays behind)" string_of_int 1
    (F.Eventchn.notified a.port);
  check_eq "no notification failed" string_of_int 0 (T.notify_failures t);
  List.iteri
    (fun r (hdr, _, dpages) ->
      let data = Cstruct.concat dpages in
      let want = List.rev !(expected.(r)) and got = decode hdr data in
      let w = T.ring t r in
      if r < 2 then begin
        check_eq (Printf.sprintf "ring %d: nothing overwritten" r) string_of_int 0 (R.overwritten w);
        check_eq
          (Printf.sprintf "ring %d: dom0 decodes exactly the %d records written" r (List.length want))
          (fun l -> str_list (List.map show_ev l))
          want got
      end
      else begin
        let n = List.length got in
        check (Printf.sprintf "ring %d: overwritten (%d records dropped)" r (R.overwritten w))
          (R.overwritten w > 0 && n > 0);
        check_eq
          (Printf.sprintf "ring %d: dom0 decodes the newest %d records written" r n)
          (fun l -> str_list (List.map show_ev l))
          (List.filteri (fun i _ -> i >= List.length want - n) want)
          got
      end;
      check
        (Printf.sprintf "ring %d: header bytes (256) as written directly" r)
        (Cstruct.equal (Cstruct.sub hdr 0 Mtrace_xen.hdr_size) (Cstruct.sub dh.(r) 0 Mtrace_xen.hdr_size));
      check (Printf.sprintf "ring %d: data bytes as written directly" r) (Cstruct.equal data dd.(r)))
    mapped;
  (t, a)

(* After migration: the domid is read again and everything announced under it. *)
let reannounce_and_close t a =
  F.own_domid := 9;
  F.Xs.set F.Xs.tree "/local/domain/9/domid" "9";
  F.Xs.set F.Xs.tree "/local/domain/9/data" "";
  F.Xs.log := [];
  run_exn (T.reannounce t);
  check_eq "reannounce: the new domid" string_of_int 9 (T.domid t);
  check "reannounce: the same announcement under /local/domain/9" (read_announcement 9 = Ok a);
  let b = base 9 in
  F.Xs.log := [];
  run_exn (T.close t);
  check_eq "close: state=closed in a transaction, then the directory removed" show_ops
    [ F.Xs.Write (b ^ "/state", "closed"); F.Xs.Commit; F.Xs.Rm b ]
    (F.Xs.ops ());
  check_eq "close: nothing left under data/mtrace" str_list [] (F.Xs.keys_below b);
  check "close: data/mtrace itself gone" (F.Xs.get b = None);
  check_eq "close: every grant ended" string_of_int 0 (F.Xen.granted ());
  check_eq "close: every ref back in the free list" string_of_int 64 (List.length !F.Xen.free);
  check_eq "close: the port unbound" show_ints [] (F.Eventchn.bound ());
  run_exn (T.close t);
  check_eq "close again: nothing more" string_of_int 3 (List.length (F.Xs.ops ()))

(* clock-sync (guest/clock-sync.c's rules): announced with the rest, seq 1; measured
   again at most once a second of the ring clock; rewritten only for a move of more than
   50 us and more than the measures' noise; a source that fails changes nothing. *)
let clock_sync_scenario () =
  fresh ();
  let b = base 7 in
  let pair = ref (Some (1_000, 5_000_000_000, 300)) and asked = ref 0 in
  let clock_sync () =
    incr asked;
    match !pair with Some p -> Some p | None -> failwith "no source"
  in
  now := 1_000;
  let t = run_exn (T.create ~rings:1 ~pages:1 ~clock ~clock_sync ()) in
  let key () = Option.value (F.Xs.get (b ^ "/clock-sync")) ~default:"(none)" in
  check_eq "clock-sync announced at create" Fun.id "1 1000 5000000000 300" (key ());
  let ops = F.Xs.ops () in
  let rec pos key i = function
    | [] -> -1
    | F.Xs.Write (p, _) :: _ when p = b ^ "/" ^ key -> i
    | _ :: l -> pos key (i + 1) l
  in
  let cs = pos "clock-sync" 0 ops and st = pos "state" 0 ops in
  check "in the announcement's transaction, before state (dom0 reads nothing before it)"
    (cs >= 0 && cs < st && not (List.exists (( = ) F.Xs.Commit) (List.filteri (fun i _ -> i < st) ops)));
  check_eq "T.clock_sync" Fun.id "1 1000 5000000000 300"
    (match T.clock_sync t with Some (q, r, x, w) -> Printf.sprintf "%d %d %d %d" q r x w | None -> "-");
  let step ~dt p =
    now := !now + dt;
    pair := p;
    run_exn (T.clock_check t);
    key ()
  in
  let n0 = !asked in
  check_eq "not a second later: not even measured" Fun.id "1 1000 5000000000 300"
    (step ~dt:999_999_999 (Some (2_000, 5_000_060_000, 0)));
  check_eq "(no measure)" string_of_int n0 !asked;
  check_eq "a second later, 60 us moved: rewritten" Fun.id "2 2000 5000060000 0"
    (step ~dt:1 (Some (2_000, 5_000_060_000, 0)));
  check_eq "50 us: not more than 50" Fun.id "2 2000 5000060000 0"
    (step ~dt:1_000_000_000 (Some (3_000, 5_000_111_000, 0)));
  check_eq "60 us in measures 200 us wide: noise" Fun.id "2 2000 5000060000 0"
    (step ~dt:1_000_000_000 (Some (3_000, 5_000_121_000, 200_000)));
  check_eq "a source that fails: nothing changes" Fun.id "2 2000 5000060000 0"
    (step ~dt:1_000_000_000 None);
  check_eq "a negative reading: no measure" Fun.id "2 2000 5000060000 0"
    (step ~dt:1_000_000_000 (Some (-1, 5, 0)));
  (* after resume: measured again with the announcement *)
  pair := Some (9_000, 7_000_000_000, 400);
  run_exn (T.reannounce t);
  check_eq "reannounce: measured and announced again, seq on" Fun.id "3 9000 7000000000 400" (key ());
  run_exn (T.close t)

(* Each failure releases what create took, and leaves xenstore as it was. *)
let failure name ?(setup = fun () -> ()) ?(domid = 7) ?(capacity = 64) ~want create =
  fresh ~domid ~capacity ();
  setup ();
  let before = F.Xs.all () in
  (match run (create ()) with
  | Ok _ -> check_eq (name ^ ": refused") Fun.id want "a session"
  | Error e -> check_eq (name ^ ": refused") Fun.id want (Printexc.to_string e));
  check_eq (name ^ ": no grant left") string_of_int 0 (F.Xen.granted ());
  check_eq (name ^ ": every ref back") string_of_int capacity (List.length !F.Xen.free);
  check_eq (name ^ ": no port left") show_ints [] (F.Eventchn.bound ());
  check_eq (name ^ ": xenstore unchanged") str_list before (F.Xs.all ())

let failures () =
  let create ?rings ?pages ?clock_id () = T.create ?rings ?pages ?clock_id ~clock () in
  let inv why = Printexc.to_string (Invalid_argument ("Mtrace_xen.create: " ^ why)) in
  failure "0 rings" ~want:(inv "rings must be 1..64") (create ~rings:0);
  failure "65 rings" ~want:(inv "rings must be 1..64") (create ~rings:65);
  failure "3 pages" ~want:(inv "data pages must be a power of two in 1..512") (create ~pages:3);
  failure "1024 pages" ~want:(inv "data pages must be a power of two in 1..512") (create ~pages:1024);
  failure "clock tsc" ~want:(inv "clock tsc needs the calibrated time block (guest library only)")
    (create ~clock_id:R.clock_tsc);
  failure "the reader's own domain" ~domid:0
    ~want:
      (Printexc.to_string
         (Failure "Mtrace_xen: not running in a guest domain (this is domain 0, the reader's own)"))
    (create ~rings:2 ~pages:4);
  failure "a domid that is not a number"
    ~setup:(fun () -> F.Xs.set F.Xs.tree "/local/domain/7/domid" "7x")
    ~want:(Printexc.to_string (Failure "Mtrace_xen: xenstore's domid is \"7x\""))
    (create ~rings:2 ~pages:4);
  (* 3 refs a ring: the third ring's data pages do not fit in 7 *)
  failure "grant table full at the third ring" ~capacity:7
    ~want:(Printexc.to_string (Failure "Mtrace_xen: grant table full (sharing 2 pages)"))
    (create ~rings:3 ~pages:2);
  failure "a refused xenstore write"
    ~setup:(fun () -> F.fail_write := base 7 ^ "/state")
    ~want:(Printexc.to_string (Failure ("write refused: " ^ base 7 ^ "/state")))
    (create ~rings:2 ~pages:4);
  check_eq "a refused xenstore write: the transaction aborted" show_ops [ F.Xs.Abort ] (F.Xs.ops ())

(* A notification that raises is counted; the traced call goes on. *)
let notify_failure () =
  fresh ();
  let t = run_exn (T.create ~rings:1 ~pages:1 ~clock ()) in
  let w = T.ring t 0 in
  let hdr, _, _ =
    match read_announcement 7 with
    | Ok a -> map_ring (List.hd a.refs) 1
    | Error why -> failwith why
  in
  Cstruct.LE.set_uint64 hdr 192 (Int64.of_int (R.head w + 1));
  F.Eventchn.unbind () (T.port t);
  (match R.read w ~thread:1 ~source:2 with
  | () -> check "a failing notify does not raise into the traced call" true
  | exception e -> check ("a failing notify does not raise: " ^ Printexc.to_string e) false);
  check_eq "the failure is counted" string_of_int 1 (T.notify_failures t);
  check_eq "the record is there all the same" string_of_int 2 (R.events w);
  (* the port back, so that close can unbind it *)
  (Hashtbl.find F.Eventchn.ports (T.port t)).bound <- true;
  run_exn (T.close t)

let () =
  let t, a = main_scenario () in
  reannounce_and_close t a;
  clock_sync_scenario ();
  failures ();
  notify_failure ();
  if !failed > 0 then begin
    Printf.printf "%d checks failed\n" !failed;
    exit 1
  end
