let __mtrace_site_0 = Mtrace_lwt.site "input.ml:4:2"
let __mtrace_site_1 = Mtrace_lwt.site "input.ml:3:2"
let __mtrace_site_2 = Mtrace_lwt.site "input.ml:7:12"
let __mtrace_site_3 = Mtrace_lwt.site "input.ml:8:12"
let __mtrace_site_4 = Mtrace_lwt.site "input.ml:9:31"
let __mtrace_site_5 = Mtrace_lwt.site "input.ml:9:10"
let __mtrace_site_6 = Mtrace_lwt.site "input.ml:10:47"
let __mtrace_site_7 = Mtrace_lwt.site "input.ml:10:9"
let __mtrace_site_8 = Mtrace_lwt.site "input.ml:12:28"
let __mtrace_site_9 = Mtrace_lwt.site "input.ml:12:45"
let __mtrace_site_10 = Mtrace_lwt.site "input.ml:12:77"
let __mtrace_site_11 = Mtrace_lwt.site "input.ml:12:95"
let __mtrace_site_12 = Mtrace_lwt.site "input.ml:12:17"
let __mtrace_site_13 = Mtrace_lwt.site "input.ml:13:37"
let __mtrace_site_14 = Mtrace_lwt.site "input.ml:14:32"
let __mtrace_site_15 = Mtrace_lwt.site "input.ml:14:11"
let f x =
  Mtrace_lwt.bind ~site:__mtrace_site_1 x
    (fun a ->
       Mtrace_lwt.bind ~site:__mtrace_site_0 (Lwt.both (Lwt.return a) x)
         (fun (b, c) -> Lwt.return ((a + b) + c)))
let g x =
  Mtrace_lwt.bind ~site:__mtrace_site_2 x (fun v -> Lwt.return (v + 1))
let h x = Mtrace_lwt.map ~site:__mtrace_site_3 succ x
let i x =
  Mtrace_lwt.bind ~site:__mtrace_site_5 x
    (fun v -> Mtrace_lwt.map ~site:__mtrace_site_4 succ (Lwt.return v))
let () =
  Mtrace_lwt.async ~site:__mtrace_site_7
    (fun () ->
       Mtrace_lwt.bind ~site:__mtrace_site_6 (f (Lwt.return 1))
         (fun _ -> Lwt.return_unit))
let untouched x = Lwt.return x
let j m c mx s =
  Mtrace_lwt.join ~site:__mtrace_site_12
    [Mtrace_lwt.Mvar.take ~site:__mtrace_site_8 m;
    Mtrace_lwt.Condition.wait ~site:__mtrace_site_9 ~mutex:mx c;
    Mtrace_lwt.map ~site:__mtrace_site_11 ignore
      (Mtrace_lwt.Stream.next ~site:__mtrace_site_10 s)]
let k c =
  Mtrace_lwt.Condition.signal c (); Mtrace_lwt.wait ~site:__mtrace_site_13 ()
let l () =
  Mtrace_lwt.catch ~site:__mtrace_site_15
    (fun () -> Mtrace_lwt_unix.sleep ~site:__mtrace_site_14 0.)
    (fun _ -> Lwt.return_unit)
