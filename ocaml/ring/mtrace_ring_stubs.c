/*
 * mtrace_ring_stubs.c - the C half of the OCaml ring writer (mtrace_ring.ml): the path
 * every record takes when it fits - mtrace-guest.h's inline fast path: write it at
 * head, queue its length, move head, publish it (release store), look at req_event -
 * over the state the OCaml half shares with it (an int Bigarray, slots S_*); and what
 * OCaml cannot say: the release fence after a tail move, the clocks, a string's length
 * to its first NUL.  The OCaml half decides everything else (making room, PAD,
 * overwrite, notification, attach).  All are [@@noalloc] with untagged ints: no
 * allocation, no runtime lock.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <caml/bigarray.h>
#include <caml/mlvalues.h>

/* The slots of the shared state: the same numbers as s_* in mtrace_ring.ml. */
enum {
	S_HEAD,  /* end of the last record written */
	S_PUB,   /* head as last published */
	S_LIM,   /* a record of len bytes fits at head iff head + len <= lim */
	S_SEQ,   /* the next record's sequence number */
	S_QH,    /* the end queue's head */
	S_HELD,  /* 1: written records are not published until the OCaml half says */
	S_DATA,  /* the address of the data area */
	S_HDR,   /* the address of the header page */
	S_ENDS,  /* the address of the end queue (u32) */
	S_MASK,  /* data size - 1 */
	S_QMASK, /* end queue entries - 1 */
	S_CLK,   /* 0: CLOCK_MONOTONIC, 1: the TSC, 2: the OCaml half's */
	S_TS,    /* the timestamp of an _now call that found no room */
	S_QT,    /* the end queue's tail */
};

#define HDR_HEAD      128
#define HDR_REQ_EVENT 192
#define REC_FIXED     32

/* The ABI is little-endian (proto/mtrace-ring.h). */
static inline uint64_t le64(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

/* The data area is as aligned as the OCaml half's Cstruct offset makes it. */
static inline void put64(uint8_t *p, uint64_t v)
{
	v = le64(v);
	memcpy(p, &v, sizeof(v));
}

static inline intnat *state(value st)
{
	return (intnat *)Caml_ba_data_val(st);
}

static inline intnat monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (intnat)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline intnat rdtsc63(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* 63 bits of ticks: centuries at any real rate */
	return (intnat)(__builtin_ia32_rdtsc() & INT64_MAX);
#else
	return 0;
#endif
}

/* The addresses the fast path writes to: the bigarrays do not move (Cstruct buffers
 * and the queue are outside the OCaml heap), and the OCaml half's ring keeps them. */
value mtrace_ocaml_ring_bind(value st, value hbuf, intnat hoff, value dbuf, intnat doff, value ends)
{
	intnat *s = state(st);

	s[S_HDR] = (intnat)((uint8_t *)Caml_ba_data_val(hbuf) + hoff);
	s[S_DATA] = (intnat)((uint8_t *)Caml_ba_data_val(dbuf) + doff);
	s[S_ENDS] = (intnat)Caml_ba_data_val(ends);
	return Val_unit;
}

value mtrace_ocaml_ring_bind_byte(value *argv, int argn)
{
	(void)argn;
	return mtrace_ocaml_ring_bind(
	    argv[0], argv[1], Long_val(argv[2]), argv[3], Long_val(argv[4]), argv[5]);
}

/*
 * Publish head if it moved: the writer's bytes are visible before the head that covers
 * them (mtrace_rec_publish); then 1 iff req_event lies in (published head, head], the C
 * producer's unsigned test.  No full barrier between the two (docs/ring-protocol.md,
 * section 6).
 */
static inline intnat publish(intnat *s)
{
	uint8_t *h = (uint8_t *)s[S_HDR];
	uint64_t head = (uint64_t)s[S_HEAD], added = head - (uint64_t)s[S_PUB];
	uint64_t req;

	if (added == 0)
		return 0;
	s[S_PUB] = (intnat)head;
	__atomic_store_n((uint64_t *)(h + HDR_HEAD), le64(head), __ATOMIC_RELEASE);
	req = le64(__atomic_load_n((uint64_t *)(h + HDR_REQ_EVENT), __ATOMIC_RELAXED));
	return head - req < added;
}

/*
 * free_space's drop (the OCaml half decides how far): the end of the first queued
 * record that ends at or past limit is the new tail, found by bisection rather than
 * record by record.  The queue holds each record's end, the low 32 bits of the head
 * after it, increasing; the records queued span at most the ring (2 MiB), so a
 * difference of two of them, or of one and limit (limit <= head, > tail), as int32
 * is their true difference.  S_QT moves past the records dropped.
 */
intnat mtrace_ocaml_drop(value st, intnat tail, intnat limit)
{
	intnat *s = state(st);
	const uint32_t *ends = (const uint32_t *)s[S_ENDS];
	intnat lo = s[S_QT], hi = s[S_QH] - 1, qmask = s[S_QMASK];

	if (tail >= limit || lo > hi)
		return tail;
	/* the first q in [lo, hi] whose end is >= limit (hi's is: it ends at head) */
	while (lo < hi) {
		intnat mid = lo + (hi - lo) / 2;

		if ((int32_t)(ends[mid & qmask] - (uint32_t)limit) >= 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	s[S_QT] = lo + 1;
	return tail + (intnat)(uint32_t)(ends[lo & qmask] - (uint32_t)tail);
}

value mtrace_ocaml_drop_byte(value st, value tail, value limit)
{
	return Val_long(mtrace_ocaml_drop(st, Long_val(tail), Long_val(limit)));
}

intnat mtrace_ocaml_publish(value st)
{
	return publish(state(st));
}

value mtrace_ocaml_publish_byte(value st)
{
	return Val_long(mtrace_ocaml_publish(st));
}

/*
 * The start of a record of len = w & 0xffff bytes at head, its fixed part written (len,
 * op and type from w, the sequence number, ts, thread, arg as u64: -1 is
 * MTRACE_THREAD_NONE) and its end queued; NULL if it does not fit.
 */
static inline uint8_t *reserve(intnat *s, intnat w, intnat ts, intnat thread, intnat arg)
{
	intnat head = s[S_HEAD], len = w & 0xffff;
	uint8_t *p;

	if (head + len > s[S_LIM])
		return NULL;
	p = (uint8_t *)s[S_DATA] + (head & s[S_MASK]);
	put64(p, (uint64_t)(uint32_t)w | (uint64_t)(uint32_t)s[S_SEQ] << 32);
	put64(p + 8, (uint64_t)ts);
	put64(p + 16, (uint64_t)thread);
	put64(p + 24, (uint64_t)arg);
	s[S_SEQ]++;
	((uint32_t *)s[S_ENDS])[s[S_QH] & s[S_QMASK]] = (uint32_t)(head + len);
	s[S_QH]++;
	return p;
}

/* head past the record, published unless held: 1 iff the reader is to be notified */
static inline intnat finish(intnat *s, intnat len)
{
	s[S_HEAD] += len;
	return s[S_HELD] ? 0 : publish(s);
}

intnat mtrace_ocaml_emit(value st, intnat w, intnat ts, intnat thread, intnat arg)
{
	intnat *s = state(st);

	if (reserve(s, w, ts, thread, arg) == NULL)
		return -1;
	return finish(s, w & 0xffff);
}

value mtrace_ocaml_emit_byte(value st, value w, value ts, value thread, value arg)
{
	return Val_long(
	    mtrace_ocaml_emit(st, Long_val(w), Long_val(ts), Long_val(thread), Long_val(arg)));
}

/*
 * The _now calls: timestamped with S_CLK's clock, the timestamp kept in S_TS if the
 * record does not fit (the OCaml half makes room and writes it with that one).  The
 * CLOCK_MONOTONIC read is out of line: its timespec gives the TSC path a stack frame
 * (and a stack protector) otherwise.
 */
static inline intnat emit_at(intnat *s, intnat w, intnat ts, intnat thread, intnat arg)
{
	if (reserve(s, w, ts, thread, arg) == NULL) {
		s[S_TS] = ts;
		return -1;
	}
	return finish(s, w & 0xffff);
}

static __attribute__((noinline)) intnat emit_monotonic(
    intnat *s, intnat w, intnat thread, intnat arg)
{
	return emit_at(s, w, monotonic_ns(), thread, arg);
}

intnat mtrace_ocaml_emit_now(value st, intnat w, intnat thread, intnat arg)
{
	intnat *s = state(st);

	if (s[S_CLK] == 1)
		return emit_at(s, w, rdtsc63(), thread, arg);
	return emit_monotonic(s, w, thread, arg);
}

value mtrace_ocaml_emit_now_byte(value st, value w, value thread, value arg)
{
	return Val_long(mtrace_ocaml_emit_now(st, Long_val(w), Long_val(thread), Long_val(arg)));
}

/* ... with two words more after the fixed part (a creates record's site extension) */
intnat mtrace_ocaml_emit_ext(
    value st, intnat w, intnat ts, intnat thread, intnat arg, intnat x0, intnat x1)
{
	intnat *s = state(st);
	uint8_t *p = reserve(s, w, ts, thread, arg);

	if (p == NULL)
		return -1;
	put64(p + REC_FIXED, (uint64_t)x0);
	put64(p + REC_FIXED + 8, (uint64_t)x1);
	return finish(s, w & 0xffff);
}

value mtrace_ocaml_emit_ext_byte(value *argv, int argn)
{
	(void)argn;
	return Val_long(mtrace_ocaml_emit_ext(argv[0], Long_val(argv[1]), Long_val(argv[2]),
	    Long_val(argv[3]), Long_val(argv[4]), Long_val(argv[5]), Long_val(argv[6])));
}

static inline intnat emit_ext_at(
    intnat *s, intnat w, intnat ts, intnat thread, intnat arg, intnat x0, intnat x1)
{
	uint8_t *p = reserve(s, w, ts, thread, arg);

	if (p == NULL) {
		s[S_TS] = ts;
		return -1;
	}
	put64(p + REC_FIXED, (uint64_t)x0);
	put64(p + REC_FIXED + 8, (uint64_t)x1);
	return finish(s, w & 0xffff);
}

static __attribute__((noinline)) intnat emit_ext_monotonic(
    intnat *s, intnat w, intnat thread, intnat arg, intnat x0, intnat x1)
{
	return emit_ext_at(s, w, monotonic_ns(), thread, arg, x0, x1);
}

intnat mtrace_ocaml_emit_ext_now(
    value st, intnat w, intnat thread, intnat arg, intnat x0, intnat x1)
{
	intnat *s = state(st);

	if (s[S_CLK] == 1)
		return emit_ext_at(s, w, rdtsc63(), thread, arg, x0, x1);
	return emit_ext_monotonic(s, w, thread, arg, x0, x1);
}

value mtrace_ocaml_emit_ext_now_byte(value *argv, int argn)
{
	(void)argn;
	return Val_long(mtrace_ocaml_emit_ext_now(argv[0], Long_val(argv[1]), Long_val(argv[2]),
	    Long_val(argv[3]), Long_val(argv[4]), Long_val(argv[5])));
}

/* The bytes of s before its first NUL, at most cap (a C string's length, truncated). */
intnat mtrace_ocaml_str_len(value s, intnat cap)
{
	size_t n = caml_string_length(s);
	const char *p = String_val(s);
	const char *nul;

	if (cap < 0)
		cap = 0;
	if (n > (size_t)cap)
		n = (size_t)cap;
	nul = memchr(p, 0, n);
	return nul ? (intnat)(nul - p) : (intnat)n;
}

value mtrace_ocaml_str_len_byte(value s, value cap)
{
	return Val_long(mtrace_ocaml_str_len(s, Long_val(cap)));
}

/*
 * ... with a string after the fixed part (mtrace_emit_slow): str up to its first NUL and
 * at most cap bytes, then a NUL and zero padding to 8 bytes.  w carries op and type;
 * the record's length is the string's.  The last 8 bytes are zeroed before the string
 * is copied over the start of them: its NUL and padding (1..8 bytes) lie in them.
 */
intnat mtrace_ocaml_emit_str(
    value st, intnat w, intnat ts, intnat thread, intnat arg, value str, intnat cap)
{
	intnat *s = state(st);
	intnat n = mtrace_ocaml_str_len(str, cap);
	intnat len = (REC_FIXED + n + 1 + 7) & ~(intnat)7;
	uint8_t *p = reserve(s, (w & ~(intnat)0xffff) | len, ts, thread, arg);

	if (p == NULL)
		return -1;
	put64(p + len - 8, 0);
	memcpy(p + REC_FIXED, String_val(str), (size_t)n);
	return finish(s, len);
}

value mtrace_ocaml_emit_str_byte(value *argv, int argn)
{
	(void)argn;
	return Val_long(mtrace_ocaml_emit_str(argv[0], Long_val(argv[1]), Long_val(argv[2]),
	    Long_val(argv[3]), Long_val(argv[4]), argv[5], Long_val(argv[6])));
}

/* free_space: the tail store is ordered before the overwriting bytes. */
value mtrace_ocaml_fence_release(value unit)
{
	(void)unit;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return Val_unit;
}

intnat mtrace_ocaml_monotonic_ns(value unit)
{
	(void)unit;
	return monotonic_ns();
}

value mtrace_ocaml_monotonic_ns_byte(value unit)
{
	return Val_long(mtrace_ocaml_monotonic_ns(unit));
}

intnat mtrace_ocaml_rdtsc(value unit)
{
	(void)unit;
	return rdtsc63();
}

value mtrace_ocaml_rdtsc_byte(value unit)
{
	return Val_long(mtrace_ocaml_rdtsc(unit));
}
