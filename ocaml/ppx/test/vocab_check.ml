(* vocab_check: ppx_mtrace's table of traced forms (Vocab) checked against
   - the installed Lwt: every entry is a value its .mli has (always);
   - Mtrace_lwt's interface (-mtrace mtrace_lwt.mli -mtrace-unix mtrace_lwt_unix.mli),
     both ways: every entry's target exists, taking ?site:int first exactly when the
     entry passes ~site; and every value of Mtrace_lwt (or its Lwt-mirroring submodules,
     or Mtrace_lwt_unix) named like a value of the Lwt module it mirrors is an entry's
     target: the library and the ppx agree on the traced set.
   Prints each disagreement and exits 1 if there is one. *)

open Ppxlib
module V = Ppx_mtrace.Vocab

let rec strip t = match t.ptyp_desc with Ptyp_poly (_, t) -> strip t | _ -> t

let sited t =
  match (strip t).ptyp_desc with
  | Ptyp_arrow (Optional "site", { ptyp_desc = Ptyp_constr ({ txt = Lident "int"; _ }, []); _ }, _) -> true
  | _ -> false

(* (module path, value, takes ?site first) of an interface *)
let read file top =
  let ic = open_in_bin file in
  let lexbuf = Lexing.from_channel ic in
  Lexing.set_filename lexbuf file;
  let sg = Parse.interface lexbuf in
  close_in ic;
  let out = ref [] in
  let rec walk path sg =
    List.iter
      (fun it ->
        match it.psig_desc with
        | Psig_value vd -> out := (path, vd.pval_name.txt, sited vd.pval_type) :: !out
        | Psig_module { pmd_name = { txt = Some n; _ }; pmd_type = { pmty_desc = Pmty_signature s; _ }; _ } ->
          walk (path ^ "." ^ n) s
        | _ -> ())
      sg
  in
  walk top sg;
  List.rev !out

let mirror = function
  | "Mtrace_lwt" -> Some "Lwt"
  | "Mtrace_lwt.List" -> Some "Lwt_list"
  | "Mtrace_lwt.Pool" -> Some "Lwt_pool"
  | "Mtrace_lwt.Stream" -> Some "Lwt_stream"
  | "Mtrace_lwt.Seq" -> Some "Lwt_seq"
  | "Mtrace_lwt.Result" -> Some "Lwt_result"
  | "Mtrace_lwt.Mvar" -> Some "Lwt_mvar"
  | "Mtrace_lwt.Condition" -> Some "Lwt_condition"
  | "Mtrace_lwt.Mutex" -> Some "Lwt_mutex"
  | "Mtrace_lwt_unix" -> Some "Lwt_unix"
  | _ -> None

let () =
  let mtrace = ref None and mtrace_unix = ref None in
  Arg.parse
    [ ("-mtrace", Arg.String (fun f -> mtrace := Some f), "FILE mtrace_lwt.mli");
      ("-mtrace-unix", Arg.String (fun f -> mtrace_unix := Some f), "FILE mtrace_lwt_unix.mli") ]
    (fun a -> raise (Arg.Bad a))
    "vocab_check.exe [-mtrace mtrace_lwt.mli -mtrace-unix mtrace_lwt_unix.mli]";
  let bad = ref 0 in
  let say fmt = Printf.ksprintf (fun s -> incr bad; print_endline s) fmt in
  List.iter (say "%s: in ppx_mtrace's table, not in the installed Lwt") (V.missing_in_lwt ());
  let entries = Hashtbl.fold (fun k a acc -> (k, a) :: acc) V.table [] |> List.sort compare in
  (match (!mtrace, !mtrace_unix) with
   | Some m, Some u ->
     let lib = read m "Mtrace_lwt" @ read u "Mtrace_lwt_unix" in
     let find target = List.find_map (fun (p, n, s) -> if p ^ "." ^ n = target then Some s else None) lib in
     List.iter
       (fun ((md, f), (a : V.action)) ->
         let target = String.concat "." a.target in
         match find target with
         | None -> say "%s: the target of %s.%s, not in Mtrace_lwt's interface" target md f
         | Some s when s <> a.sited ->
           say "%s: takes ?site:int %s, but ppx_mtrace %s ~site (for %s.%s)" target (if s then "first" else "not first")
             (if a.sited then "passes" else "passes no") md f
         | Some _ -> ())
       entries;
     List.iter
       (fun (p, n, _) ->
         match mirror p with
         | Some lwt -> (
           match (V.exports_value lwt n, V.action lwt n) with
           | `Yes _, None -> say "%s.%s: in Mtrace_lwt's interface, but ppx_mtrace does not rewrite %s.%s" p n lwt n
           | `Yes _, Some a when String.concat "." a.target <> p ^ "." ^ n ->
             say "%s.%s: ppx_mtrace rewrites %s.%s into %s instead" p n lwt n (String.concat "." a.target)
           | _ -> ())
         | None -> ())
       lib
   | None, None -> ()
   | _ -> raise (Arg.Bad "-mtrace and -mtrace-unix go together"));
  Printf.printf "vocab_check: %d table entries, %d disagreements\n" (List.length entries) !bad;
  exit (if !bad = 0 then 0 else 1)
