(* bench_ring: one traced event from OCaml (Mtrace_ring) vs the C producer, in one
   process, flight recorder flat out over local pages (the overwrite path included),
   with and without the clock.  Median of RUNS runs in thread CPU time; also the minor
   words the OCaml writer allocates per event (0 on the hot paths).
   usage: bench_ring.exe [EVENTS [RUNS [PAGES]]] *)

module R = Mtrace_ring

external cpu_now : unit -> float = "bench_cpu_now"
external c_producer : int -> int -> int -> float = "bench_c_producer"

let arg i d = if Array.length Sys.argv > i then int_of_string Sys.argv.(i) else d
let n = arg 1 10_000_000
let runs = arg 2 7
let pages = arg 3 512

let median f =
  let v = Array.init runs (fun _ -> f ()) in
  Array.sort compare v;
  v.(runs / 2)

let hdr = Cstruct.create R.page_size
let data = Cstruct.create (pages * R.page_size)
let words = ref 0.

let ocaml what () =
  let r = R.init ~hdr ~data () in
  if what = 1 then R.set_clock r (fun () -> 0);
  let w0 = Gc.minor_words () in
  let t0 = cpu_now () in
  (match what with
  | 0 | 1 ->
      for i = 0 to n - 1 do
        R.read r ~thread:i ~source:(i + 1)
      done
  | _ ->
      for i = 0 to n - 1 do
        R.creates_named r ~thread:i ~child:(i + 1) ~ty:R.Task ~site:7
      done);
  let t = (cpu_now () -. t0) *. 1e9 /. float n in
  words := (Gc.minor_words () -. w0) /. float n;
  t

let () =
  let cmd = Printf.sprintf "%s %d %d %d" Sys.executable_name n runs pages in
  let line name c o =
    Printf.printf "%-34s C %6.2f ns  OCaml %6.2f ns  ratio %.2f  (OCaml %.3f minor words/event)\n%!"
      name c o (o /. c) !words
  in
  Printf.printf "# %s  (median of %d runs of %d events, %d-page ring, thread CPU time)\n%!" cmd runs
    n pages;
  let pair name w =
    let o = median (ocaml w) in
    let c = median (fun () -> c_producer w n pages) in
    line name c o
  in
  pair "read, with the clock (monotonic)" 0;
  pair "read, without the clock" 1;
  pair "creates_named, with the clock" 2
