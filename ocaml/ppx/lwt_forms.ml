(* The %lwt forms of lwt_ppx, expanded by ppx_mtrace itself so that each is traced at its
   keyword: let%lwt (and ... and), match%lwt (with exception cases: try_bind),
   try%lwt, if%lwt, e1;%lwt e2, while%lwt and for%lwt (a plain loop whose iterations are
   traced binds, all at the loop's site), assert%lwt (nothing to trace).  Untraced
   ([@mtrace.untraced]) they expand to the same forms over Lwt's functions, so lwt_ppx is
   not needed for them either way.

   lwt_ppx's expansions also carry the backtrace of an exception across binds
   (Lwt.backtrace_bind); these do not: Mtrace_lwt's functions are Lwt's plain ones. *)

open Ppxlib
module B = Ast_builder.Default

(* what the expansion needs of the rewriter (which owns scope and sites) *)
type 'ctx ops = {
  expr : 'ctx -> expression -> expression;
  case : 'ctx -> case -> case;
  binding : 'ctx -> value_binding -> value_binding * bool; (* rewritten; [@mtrace.untraced]? *)
  bind_names : 'ctx -> pattern list -> 'ctx; (* the scope below these patterns *)
  site : Lexing.position -> expression;
  traced : 'ctx -> bool;
}

let rec catchall p =
  match p.ppat_desc with
  | Ppat_any | Ppat_var _ -> true
  | Ppat_alias (p, _) | Ppat_constraint (p, _) -> catchall p
  | Ppat_or (a, b) -> catchall a || catchall b
  | _ -> false

(* an exception handler passes on what it does not match, as Lwt.catch would *)
let with_reraise ~loc cases =
  if List.exists (fun c -> c.pc_guard = None && catchall c.pc_lhs) cases then cases
  else cases @ [ B.case ~lhs:[%pat? exn] ~guard:None ~rhs:[%expr Lwt.fail exn] ]

let not_ours (a : attribute) = not (List.mem a.attr_name.txt [ "mtrace.untraced"; "untraced" ])

let expand ops ctx (inner : expression) =
  let loc = inner.pexp_loc in
  let traced = ops.traced ctx in
  (* Mtrace_lwt.f ~site args, or Lwt.f args *)
  let call ?(traced = traced) pos f args =
    let args = List.map (fun a -> (Nolabel, a)) args in
    if traced then
      B.pexp_apply ~loc (B.evar ~loc ("Mtrace_lwt." ^ f)) ((Labelled "site", ops.site pos) :: args)
    else B.pexp_apply ~loc (B.evar ~loc ("Lwt." ^ f)) args
  in
  let keyword = loc.loc_start in
  let thunk e = [%expr fun () -> [%e e]] in
  match inner.pexp_desc with
  | Pexp_let (Nonrecursive, vbs, body) ->
    let mapped = List.map (ops.binding ctx) vbs in
    let vbs = List.map fst mapped in
    let body = ops.expr (ops.bind_names ctx (List.map (fun vb -> vb.pvb_pat) vbs)) body in
    let traced = traced && not (List.exists snd mapped) in
    (* as lwt_ppx: every promise made first, in order (let ... and ...), then bound one
       after the other, so a rejection ends it as soon as the promises before it are
       fulfilled *)
    let bind p vb rest = call ~traced keyword "bind" [ p; [%expr fun [%p vb.pvb_pat] -> [%e rest]] ] in
    let r =
      match vbs with
      | [ vb ] -> bind vb.pvb_expr vb body
      | _ ->
        let var i = "__mtrace_lwt_" ^ string_of_int i in
        let vbs = List.mapi (fun i vb -> (var i, vb)) vbs in
        B.pexp_let ~loc Nonrecursive
          (List.map (fun (v, vb) -> B.value_binding ~loc:vb.pvb_loc ~pat:(B.pvar ~loc v) ~expr:vb.pvb_expr) vbs)
          (List.fold_right (fun (v, vb) rest -> bind (B.evar ~loc v) vb rest) vbs body)
    in
    let attrs = List.concat_map (fun vb -> List.filter not_ours vb.pvb_attributes) vbs in
    Some { r with pexp_attributes = inner.pexp_attributes @ attrs }
  | Pexp_match (scrut, cases) ->
    let exns, cases = List.partition (fun c -> match c.pc_lhs.ppat_desc with Ppat_exception _ -> true | _ -> false) cases in
    if cases = [] then Location.raise_errorf ~loc "match%%lwt must contain at least one non-exception pattern.";
    let scrut = ops.expr ctx scrut in
    let cases = B.pexp_function ~loc (List.map (ops.case ctx) cases) in
    let exns =
      List.map
        (fun c -> ops.case ctx { c with pc_lhs = (match c.pc_lhs.ppat_desc with Ppat_exception p -> p | _ -> c.pc_lhs) })
        exns
    in
    Some
      (if exns = [] then call keyword "bind" [ scrut; cases ]
       else call keyword "try_bind" [ thunk scrut; cases; B.pexp_function ~loc (with_reraise ~loc exns) ])
  | Pexp_try (body, cases) ->
    let body = ops.expr ctx body in
    let cases = List.map (ops.case ctx) cases in
    Some (call keyword "catch" [ thunk body; B.pexp_function ~loc (with_reraise ~loc cases) ])
  | Pexp_ifthenelse (c, a, b) ->
    let a = ops.expr ctx a in
    let b = match b with Some b -> ops.expr ctx b | None -> [%expr Lwt.return_unit] in
    Some (call keyword "bind" [ ops.expr ctx c; [%expr function true -> [%e a] | false -> [%e b]] ])
  | Pexp_sequence (a, b) ->
    let pos = Report.seq_start a in
    Some (call pos "bind" [ ops.expr ctx a; thunk (ops.expr ctx b) ])
  | Pexp_while (c, body) ->
    let step = call keyword "bind" [ ops.expr ctx body; [%expr __mtrace_loop] ] in
    Some
      [%expr
        let rec __mtrace_loop () = if [%e ops.expr ctx c] then [%e step] else Lwt.return_unit in
        __mtrace_loop ()]
  | Pexp_for (p, start, bound, dir, body) ->
    let var, p = match p.ppat_desc with Ppat_var v -> (v.txt, p) | _ -> ("__mtrace_i", B.pvar ~loc "__mtrace_i") in
    let i = B.evar ~loc var in
    let past, next = match dir with Upto -> ([%expr Stdlib.( > )], [%expr Stdlib.( + )]) | Downto -> ([%expr Stdlib.( < )], [%expr Stdlib.( - )]) in
    let body = ops.expr (ops.bind_names ctx [ p ]) body in
    let step = call keyword "bind" [ body; [%expr fun () -> __mtrace_loop ([%e next] [%e i] 1)] ] in
    Some
      [%expr
        let __mtrace_bound : int = [%e ops.expr ctx bound] in
        let rec __mtrace_loop [%p p] = if [%e past] [%e i] __mtrace_bound then Lwt.return_unit else [%e step] in
        __mtrace_loop [%e ops.expr ctx start]]
  | Pexp_assert e -> Some [%expr try Lwt.return (assert [%e ops.expr ctx e]) with exn -> Lwt.fail exn]
  | _ -> None
