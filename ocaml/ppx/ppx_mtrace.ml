(* ppx_mtrace: rewrite a program's Lwt forms into Mtrace_lwt's traced ones, each naming
   its creation site "file:line:col": the whole vocabulary of Vocab (Lwt, Lwt_list,
   Lwt_stream, ... functions, Lwt.Infix and Lwt_result.Infix operators, Lwt.Syntax and
   Lwt_result.Syntax letops) in every shape they are written in (applied, partially
   applied, as a value, qualified, under an open), and the %lwt forms of lwt_ppx
   (Lwt_forms).  What an unqualified name, operator or letop means is decided by what is
   in scope (Scope).  The sites of a compilation unit are registered once, at its start
   (let __mtrace_site_N = Mtrace_lwt.site "..."), so a traced call costs no hashing.

   A form it cannot rewrite is said at build time (Report), never left untraced
   silently; [@mtrace.untraced] on an expression or a let binding, or [@@@mtrace.untraced]
   for the rest of a structure, leaves forms alone without a word.  Opens whose names it
   rewrote get [@@ocaml.warning "-33"], so the rewritten program builds without unused-open
   warnings. *)

open Ppxlib
module B = Ast_builder.Default

let untraced_expr =
  Attribute.declare "mtrace.untraced" Attribute.Context.expression Ast_pattern.(pstr nil) ()

let untraced_vb =
  Attribute.declare "mtrace.untraced" Attribute.Context.value_binding Ast_pattern.(pstr nil) ()

let untraced_floating =
  Attribute.Floating.declare "mtrace.untraced" Attribute.Floating.Context.structure_item
    Ast_pattern.(pstr nil)
    ()

let silence = "to silence: mark it [@mtrace.untraced]"

(* the value names a pattern binds *)
let pat_names p =
  (object
     inherit [string list] Ast_traverse.fold as super

     method! pattern p acc =
       let acc = match p.ppat_desc with Ppat_var v | Ppat_alias (_, v) -> v.txt :: acc | _ -> acc in
       super#pattern p acc
  end)
    #pattern p []

(* does the unit use Lwt at all (a letop nobody explains is then worth a word) *)
let mentions_lwt str =
  let exception Yes in
  let lwt s = String.length s >= 3 && String.sub s 0 3 = "Lwt" in
  try
    (object
       inherit Ast_traverse.iter as super

       method! longident l =
         (match l with
          | Lident s -> if lwt s then raise Yes
          | Ldot _ | Lapply _ -> ( match Longident.flatten_exn l with s :: _ when lwt s -> raise Yes | _ -> ()));
         super#longident l

       method! extension ((name, _) as x) = if name.txt = "lwt" then raise Yes else super#extension x
    end)
      #structure str;
    false
  with Yes | Invalid_argument _ -> true

let path_ident ~loc = function
  | [] -> assert false
  | x :: rest -> B.pexp_ident ~loc { txt = List.fold_left (fun p n -> Ldot (p, n)) (Lident x) rest; loc }

let warning_attr ~loc code =
  B.attribute ~loc ~name:{ txt = "ocaml.warning"; loc } ~payload:(PStr [ B.pstr_eval ~loc (B.estring ~loc code) [] ])

(* an open whose names were rewritten away: keep it from warning 33 (66 for open!) *)
let quiet_open (o : Scope.open_ option) (od : open_declaration) =
  match o with
  | Some { rewrote = true; _ } ->
    let code = match od.popen_override with Override -> "-66" | Fresh -> "-33" in
    { od with popen_attributes = od.popen_attributes @ [ warning_attr ~loc:od.popen_loc code ] }
  | _ -> od

type ctx = { env : Scope.t; traced : bool }

let describe = function
  | Lident s -> s
  | Ldot (m, s) when Scope.kind_of s <> Scope.Value -> String.concat "." (Longident.flatten_exn m) ^ ".( " ^ s ^ " )"
  | l -> String.concat "." (Longident.flatten_exn l)

class rewriter ~lwtish =
  object (self)
    inherit [ctx] Ast_traverse.map_with_context as super
    val mutable sites : (string * string) list = [] (* site name -> variable, reversed *)
    method sites = List.rev sites

    method site (p : Lexing.position) =
      let name = Report.site_name p in
      let var =
        match List.assoc_opt name sites with
        | Some v -> v
        | None ->
          let v = Printf.sprintf "__mtrace_site_%d" (List.length sites) in
          sites <- (name, v) :: sites;
          v
      in
      let loc = { loc_start = p; loc_end = p; loc_ghost = true } in
      B.evar ~loc var

    (* an expression whose evaluation does nothing a neighbour could see or be seen by *)
    method private pure e =
      match e.pexp_desc with
      | Pexp_ident _ | Pexp_constant _ | Pexp_fun _ | Pexp_function _ | Pexp_construct (_, None) -> true
      | Pexp_constraint (e, _) | Pexp_coerce (e, _, _) -> self#pure e
      | _ -> false

    (* [action] applied to [args] at site [pos]: None if the arguments do not fit its
       shape (an operator with labels: not Lwt's operator after all).  [fn]: the
       program's identifier of the function (for Through, which passes it on); [attrs]:
       the attributes it had ([@warning "-3"] on a deprecated one), kept on what
       replaces it *)
    method apply_action ~loc ?fn ?(attrs = []) pos (a : Vocab.action) args =
      let target = path_ident ~loc a.target in
      let target = match a.shape with Through _ -> target | _ -> { target with pexp_attributes = attrs } in
      (* the site is registered only once the form is rewritten *)
      let app args =
        let site = if a.sited then [ (Labelled "site", self#site pos) ] else [] in
        match site @ args with [] -> target | all -> B.pexp_apply ~loc target all
      in
      let x = "__mtrace_x" and y = "__mtrace_y" in
      let lam2 body = B.pexp_fun ~loc Nolabel None (B.pvar ~loc x) (B.pexp_fun ~loc Nolabel None (B.pvar ~loc y) body) in
      let bind1 a body =
        B.pexp_let ~loc Nonrecursive [ B.value_binding ~loc ~pat:(B.pvar ~loc x) ~expr:a ] (B.pexp_fun ~loc Nolabel None (B.pvar ~loc y) body)
      in
      let ex = B.evar ~loc x and ey = B.evar ~loc y in
      match (a.shape, args) with
      | Same, _ -> Some (app args)
      | Through ty, _ when List.for_all (fun (l, _) -> l = Nolabel) args -> (
        match fn with
        | Some f ->
          let ghost = { loc with loc_ghost = true } in
          let ty = B.pexp_construct ~loc:ghost { txt = Ldot (Lident "Mtrace_ring", ty); loc = ghost } None in
          Some (app ((Nolabel, ty) :: (Nolabel, { f with pexp_attributes = f.pexp_attributes @ attrs }) :: args))
        | None -> None)
      | Through _, _ -> None
      | Flip, [ (Nolabel, l); (Nolabel, r) ] when not (self#pure l || self#pure r) ->
        (* p >|= f evaluates f, then p (OCaml applies right to left); map f p would
           evaluate p first: both are named first, in the source's order *)
        Some
          (B.pexp_let ~loc Nonrecursive [ B.value_binding ~loc ~pat:(B.pvar ~loc y) ~expr:r ]
             (B.pexp_let ~loc Nonrecursive [ B.value_binding ~loc ~pat:(B.pvar ~loc x) ~expr:l ]
                (app [ (Nolabel, ey); (Nolabel, ex) ])))
      | Flip, (Nolabel, l) :: (Nolabel, r) :: rest -> Some (app ((Nolabel, r) :: (Nolabel, l) :: rest))
      | Flip, [ (Nolabel, l) ] -> Some (bind1 l (app [ (Nolabel, ey); (Nolabel, ex) ]))
      | Flip, [] -> Some (lam2 (app [ (Nolabel, ey); (Nolabel, ex) ]))
      | List2, (Nolabel, l) :: (Nolabel, r) :: rest -> Some (app ((Nolabel, B.elist ~loc [ l; r ]) :: rest))
      | List2, [ (Nolabel, l) ] -> Some (bind1 l (app [ (Nolabel, B.elist ~loc [ ex; ey ]) ]))
      | List2, [] -> Some (lam2 (app [ (Nolabel, B.elist ~loc [ ex; ey ]) ]))
      | (Flip | List2), _ -> None

    (* A traced function as a value, Lwt.bind -> fun x -> Mtrace_lwt.bind ~site x: written
       as a function it is as polymorphic as Lwt's (let ( >>= ) = Lwt.bind stays usable at
       every type), which the partial application Mtrace_lwt.bind ~site would not be.  The
       parameters up to the first unlabelled one are passed on as they are (?mutex). *)
    method eta ~loc ?fn pos (a : Vocab.action) labels =
      let params =
        List.map
          (fun l ->
            let n = String.sub l 1 (String.length l - 1) in
            ((if l.[0] = '?' then Optional n else Labelled n), n))
          labels
      in
      let x = "__mtrace_x" in
      let args = List.map (fun (lbl, n) -> (lbl, B.evar ~loc n)) params @ [ (Nolabel, B.evar ~loc x) ] in
      let body = Option.get (self#apply_action ~loc ?fn pos a args) in
      List.fold_right
        (fun (lbl, n) acc -> B.pexp_fun ~loc lbl None (B.pvar ~loc n) acc)
        params
        (B.pexp_fun ~loc Nolabel None (B.pvar ~loc x) body)

    (* the site of identifier [lid]: an operator's own token, or where the path starts *)
    method ident_pos (lid : longident loc) =
      match lid.txt with
      | Lident s when Scope.kind_of s <> Scope.Value -> (Report.op_start lid.loc s, String.length s)
      | _ -> (lid.loc.loc_start, Report.span lid.loc.loc_start lid.loc (String.length (describe lid.txt)))

    (* say why a form is left untraced; [labels]: those of the arguments it is applied
       to, "" for an unlabelled one (none: as a value) *)
    method explain ?(labels = []) ctx (meaning : Scope.meaning) what (pos, len) =
      if ctx.traced then
        match meaning with
        | Untabled name -> (
          let hint =
            if String.length name > 14 && String.sub name 0 14 = "Lwt.backtrace_" then
              " (lwt_ppx expanded this before ppx_mtrace: list ppx_mtrace first in (pps ...))"
            else ""
          in
          match Vocab.untraced_ok name labels with
          | Ok () -> ()
          | Error (Some why) -> Report.warn pos len (Printf.sprintf "%s not traced: %s; %s" name why silence)
          | Error None ->
            Report.warn pos len
              (Printf.sprintf "%s not traced: it takes a callback and Mtrace_lwt has no traced form of it%s; %s" name hint silence))
        | Ambiguous (opened, lwt) ->
          let how =
            if Scope.kind_of what = Scope.Value then Printf.sprintf "qualify it (%s.%s)" lwt what
            else Printf.sprintf "open %s inside the open of %s" lwt opened
          in
          Report.warn pos len
            (Printf.sprintf
               "%s not traced: open %s (a module ppx_mtrace cannot see into) may define it over %s's; to silence: %s if it is %s's, or mark it [@mtrace.untraced]"
               what opened lwt how lwt)
        | Unknown_letop when lwtish ->
          Report.warn pos len
            (Printf.sprintf
               "%s not traced: no open of Lwt.Syntax or Lwt_result.Syntax in scope says whose it is; to silence: open Lwt.Syntax (or Lwt_result.Syntax) where it is used if it is Lwt's, or mark the expression [@mtrace.untraced]"
               what)
        | Traced _ | Plain | Unknown_letop -> ()

    method meaning ctx (lid : longident) =
      match lid with
      | Lident s -> if Vocab.interesting s then Scope.lookup ctx.env s else Scope.Plain
      | Ldot (m, s) -> Scope.qualified ctx.env m s
      | Lapply _ -> Scope.Plain

    (* identifier [lid] (with attributes [attrs]) applied to [args] (none: as a value),
       rewritten if it is traced *)
    method rewrite_ident ?(eta = true) ?(attrs = []) ctx (lid : longident loc) args =
      let meaning = self#meaning ctx lid.txt in
      match meaning with
      | Traced { action = a; leading; opens; _ } when ctx.traced -> (
        let pos, len = self#ident_pos lid in
        (* Through passes the program's own identifier on, in the scope it was written in *)
        let fn, through = match a.shape with Through _ -> (Some (B.pexp_ident ~loc:lid.loc lid), true) | _ -> (None, false) in
        let rewritten =
          match (args, leading) with
          | [], Some labels when eta && a.sited && (a.shape = Same || through) -> Some (self#eta ~loc:lid.loc ?fn pos a labels)
          | _ -> self#apply_action ~loc:lid.loc ?fn ~attrs pos a args
        in
        match rewritten with
        | Some e ->
          if not through then List.iter (fun (o : Scope.open_) -> o.rewrote <- true) opens;
          Some e
        | None ->
          Report.warn pos len (Printf.sprintf "%s not traced: applied to labelled arguments; %s" (describe lid.txt) silence);
          None)
      | _ ->
        let labels = List.map (function Labelled l, _ | Optional l, _ -> l | Nolabel, _ -> "") args in
        self#explain ~labels ctx meaning (describe lid.txt) (self#ident_pos lid);
        None

    method! expression ctx e =
      let ctx = match Attribute.get untraced_expr e with Some () -> { ctx with traced = false } | None -> ctx in
      let sub = self#expression ctx in
      let with_names names = { ctx with env = Scope.bind_values ctx.env names } in
      match e.pexp_desc with
      | Pexp_extension ({ txt = "lwt"; _ }, PStr [ { pstr_desc = Pstr_eval (inner, attrs); _ } ]) -> (
        let ops : ctx Lwt_forms.ops =
          {
            expr = self#expression;
            case = self#case;
            binding =
              (fun ctx vb ->
                let untraced = Attribute.get untraced_vb vb = Some () in
                let ctx = if untraced then { ctx with traced = false } else ctx in
                ({ vb with pvb_expr = self#expression ctx vb.pvb_expr }, untraced));
            bind_names = (fun ctx ps -> { ctx with env = Scope.bind_values ctx.env (List.concat_map pat_names ps) });
            site = self#site;
            traced = (fun ctx -> ctx.traced);
          }
        in
        match Lwt_forms.expand ops ctx inner with
        | Some r -> { r with pexp_attributes = e.pexp_attributes @ attrs @ r.pexp_attributes }
        | None ->
          if ctx.traced then
            Report.warn inner.pexp_loc.loc_start (Report.span inner.pexp_loc.loc_start inner.pexp_loc 3)
              "this %lwt form not traced: ppx_mtrace expands let%lwt (without rec), match%lwt, try%lwt, if%lwt, for%lwt, while%lwt, e;%lwt e, assert%lwt and [%finally]; to silence: write it with Lwt's functions";
          e)
      | Pexp_apply
          ( body,
            [ (Nolabel, { pexp_desc = Pexp_extension ({ txt = "finally" | "lwt.finally"; loc = floc }, PStr [ { pstr_desc = Pstr_eval (fin, _); _ } ]); _ }) ] ) ->
        let loc = e.pexp_loc in
        let thunk x = B.pexp_fun ~loc Nolabel None (B.punit ~loc) x in
        let args = [ (Nolabel, thunk (sub body)); (Nolabel, thunk (sub fin)) ] in
        let r =
          if ctx.traced then
            Option.get (self#apply_action ~loc (Report.ext_start floc) (Option.get (Vocab.action "Lwt" "finalize")) args)
          else B.pexp_apply ~loc (path_ident ~loc [ "Lwt"; "finalize" ]) args
        in
        { r with pexp_attributes = e.pexp_attributes }
      | Pexp_ident lid -> (
        match self#rewrite_ident ctx lid [] with Some r -> { r with pexp_attributes = e.pexp_attributes } | None -> e)
      | Pexp_apply (({ pexp_desc = Pexp_ident lid; _ } as f), args) -> (
        let args = List.map (fun (l, a) -> (l, self#argument ctx a)) args in
        (* (Lwt.bind [@mtrace.untraced]) p f: the function alone left as it is *)
        let fctx = match Attribute.get untraced_expr f with Some () -> { ctx with traced = false } | None -> ctx in
        match self#rewrite_ident ~attrs:f.pexp_attributes fctx lid args with
        | Some r -> { r with pexp_loc = e.pexp_loc; pexp_attributes = e.pexp_attributes }
        | None -> { e with pexp_desc = Pexp_apply (f, args) })
      | Pexp_letop lo -> self#rewrite_letop ctx e lo
      | Pexp_let (rf, vbs, body) ->
        let inner = with_names (List.concat_map (fun vb -> pat_names vb.pvb_pat) vbs) in
        let vctx = if rf = Recursive then inner else ctx in
        let vbs = List.map (self#value_binding vctx) vbs in
        { e with pexp_desc = Pexp_let (rf, vbs, self#expression inner body) }
      | Pexp_fun (l, def, p, body) ->
        { e with pexp_desc = Pexp_fun (l, Option.map sub def, p, self#expression (with_names (pat_names p)) body) }
      | Pexp_for (p, a, b, d, body) ->
        { e with pexp_desc = Pexp_for (p, sub a, sub b, d, self#expression (with_names (pat_names p)) body) }
      | Pexp_open (od, body) ->
        let env, o = Scope.open_module ctx.env pat_names od.popen_expr in
        let od' = self#open_declaration ctx od in
        let body = self#expression { ctx with env } body in
        { e with pexp_desc = Pexp_open (quiet_open o od', body) }
      | Pexp_letmodule (name, me, body) ->
        let me' = self#module_expr ctx me in
        let env =
          match name.txt with
          | Some n -> Scope.Module (n, Scope.modinfo ctx.env pat_names me) :: ctx.env
          | None -> ctx.env
        in
        { e with pexp_desc = Pexp_letmodule (name, me', self#expression { ctx with env } body) }
      | _ -> super#expression ctx e

    (* An argument of an application: a traced function passed as a value to another
       (List.iter Lwt.async l, Lwt.async @@ f) is consumed there, so its polymorphism does
       not matter and it needs no eta-expansion (method eta). *)
    method argument ctx a =
      match a.pexp_desc with
      | Pexp_ident lid when Attribute.get untraced_expr a = None -> (
        match self#rewrite_ident ~eta:false ctx lid [] with
        | Some r -> { r with pexp_attributes = a.pexp_attributes }
        | None -> a)
      | _ -> self#expression ctx a

    (* let* p = e and* q = f and* r = g in body, as the compiler reads it, in its order:
       e, f, ( and* ) of the two, g, ( and* ) of that and g, then ( let* ) of the last with
       (fun ((p, q), r) -> body) (OCaml applies right to left, so the nested application
       ( and* ) (( and* ) e f) g would start g first); each operator rewritten if it is
       traced *)
    method rewrite_letop ctx e lo =
      let ops = lo.let_ :: lo.ands in
      let meanings = List.map (fun op -> if ctx.traced then Scope.lookup ctx.env op.pbop_op.txt else Scope.Plain) ops in
      let names = List.concat_map (fun op -> pat_names op.pbop_pat) ops in
      let body = self#expression { ctx with env = Scope.bind_values ctx.env names } lo.body in
      let exps = List.map (fun op -> self#expression ctx op.pbop_exp) ops in
      let apply op meaning args =
        let pos = op.pbop_op.loc.loc_start and len = String.length op.pbop_op.txt in
        let plain () = B.pexp_apply ~loc:op.pbop_loc (B.evar ~loc:op.pbop_op.loc op.pbop_op.txt) args in
        match meaning with
        | Scope.Traced { action = a; opens; _ } -> (
          match self#apply_action ~loc:op.pbop_loc pos a args with
          | Some r ->
            List.iter (fun (o : Scope.open_) -> o.rewrote <- true) opens;
            r
          | None -> plain ())
        | m ->
          self#explain ctx m op.pbop_op.txt (pos, len);
          plain ()
      in
      if not (List.exists (function Scope.Traced _ -> true | _ -> false) meanings) then (
        List.iter2 (fun op m -> self#explain ctx m op.pbop_op.txt (op.pbop_op.loc.loc_start, String.length op.pbop_op.txt)) ops meanings;
        let rebuild op x = { op with pbop_exp = x } in
        { e with pexp_desc = Pexp_letop { let_ = rebuild lo.let_ (List.hd exps); ands = List.map2 rebuild lo.ands (List.tl exps); body } })
      else
        let loc = e.pexp_loc in
        let l = B.evar ~loc "__mtrace_l" and r = B.evar ~loc "__mtrace_r" in
        (* the and*s first, in order, as their sites are numbered *)
        let ands =
          List.map2 (fun op (m, x) -> (op, x, apply op m [ (Nolabel, l); (Nolabel, r) ])) lo.ands
            (List.combine (List.tl meanings) (List.tl exps))
        in
        let pat =
          List.fold_left (fun pat op -> B.ppat_tuple ~loc:op.pbop_loc [ pat; op.pbop_pat ]) lo.let_.pbop_pat lo.ands
        in
        let body = B.pexp_fun ~loc Nolabel None pat body in
        let r =
          match ands with
          | [] -> apply lo.let_ (List.hd meanings) [ (Nolabel, List.hd exps); (Nolabel, body) ]
          | _ ->
            let last = apply lo.let_ (List.hd meanings) [ (Nolabel, l); (Nolabel, body) ] in
            let inner =
              List.fold_right
                (fun (op, x, app) rest ->
                  let loc = op.pbop_loc in
                  [%expr
                    let __mtrace_r = [%e x] in
                    let __mtrace_l = [%e app] in
                    [%e rest]])
                ands last
            in
            [%expr
              let __mtrace_l = [%e List.hd exps] in
              [%e inner]]
        in
        { r with pexp_loc = e.pexp_loc; pexp_attributes = e.pexp_attributes }

    method! value_binding ctx vb =
      let ctx = match Attribute.get untraced_vb vb with Some () -> { ctx with traced = false } | None -> ctx in
      { vb with pvb_expr = self#expression ctx vb.pvb_expr }

    method! case ctx c =
      let ctx = { ctx with env = Scope.bind_values ctx.env (pat_names c.pc_lhs) } in
      { c with pc_guard = Option.map (self#expression ctx) c.pc_guard; pc_rhs = self#expression ctx c.pc_rhs }

    method! class_expr ctx ce =
      match ce.pcl_desc with
      | Pcl_fun (l, def, p, body) ->
        let inner = { ctx with env = Scope.bind_values ctx.env (pat_names p) } in
        { ce with pcl_desc = Pcl_fun (l, Option.map (self#expression ctx) def, p, self#class_expr inner body) }
      | Pcl_let (rf, vbs, body) ->
        let inner = { ctx with env = Scope.bind_values ctx.env (List.concat_map (fun vb -> pat_names vb.pvb_pat) vbs) } in
        let vbs = List.map (self#value_binding (if rf = Recursive then inner else ctx)) vbs in
        { ce with pcl_desc = Pcl_let (rf, vbs, self#class_expr inner body) }
      | _ -> super#class_expr ctx ce

    method! class_structure ctx cs =
      let vals = List.filter_map (fun f -> match f.pcf_desc with Pcf_val (n, _, _) -> Some n.txt | _ -> None) cs.pcstr_fields in
      let ctx = { ctx with env = Scope.bind_values ctx.env (pat_names cs.pcstr_self @ vals) } in
      { cs with pcstr_fields = List.map (self#class_field ctx) cs.pcstr_fields }

    method! module_expr ctx me =
      match me.pmod_desc with
      | Pmod_functor ((Named ({ txt = Some n; _ }, _) as param), body) ->
        let inner = { ctx with env = Scope.Module (n, Scope.M_opaque) :: ctx.env } in
        { me with pmod_desc = Pmod_functor (param, self#module_expr inner body) }
      | _ -> super#module_expr ctx me

    (* payloads of attributes and of extensions left for other rewriters are not code
       of this program's to trace *)
    method! attributes _ a = a
    method! extension _ x = x

    (* a structure's items in order: each open, binding and module is in scope for the
       items after it *)
    method! structure ctx items =
      match items with
      | [] -> []
      | item :: rest -> (
        match item.pstr_desc with
        | Pstr_attribute a when Attribute.Floating.convert [ untraced_floating ] { item with pstr_desc = Pstr_attribute a } = Some () ->
          item :: self#structure { ctx with traced = false } rest
        | Pstr_open od ->
          let env, o = Scope.open_module ctx.env pat_names od.popen_expr in
          let od' = self#open_declaration ctx od in
          let rest = self#structure { ctx with env } rest in
          { item with pstr_desc = Pstr_open (quiet_open o od') } :: rest
        | Pstr_include incl ->
          let env, _ = Scope.open_module ctx.env pat_names incl.pincl_mod in
          let item = self#structure_item ctx item in
          item :: self#structure { ctx with env } rest
        | Pstr_value (rf, vbs) ->
          let inner = { ctx with env = Scope.bind_values ctx.env (List.concat_map (fun vb -> pat_names vb.pvb_pat) vbs) } in
          let vbs = List.map (self#value_binding (if rf = Recursive then inner else ctx)) vbs in
          { item with pstr_desc = Pstr_value (rf, vbs) } :: self#structure inner rest
        | Pstr_primitive vd ->
          item :: self#structure { ctx with env = Scope.bind_values ctx.env [ vd.pval_name.txt ] } rest
        | Pstr_module mb ->
          let item = self#structure_item ctx item in
          let env =
            match mb.pmb_name.txt with
            | Some n -> Scope.Module (n, Scope.modinfo ctx.env pat_names mb.pmb_expr) :: ctx.env
            | None -> ctx.env
          in
          item :: self#structure { ctx with env } rest
        | Pstr_recmodule mbs ->
          let env =
            List.fold_left
              (fun env mb -> match mb.pmb_name.txt with Some n -> Scope.Module (n, Scope.M_opaque) :: env | None -> env)
              ctx.env mbs
          in
          let ctx = { ctx with env } in
          self#structure_item ctx item :: self#structure ctx rest
        | _ ->
          let item = self#structure_item ctx item in
          item :: self#structure ctx rest)
  end

let impl (str : structure) =
  let r = new rewriter ~lwtish:(mentions_lwt str) in
  let str = r#structure { env = Scope.empty; traced = true } str in
  Report.flush ();
  match r#sites with
  | [] -> str
  | sites ->
    List.map
      (fun (name, var) ->
        let loc = Location.none in
        let v = B.pvar ~loc var in
        let s = B.estring ~loc name in
        [%stri let [%p v] = Mtrace_lwt.site [%e s]])
      sites
    @ str

let () = Driver.register_transformation "ppx_mtrace" ~impl

(* for the tests (ppx/test/vocab_check.ml) *)
module Vocab = Vocab
