/*
 * mtrace_ring_stubs.c - what the OCaml ring writer cannot say in OCaml: the release
 * store that publishes head, the release fence after a tail move, and the clocks.
 * All are [@@noalloc] with untagged ints: no allocation, no runtime lock.
 */
#include <stdint.h>
#include <time.h>

#include <caml/bigarray.h>
#include <caml/mlvalues.h>

/* The writer's bytes are visible before the head that covers them (mtrace_rec_publish). */
void mtrace_ocaml_store_release(value buf, intnat off, intnat v)
{
	uint64_t *p = (uint64_t *)((uint8_t *)Caml_ba_data_val(buf) + off);
	__atomic_store_n(p, (uint64_t)v, __ATOMIC_RELEASE);
}

value mtrace_ocaml_store_release_byte(value buf, value off, value v)
{
	mtrace_ocaml_store_release(buf, Long_val(off), Long_val(v));
	return Val_unit;
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
