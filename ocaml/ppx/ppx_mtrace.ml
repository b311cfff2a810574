(* ppx_mtrace: rewrite Lwt's binding forms (let%lwt, >>=, >|=, Lwt.bind, Lwt.map) and
   its primitives (Lwt.wait, Lwt_mvar.take, Lwt_unix.sleep, ...: [traced] below) into Mtrace_lwt's traced ones, each naming
   its creation site "file:line:col".  The sites of a compilation unit are registered
   once, at its start (let __mtrace_site_N = Mtrace_lwt.site "..."), so a traced call
   costs no hashing or lookup. *)

open Ppxlib

let site_name (loc : Location.t) =
  let p = loc.loc_start in
  Printf.sprintf "%s:%d:%d" p.pos_fname p.pos_lnum (p.pos_cnum - p.pos_bol)

let site_var n = Printf.sprintf "__mtrace_site_%d" n

(* Module.function applications rewritten into a traced one: (module, function) ->
   (traced path, whether it takes ~site) *)
let traced =
  let m = "Mtrace_lwt" in
  [ (("Lwt", "async"), ([ m; "async" ], true));
    (("Lwt", "wait"), ([ m; "wait" ], true));
    (("Lwt", "task"), ([ m; "task" ], true));
    (("Lwt", "catch"), ([ m; "catch" ], true));
    (("Lwt", "try_bind"), ([ m; "try_bind" ], true));
    (("Lwt", "join"), ([ m; "join" ], true));
    (("Lwt", "pick"), ([ m; "pick" ], true));
    (("Lwt", "choose"), ([ m; "choose" ], true));
    (("Lwt_mvar", "take"), ([ m; "Mvar"; "take" ], true));
    (("Lwt_mvar", "put"), ([ m; "Mvar"; "put" ], true));
    (("Lwt_condition", "wait"), ([ m; "Condition"; "wait" ], true));
    (("Lwt_condition", "signal"), ([ m; "Condition"; "signal" ], false));
    (("Lwt_condition", "broadcast"), ([ m; "Condition"; "broadcast" ], false));
    (("Lwt_mutex", "lock"), ([ m; "Mutex"; "lock" ], true));
    (("Lwt_mutex", "with_lock"), ([ m; "Mutex"; "with_lock" ], true));
    (("Lwt_stream", "next"), ([ m; "Stream"; "next" ], true));
    (("Lwt_stream", "get"), ([ m; "Stream"; "get" ], true));
    (("Lwt_unix", "sleep"), ([ "Mtrace_lwt_unix"; "sleep" ], true)) ]

let path_ident ~loc = function
  | [] -> assert false
  | x :: rest -> Ast_builder.Default.pexp_ident ~loc { txt = List.fold_left (fun p n -> Ldot (p, n)) (Lident x) rest; loc }

class rewriter =
  object (self)
    inherit Ast_traverse.map as super
    val mutable sites : (string * Location.t) list = []
    method sites = List.rev sites

    method private site loc =
      let n = List.length sites in
      sites <- (site_name loc, loc) :: sites;
      Ast_builder.Default.evar ~loc (site_var n)

    method! expression e =
      let e = super#expression e in
      let loc = e.pexp_loc in
      match e.pexp_desc with
      (* let%lwt p1 = e1 and p2 = e2 in body: the values together (Lwt.both), then the body *)
      | Pexp_extension
          ( { txt = "lwt"; _ },
            PStr [ { pstr_desc = Pstr_eval ({ pexp_desc = Pexp_let (Nonrecursive, vbs, body); _ }, _); _ } ] )
        ->
        let rec combine = function
          | [] -> assert false
          | [ vb ] -> (vb.pvb_pat, vb.pvb_expr)
          | vb :: rest ->
            let p, x = combine rest in
            ( Ast_builder.Default.ppat_tuple ~loc [ vb.pvb_pat; p ],
              [%expr Lwt.both [%e vb.pvb_expr] [%e x]] )
        in
        let pat, value = combine vbs in
        let site = self#site loc in
        [%expr Mtrace_lwt.bind ~site:[%e site] [%e value] (fun [%p pat] -> [%e body])]
      (* an infix operator's site is the operator itself *)
      | Pexp_apply ({ pexp_desc = Pexp_ident { txt = Lident ">>="; loc = oloc }; _ }, [ (Nolabel, x); (Nolabel, f) ])
        ->
        let site = self#site oloc in
        [%expr Mtrace_lwt.bind ~site:[%e site] [%e x] [%e f]]
      | Pexp_apply
          ({ pexp_desc = Pexp_ident { txt = Ldot (Lident "Lwt", "bind"); _ }; _ }, [ (Nolabel, x); (Nolabel, f) ])
        ->
        let site = self#site loc in
        [%expr Mtrace_lwt.bind ~site:[%e site] [%e x] [%e f]]
      | Pexp_apply ({ pexp_desc = Pexp_ident { txt = Lident ">|="; loc = oloc }; _ }, [ (Nolabel, x); (Nolabel, f) ])
        ->
        let site = self#site oloc in
        [%expr Mtrace_lwt.map ~site:[%e site] [%e f] [%e x]]
      | Pexp_apply
          ({ pexp_desc = Pexp_ident { txt = Ldot (Lident "Lwt", "map"); _ }; _ }, [ (Nolabel, f); (Nolabel, x) ])
        ->
        let site = self#site loc in
        [%expr Mtrace_lwt.map ~site:[%e site] [%e f] [%e x]]
      | Pexp_apply ({ pexp_desc = Pexp_ident { txt = Ldot (Lident md, fn); loc = floc }; _ }, args)
        when List.mem_assoc (md, fn) traced -> (
        let path, sited = List.assoc (md, fn) traced in
        let f = path_ident ~loc:floc path in
        match sited with
        | true -> Ast_builder.Default.pexp_apply ~loc f ((Labelled "site", self#site floc) :: args)
        | false -> Ast_builder.Default.pexp_apply ~loc f args)
      | _ -> e
  end

let impl (str : structure) =
  let r = new rewriter in
  let str = r#structure str in
  match r#sites with
  | [] -> str
  | sites ->
    let regs =
      List.mapi
        (fun n (name, loc) ->
          let v = Ast_builder.Default.pvar ~loc (site_var n) in
          let s = Ast_builder.Default.estring ~loc name in
          [%stri let [%p v] = Mtrace_lwt.site [%e s]])
        sites
    in
    regs @ str

let () = Driver.register_transformation "ppx_mtrace" ~impl
