(* Forms under a module-level open Lwt, in a module with an interface (so an unused value
   of the ppx's making would be warning 32). *)

val check : (string -> int -> int -> unit) -> unit
