type session

exception Unavailable of string

(* The stub raises it by name (mtrace_guest_stubs.c); printed without OCaml's quoting,
   as the sentence it is. *)
let () =
  Callback.register_exception "Mtrace_guest.Unavailable" (Unavailable "");
  Printexc.register_printer (function
    | Unavailable m -> Some ("Mtrace_guest.Unavailable: " ^ m)
    | _ -> None)

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

let off () =
  match Sys.getenv_opt "MTRACE" with
  | None -> false
  | Some v -> (
      match String.lowercase_ascii v with
      | "" | "on" | "1" | "yes" | "true" -> false
      | "off" | "0" | "no" | "false" -> true
      | _ -> failwith (Printf.sprintf "MTRACE=%s: expected on or off" v))

let start ?rings ?pages ?clock ?backend () =
  if off () then None
  else
    try Some (create ?rings ?pages ?clock ?backend ())
    with Unavailable m -> raise (Unavailable (m ^ "; or MTRACE=off to run it untraced"))

let close t = close_ t.s

let with_session ?rings ?pages ?clock ?backend f =
  match start ?rings ?pages ?clock ?backend () with
  | None -> f None
  | Some t -> Fun.protect ~finally:(fun () -> close t) (fun () -> f (Some t))

let wait_reader t limit =
  let attached () = Array.exists (fun r -> Mtrace_ring.req_event r <> 0) t.rings in
  let t0 = Unix.gettimeofday () in
  while (not (attached ())) && Unix.gettimeofday () -. t0 < limit do
    Unix.sleepf 0.005
  done;
  attached ()

let ring t i =
  if i < 0 || i >= Array.length t.rings then invalid_arg "Mtrace_guest.ring";
  t.rings.(i)

let rings t = Array.length t.rings
let domid t = domid_ t.s
let port t = port_ t.s
let clock t = clock_ t.s
