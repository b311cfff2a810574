/*
 * bench_c_stubs.c - the C producer's loops and the thread CPU clock for bench_ring.ml,
 * so that one process times the OCaml writer and the C producer (guest/ring.c and the
 * inline mtrace-guest.h, as bench/ring/bench-ring.c does) side by side.
 */
#include <time.h>

#include <caml/alloc.h>
#include <caml/mlvalues.h>

#include "mtrace-guest.h"

static _Alignas(4096) uint8_t hdr_page[MTRACE_PAGE_SIZE];
static _Alignas(4096) uint8_t data[MTRACE_RING_MAX_PAGES * MTRACE_PAGE_SIZE];

/* Timed on this thread's CPU clock: the machine is shared. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

value bench_cpu_now(value unit)
{
	(void)unit;
	return caml_copy_double(cpu_now());
}

/* ns per event of the C producer, flight recorder flat out: what 0 read with the
 * clock, 1 read without it (explicit ts), 2 CREATES with a named site and the clock. */
value bench_c_producer(value what, value n_v, value pages_v)
{
	struct mtrace_ring r;
	uint64_t n = (uint64_t)Long_val(n_v);
	double t0;

	mtrace_ring_init_local(&r, (struct mtrace_ring_hdr *)hdr_page, data,
	    (uint32_t)Long_val(pages_v), MTRACE_CLOCK_MONOTONIC, 0, "b");
	t0 = cpu_now();
	switch (Int_val(what)) {
	case 0:
		for (uint64_t i = 0; i < n; i++)
			mtrace_read(&r, i, i + 1);
		break;
	case 1:
		for (uint64_t i = 0; i < n; i++)
			mtrace_emit_ts(&r, MTRACE_OP_READ, 0, i, i, i + 1);
		break;
	default:
		for (uint64_t i = 0; i < n; i++)
			mtrace_creates_named(&r, i, i + 1, MTRACE_TT_TASK, 7);
		break;
	}
	return caml_copy_double((cpu_now() - t0) * 1e9 / (double)n);
}
