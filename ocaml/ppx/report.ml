(* Positions and build-time warnings.

   A site is the position of the form itself: the parser gives a parenthesised or
   begin..end expression the location of its parentheses, so the ppx never takes an
   expression's own location for a site; it takes the location of the token that makes
   the form (an operator, a letop or let%lwt keyword, a function's identifier).  Two
   tokens have no location of their own in the AST: an operator written as a value,
   ( >>= ), whose identifier spans the parentheses, and the ; of e1;%lwt e2.  Those are
   found in the source text, read back from the file the locations name (the ppx runs
   where the compiler would read it), with a guess from the locations alone if it cannot
   be read. *)

open Ppxlib

let sources : (string, string option) Hashtbl.t = Hashtbl.create 4

let source fname =
  match Hashtbl.find_opt sources fname with
  | Some s -> s
  | None ->
    let s =
      try
        let ic = open_in_bin fname in
        let n = in_channel_length ic in
        let s = really_input_string ic n in
        close_in ic;
        Some s
      with Sys_error _ -> None
    in
    Hashtbl.replace sources fname s;
    s

(* [pos] moved to byte [cnum] of the same text, counting the newlines passed *)
let advance text (pos : Lexing.position) cnum =
  let p = ref pos in
  for i = pos.pos_cnum to cnum - 1 do
    if text.[i] = '\n' then p := { !p with pos_lnum = !p.pos_lnum + 1; pos_bol = i + 1 }
  done;
  { !p with pos_cnum = cnum }

let find_from text sub i limit =
  let n = String.length sub in
  let rec go i = if i + n > limit then None else if String.sub text i n = sub then Some i else go (i + 1) in
  go i

(* where the operator [name] is inside its identifier's location, ( >>= ) *)
let op_start (loc : Location.t) name =
  let s = loc.loc_start and e = loc.loc_end in
  let len = e.pos_cnum - s.pos_cnum and n = String.length name in
  if len <= n then s
  else
    match source s.pos_fname with
    | Some text when e.pos_cnum <= String.length text -> (
      match find_from text name s.pos_cnum e.pos_cnum with
      | Some i -> advance text s i
      | None -> { s with pos_cnum = s.pos_cnum + ((len - n) / 2) })
    | _ -> { s with pos_cnum = s.pos_cnum + ((len - n) / 2) }

(* the ; after [e1] in e1;%lwt e2: past blanks and comments *)
let seq_start (e1 : expression) =
  let p = e1.pexp_loc.loc_end in
  match source p.pos_fname with
  | None -> p
  | Some text ->
    let n = String.length text in
    let rec skip i depth =
      if i >= n then None
      else if depth > 0 then
        if i + 1 < n && text.[i] = '*' && text.[i + 1] = ')' then skip (i + 2) (depth - 1)
        else if i + 1 < n && text.[i] = '(' && text.[i + 1] = '*' then skip (i + 2) (depth + 1)
        else skip (i + 1) depth
      else
        match text.[i] with
        | ' ' | '\t' | '\n' | '\r' -> skip (i + 1) 0
        | '(' when i + 1 < n && text.[i + 1] = '*' -> skip (i + 2) 1
        | ';' -> Some i
        | _ -> None
    in
    if p.pos_cnum > n then p else (match skip p.pos_cnum 0 with Some i -> advance text p i | None -> p)

(* the [ of [%finally f], whose name's location starts after "[%" *)
let ext_start (name_loc : Location.t) =
  let p = name_loc.loc_start in
  let back = { p with pos_cnum = p.pos_cnum - 2 } in
  match source p.pos_fname with
  | Some text when p.pos_cnum >= 2 && p.pos_cnum <= String.length text && String.sub text (p.pos_cnum - 2) 2 = "[%" -> back
  | Some _ -> p
  | None -> back

let column (p : Lexing.position) = p.pos_cnum - p.pos_bol

(* "file:line:col", the site's name *)
let site_name (p : Lexing.position) = Printf.sprintf "%s:%d:%d" p.pos_fname p.pos_lnum (column p)

type warning = { pos : Lexing.position; len : int; text : string }

let pending : warning list ref = ref []

(* A warning in the compiler's format, on stderr: it shows in the build's output like
   the compiler's own and, unlike a warning attribute the compiler would raise (warning
   22), it cannot fail a build that makes warnings errors. *)
let warn (pos : Lexing.position) len text = pending := { pos; len; text } :: !pending

(* what to say for every warning of a unit, in source order, once it is rewritten *)
let flush () =
  let ws = List.sort_uniq (fun a b -> compare (a.pos.pos_fname, a.pos.pos_cnum, a.text) (b.pos.pos_fname, b.pos.pos_cnum, b.text)) !pending in
  pending := [];
  List.iter
    (fun w ->
      let c = column w.pos in
      Printf.eprintf "File \"%s\", line %d, characters %d-%d:\nWarning (ppx_mtrace): %s\n%!" w.pos.pos_fname
        w.pos.pos_lnum c (c + w.len) w.text)
    ws

(* the length to underline from [pos] to the end of [loc], on one line *)
let span (pos : Lexing.position) (loc : Location.t) fallback =
  if loc.loc_end.pos_lnum = pos.pos_lnum && loc.loc_end.pos_cnum > pos.pos_cnum then loc.loc_end.pos_cnum - pos.pos_cnum
  else fallback
