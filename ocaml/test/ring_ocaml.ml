(* Replay a tests/ocaml/gen-script.py script through Mtrace_ring over local pages and
   dump the header page and data pages; tests/ocaml/test-bytes.sh compares the dump
   with ring-c's (guest/ring.c) byte for byte.  The script's timestamps come in through
   set_clock, as a unikernel's clock would.

   ring_ocaml.exe DUMP [HOLD]: with HOLD, the records are written in groups of 1, 2, ...
   HOLD records between R.hold and R.release (released before a reqrel, whose req_event
   is relative to the published head): the same bytes, head, tail and notifies as
   published one by one.  Fails if no held record was ever unpublished (the hold did
   nothing). *)

module R = Mtrace_ring

let unhex h =
  if h = "-" then ""
  else String.init (String.length h / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub h (2 * i) 2)))

let ty_of_code = function
  | 99 -> R.Unknown
  | n ->
      [| R.Wait; Task; Bind; Try; Choose; Pick; Join; Map; Condition; On_success; On_failure;
         On_termination; On_any; Ignore_result; Async; Promise; Semaphore; Switch; Stream; Mutex |].(n)

let () =
  let dump = Sys.argv.(1) in
  let ring = ref None and hdr = ref Cstruct.empty and data = ref Cstruct.empty in
  let ts = ref 0 in
  let hold = if Array.length Sys.argv > 2 then int_of_string Sys.argv.(2) else 0 in
  let group = ref 0 and in_group = ref 0 and unpublished = ref 0 in
  let published () = Int64.to_int (Cstruct.LE.get_uint64 !hdr 128) in
  let before t =
    if hold > 0 && !in_group = 0 then begin
      R.hold t;
      group := (!group mod hold) + 1
    end
  and after t =
    if hold > 0 then begin
      if published () <> R.head t then incr unpublished;
      incr in_group;
      if !in_group >= !group then begin
        R.release t;
        in_group := 0
      end
    end
  in
  (try
     while true do
       let line = input_line stdin in
       match String.split_on_char ' ' line with
       | [ "init"; pages; clock; index; name ] ->
           hdr := Cstruct.create R.page_size;
           data := Cstruct.create (int_of_string pages * R.page_size);
           let t =
             R.init ~clock_id:(int_of_string clock) ~index:(int_of_string index) ~name:(unhex name)
               ~hdr:!hdr ~data:!data ()
           in
           R.set_clock t (fun () -> !ts);
           ring := Some t
       | [ "reqrel"; d ] ->
           Option.iter R.release !ring;
           in_group := 0;
           let head = Cstruct.LE.get_uint64 !hdr 128 in
           Cstruct.LE.set_uint64 !hdr 192 (Int64.add head (Int64.of_string d))
       | [ op; t_s; thread; arg; ty; site; hex ] -> (
           let t = Option.get !ring in
           ts := int_of_string t_s;
           let thread = int_of_string thread and arg = int_of_string arg in
           let ty = ty_of_code (int_of_string ty) and site = int_of_string site in
           let s = unhex hex in
           before t;
           (match op with
           | "ring_start" -> R.ring_start t
           | "creates" -> R.creates t ~thread ~child:arg ~ty
           | "creates_named" -> R.creates_named t ~thread ~child:arg ~ty ~site
           | "creates_pc" -> R.creates_pc t ~thread ~child:arg ~ty ~pc:site
           | "site_name" -> R.site_name t ~site:arg s
           | "read" -> R.read t ~thread ~source:arg
           | "fulfills" -> R.fulfills t ~thread ~resolvee:arg
           | "becomes" -> R.becomes t ~thread ~other:arg
           | "switch" -> R.switch t ~thread
           | "gc" -> R.gc t ~duration_ns:arg
           | "signal" -> R.signal t ~thread ~source:arg
           | "try_read" -> R.try_read t ~thread ~source:arg
           | "evtchn_send" -> R.evtchn_send t ~thread ~port:arg
           | "evtchn_recv" -> R.evtchn_recv t ~thread ~port:arg
           | "label" -> R.label t ~thread s
           | "fails" -> R.fails t ~thread ~resolvee:arg s
           | "increase" -> R.increase t ~thread s arg
           | "counter" -> R.counter t ~thread s arg
           | _ -> failwith ("unknown op " ^ op));
           after t)
       | _ -> failwith ("bad script line: " ^ line)
     done
   with End_of_file -> ());
  let t = Option.get !ring in
  R.release t;
  if hold > 0 && !unpublished = 0 then failwith "ring_ocaml: no held record was ever unpublished";
  let oc = open_out_bin dump in
  output_string oc (Cstruct.to_string !hdr);
  output_string oc (Cstruct.to_string !data);
  close_out oc;
  Printf.eprintf "ring-ocaml: %d events, %d overwritten, %d notifies, head %d tail %d%s\n"
    (R.events t) (R.overwritten t) (R.notifies t) (R.head t) (R.tail t)
    (if hold > 0 then Printf.sprintf ", %d held records seen unpublished" !unpublished else "")
