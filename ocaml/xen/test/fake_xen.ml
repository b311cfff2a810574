(* The second instance of Mtrace_xen's module types, in memory, for xen_functor.ml: a
   grant table (pages by gref, with the grantee and its rights, refs handed out in a
   scrambled order so that a wrong order shows), event channels (a notify counter per
   port) and a xenstore (a tree of paths with transactions that conflict, and a log of
   every operation in the order the store applied it).  Besides the guest's side it
   offers dom0's: map a grant as the grantee, read the tree. *)

let page = 4096

(* The test sets these: which domain we are, and what goes wrong. *)
let own_domid = ref 7
let grant_capacity = ref 64

(* xenstore: this many commits conflict (another writer got in first) *)
let conflicts = ref 0

(* xenstore: a write to this path fails (as EACCES or E2BIG would) *)
let fail_write = ref ""

module Xen = struct
  module Gntref = struct
    type t = int

    let to_string = string_of_int
    let to_int32 = Int32.of_int
  end

  type grant = { domid : int; writable : bool; page : Cstruct.t }

  let table : (int, grant) Hashtbl.t = Hashtbl.create 64
  let free : int list ref = ref []

  (* refs 8.. (the first 8 are reserved, as Xen's), in a fixed scrambled order *)
  let reset () =
    Hashtbl.reset table;
    let refs = List.init !grant_capacity (fun i -> 8 + i) in
    let key r = (r * 7919) mod 1009 in
    free := List.sort (fun a b -> compare (key a) (key b)) refs

  let granted () = Hashtbl.length table

  (* dom0's gnttab_map of one ref: only the grantee, only with the granted rights *)
  let map ~domid ~writable gref =
    match Hashtbl.find_opt table gref with
    | None -> Error (Printf.sprintf "gref %d is not granted" gref)
    | Some g when g.domid <> domid -> Error (Printf.sprintf "gref %d is granted to dom%d" gref g.domid)
    | Some g when writable && not g.writable -> Error (Printf.sprintf "gref %d is read-only" gref)
    | Some g -> Ok g.page

  module Export = struct
    type t = { mutable refs : Gntref.t list; mapping : Cstruct.buffer }

    let share_pages ~domid ~count ~writable =
      if List.length !free < count then Error `Grant_table_full
      else begin
        let mapping = Bigarray.(Array1.create char c_layout (count * page)) in
        Bigarray.Array1.fill mapping '\000';
        let refs = List.filteri (fun i _ -> i < count) !free in
        free := List.filteri (fun i _ -> i >= count) !free;
        List.iteri
          (fun i r ->
            Hashtbl.replace table r
              { domid; writable; page = Cstruct.of_bigarray ~off:(i * page) ~len:page mapping })
          refs;
        Ok { refs; mapping }
      end

    let refs t = t.refs
    let mapping t = t.mapping

    let unshare ~release_refs t =
      List.iter
        (fun r ->
          Hashtbl.remove table r;
          if release_refs then free := r :: !free)
        t.refs;
      t.refs <- [];
      Lwt.return_unit
  end
end

module Eventchn = struct
  type handle = unit
  type t = int
  type port = { remote : int; mutable notified : int; mutable bound : bool }

  let ports : (int, port) Hashtbl.t = Hashtbl.create 8
  let next = ref 3
  let reset () = Hashtbl.reset ports
  let init () = ()

  let bind_unbound_port () remote =
    let p = !next in
    incr next;
    Hashtbl.replace ports p { remote; notified = 0; bound = true };
    p

  let get p =
    match Hashtbl.find_opt ports p with
    | Some s when s.bound -> s
    | _ -> failwith (Printf.sprintf "port %d is not bound" p)

  let notify () p =
    let s = get p in
    s.notified <- s.notified + 1

  let unbind () p = (get p).bound <- false
  let to_int p = p
  let bound () = Hashtbl.fold (fun p s acc -> if s.bound then p :: acc else acc) ports []
  let notified p = (Hashtbl.find ports p).notified
  let remote p = (Hashtbl.find ports p).remote
end

module Xs = struct
  type client = unit
  type op = Write of string * string | Rm of string | Commit | Conflict | Abort

  (* a transaction works on a copy of the tree and keeps its operations until commit *)
  type tx = { copy : (string, string) Hashtbl.t; mutable ops : op list }
  type handle = Immediate | Tx of tx

  exception Enoent of string

  let tree : (string, string) Hashtbl.t = Hashtbl.create 64

  (* generation of the tree: a transaction that started at another one conflicts *)
  let gen = ref 0

  (* newest first *)
  let log : op list ref = ref []

  let reset () =
    Hashtbl.reset tree;
    log := [];
    gen := 0

  let abs path =
    if path <> "" && path.[0] = '/' then path
    else Printf.sprintf "/local/domain/%d/%s" !own_domid path

  let parent p =
    match String.rindex_opt p '/' with Some 0 | None -> "/" | Some i -> String.sub p 0 i

  let below p q =
    q = p
    || String.length q > String.length p
       && String.sub q 0 (String.length p + 1) = p ^ "/"

  (* Writes create the missing parents with empty values, as xenstored. *)
  let rec set t p v =
    if p <> "/" && not (Hashtbl.mem t (parent p)) then set t (parent p) "";
    Hashtbl.replace t p v

  let store = function Immediate -> tree | Tx x -> x.copy

  let record h op =
    match h with
    | Immediate ->
        log := op :: !log;
        incr gen
    | Tx x -> x.ops <- op :: x.ops

  let make () = Lwt.return_unit
  let immediate () f = f Immediate

  let transaction () f =
    let rec attempt () =
      let start = !gen in
      let x = { copy = Hashtbl.copy tree; ops = [] } in
      Lwt.try_bind
        (fun () -> f (Tx x))
        (fun v ->
          if !conflicts > 0 then begin
            (* another writer committed in between *)
            decr conflicts;
            incr gen
          end;
          if !gen <> start then begin
            log := Conflict :: !log;
            attempt ()
          end
          else begin
            Hashtbl.reset tree;
            Hashtbl.iter (Hashtbl.replace tree) x.copy;
            log := (Commit :: x.ops) @ !log;
            incr gen;
            Lwt.return v
          end)
        (fun e ->
          log := Abort :: !log;
          Lwt.fail e)
    in
    attempt ()

  let read h path =
    match Hashtbl.find_opt (store h) (abs path) with
    | Some v -> Lwt.return v
    | None -> Lwt.fail (Enoent path)

  let write h path v =
    let p = abs path in
    if p = !fail_write then Lwt.fail (Failure ("write refused: " ^ p))
    else begin
      set (store h) p v;
      record h (Write (p, v));
      Lwt.return_unit
    end

  (* rm of a missing node succeeds when its parent exists (xenstored) *)
  let rm h path =
    let p = abs path and t = store h in
    if not (Hashtbl.mem t p) then
      if Hashtbl.mem t (parent p) then Lwt.return_unit else Lwt.fail (Enoent path)
    else begin
      let gone = Hashtbl.fold (fun q _ acc -> if below p q then q :: acc else acc) t [] in
      List.iter (Hashtbl.remove t) gone;
      record h (Rm p);
      Lwt.return_unit
    end

  (* dom0's view *)
  let get path = Hashtbl.find_opt tree path

  let all () = Hashtbl.fold (fun k v acc -> (k ^ "=" ^ v) :: acc) tree [] |> List.sort compare

  let keys_below p =
    Hashtbl.fold (fun q _ acc -> if below p q && q <> p then q :: acc else acc) tree []
    |> List.sort compare

  (* oldest first *)
  let ops () = List.rev !log
end
