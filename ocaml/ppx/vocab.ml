(* The vocabulary: which Lwt values ppx_mtrace rewrites, and into what.  This table is
   one half of the contract with Mtrace_lwt (docs/ocaml.md; the test ocaml-ppx-vocab
   checks the two agree, both ways, from mtrace_lwt.mli): for every entry the library
   has the traced function, of Lwt's type with [?site:int ->] in front (the unsited ones,
   Lwt_condition.signal/broadcast, have Lwt's type).  The ppx passes [~site] first and the
   user's arguments after it unchanged, so partial application and labels keep working.

   An operator or letop is a value of its module like any other (Lwt.Infix.(>>=),
   Lwt.Syntax.(let* )); [shape] says how its arguments map onto the traced function's. *)

type shape =
  | Same (* the arguments as they are: Lwt.bind p f, p >>= f, (let* ) p f *)
  | Flip (* the first two swapped: p >|= f -> map f p; f =<< p -> bind p f *)
  | List2 (* the two as a list: a <&> b -> join [a; b] *)

type action = { target : string list; sited : bool; shape : shape }

let lwt_fns =
  [ "bind"; "map"; "catch"; "try_bind"; "finalize"; "both"; "all"; "join"; "pick"; "npick";
    "choose"; "nchoose"; "nchoose_split"; "pause"; "wrap"; "wrap1"; "wrap2"; "wrap3"; "wrap4";
    "wrap5"; "wrap6"; "wrap7"; "apply"; "on_success"; "on_failure"; "on_termination"; "on_any";
    "async"; "dont_wait"; "wait"; "task"; "protected"; "no_cancel" ]

let list_fns =
  [ "iter_s"; "iter_p"; "iteri_s"; "iteri_p"; "map_s"; "map_p"; "mapi_s"; "mapi_p"; "rev_map_s";
    "rev_map_p"; "fold_left_s"; "fold_right_s"; "for_all_s"; "for_all_p"; "exists_s"; "exists_p";
    "find_s"; "filter_s"; "filter_p"; "filter_map_s"; "filter_map_p"; "partition_s"; "partition_p" ]

let stream_fns =
  [ "next"; "get"; "peek"; "junk"; "nget"; "npeek"; "njunk"; "last_new"; "to_list"; "iter";
    "iter_s"; "iter_p"; "iter_n"; "fold"; "fold_s"; "find"; "find_s"; "find_map"; "find_map_s";
    "map_s"; "filter_s"; "filter_map_s"; "map_list_s"; "junk_old"; "is_empty"; "closed"; "to_string";
    "get_while"; "get_while_s"; "junk_while"; "junk_while_s"; "parse"; "from" ]

let seq_fns =
  [ "iter"; "iter_s"; "iter_p"; "iter_n"; "fold_left"; "fold_left_s"; "to_list"; "map_s"; "filter_s";
    "filter_map_s"; "unfold_lwt" ]

let result_fns =
  [ "bind"; "bind_error"; "bind_lwt"; "bind_result"; "bind_lwt_error"; "bind_lwt_err"; "map"; "map_error";
    "map_err"; "catch"; "both"; "iter"; "iter_error" ]

let fn ?(sited = true) target = { target; sited; shape = Same }

(* Lwt's infix operators, in Lwt.Infix and (deprecated there) in Lwt itself *)
let lwt_ops =
  let m f shape = { target = [ "Mtrace_lwt"; f ]; sited = true; shape } in
  [ (">>=", m "bind" Same); ("=<<", m "bind" Flip); (">|=", m "map" Flip); ("=|<", m "map" Same);
    ("<&>", m "join" List2); ("<?>", m "choose" List2) ]

let letops target =
  let m f shape = { target = target @ [ f ]; sited = true; shape } in
  [ ("let*", m "bind" Same); ("let+", m "map" Flip); ("and*", m "both" Same); ("and+", m "both" Same) ]

(* (module path, value) -> action *)
let table : (string * string, action) Hashtbl.t =
  let t = Hashtbl.create 256 in
  let add md names target = List.iter (fun f -> Hashtbl.replace t (md, f) (fn (target @ [ f ]))) names in
  add "Lwt" lwt_fns [ "Mtrace_lwt" ];
  add "Lwt_list" list_fns [ "Mtrace_lwt"; "List" ];
  add "Lwt_pool" [ "use" ] [ "Mtrace_lwt"; "Pool" ];
  add "Lwt_stream" stream_fns [ "Mtrace_lwt"; "Stream" ];
  add "Lwt_seq" seq_fns [ "Mtrace_lwt"; "Seq" ];
  add "Lwt_result" result_fns [ "Mtrace_lwt"; "Result" ];
  add "Lwt_mvar" [ "take"; "put" ] [ "Mtrace_lwt"; "Mvar" ];
  add "Lwt_condition" [ "wait" ] [ "Mtrace_lwt"; "Condition" ];
  List.iter
    (fun f -> Hashtbl.replace t ("Lwt_condition", f) (fn ~sited:false [ "Mtrace_lwt"; "Condition"; f ]))
    [ "signal"; "broadcast" ];
  add "Lwt_mutex" [ "lock"; "with_lock" ] [ "Mtrace_lwt"; "Mutex" ];
  add "Lwt_unix" [ "sleep"; "with_timeout"; "timeout"; "yield" ] [ "Mtrace_lwt_unix" ];
  List.iter (fun (op, a) -> Hashtbl.replace t ("Lwt", op) a; Hashtbl.replace t ("Lwt.Infix", op) a) lwt_ops;
  let res = [ "Mtrace_lwt"; "Result" ] in
  List.iter
    (fun (op, a) -> Hashtbl.replace t ("Lwt_result", op) a; Hashtbl.replace t ("Lwt_result.Infix", op) a)
    [ (">>=", { target = res @ [ "bind" ]; sited = true; shape = Same });
      (">|=", { target = res @ [ "map" ]; sited = true; shape = Flip }) ];
  List.iter (fun (op, a) -> Hashtbl.replace t ("Lwt.Syntax", op) a) (letops [ "Mtrace_lwt" ]);
  List.iter (fun (op, a) -> Hashtbl.replace t ("Lwt_result.Syntax", op) a) (letops res);
  t

let action md name = Hashtbl.find_opt table (md, name)

(* With nothing opened, an Lwt operator is taken to be Lwt's: a program that uses >>=
   unqualified gets it from an open ppx_mtrace may not know (a project's own prelude);
   a letop with no known open in scope is not assumed to be anybody's. *)
let default_op name = List.assoc_opt name lwt_ops

let is_operator name = List.mem_assoc name lwt_ops
let is_letop name = List.mem name [ "let*"; "let+"; "and*"; "and+" ]

(* The modules of the vocabulary: a value of theirs that takes a callback and has no
   traced form is said at build time (its callback would run as whichever thread is
   current, not as a thread of its own). *)
let vocabulary_modules =
  [ "Lwt"; "Lwt_list"; "Lwt_pool"; "Lwt_stream"; "Lwt_seq"; "Lwt_result"; "Lwt_mvar"; "Lwt_condition";
    "Lwt_mutex"; "Lwt_unix" ]

let in_vocabulary md =
  let top = match String.index_opt md '.' with Some i -> String.sub md 0 i | None -> md in
  List.mem top vocabulary_modules

(* What the installed modules export (Lwt_names, generated from their .mli). *)
type exports = {
  complete : bool;
  values : (string, bool * string list option) Hashtbl.t; (* callback?, labels before the first unlabelled parameter *)
  subs : string list;
}

let exports : (string, exports) Hashtbl.t =
  let t = Hashtbl.create 256 in
  List.iter
    (fun (path, complete, vals, subs) ->
      let values = Hashtbl.create (List.length vals) in
      List.iter (fun (v, cb, l) -> Hashtbl.replace values v (cb, l)) vals;
      Hashtbl.replace t path { complete; values; subs })
    Lwt_names.modules;
  t

let aliases = Hashtbl.of_seq (List.to_seq Lwt_names.aliases)

(* the canonical path of a module path, if it is one of the installed modules read *)
let rec known_module path =
  if Hashtbl.mem exports path then Some path
  else
    match Hashtbl.find_opt aliases path with
    | Some p -> known_module p
    | None -> (
      match String.index_opt path '.' with
      (* an alias inside: Stdlib.List.x -> List.x *)
      | Some i -> (
        let head = String.sub path 0 i and rest = String.sub path (i + 1) (String.length path - i - 1) in
        match String.index_opt rest '.' with
        | Some j -> (
          let h2 = head ^ "." ^ String.sub rest 0 j in
          match Hashtbl.find_opt aliases h2 with
          | Some p -> known_module (p ^ "." ^ String.sub rest (j + 1) (String.length rest - j - 1))
          | None -> None)
        | None -> None)
      | None -> None)

let submodule md name =
  match Hashtbl.find_opt exports md with
  | Some e when List.mem name e.subs -> known_module (md ^ "." ^ name)
  | _ -> None

(* Does module [md] export value [name]?  [`Yes cb] (cb: it takes a callback), [`No], or
   [`Maybe] when its signature includes something the generator could not read. *)
let exports_value md name =
  match Hashtbl.find_opt exports md with
  | None -> `Maybe
  | Some e -> (
    match Hashtbl.find_opt e.values name with
    | Some (cb, _) -> `Yes cb
    | None -> if e.complete then `No else `Maybe)

(* the labels of [md.name]'s parameters before its first unlabelled one, if it has one *)
let leading md name =
  match Hashtbl.find_opt exports md with
  | Some e -> ( match Hashtbl.find_opt e.values name with Some (_, l) -> l | None -> None)
  | None -> None

(* The names whose meaning the scope analysis tracks: only a binding of one of these can
   change what the ppx does. *)
let interesting_names : (string, unit) Hashtbl.t =
  let t = Hashtbl.create 1024 in
  Hashtbl.iter
    (fun md e -> if in_vocabulary md then Hashtbl.iter (fun v _ -> Hashtbl.replace t v ()) e.values)
    exports;
  List.iter (fun (op, _) -> Hashtbl.replace t op ()) lwt_ops;
  List.iter (fun op -> Hashtbl.replace t op ()) [ "let*"; "let+"; "and*"; "and+" ];
  t

let interesting name = Hashtbl.mem interesting_names name

(* Entries of the table that the installed Lwt does not have (for the test: none). *)
let missing_in_lwt () =
  Hashtbl.fold
    (fun (md, f) _ acc -> match exports_value md f with `Yes _ -> acc | _ -> (md ^ "." ^ f) :: acc)
    table []
  |> List.sort compare
