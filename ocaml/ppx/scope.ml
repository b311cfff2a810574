(* What a name means where it is used, decided by the opens and bindings in scope, the
   innermost first (as the type checker will decide it, as far as the ppx can see):
   - an open of a module ppx_mtrace knows (an installed module whose .mli it read:
     Lwt, Lwt.Infix, Lwt_result.Syntax, Lwt_unix, List, ...) gives a name the meaning
     that module's export has, if it exports it;
   - a value binding (let, fun, match case, let ( >>= ) = ..., ...) makes the name the
     program's own: nothing to rewrite;
   - an open of a module it cannot see into (the program's own, or another library's)
     may define anything: an unqualified value name, and also an operator if the module
     is named like an operator module (Infix, O, Ops, Operators) or a letop if it is named
     like a syntax module (Syntax, Let_syntax, O).  If a known Lwt open lies beneath it,
     the name is ambiguous (said at build time, not rewritten); otherwise it is taken to
     be that module's;
   - with nothing in scope saying otherwise, an operator >>= >|= =<< =|< <&> <?> is Lwt's
     and a letop is nobody's the ppx knows (not rewritten; said if the unit uses Lwt). *)

type open_ = {
  path : string; (* the known module, or the text of the path it cannot see into *)
  known : bool;
  mutable rewrote : bool; (* the ppx rewrote a name this open made visible *)
}

type modinfo =
  | M_known of string (* an installed module we read *)
  | M_struct of string list (* a structure of this unit: the names it binds *)
  | M_opaque

type layer = Open of open_ | Values of string list | Module of string * modinfo
type t = layer list

let empty : t = []

(* only the names that can change what the ppx does are kept *)
let bind_values env names =
  match List.filter Vocab.interesting names with [] -> env | ns -> Values ns :: env

let rec module_head env name =
  match env with
  | [] -> ( match Vocab.known_module name with Some k -> M_known k | None -> M_opaque)
  | Module (n, info) :: _ when n = name -> info
  | Open { known = true; path; _ } :: rest -> (
    match Vocab.submodule path name with Some k -> M_known k | None -> module_head rest name)
  | _ :: rest -> module_head rest name

let rec resolve_module env (lid : Ppxlib.Longident.t) =
  match lid with
  | Lident name -> module_head env name
  | Ldot (p, name) -> (
    match resolve_module env p with
    | M_known k -> ( match Vocab.submodule k name with Some k' -> M_known k' | None -> M_opaque)
    | _ -> M_opaque)
  | Lapply _ -> M_opaque

let last_component path =
  match String.rindex_opt path '.' with Some i -> String.sub path (i + 1) (String.length path - i - 1) | None -> path

type kind = Op | Letop | Value

let kind_of name = if Vocab.is_operator name then Op else if Vocab.is_letop name then Letop else Value

(* may an open we cannot see into define a name of this kind? *)
let may_define path = function
  | Value -> true
  | Op -> List.mem (last_component path) [ "Infix"; "O"; "Ops"; "Operators" ]
  | Letop -> List.mem (last_component path) [ "Syntax"; "Let_syntax"; "O" ]

type meaning =
  | Traced of { action : Vocab.action; leading : string list option; lwt : string option; opens : open_ list }
    (* rewrite it; the labels of the Lwt value's parameters before its first unlabelled
       one (to write it as a value), the known Lwt module whose open made it visible (None:
       qualified, or the default), and the opens that may have provided it (to keep them
       from warning 33 once the name is rewritten away) *)
  | Plain (* not Lwt's, or Lwt's with nothing to trace *)
  | Untabled of string (* a value of the vocabulary's modules that takes a callback, untraced *)
  | Ambiguous of string * string (* an open we cannot see into, over the Lwt module beneath *)
  | Unknown_letop (* a letop no open in scope explains *)

(* the meaning of value [name] of known module [md] *)
let meaning_in md name =
  match Vocab.action md name with
  | Some action -> Traced { action; leading = Vocab.leading md name; lwt = None; opens = [] }
  | None -> (
    match Vocab.exports_value md name with
    | `Yes true when Vocab.in_vocabulary md -> Untabled (md ^ "." ^ name)
    | _ -> Plain)

(* the meaning of a qualified value M.x *)
let qualified env md name =
  match resolve_module env md with M_known k -> meaning_in k name | M_struct _ | M_opaque -> Plain

(* the meaning of an unqualified name (value, operator or letop) *)
let lookup env name =
  let kind = kind_of name in
  let rec go passed = function
    | [] -> (
      match kind with
      | Op -> (
        match Vocab.default_op name with
        | Some action -> Traced { action; leading = Some []; lwt = None; opens = passed }
        | None -> Plain)
      | Letop -> Unknown_letop
      | Value -> Plain)
    | Values ns :: rest -> if List.mem name ns then Plain else go passed rest
    | Module _ :: rest -> go passed rest
    | Open ({ known = true; path; _ } as o) :: rest -> (
      match Vocab.exports_value path name with
      | `Yes _ -> (
        match meaning_in path name with Traced t -> Traced { t with lwt = Some path; opens = o :: passed } | m -> m)
      | `No -> go passed rest
      | `Maybe -> unknown o rest passed)
    | Open ({ known = false; path; _ } as o) :: rest ->
      if may_define path kind then unknown o rest passed
      else (* an open that cannot define it, but might still be where the default comes from *)
        go (o :: passed) rest
  and unknown o rest passed =
    match go passed rest with
    | Traced { lwt = Some path; _ } -> Ambiguous (o.path, path)
    | Traced _ | Unknown_letop | Plain | Untabled _ | Ambiguous _ -> Plain
  in
  go [] env

(* the names a structure binds at its top, or None if it includes something unseen *)
let struct_names (items : Ppxlib.structure) pat_names =
  let exception Opaque in
  try
    Some
      (List.concat_map
         (fun (it : Ppxlib.structure_item) ->
           match it.pstr_desc with
           | Pstr_value (_, vbs) -> List.concat_map (fun (vb : Ppxlib.value_binding) -> pat_names vb.pvb_pat) vbs
           | Pstr_primitive vd -> [ vd.pval_name.txt ]
           | Pstr_include _ -> raise Opaque
           | _ -> [])
         items)
  with Opaque -> None

(* what a module expression is, for a module binding or an open *)
let rec modinfo env pat_names (me : Ppxlib.module_expr) =
  match me.pmod_desc with
  | Pmod_ident { txt; _ } -> resolve_module env txt
  | Pmod_structure items -> (
    match struct_names items pat_names with Some ns -> M_struct ns | None -> M_opaque)
  | Pmod_constraint (m, _) -> modinfo env pat_names m
  | _ -> M_opaque

let path_text (me : Ppxlib.module_expr) =
  match me.pmod_desc with
  | Pmod_ident { txt; _ } -> String.concat "." (Ppxlib.Longident.flatten_exn txt)
  | Pmod_structure _ -> "struct ... end"
  | _ -> "(module expression)"

(* the scope below an open (or include) of [me]; the open_ record, when the open is of
   a module whose names may be rewritten, to annotate it afterwards *)
let open_module env pat_names (me : Ppxlib.module_expr) =
  match modinfo env pat_names me with
  | M_known path ->
    let o = { path; known = true; rewrote = false } in
    (Open o :: env, Some o)
  | M_struct ns -> (bind_values env ns, None)
  | M_opaque ->
    let o = { path = path_text me; known = false; rewrote = false } in
    (Open o :: env, Some o)
