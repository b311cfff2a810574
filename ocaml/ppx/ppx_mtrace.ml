open Ppxlib

(* "file:line:col what": the site's name, built from the expression's loc at
   rewrite time, registered once at run time through a lazily-evaluated id. *)
let site_expr ~loc what =
  let p = loc.loc_start in
  let name =
    Printf.sprintf "%s:%d:%d %s" p.pos_fname p.pos_lnum (p.pos_cnum - p.pos_bol) what
  in
  [%expr Mtrace_lwt.site [%e Ast_builder.Default.estring ~loc name]]

let rewrite =
  object
    inherit Ast_traverse.map as super

    method! expression e =
      let e = super#expression e in
      let loc = e.pexp_loc in
      match e.pexp_desc with
      | Pexp_apply ({ pexp_desc = Pexp_ident { txt = Lident ">>="; _ }; _ }, [ (Nolabel, p); (Nolabel, f) ])
        ->
          [%expr Mtrace_lwt.bind ~site:[%e site_expr ~loc ">>="] [%e p] [%e f]]
      | Pexp_apply ({ pexp_desc = Pexp_ident { txt = Lident ">|="; _ }; _ }, [ (Nolabel, p); (Nolabel, f) ])
        ->
          [%expr Mtrace_lwt.map ~site:[%e site_expr ~loc ">|="] [%e f] [%e p]]
      | Pexp_apply ({ pexp_desc = Pexp_ident { txt = Ldot (Lident "Lwt", fn); _ }; _ }, args)
        when List.mem fn [ "bind"; "map"; "async"; "catch"; "join"; "pick"; "choose"; "wait"; "task" ]
        ->
          Ast_builder.Default.pexp_apply ~loc
            (Ast_builder.Default.evar ~loc ("Mtrace_lwt." ^ fn))
            ((Labelled "site", site_expr ~loc ("Lwt." ^ fn)) :: args)
      | _ -> e
  end

(* let%lwt x = e in body  ->  traced bind; runs before lwt_ppx would. *)
let let_lwt =
  Extension.V3.declare "lwt" Extension.Context.expression
    Ast_pattern.(single_expr_payload __)
    (fun ~ctxt e ->
      let loc = Expansion_context.Extension.extension_point_loc ctxt in
      match e.pexp_desc with
      | Pexp_let (Nonrecursive, [ vb ], body) ->
          [%expr
            Mtrace_lwt.bind ~site:[%e site_expr ~loc "let%lwt"] [%e vb.pvb_expr]
              (fun [%p vb.pvb_pat] -> [%e body])]
      | Pexp_let (Nonrecursive, vbs, body) ->
          let tuple_e = Ast_builder.Default.pexp_tuple ~loc (List.map (fun v -> v.pvb_expr) vbs) in
          let _ = tuple_e in
          let pats = Ast_builder.Default.ppat_tuple ~loc (List.map (fun v -> v.pvb_pat) vbs) in
          let both =
            List.fold_left
              (fun acc v ->
                [%expr Lwt.both [%e acc] [%e v.pvb_expr]])
              (List.hd vbs).pvb_expr (List.tl vbs)
          in
          let _ = pats in
          (* nest the pairs the same way Lwt.both does *)
          let pat =
            List.fold_left
              (fun acc v -> Ast_builder.Default.ppat_tuple ~loc [ acc; v.pvb_pat ])
              (List.hd vbs).pvb_pat (List.tl vbs)
          in
          [%expr
            Mtrace_lwt.bind ~site:[%e site_expr ~loc "let%lwt"] [%e both] (fun [%p pat] -> [%e body])]
      | Pexp_try (body, cases) ->
          [%expr
            Mtrace_lwt.catch ~site:[%e site_expr ~loc "try%lwt"] (fun () -> [%e body])
              [%e Ast_builder.Default.pexp_function ~loc
                    (cases @ [ Ast_builder.Default.case ~lhs:[%pat? e] ~guard:None ~rhs:[%expr Lwt.fail e] ])]]
      | _ -> Location.raise_errorf ~loc "ppx_mtrace: [%%lwt] on let or try only")

let () =
  Driver.register_transformation "ppx_mtrace"
    ~rules:[ Context_free.Rule.extension let_lwt ]
    ~impl:(fun s -> rewrite#structure s)
