(* ppx_mtrace: rewrite Lwt's binding forms into Mtrace_lwt's traced ones, each naming
   its creation site "file:line:col".  The sites of a compilation unit are registered
   once, at its start (let __mtrace_site_N = Mtrace_lwt.site "..."), so a traced call
   costs no hashing or lookup. *)

open Ppxlib

let site_name (loc : Location.t) =
  let p = loc.loc_start in
  Printf.sprintf "%s:%d:%d" p.pos_fname p.pos_lnum (p.pos_cnum - p.pos_bol)

let site_var n = Printf.sprintf "__mtrace_site_%d" n

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
      | Pexp_apply ({ pexp_desc = Pexp_ident { txt = Ldot (Lident "Lwt", "async"); _ }; _ }, [ (Nolabel, f) ]) ->
        let site = self#site loc in
        [%expr Mtrace_lwt.async ~site:[%e site] [%e f]]
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
