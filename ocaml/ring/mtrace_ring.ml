(* The ring writer: guest/ring.c and the inline half of guest/mtrace-guest.h, in OCaml
   and C.  What a record's bytes are, what is dropped to make room, when head is
   published and when the reader is notified is decided here; the path every record
   takes when it fits (mtrace-guest.h's inline fast path: write it, account its length,
   move head, publish, look at req_event) is one noalloc C call (mtrace_ring_stubs.c)
   over the state both halves share ([st]).  Made of OCaml stores, each reloaded the
   bigarray's data pointer and untagged its index and value, and head, the sequence
   number and the end queue lived in an OCaml record: about 100 instructions a
   record against the C call's 40.  The overwrite, the PAD, attaching and everything
   else stay OCaml. *)

type buffer = (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

external get16 : buffer -> int -> int = "%caml_bigstring_get16u"
external set16 : buffer -> int -> int -> unit = "%caml_bigstring_set16u"
external get32 : buffer -> int -> int32 = "%caml_bigstring_get32u"
external set32 : buffer -> int -> int32 -> unit = "%caml_bigstring_set32u"
external get64 : buffer -> int -> int64 = "%caml_bigstring_get64u"
external set64 : buffer -> int -> int64 -> unit = "%caml_bigstring_set64u"
external swap16 : int -> int = "%bswap16"
external swap32 : int32 -> int32 = "%bswap_int32"
external swap64 : int64 -> int64 = "%bswap_int64"

(* The ABI is little-endian; Sys.big_endian is a compile-time constant. *)
let[@inline] le16 v = if Sys.big_endian then swap16 v else v
let[@inline] le32 v = if Sys.big_endian then swap32 v else v
let[@inline] le64 v = if Sys.big_endian then swap64 v else v

(* The state the C half reads and writes, native ints: slots s_head .. s_held are
   shared (OCaml reads them, and writes them on its slow paths); the rest are the C
   half's own (the addresses of the data area, header page and end queue, and the
   masks), set by [c_bind].  The same numbers as S_* in mtrace_ring_stubs.c. *)
type st = (int, Bigarray.int_elt, Bigarray.c_layout) Bigarray.Array1.t

let s_head = 0 (* end of the last record written *)
and s_pub = 1 (* head as last published: < head while held *)
and s_lim = 2 (* see [set_lim] *)
and s_seq = 3 (* the next record's sequence number *)
and s_qh = 4 (* the end queue's head *)
and s_held = 5 (* 1: records are not published until [release] *)
and s_mask = 9
and s_qmask = 10
and s_clk = 11 (* the clock the C half reads: 0 CLOCK_MONOTONIC, 1 the TSC, 2 none *)
and s_ts = 12 (* the timestamp of a [c_emit*_now] that found no room *)
and s_qt = 13 (* the end queue's tail (the record at the ring's tail) *)
and st_slots = 14

(* the end of every record from tail to head, as written (see [t]) *)
type ends = (int32, Bigarray.int32_elt, Bigarray.c_layout) Bigarray.Array1.t

external c_bind : st -> buffer -> (int[@untagged]) -> buffer -> (int[@untagged]) -> ends -> unit
  = "mtrace_ocaml_ring_bind_byte" "mtrace_ocaml_ring_bind"
  [@@noalloc]

(* Write a record of w land 0xffff bytes (w: len | op lsl 16 | type lsl 24) at head if
   it fits (head + len <= lim), account it, move head and, unless held, publish it:
   0, or 1 if the reader asked to be notified (req_event in the published range);
   -1 if it does not fit (nothing written).  [c_emit_ext] writes two words more (the
   creation site's extension); [c_emit_str] a string, up to its first NUL and at most
   [cap] bytes, its NUL and zero padding (its len is the C half's to compute). *)
external c_emit :
  st -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) = "mtrace_ocaml_emit_byte" "mtrace_ocaml_emit"
  [@@noalloc]

external c_emit_ext :
  st ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) = "mtrace_ocaml_emit_ext_byte" "mtrace_ocaml_emit_ext"
  [@@noalloc]

external c_emit_str :
  st ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  string ->
  (int[@untagged]) ->
  (int[@untagged]) = "mtrace_ocaml_emit_str_byte" "mtrace_ocaml_emit_str"
  [@@noalloc]

(* The same, timestamped with the C half's clock (s_clk 0 or 1; read once, left in s_ts
   if the record did not fit) *)
external c_emit_now :
  st -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "mtrace_ocaml_emit_now_byte" "mtrace_ocaml_emit_now"
  [@@noalloc]

external c_emit_ext_now :
  st ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  (int[@untagged]) = "mtrace_ocaml_emit_ext_now_byte" "mtrace_ocaml_emit_ext_now"
  [@@noalloc]

(* Drop the records at the tail, by the ends queued from s_qt, until tail >= limit:
   the new tail (s_qt moved past them) *)
external c_drop : st -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "mtrace_ocaml_drop_byte" "mtrace_ocaml_drop"
  [@@noalloc]

(* Publish head if it moved since last published: 1 if the reader asked to be notified *)
external c_publish : st -> (int[@untagged]) = "mtrace_ocaml_publish_byte" "mtrace_ocaml_publish"
  [@@noalloc]

external fence_release : unit -> unit = "mtrace_ocaml_fence_release" [@@noalloc]

external monotonic_ns : unit -> (int[@untagged])
  = "mtrace_ocaml_monotonic_ns_byte" "mtrace_ocaml_monotonic_ns"
  [@@noalloc]

external rdtsc : unit -> (int[@untagged]) = "mtrace_ocaml_rdtsc_byte" "mtrace_ocaml_rdtsc"
  [@@noalloc]

(* memchr: a string's bytes up to its first NUL, at most cap *)
external c_str_len : string -> (int[@untagged]) -> (int[@untagged])
  = "mtrace_ocaml_str_len_byte" "mtrace_ocaml_str_len"
  [@@noalloc]

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

(* Constructors are numbered in declaration order, as the C enum. *)
let[@inline] thread_type_code (ty : thread_type) =
  match ty with Unknown -> 99 | _ -> (Obj.magic ty : int)

let thread_none = -1
let clock_monotonic = 1
let clock_xen = 2
let clock_realtime = 3
let clock_tsc = 4
let page_size = 4096
let rec_fixed = 32
let rec_creates_site = 48
let rec_max = 4096
let str_max = rec_max - rec_fixed - 1
let site_name_max = 255
let max_pages = 512
let magic = 0x4352544dl

(* enum mtrace_op *)
let op_creates = 0
and op_read = 1
and op_fulfills = 2
and op_fails = 3
and op_becomes = 4
and op_label = 5
and op_increase = 6
and op_switch = 7
and op_gc = 8
and op_signal = 9
and op_try_read = 10
and op_counter = 11
and op_evtchn_send = 64
and op_evtchn_recv = 65
and op_ring_start = 66
and op_site_name = 68
and op_pad = 255

(* struct mtrace_ring_hdr offsets *)
let h_magic = 0
and h_version = 4
and h_hdr_size = 6
and h_data_pages = 8
and h_clock = 12
and h_ring_index = 16
and h_name = 24
and name_len = 40
and h_head = 128
and h_tail = 136
and h_notifies = 144
and h_req_event = 192

type t = {
  hbuf : buffer;
  hoff : int;
  dbuf : buffer;
  doff : int;
  mask : int;
  st : st;
  mutable tail : int;
  mutable clk : int; (* 0: monotonic_ns, 1: rdtsc, in C; 2: [now] (also in [st]) *)
  mutable now : unit -> int;
  mutable notify : unit -> unit;
  seq0 : int; (* records written: seq - seq0 (one counter less a record) *)
  mutable overwritten : int;
  mutable kicks : int;
  (* The end of every record from tail to head (the low 32 bits of head after it), in
     the order written, while [synced] (always, but for an attached ring whose records
     did not read back whole): the overwrite finds the new tail among these by
     bisection instead of reading each oldest record's length back from the data
     pages, a chain of loads from lines long out of the cache, or adding up lengths
     one record at a time.  Both give the same tail: the records there are the ones
     written here (or, attached, read once by [sync]).  At most size/32 + 2 records
     (none is under 32 bytes but a PAD, one a wrap) fit in the ring: [ends] holds
     size/16.  Its head and tail are [st]'s s_qh and s_qt. *)
  mutable synced : bool;
  ends : ends;
  qmask : int;
}

let[@inline] sget t i = Bigarray.Array1.unsafe_get t.st i
let[@inline] sset t i v = Bigarray.Array1.unsafe_set t.st i v

(* queue a record that ends at [e] *)
let push_end t e =
  let qh = sget t s_qh in
  Bigarray.Array1.unsafe_set t.ends (qh land t.qmask) (Int32.of_int e);
  sset t s_qh (qh + 1)

let set_clk t c =
  t.clk <- c;
  sset t s_clk c

let set_clock t f =
  t.now <- f;
  set_clk t 2

(* the clocks of the C producer as direct noalloc calls (an indirect call through a
   closure otherwise) *)
let[@inline] now t =
  if t.clk = 0 then monotonic_ns () else if t.clk = 1 then rdtsc () else t.now ()
let set_notify t f = t.notify <- f
let clock_id t = Int32.to_int (le32 (get32 t.hbuf (t.hoff + h_clock)))
let events t = sget t s_seq - t.seq0
let overwritten t = t.overwritten
let notifies t = t.kicks
let head t = sget t s_head
let tail t = t.tail
let seq t = sget t s_seq land 0xffff_ffff
let data_size t = t.mask + 1
let nop () = ()

(* mtrace_ring_kick *)
let kick t =
  let o = t.hoff + h_notifies in
  set64 t.hbuf o (le64 (Int64.add (le64 (get64 t.hbuf o)) 1L));
  t.kicks <- t.kicks + 1;
  t.notify ()

(* Publish head (release) and notify iff req_event lies in (published head, head], as
   the C producer's unsigned u64 test (head - req < added).  Several records published
   at once ([hold]) notify as one each would have: the ranges of theirs are disjoint,
   so at most one of them holds req_event, and their union is this range. *)
let publish t = if c_publish t.st <> 0 then kick t

let hold t = sset t s_held 1

let release t =
  sset t s_held 0;
  publish t

let overwrite_slack size =
  let s = size / 32 in
  if s > rec_max then rec_max else s

(* free_space in ring.c: drop whole records from the tail until need bytes fit. *)
let free_space t need =
  let size = t.mask + 1 and head = sget t s_head in
  if head + need - t.tail > size then begin
    let need = if need > size then size else need in
    let mask = t.mask and buf = t.dbuf and doff = t.doff in
    (* head + need - tail > size, as a bound on tail (need <= size: limit <= head) *)
    let limit = head + need - size in
    let tail = ref t.tail and dropped = ref 0 in
    if t.synced then begin
      let q = sget t s_qt in
      tail := c_drop t.st !tail limit;
      dropped := sget t s_qt - q
    end
    else
      while !tail < limit do
        let off = !tail land mask in
        let len = le16 (get16 buf (doff + off)) in
        if len < 8 || len land 7 <> 0 || len > head - !tail || off + len > size then tail := head
        else begin
          tail := !tail + len;
          incr dropped
        end
      done;
    t.overwritten <- t.overwritten + !dropped;
    t.tail <- !tail;
    set64 t.hbuf (t.hoff + h_tail) (le64 (Int64.of_int !tail));
    fence_release ()
  end

(* mtrace_ring_make_room.  Records held back are published first: the tail it moves
   must never pass the published head. *)
let make_room t len =
  publish t;
  let size = t.mask + 1 and head = sget t s_head in
  let off = head land t.mask in
  if off + len > size then begin
    let pad = size - off in
    free_space t pad;
    let o = t.doff + off in
    set16 t.dbuf o (le16 pad);
    set16 t.dbuf (o + 2) (le16 op_pad);
    set32 t.dbuf (o + 4) 0l;
    push_end t (head + pad);
    sset t s_head (head + pad);
    publish t
  end;
  free_space t (len + overwrite_slack size)

(* A record of len bytes fits at head, without overwriting or straddling the end, iff
   head + len <= lim: lim = min (tail + size, the end of head's lap of the data area).
   Set where tail moves or head has crossed a lap's end: here. *)
let set_lim t =
  let size = t.mask + 1 and head = sget t s_head in
  let lap_end = (head land lnot t.mask) + size in
  let full = t.tail + size in
  sset t s_lim (if full < lap_end then full else lap_end)

(* Room for len bytes at head, as the C producer makes it: make_room iff the record
   would overwrite or straddle the end (head + len > lim can also mean only that head
   has reached the end of its lap since lim was set: then nothing is dropped). *)
let room t len =
  let size = t.mask + 1 and head = sget t s_head in
  if head + len - t.tail > size || (head land t.mask) + len > size then make_room t len;
  set_lim t

(* After a C write that returned r <> 0: notify (1), or make room and write it (-1). *)
let[@inline never] emit_slow t r w ts thread arg =
  if r > 0 then kick t
  else begin
    room t (w land 0xffff);
    if c_emit t.st w ts thread arg > 0 then kick t
  end

let[@inline never] emit_ext_slow t r w ts thread arg x0 x1 =
  if r > 0 then kick t
  else begin
    room t (w land 0xffff);
    if c_emit_ext t.st w ts thread arg x0 x1 > 0 then kick t
  end

let[@inline] emit_ts_ty t op ty ts thread arg =
  let w = rec_fixed lor (op lsl 16) lor (ty lsl 24) in
  let r = c_emit t.st w ts thread arg in
  if r <> 0 then emit_slow t r w ts thread arg

(* now, on the C half's clock if it is one of its own *)
let[@inline] emit_ty t op ty thread arg =
  if t.clk = 2 then emit_ts_ty t op ty (t.now ()) thread arg
  else begin
    let w = rec_fixed lor (op lsl 16) lor (ty lsl 24) in
    let r = c_emit_now t.st w thread arg in
    if r <> 0 then emit_slow t r w (sget t s_ts) thread arg
  end

let[@inline] emit t op thread arg = emit_ty t op 0 thread arg
let[@inline] emit_ts t op ts thread arg = emit_ts_ty t op 0 ts thread arg

(* Length of a C string held in s: up to its first NUL, at most cap. *)
let[@inline] str_len s cap = c_str_len s cap

(* mtrace_emit_slow: the string's bytes up to its first NUL (at most cap), a NUL and
   zero padding to 8 bytes *)
let emit_str t op ts thread arg s cap =
  let w = op lsl 16 in
  let r = c_emit_str t.st w ts thread arg s cap in
  if r > 0 then kick t
  else if r < 0 then begin
    room t ((rec_fixed + str_len s cap + 1 + 7) land lnot 7);
    if c_emit_str t.st w ts thread arg s cap > 0 then kick t
  end

let creates t ~thread ~child ~ty = emit_ty t op_creates (thread_type_code ty) thread child

let creates_site t thread child ty kind site =
  let w = rec_creates_site lor (op_creates lsl 16) lor (thread_type_code ty lsl 24) in
  if t.clk = 2 then begin
    let ts = t.now () in
    let r = c_emit_ext t.st w ts thread child site kind in
    if r <> 0 then emit_ext_slow t r w ts thread child site kind
  end
  else begin
    let r = c_emit_ext_now t.st w thread child site kind in
    if r <> 0 then emit_ext_slow t r w (sget t s_ts) thread child site kind
  end

let creates_named t ~thread ~child ~ty ~site = creates_site t thread child ty 1 site
let creates_pc t ~thread ~child ~ty ~pc = creates_site t thread child ty 0 pc

let site_name t ~site name =
  emit_str t op_site_name (now t) thread_none site name site_name_max

let read t ~thread ~source = emit t op_read thread source
let fulfills t ~thread ~resolvee = emit t op_fulfills thread resolvee

let fails t ~thread ~resolvee exn =
  emit_str t op_fails (now t) thread resolvee exn str_max

let fulfills_ts t ~ts ~thread ~resolvee = emit_ts t op_fulfills ts thread resolvee

let fails_ts t ~ts ~thread ~resolvee exn =
  emit_str t op_fails ts thread resolvee exn str_max

let becomes t ~thread ~other = emit t op_becomes thread other
let label t ~thread s = emit_str t op_label (now t) thread 0 s str_max

let increase t ~thread name amount =
  emit_str t op_increase (now t) thread amount name str_max

let counter t ~thread name value =
  emit_str t op_counter (now t) thread value name str_max

let switch t ~thread = emit t op_switch thread 0
let gc t ~duration_ns = emit t op_gc thread_none duration_ns
let signal t ~thread ~source = emit t op_signal thread source
let try_read t ~thread ~source = emit t op_try_read thread source
let evtchn_send t ~thread ~port = emit t op_evtchn_send thread (port land 0xffff_ffff)
let evtchn_recv t ~thread ~port = emit t op_evtchn_recv thread (port land 0xffff_ffff)

let ring_start t =
  let name = Cstruct.to_string (Cstruct.of_bigarray ~off:(t.hoff + h_name) ~len:name_len t.hbuf) in
  let index = Int32.to_int (le32 (get32 t.hbuf (t.hoff + h_ring_index))) land 0xffff_ffff in
  emit_str t op_ring_start (now t) thread_none index name (name_len - 1)

let check_pages data =
  let len = Cstruct.length data in
  let pages = len / page_size in
  if len mod page_size <> 0 || pages < 1 || pages > max_pages || pages land (pages - 1) <> 0 then
    invalid_arg "Mtrace_ring: data must be a power of two of pages (1..512)";
  pages

let make ~synced ~hdr ~data ~head ~tail ~seq =
  if Cstruct.length hdr < page_size then invalid_arg "Mtrace_ring: hdr must be one page";
  let pages = check_pages data in
  let size = pages * page_size in
  let st = Bigarray.Array1.create Bigarray.int Bigarray.c_layout st_slots in
  Bigarray.Array1.fill st 0;
  let ends = Bigarray.Array1.create Bigarray.int32 Bigarray.c_layout (size / 16) in
  let t =
    {
      hbuf = hdr.Cstruct.buffer;
      hoff = hdr.Cstruct.off;
      dbuf = data.Cstruct.buffer;
      doff = data.Cstruct.off;
      mask = size - 1;
      st;
      tail;
      clk = 0;
      now = monotonic_ns;
      notify = nop;
      seq0 = seq;
      overwritten = 0;
      kicks = 0;
      synced;
      ends;
      qmask = (size / 16) - 1;
    }
  in
  (* lim 0: the first record finds no room and sets it ([room]) *)
  sset t s_head head;
  sset t s_pub head;
  sset t s_seq seq;
  sset t s_mask t.mask;
  sset t s_qmask t.qmask;
  c_bind st t.hbuf t.hoff t.dbuf t.doff ends;
  t

let init ?(clock_id = clock_monotonic) ?(index = 0) ?(name = "") ~hdr ~data () =
  let pages = check_pages data in
  if Cstruct.length hdr < page_size then invalid_arg "Mtrace_ring: hdr must be one page";
  let hdr = Cstruct.sub hdr 0 page_size in
  Cstruct.memset hdr 0;
  Cstruct.memset data 0;
  let clock_id = if clock_id = 0 then clock_monotonic else clock_id in
  Cstruct.LE.set_uint32 hdr h_magic magic;
  Cstruct.LE.set_uint16 hdr h_version (if clock_id = clock_tsc then 2 else 1);
  Cstruct.LE.set_uint16 hdr h_hdr_size 256;
  Cstruct.LE.set_uint32 hdr h_data_pages (Int32.of_int pages);
  Cstruct.LE.set_uint32 hdr h_clock (Int32.of_int clock_id);
  Cstruct.LE.set_uint32 hdr h_ring_index (Int32.of_int index);
  let n = str_len name (name_len - 1) in
  Cstruct.blit_from_string name 0 hdr h_name n;
  let t = make ~synced:true ~hdr ~data ~head:0 ~tail:0 ~seq:0 in
  if clock_id = clock_tsc then begin
    t.now <- rdtsc;
    set_clk t 1
  end;
  t

(* The lengths of the records already between tail and head (those mtrace_guest_open's C
   wrote, or a previous writer's), validated as free_space validates them; if any is not
   a whole record, or more than [ends] holds, the overwrite reads the pages instead. *)
let sync t =
  let size = t.mask + 1 and head = sget t s_head in
  let pos = ref t.tail and ok = ref (head - t.tail <= size && t.tail <= head) in
  while !ok && !pos < head do
    let off = !pos land t.mask in
    let len = le16 (get16 t.dbuf (t.doff + off)) in
    if len < 8 || len land 7 <> 0 || len > head - !pos || off + len > size
       || sget t s_qh - sget t s_qt > t.qmask
    then ok := false
    else begin
      push_end t (!pos + len);
      pos := !pos + len
    end
  done;
  t.synced <- !ok

let attach ?(seq = 0) ~hdr ~data () =
  let pages = check_pages data in
  if Cstruct.length hdr < page_size then invalid_arg "Mtrace_ring: hdr must be one page";
  if Cstruct.LE.get_uint32 hdr h_magic <> magic then invalid_arg "Mtrace_ring.attach: bad magic";
  if Cstruct.LE.get_uint32 hdr h_data_pages <> Int32.of_int pages then
    invalid_arg "Mtrace_ring.attach: data_pages does not match data";
  let head = Int64.to_int (Cstruct.LE.get_uint64 hdr h_head) in
  let tail = Int64.to_int (Cstruct.LE.get_uint64 hdr h_tail) in
  let t = make ~synced:false ~hdr ~data ~head ~tail ~seq in
  sync t;
  if clock_id t = clock_tsc then begin
    t.now <- rdtsc;
    set_clk t 1
  end;
  t

let reader_pos t = Int64.to_int (le64 (get64 t.hbuf (t.hoff + 200)))
let req_event t = Int64.to_int (le64 (get64 t.hbuf (t.hoff + h_req_event)))
