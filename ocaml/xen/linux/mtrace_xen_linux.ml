(* Mtrace_xen's module types over xenif (mtrace_xen_linux_stubs.c). *)

external open_ : string -> unit = "mtrace_xen_linux_open"
external backend_ : unit -> string = "mtrace_xen_linux_backend"

external share : int -> int -> bool -> (Cstruct.buffer * int array) option
  = "mtrace_xen_linux_share"

external unshare_ : Cstruct.buffer -> unit = "mtrace_xen_linux_unshare"
external bind_unbound : int -> int = "mtrace_xen_linux_bind_unbound"
external notify_ : int -> unit = "mtrace_xen_linux_notify"
external unbind_ : int -> unit = "mtrace_xen_linux_unbind"
external xs_read : int -> string -> string option = "mtrace_xen_linux_xs_read"
external xs_write : int -> string -> string -> unit = "mtrace_xen_linux_xs_write"
external xs_rm : int -> string -> bool = "mtrace_xen_linux_xs_rm"
external xs_directory : int -> string -> string array option = "mtrace_xen_linux_xs_directory"
external xs_tx_start : unit -> int = "mtrace_xen_linux_xs_tx_start"
external xs_tx_end : int -> bool -> bool = "mtrace_xen_linux_xs_tx_end"
external clock_pair : bool -> (int * int * int) option = "mtrace_xen_linux_clock_pair"

let init ?(backend = "") () = open_ backend
let backend () = backend_ ()

(* Run a synchronous call as an Lwt one: its exception becomes the promise's. *)
let lwt f = try Lwt.return (f ()) with e -> Lwt.fail e

module Xen = struct
  module Gntref = struct
    type t = int

    let to_string = string_of_int
    let to_int32 = Int32.of_int
    let of_int32 r = Int32.to_int r land 0xffff_ffff
  end

  module Export = struct
    type t = { pages : Cstruct.buffer; refs : Gntref.t list; mutable shared : bool }

    let share_pages ~domid ~count ~writable =
      match share domid count writable with
      | Some (pages, refs) -> Ok { pages; refs = Array.to_list refs; shared = true }
      | None -> Error `Grant_table_full

    let refs t = t.refs
    let mapping t = t.pages

    let unshare ~release_refs:_ t =
      lwt (fun () ->
          if t.shared then begin
            t.shared <- false;
            unshare_ t.pages
          end)
  end
end

module Eventchn = struct
  type handle = unit
  type t = int

  let init () = ignore (backend_ ())
  let bind_unbound_port () remote = bind_unbound remote
  let notify () port = notify_ port
  let unbind () port = unbind_ port
  let to_int p = p
  let of_int p = p
end

module Xs = struct
  type client = unit
  type handle = int

  exception Enoent of string

  (* guest.c's XS_TX_TRIES *)
  let tx_tries = 64
  let make () = lwt (fun () -> ignore (backend_ ()))
  let immediate () f = f 0

  let transaction () f =
    let rec attempt n =
      if n = tx_tries then Lwt.fail (Failure "Mtrace_xen_linux: xenstore transaction: EAGAIN")
      else
        match xs_tx_start () with
        | exception e -> Lwt.fail e
        | tx ->
            Lwt.try_bind
              (fun () -> f tx)
              (fun v ->
                match xs_tx_end tx false with
                | true -> Lwt.return v
                | false -> attempt (n + 1)
                | exception e -> Lwt.fail e)
              (fun e ->
                (try ignore (xs_tx_end tx true) with Failure _ -> ());
                Lwt.fail e)
    in
    attempt 0

  let read tx path =
    lwt (fun () -> match xs_read tx path with Some v -> v | None -> raise (Enoent path))

  let write tx path v = lwt (fun () -> xs_write tx path v)
  let rm tx path = lwt (fun () -> if not (xs_rm tx path) then raise (Enoent path))

  let directory tx path =
    lwt (fun () ->
        match xs_directory tx path with Some d -> Array.to_list d | None -> raise (Enoent path))
end

(* The clock a ring reads by default for its clock id (Mtrace_ring): CLOCK_REALTIME for
   realtime, CLOCK_MONOTONIC for the others. *)
let clock_sync ~clock_id () = clock_pair (clock_id = Mtrace_ring.clock_realtime)
let default_sync = clock_sync

module Session = struct
  include Mtrace_xen.Make (Xen) (Eventchn) (Xs)

  (* clock-sync by default, against the clock the rings read by default *)
  let create ?backend ?rings ?pages ?(clock_id = Mtrace_ring.clock_monotonic) ?clock ?clock_sync:cs
      () =
    let cs =
      match (cs, clock) with
      | Some f, _ -> f
      | None, None -> default_sync ~clock_id
      | None, Some _ -> fun () -> None
    in
    create ?backend ?rings ?pages ~clock_id ?clock ~clock_sync:cs ()
end
