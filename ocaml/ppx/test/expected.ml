let __mtrace_site_0 = Mtrace_lwt.site "input.ml:4:2"
let __mtrace_site_1 = Mtrace_lwt.site "input.ml:3:2"
let __mtrace_site_2 = Mtrace_lwt.site "input.ml:7:12"
let __mtrace_site_3 = Mtrace_lwt.site "input.ml:8:12"
let __mtrace_site_4 = Mtrace_lwt.site "input.ml:9:31"
let __mtrace_site_5 = Mtrace_lwt.site "input.ml:9:10"
let __mtrace_site_6 = Mtrace_lwt.site "input.ml:10:47"
let __mtrace_site_7 = Mtrace_lwt.site "input.ml:10:9"
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
