(** The mtrace ring writer for OCaml: proto/mtrace-ring.h, byte for byte as guest/ring.c
    writes it.  OCaml, with the path of a record that fits (mtrace-guest.h's inline fast
    path) one noalloc C call (mtrace_ring_stubs.c, which needs no more of libc than
    memcpy, memchr and clock_gettime).

    One ring is a header page and [2^k] data pages (a [Cstruct.t] each, so a unikernel
    can pass its granted pages and a Linux guest the pages the C guest library maps).
    One writer per ring: calls must not run concurrently on the same [t].  Nothing here
    blocks, allocates on the fixed-length paths, or uses Unix.

    {b Thread ids} are OCaml [int]s (63 bits).  A record carries them as u64, sign
    extended: [-1] is [MTRACE_THREAD_NONE] (idle / no thread), [0..max_int] map to
    themselves.  Amounts and counter values are carried the same way (as int64).
    Timestamps and ring positions are non-negative [int]s (2^62 ns is 146 years). *)

(** enum mtrace_thread_type, in its order (TT_UNKNOWN = 99). *)
type thread_type =
  | Wait
  | Task
  | Bind
  | Try
  | Choose
  | Pick
  | Join
  | Map
  | Condition
  | On_success
  | On_failure
  | On_termination
  | On_any
  | Ignore_result
  | Async
  | Promise
  | Semaphore
  | Switch
  | Stream
  | Mutex
  | Unknown

val thread_type_code : thread_type -> int
(** The byte a CREATES record carries (0..19, Unknown = 99). *)

val thread_none : int
(** [-1]: MTRACE_THREAD_NONE. *)

(** enum mtrace_clock. *)
val clock_monotonic : int

val clock_xen : int
val clock_realtime : int
val clock_tsc : int

val page_size : int
val str_max : int
(** MTRACE_STR_MAX: longer strings are truncated to it, as the C producer does. *)

val site_name_max : int
(** MTRACE_SITE_NAME_MAX: site names are truncated to it. *)

type t
(** One ring, as its (single) writer sees it. *)

val init :
  ?clock_id:int -> ?index:int -> ?name:string -> hdr:Cstruct.t -> data:Cstruct.t -> unit -> t
(** [init ~hdr ~data ()] formats a fresh ring over [hdr] (one page) and [data] (a power
    of two of pages, 1..512), as mtrace_ring_init_local does: both are zeroed, the header
    gets magic, version (2 for [clock_tsc], else 1), size, pages, [clock_id] (default
    [clock_monotonic]), [index] (default 0) and [name] (at most 39 bytes, default "").
    Writes no record: call {!ring_start}.  With [clock_tsc] the clock is {!rdtsc} and the
    header's time block is the caller's to write (as over C local rings).
    @raise Invalid_argument on bad sizes. *)

val attach : ?seq:int -> hdr:Cstruct.t -> data:Cstruct.t -> unit -> t
(** Take over a ring some other writer formatted (the C guest library): head and tail
    are read from the header, [seq] is the next sequence number (the other writer's,
    default 0).  That writer must not write the ring afterwards.
    @raise Invalid_argument if the header's magic or data_pages do not match [data]. *)

(** {2 Clock and notification} *)

val monotonic_ns : unit -> int
(** CLOCK_MONOTONIC in ns (a noalloc C stub; the default clock). *)

val rdtsc : unit -> int
(** The TSC (x86; 0 elsewhere), for a ring whose header clock is [clock_tsc]. *)

val set_clock : t -> (unit -> int) -> unit
(** Where every op takes its timestamp from (default {!monotonic_ns}; a unikernel
    gives its own, e.g. Xen system time with [clock_xen] in {!init}). *)

val now : t -> int
(** The ring's clock, read now: a timestamp for the [~ts] forms below. *)

val set_notify : t -> (unit -> unit) -> unit
(** Called when a publish crosses the reader's req_event (after the header's
    [notifies] counter is incremented): send the event-channel notification here.
    Default: nothing. *)

val clock_id : t -> int
(** The header's clock (enum mtrace_clock). *)

(** {2 The vocabulary}  [thread] is the current thread ([thread_none] when idle). *)

val creates : t -> thread:int -> child:int -> ty:thread_type -> unit

val creates_named : t -> thread:int -> child:int -> ty:thread_type -> site:int -> unit
(** CREATES with a named creation site (site extension, kind NAMED); name [site]
    once per ring with {!site_name}.  [site] must be non-zero. *)

val creates_pc : t -> thread:int -> child:int -> ty:thread_type -> pc:int -> unit
(** CREATES with a PC site (kind PC). *)

val site_name : t -> site:int -> string -> unit
(** SITE_NAME: "file:line function", truncated to {!site_name_max} bytes. *)

val read : t -> thread:int -> source:int -> unit
val fulfills : t -> thread:int -> resolvee:int -> unit

val fails : t -> thread:int -> resolvee:int -> string -> unit
(** FAILS with the exception's text. *)

val fulfills_ts : t -> ts:int -> thread:int -> resolvee:int -> unit
val fails_ts : t -> ts:int -> thread:int -> resolvee:int -> string -> unit
(** ... with a timestamp the caller read ({!now}), as the C producer's
    mtrace_emit_ts: for several threads resolved at one instant (one promise and those
    that became it). *)

val becomes : t -> thread:int -> other:int -> unit
val label : t -> thread:int -> string -> unit
val increase : t -> thread:int -> string -> int -> unit
val counter : t -> thread:int -> string -> int -> unit
val switch : t -> thread:int -> unit
val gc : t -> duration_ns:int -> unit
val signal : t -> thread:int -> source:int -> unit
val try_read : t -> thread:int -> source:int -> unit
val evtchn_send : t -> thread:int -> port:int -> unit
val evtchn_recv : t -> thread:int -> port:int -> unit

val ring_start : t -> unit
(** RING_START: arg = the header's ring index, string = its name. *)

(** {2 Publishing several records at once} *)

val hold : t -> unit
(** Write the next records without publishing them, until {!release}: records written
    back to back (a resolution and the threads that became it) then cost one release
    store of head and one look at req_event between them, not one each, and the reader
    sees all of them at once, never part of one.  The bytes written are those of the
    records written one by one: only the moments dom0 can see them differ.  Hold only
    across writes, never across code that may wait or run long: a held record is not
    visible until {!release}.  Making room for a record publishes those held first (the
    tail never passes the published head). *)

val release : t -> unit
(** Publish what was written since {!hold} (and notify as each record would have). *)

(** Strings: as in C, a string ends at its first NUL byte and is truncated to
    {!str_max} bytes; the record carries it, a NUL and zero padding to 8 bytes. *)

(** {2 Statistics} *)

val events : t -> int
(** Records written through this [t] (not PAD). *)

val overwritten : t -> int
(** Records dropped from the tail to make room (flight recorder), including PADs. *)

val notifies : t -> int
(** Notifications this [t] asked for (the header's [notifies] counts all writers). *)

val head : t -> int
val tail : t -> int
val seq : t -> int
val data_size : t -> int

val reader_pos : t -> int
(** How far dom0 says it has read (the header's reader_pos; a hint). *)

val req_event : t -> int
(** dom0's wake-up threshold (the header's req_event; 0 until a reader attaches). *)
