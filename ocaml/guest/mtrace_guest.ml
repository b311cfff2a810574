type session

external open_ : int -> int -> int -> string -> session = "mtrace_ocaml_guest_open"
external close_ : session -> unit = "mtrace_ocaml_guest_close"
external hdr : session -> int -> Cstruct.buffer = "mtrace_ocaml_guest_hdr"
external data : session -> int -> Cstruct.buffer = "mtrace_ocaml_guest_data"
external seq : session -> int -> int = "mtrace_ocaml_guest_seq"
external kick : session -> int -> unit = "mtrace_ocaml_guest_kick"
external domid_ : session -> int = "mtrace_ocaml_guest_domid"
external port_ : session -> int = "mtrace_ocaml_guest_port"
external clock_ : session -> int = "mtrace_ocaml_guest_clock"

type t = { s : session; rings : Mtrace_ring.t array }

let create ?(rings = 1) ?(pages = 64) ?(clock = Mtrace_ring.clock_monotonic) ?(backend = "") () =
  let s = open_ rings pages clock backend in
  let attach i =
    let r =
      Mtrace_ring.attach ~seq:(seq s i) ~hdr:(Cstruct.of_bigarray (hdr s i))
        ~data:(Cstruct.of_bigarray (data s i)) ()
    in
    Mtrace_ring.set_notify r (fun () -> kick s i);
    r
  in
  { s; rings = Array.init rings attach }

let ring t i =
  if i < 0 || i >= Array.length t.rings then invalid_arg "Mtrace_guest.ring";
  t.rings.(i)

let rings t = Array.length t.rings
let domid t = domid_ t.s
let port t = port_ t.s
let clock t = clock_ t.s
let close t = close_ t.s
