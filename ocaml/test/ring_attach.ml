(* ring_attach: Mtrace_ring's overwrite after [attach] is the same as without it.  Two
   identical page sets get the same records (a RING_START and a few more, as
   mtrace_guest_open leaves a ring); then one goes on with the writer that made it, the
   other with a writer attached to it (which reads back the records already there),
   through the same 200,000 records of every size, overwriting ~100 times over.  Their
   header and data pages must stay byte-identical and their counts equal; the writer
   that made the ring is the one tests/ocaml/test-bytes.sh holds to the C producer. *)
module R = Mtrace_ring

let pages = 8
let mk () = (Cstruct.create R.page_size, Cstruct.create (pages * R.page_size))

let script r i =
  match i mod 5 with
  | 0 -> R.read r ~thread:i ~source:(i + 1)
  | 1 -> R.creates_named r ~thread:i ~child:(i + 1) ~ty:R.Bind ~site:(1 + (i mod 7))
  | 2 -> R.label r ~thread:i (String.make (i mod 300) 'x')
  | 3 -> R.fails r ~thread:i ~resolvee:i (String.make (i mod 41) 'e')
  | _ -> R.becomes r ~thread:i ~other:(i + 2)

let () =
  let ha, da = mk () and hb, db = mk () in
  let ra = R.init ~name:"attach" ~hdr:ha ~data:da () and rb = R.init ~name:"attach" ~hdr:hb ~data:db () in
  List.iter (fun r -> R.set_clock r (fun () -> 42)) [ ra; rb ];
  R.ring_start ra;
  R.ring_start rb;
  for i = 0 to 9 do
    script ra i;
    script rb i
  done;
  let rb' = R.attach ~seq:(R.seq rb) ~hdr:hb ~data:db () in
  R.set_clock rb' (fun () -> 42);
  for i = 10 to 200_009 do
    script ra i;
    script rb' i
  done;
  let same = Cstruct.equal ha hb && Cstruct.equal da db in
  Printf.printf "made: head %d tail %d overwritten %d; attached: head %d tail %d overwritten %d; pages %s\n"
    (R.head ra) (R.tail ra) (R.overwritten ra) (R.head rb') (R.tail rb') (R.overwritten rb')
    (if same then "identical" else "DIFFER");
  if (not same) || R.head ra <> R.head rb' || R.tail ra <> R.tail rb'
     || R.overwritten ra <> R.overwritten rb' || R.overwritten ra < 1000
  then exit 1
