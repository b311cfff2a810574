(* vocab_check: ppx_mtrace's table of traced forms (Vocab) checked against
   - the installed Lwt: every entry is a value its .mli has (always);
   - Mtrace_lwt's interface (-mtrace mtrace_lwt.mli -mtrace-unix mtrace_lwt_unix.mli
     -mtrace-unix-ml mtrace_lwt_unix.ml), both ways: every entry's target exists in
     Mtrace_lwt (mtrace.lwt, the one library the rewritten code may need: the ppx's
     runtime library), taking ?site:int first exactly when the entry passes ~site; every
     value of Mtrace_lwt (or its Lwt-mirroring submodules) named like a value of the Lwt
     module it mirrors is an entry's target; and every value of Mtrace_lwt_unix named
     like one of Lwt_unix's is, in mtrace_lwt_unix.ml, the very call the entry of that
     Lwt_unix value makes (a Through entry: Lwt_unix.sleep d -> Mtrace_lwt.call ~site
     Mtrace_ring.Task Lwt_unix.sleep d; its body Mtrace_lwt.call ?site Mtrace_ring.Task
     Lwt_unix.sleep d), and every Through entry has such a direct form: a program that
     calls Mtrace_lwt_unix.sleep and one that the ppx rewrote record the same thread.
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

(* name -> (target, thread type, function) of each [let f ... = Mtrace_lwt.callN ?site
   Mtrace_ring.T M.f ...] of an implementation; None for a body of another form *)
let read_calls file =
  let ic = open_in_bin file in
  let lexbuf = Lexing.from_channel ic in
  Lexing.set_filename lexbuf file;
  let st = Parse.implementation lexbuf in
  close_in ic;
  let rec body e = match e.pexp_desc with Pexp_fun (_, _, _, b) | Pexp_constraint (b, _) -> body b | _ -> e in
  let flat l = String.concat "." (Longident.flatten_exn l) in
  let call e =
    match (body e).pexp_desc with
    | Pexp_apply
        ( { pexp_desc = Pexp_ident target; _ },
          (Optional "site", _)
          :: (Nolabel, { pexp_desc = Pexp_construct ({ txt = Ldot (Lident "Mtrace_ring", ty); _ }, None); _ })
          :: (Nolabel, { pexp_desc = Pexp_ident fn; _ })
          :: _ ) ->
      Some (flat target.txt, ty, flat fn.txt)
    | _ -> None
  in
  List.concat_map
    (fun it ->
      match it.pstr_desc with
      | Pstr_value (_, vbs) ->
        List.filter_map
          (fun vb -> match vb.pvb_pat.ppat_desc with Ppat_var v -> Some (v.txt, call vb.pvb_expr) | _ -> None)
          vbs
      | _ -> [])
    st

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
  let mtrace = ref None and mtrace_unix = ref None and unix_ml = ref None in
  Arg.parse
    [ ("-mtrace", Arg.String (fun f -> mtrace := Some f), "FILE mtrace_lwt.mli");
      ("-mtrace-unix", Arg.String (fun f -> mtrace_unix := Some f), "FILE mtrace_lwt_unix.mli");
      ("-mtrace-unix-ml", Arg.String (fun f -> unix_ml := Some f), "FILE mtrace_lwt_unix.ml") ]
    (fun a -> raise (Arg.Bad a))
    "vocab_check.exe [-mtrace mtrace_lwt.mli -mtrace-unix mtrace_lwt_unix.mli -mtrace-unix-ml mtrace_lwt_unix.ml]";
  let bad = ref 0 in
  let say fmt = Printf.ksprintf (fun s -> incr bad; print_endline s) fmt in
  List.iter (say "%s: in ppx_mtrace's table, not in the installed Lwt") (V.missing_in_lwt ());
  let entries = Hashtbl.fold (fun k a acc -> (k, a) :: acc) V.table [] |> List.sort compare in
  (match (!mtrace, !mtrace_unix, !unix_ml) with
   | Some m, Some u, Some uml ->
     let lwt_lib = read m "Mtrace_lwt" in
     let unix_lib = read u "Mtrace_lwt_unix" in
     let lib = lwt_lib @ unix_lib in
     let find target = List.find_map (fun (p, n, s) -> if p ^ "." ^ n = target then Some s else None) lwt_lib in
     let direct = read_calls uml in
     List.iter
       (fun ((md, f), (a : V.action)) ->
         let target = String.concat "." a.target in
         (match a.shape with
          | V.Through ty -> (
            match List.assoc_opt f direct with
            | _ when md <> "Lwt_unix" -> say "%s.%s: Through, but only Lwt_unix's have a direct form to compare" md f
            | Some (Some (t, ty', fn)) when (t, ty', fn) = (target, ty, md ^ "." ^ f) -> ()
            | Some (Some (t, ty', fn)) ->
              say "Mtrace_lwt_unix.%s is %s Mtrace_ring.%s %s, but ppx_mtrace makes %s.%s %s Mtrace_ring.%s %s.%s" f t ty' fn md
                f target ty md f
            | Some None -> say "Mtrace_lwt_unix.%s: not a Mtrace_lwt.call* of Mtrace_ring's thread type and %s.%s" f md f
            | None -> say "%s.%s: rewritten through %s, but Mtrace_lwt_unix has no %s" md f target f)
          | V.Same | V.Flip | V.List2 -> ());
         match find target with
         | None -> say "%s: the target of %s.%s, not in Mtrace_lwt's interface (mtrace.lwt)" target md f
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
           | `Yes _, Some { V.shape = V.Through _; _ } when p = "Mtrace_lwt_unix" -> () (* its body, above *)
           | `Yes _, Some a when String.concat "." a.target <> p ^ "." ^ n ->
             say "%s.%s: ppx_mtrace rewrites %s.%s into %s instead" p n lwt n (String.concat "." a.target)
           | _ -> ())
         | None -> ())
       lib
   | None, None, None -> ()
   | _ -> raise (Arg.Bad "-mtrace, -mtrace-unix and -mtrace-unix-ml go together"));
  Printf.printf "vocab_check: %d table entries, %d disagreements\n" (List.length entries) !bad;
  exit (if !bad = 0 then 0 else 1)
