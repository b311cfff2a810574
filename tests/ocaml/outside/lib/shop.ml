(* A small key-value shop, as an Lwt user writes one: a functor over a backing store,
   a pool of connections, a stream of requests served by workers, answers by mailbox,
   timeouts by cancellation.  tests/ocaml/test-outside.sh builds it outside the tree
   against the installed mtrace; every Lwt form here is a traced creation site. *)
open Lwt.Infix

module type STORE = sig
  type t

  val name : string
  val create : unit -> t
  val get : t -> string -> string option Lwt.t
  val put : t -> string -> string -> unit Lwt.t
end

(* every wait of the shop, scaled (bench/ocaml/shop.sh runs it faster) *)
let time_scale =
  match Sys.getenv_opt "SHOP_TIME_SCALE" with Some s -> float_of_string s | None -> 1.0

(* a store that answers after a pause; "slow:" keys take longer than a request may *)
module Mem : STORE = struct
  type t = (string, string) Hashtbl.t

  let name = "mem"
  let create () = Hashtbl.create 64
  let delay k = time_scale *. if String.length k > 5 && String.sub k 0 5 = "slow:" then 0.2 else 0.0005

  let get t k =
    Lwt_unix.sleep (delay k) >|= fun () -> Hashtbl.find_opt t k

  let put t k v =
    Lwt.pause () >>= fun () ->
    Hashtbl.replace t k v;
    Lwt.return_unit
end

(* the same store behind a lock, as a first-class module *)
module Locked : STORE = struct
  type t = { lock : Lwt_mutex.t; m : Mem.t }

  let name = "locked"
  let create () = { lock = Lwt_mutex.create (); m = Mem.create () }
  let get t k = Lwt_mutex.with_lock t.lock (fun () -> Mem.get t.m k)

  let put t k v =
    Lwt_mutex.lock t.lock >>= fun () ->
    Lwt.finalize (fun () -> Mem.put t.m k v) (fun () -> Lwt.return (Lwt_mutex.unlock t.lock))
end

let stores : (module STORE) list = [ (module Mem); (module Locked) ]

type request = Get of string | Put of string * string
type answer = Found of string option | Stored | Timed_out
type stats = { mutable served : int; mutable timeouts : int; mutable refused : int }

exception Refused of string

module Make (S : STORE) = struct
  type conn = { id : int; store : S.t }

  type t = {
    pool : conn Lwt_pool.t;
    requests : (request * answer Lwt_mvar.t) Lwt_stream.t;
    push : (request * answer Lwt_mvar.t) option -> unit;
    stats : stats;
    idle : unit Lwt_condition.t;
  }

  let create ~conns =
    let store = S.create () and n = ref 0 in
    let pool = Lwt_pool.create conns (fun () -> incr n; Lwt.return { id = !n; store }) in
    let requests, push = Lwt_stream.create () in
    { pool; requests; push; stats = { served = 0; timeouts = 0; refused = 0 };
      idle = Lwt_condition.create () }

  (* one request on a pooled connection, raced against its deadline *)
  let handle t req =
    Lwt_pool.use t.pool (fun c ->
        Lwt.pick
          [ (match req with
            | Get k -> S.get c.store k >|= fun v -> Found v
            | Put (k, v) -> S.put c.store k v >|= fun () -> Stored);
            (Lwt_unix.sleep (0.05 *. time_scale) >|= fun () -> Timed_out) ])

  let serve_one t (req, reply) =
    Lwt.catch
      (fun () ->
        match req with
        | Put (k, _) when String.length k = 0 -> Lwt.fail (Refused "empty key")
        | _ -> handle t req)
      (function
        | Refused _ -> t.stats.refused <- t.stats.refused + 1; Lwt.return Timed_out
        | e -> Lwt.fail e)
    >>= fun a ->
    (match a with Timed_out -> t.stats.timeouts <- t.stats.timeouts + 1 | _ -> ());
    t.stats.served <- t.stats.served + 1;
    Lwt_mvar.put reply a

  (* [workers] consumers of the request stream; when it closes, the shop is idle *)
  let serve t ~workers =
    Lwt.async (fun () ->
        Lwt_stream.iter_n ~max_concurrency:workers (serve_one t) t.requests >|= fun () ->
        Lwt_condition.broadcast t.idle ())

  let ask t req =
    let reply = Lwt_mvar.create_empty () in
    t.push (Some (req, reply));
    Lwt_mvar.take reply

  (* the wait is there before the stream's end can wake the workers *)
  let close t =
    let idle = Lwt_condition.wait t.idle in
    t.push None;
    idle

  (* the keys of a batch, checked and written with the list combinators *)
  let audit t keys =
    let open Lwt.Syntax in
    let* found = Lwt_list.map_p (fun k -> ask t (Get k)) keys in
    let* _ = Lwt_list.mapi_s (fun i k -> ask t (Put (k, string_of_int i))) keys in
    let* present = Lwt_list.filter_p (fun k -> ask t (Get k) >|= ( <> ) (Found None)) keys in
    let+ timed = Lwt_list.exists_s (fun a -> Lwt.return (a = Timed_out)) found in
    (List.length present, timed)
end
