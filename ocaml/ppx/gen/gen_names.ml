(* gen_names: the names that the modules a program may open export, read from their
   installed .mli (ppxlib's parser, so any compiler version reads them), as an OCaml
   module for ppx_mtrace's scope analysis (ocaml/ppx/scope.ml): what `open M` brings into
   scope decides what an unqualified name, operator or letop means below it.

   Usage: gen_names.exe [-stdlib DIR] FILE.mli ... > lwt_names.ml
   Each FILE.mli is the module of its capitalised base name; -stdlib adds every .mli of
   DIR (the compiler's standard library, where Stdlib's own modules and unix live).

   Printed, per module path (nested signatures as "Lwt.Infix"): whether the list is
   complete (an include the generator cannot follow makes it not), its values each with
   whether it takes a function argument (a callback) and the labels before its first
   unlabelled parameter, and its submodules; then the module aliases (Stdlib.List = List). *)

open Ppxlib

type m = {
  path : string;
  mutable complete : bool;
  mutable values : (string * bool * string list option) list; (* reversed *)
  mutable subs : string list; (* reversed *)
}

let modules : m list ref = ref []
let aliases : (string * string) list ref = ref []

(* a parameter of function type: [strip] looks through [Ptyp_poly] (explicitly
   polymorphic values) *)
let rec strip t = match t.ptyp_desc with Ptyp_poly (_, t) -> strip t | _ -> t

let rec takes_callback t =
  match (strip t).ptyp_desc with
  | Ptyp_arrow (_, arg, res) -> (
    match (strip arg).ptyp_desc with Ptyp_arrow _ -> true | _ -> takes_callback res)
  | _ -> false

(* the labels of a function's parameters before its first unlabelled one ("?mutex",
   "~f"), to write it eta-expanded; None if it is not a function with one *)
let rec leading t =
  match (strip t).ptyp_desc with
  | Ptyp_arrow (Nolabel, _, _) -> Some []
  | Ptyp_arrow (Labelled l, _, r) -> Option.map (fun ls -> ("~" ^ l) :: ls) (leading r)
  | Ptyp_arrow (Optional l, _, r) -> Option.map (fun ls -> ("?" ^ l) :: ls) (leading r)
  | _ -> None

(* Stdlib__List -> List: the standard library's modules are aliases of these *)
let alias_target lid =
  let s = String.concat "." (Longident.flatten_exn lid) in
  let pre = "Stdlib__" in
  let n = String.length pre in
  if String.length s > n && String.sub s 0 n = pre then String.sub s n (String.length s - n) else s

let rec signature path (modtypes : (string, signature) Hashtbl.t) sg =
  let m = { path; complete = true; values = []; subs = [] } in
  modules := m :: !modules;
  let add_values_of (other : m) =
    m.values <- other.values @ m.values;
    m.subs <- other.subs @ m.subs;
    if not other.complete then m.complete <- false
  in
  let find_module p = List.find_opt (fun x -> x.path = p) !modules in
  List.iter
    (fun item ->
      match item.psig_desc with
      | Psig_value vd -> m.values <- (vd.pval_name.txt, takes_callback vd.pval_type, leading vd.pval_type) :: m.values
      | Psig_module { pmd_name = { txt = Some name; _ }; pmd_type; _ } -> (
        m.subs <- name :: m.subs;
        let sub = path ^ "." ^ name in
        match pmd_type.pmty_desc with
        | Pmty_signature s -> ignore (signature sub modtypes s)
        | Pmty_alias lid -> aliases := (sub, alias_target lid.txt) :: !aliases
        | Pmty_ident { txt = Lident mt; _ } when Hashtbl.mem modtypes mt ->
          ignore (signature sub modtypes (Hashtbl.find modtypes mt))
        | _ -> ())
      | Psig_recmodule mds ->
        List.iter (fun md -> Option.iter (fun n -> m.subs <- n :: m.subs) md.pmd_name.txt) mds
      | Psig_modtype { pmtd_name; pmtd_type = Some { pmty_desc = Pmty_signature s; _ }; _ } ->
        Hashtbl.replace modtypes pmtd_name.txt s
      | Psig_include { pincl_mod; _ } -> (
        match pincl_mod.pmty_desc with
        (* include module type of Infix (Lwt_result): a sibling already read *)
        | Pmty_typeof { pmod_desc = Pmod_ident { txt = Lident sib; _ }; _ } -> (
          match find_module (path ^ "." ^ sib) with Some o -> add_values_of o | None -> m.complete <- false)
        (* include NumberIO (Lwt_io): a module type of the same file *)
        | Pmty_ident { txt = Lident mt; _ } when Hashtbl.mem modtypes mt ->
          let before = !modules in
          add_values_of (signature "" modtypes (Hashtbl.find modtypes mt));
          modules := before
        | _ -> m.complete <- false)
      | _ -> ())
    sg;
  m

let read_mli file =
  let base = Filename.remove_extension (Filename.basename file) in
  let ic = open_in_bin file in
  let lexbuf = Lexing.from_channel ic in
  Lexing.set_filename lexbuf file;
  let sg = Parse.interface lexbuf in
  close_in ic;
  ignore (signature (String.capitalize_ascii base) (Hashtbl.create 8) sg)

let () =
  let files = ref [] in
  let stdlib dir =
    Sys.readdir dir |> Array.to_list |> List.sort compare
    |> List.iter (fun f ->
           if Filename.check_suffix f ".mli" && not (String.length f > 12 && String.sub f 0 12 = "camlinternal")
           then files := Filename.concat dir f :: !files)
  in
  Arg.parse [ ("-stdlib", Arg.String stdlib, "DIR every .mli of DIR") ] (fun f -> files := f :: !files) "gen_names.exe [-stdlib DIR] FILE.mli ...";
  List.iter read_mli (List.rev !files);
  let q = Printf.sprintf "%S" in
  print_string "(* Generated by gen/gen_names.exe (see ocaml/ppx/dune) from the installed .mli: do not edit. *)\n\n";
  print_string "let modules : (string * bool * (string * bool * string list option) list * string list) list = [\n";
  List.iter
    (fun m ->
      Printf.printf "  (%s, %b,\n   [%s],\n   [%s]);\n" (q m.path) m.complete
        (String.concat "; "
           (List.rev_map
              (fun (v, cb, l) ->
                Printf.sprintf "(%s, %b, %s)" (q v) cb
                  (match l with None -> "None" | Some l -> "Some [" ^ String.concat "; " (List.map q l) ^ "]"))
              m.values))
        (String.concat "; " (List.rev_map q m.subs)))
    (List.rev !modules);
  print_string "]\n\nlet aliases : (string * string) list = [\n";
  List.iter (fun (a, t) -> Printf.printf "  (%s, %s);\n" (q a) (q t)) (List.rev !aliases);
  print_string "]\n"
