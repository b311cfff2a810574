let n = 50_000
let ( >>= ) = Lwt.bind

let rec loop i acc =
  if i = 0 then Lwt.return acc else Lwt.pause () >>= fun () -> loop (i - 1) (acc + 1)

let () =
  let hdr = Cstruct.create Mtrace_ring.page_size in
  let data = Cstruct.create (Mtrace_ring.page_size * 512) in
  let r = Mtrace_ring.init ~hdr ~data () in
  Mtrace_ring.ring_start r;
  Mtrace_lwt.set_ring (Some r);
  let got = Lwt_main.run (loop n 0) in
  assert (got = n);
  let ev = Mtrace_ring.events r in
  (* ring_start + 1 site name + per bind: CREATES, READ, BECOMES (all but the last,
     whose callback returns a resolved promise), FULFILLS *)
  Printf.printf "binds=%d events=%d overwritten=%d\n" n ev (Mtrace_ring.overwritten r);
  if ev <> 1 + 1 + (4 * n) - 1 then (prerr_endline "wrong event count"; exit 1)
