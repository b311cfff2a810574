/*
 * mtrace_ring_stubs.c - what the OCaml ring writer cannot say in OCaml: the release
 * store that publishes head, the release fence after a tail move, and the clocks; and
 * what it says slower: the stores of a record's fixed part (each OCaml store reloads
 * the bigarray's data pointer and untags its index and value), a string's length to
 * its first NUL (memchr) and its copy into the ring (memcpy).
 * All are [@@noalloc] with untagged ints: no allocation, no runtime lock.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <caml/bigarray.h>
#include <caml/mlvalues.h>

/* The ABI is little-endian (proto/mtrace-ring.h). */
static inline uint64_t le64(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

/*
 * Publish head: the writer's bytes are visible before the head that covers them
 * (mtrace_rec_publish); then 1 iff req_event lies in (head - added, head], the C
 * producer's unsigned test.  No full barrier between the two (docs/ring-protocol.md,
 * section 6).
 */
intnat mtrace_ocaml_publish(value hbuf, intnat hoff, intnat head, intnat added)
{
	uint8_t *h = (uint8_t *)Caml_ba_data_val(hbuf) + hoff;
	uint64_t req;

	__atomic_store_n((uint64_t *)(h + 128), le64((uint64_t)head), __ATOMIC_RELEASE);
	req = le64(__atomic_load_n((uint64_t *)(h + 192), __ATOMIC_RELAXED));
	return (uint64_t)head - req < (uint64_t)added;
}

value mtrace_ocaml_publish_byte(value hbuf, value hoff, value head, value added)
{
	return Val_long(mtrace_ocaml_publish(hbuf, Long_val(hoff), Long_val(head), Long_val(added)));
}

/*
 * A record's fixed part at off: len, op and type in w's low 32 bits, seq's low 32 bits
 * above them; ts, thread, arg as u64 (sign-extended: -1 is MTRACE_THREAD_NONE).
 */
value mtrace_ocaml_put_fixed(value buf, intnat off, intnat w, intnat seq, intnat ts, intnat thread,
			     intnat arg)
{
	uint64_t *p = (uint64_t *)((uint8_t *)Caml_ba_data_val(buf) + off);

	p[0] = le64((uint64_t)(uint32_t)w | (uint64_t)(uint32_t)seq << 32);
	p[1] = le64((uint64_t)ts);
	p[2] = le64((uint64_t)thread);
	p[3] = le64((uint64_t)arg);
	return Val_unit;
}

value mtrace_ocaml_put_fixed_byte(value *argv, int argn)
{
	(void)argn;
	return mtrace_ocaml_put_fixed(argv[0], Long_val(argv[1]), Long_val(argv[2]), Long_val(argv[3]),
				      Long_val(argv[4]), Long_val(argv[5]), Long_val(argv[6]));
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
	struct timespec ts;

	(void)unit;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (intnat)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

value mtrace_ocaml_monotonic_ns_byte(value unit)
{
	return Val_long(mtrace_ocaml_monotonic_ns(unit));
}

intnat mtrace_ocaml_rdtsc(value unit)
{
	(void)unit;
#if defined(__x86_64__) || defined(__i386__)
	/* 63 bits of ticks: centuries at any real rate */
	return (intnat)(__builtin_ia32_rdtsc() & INT64_MAX);
#else
	return 0;
#endif
}

value mtrace_ocaml_rdtsc_byte(value unit)
{
	return Val_long(mtrace_ocaml_rdtsc(unit));
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

/* The first len bytes of s (len <= its length: the caller's str_len) at off in buf. */
value mtrace_ocaml_blit_string(value s, value buf, intnat off, intnat len)
{
	memcpy((uint8_t *)Caml_ba_data_val(buf) + off, String_val(s), (size_t)len);
	return Val_unit;
}

value mtrace_ocaml_blit_string_byte(value s, value buf, value off, value len)
{
	return mtrace_ocaml_blit_string(s, buf, Long_val(off), Long_val(len));
}
