/*
 * bench-ring.c - producer cost per event (with and without the timestamp) and decoder
 * throughput per core (drain + trivial callback).  Single process, local memory:
 * the same code the guest and mtraced run, minus Xen.  Prints one figure a line with
 * the command that reproduces it.  Median of RUNS runs, in thread CPU time.
 *
 * usage: bench-ring [-n EVENTS] [-r RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtrace-guest.h"
#include "ring-reader.h"

/*
 * Timed on this thread's CPU clock: the machine is shared (load often far above
 * its 2 cores), and wall time would mostly measure other people's work.
 */
static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

static _Alignas(4096) uint8_t hdr_page[MTRACE_PAGE_SIZE];
static _Alignas(4096) uint8_t data[MTRACE_RING_MAX_PAGES * MTRACE_PAGE_SIZE];
static volatile uint64_t sink;

static void
cb(const struct mtrace_event *e, void *arg)
{
	(void)arg;
	sink += e->arg;
}

/* Flight recorder flat out (nobody reads): includes the overwrite slow path. */
static double
producer(uint64_t n, bool ts, uint32_t pages, uint32_t clock)
{
	struct mtrace_ring r;
	mtrace_ring_init_local(&r, (struct mtrace_ring_hdr *)hdr_page, data, pages, clock, 0, "b");
	double t0 = now();
	if (ts) {
		for (uint64_t i = 0; i < n; i++)
			mtrace_read(&r, i, i + 1);
	} else {
		for (uint64_t i = 0; i < n; i++)
			mtrace_emit_ts(&r, MTRACE_OP_READ, 0, i, i, i + 1);
	}
	return (now() - t0) * 1e9 / (double)n;
}

static double
clock_cost(uint64_t n)
{
	struct timespec ts;
	double t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (uint64_t)ts.tv_nsec;
	}
	return (now() - t0) * 1e9 / (double)n;
}

static double
rdtsc_cost(uint64_t n)
{
	double t0 = now();
	for (uint64_t i = 0; i < n; i++)
		sink += mtrace_rdtsc();
	return (now() - t0) * 1e9 / (double)n;
}

/* Fill 2 MiB, drain it all (timed), repeat until n events were decoded. */
static double
decoder(uint64_t n, const struct mtrace_tsc_cal *tsc)
{
	struct mtrace_ring r;
	const uint32_t pages = MTRACE_RING_MAX_PAGES;
	/* half the ring: the producer frees a little ahead (overwrite slack) */
	uint64_t per_fill = (uint64_t)pages * MTRACE_PAGE_SIZE / MTRACE_REC_FIXED / 2;
	uint64_t done = 0;
	double t = 0;

	mtrace_ring_init_local(&r, (struct mtrace_ring_hdr *)hdr_page, data, pages,
			       tsc ? MTRACE_CLOCK_TSC : 0, 0, "b");
	if (tsc != NULL)
		mtrace_tsc_publish(tsc, (struct mtrace_ring_hdr *)hdr_page);
	struct mtrace_ring_hdr hc;
	struct ring_reader *rd = NULL;
	if (ring_hdr_copy(hdr_page, pages, &hc, NULL, NULL, 0) == 0)
		rd = ring_reader_attach_copy(hdr_page, &hc, data, pages, NULL, 0);
	while (done < n) {
		for (uint64_t i = 0; i < per_fill; i++)
			mtrace_emit_ts(&r, MTRACE_OP_READ, 0, i, i, i + 1);
		double t0 = now();
		bool more = true;
		while (more)
			done += ring_reader_drain(rd, 1u << 20, cb, NULL, &more);
		t += now() - t0;
	}
	const struct ring_reader_stats *st = ring_reader_stats(rd);
	if (st->lost || st->corrupt)
		fprintf(stderr, "bench-ring: decoder lost %llu corrupt %llu\n",
			(unsigned long long)st->lost, (unsigned long long)st->corrupt);
	ring_reader_free(rd);
	return (double)done / t;
}

int
main(int argc, char **argv)
{
	uint64_t n = 50000000;
	int runs = 5;
	double v[3][32], c[32], tp[32], tc[32], td[32];
	struct mtrace_tsc_cal tsc;
	bool have_tsc = mtrace_tsc_calibrate(&tsc, 5000) == 0;
	char cmd[256];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-n") == 0)
			n = strtoull(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "-r") == 0)
			runs = atoi(argv[i + 1]);
	}
	if (runs < 1 || runs > 32 || n < 1000) {
		fprintf(stderr, "usage: %s [-n EVENTS>=1000] [-r RUNS 1..32]\n", argv[0]);
		return 2;
	}
	snprintf(cmd, sizeof(cmd), "%s -n %llu -r %d", argv[0], (unsigned long long)n, runs);
	for (int k = 0; k < runs; k++) {
		v[0][k] = producer(n, false, 16, 0);
		v[1][k] = producer(n / 5, true, 16, 0);
		c[k] = clock_cost(n / 5);
		v[2][k] = decoder(n, NULL);
		if (have_tsc) {
			tp[k] = producer(n / 5, true, 16, MTRACE_CLOCK_TSC);
			tc[k] = rdtsc_cost(n / 5);
			td[k] = decoder(n, &tsc);
		}
	}
	double p0 = median(v[0], runs), p1 = median(v[1], runs), cc = median(c, runs);
	double d = median(v[2], runs);
	printf("ring producer, no timestamp:        %6.2f ns/event   (%s)\n", p0, cmd);
	printf("ring producer, CLOCK_MONOTONIC ts:   %6.2f ns/event   (%s)\n", p1, cmd);
	printf("clock_gettime(CLOCK_MONOTONIC) alone: %5.2f ns          (%s)\n", cc, cmd);
	printf("ring producer beyond the clock read: %6.2f ns/event   (%s)\n", p1 - cc, cmd);
	if (have_tsc) {
		double t1 = median(tp, runs);
		printf("ring producer, TSC clock ts:         %6.2f ns/event   (%s)\n", t1, cmd);
		printf("rdtsc alone:                          %5.2f ns          (%s)\n",
		       median(tc, runs), cmd);
		printf("ring producer, TSC vs CLOCK_MONOTONIC: %.2fx cheaper per whole event\n",
		       p1 / t1);
	} else {
		printf("ring producer, TSC clock ts:         n/a (TSC not invariant here)\n");
	}
	printf("ring decoder, drain + callback:      %6.1f M events/s per core   (%s)\n",
	       d / 1e6, cmd);
	if (have_tsc)
		printf("ring decoder, TSC ticks converted:   %6.1f M events/s per core   (%s)\n",
		       median(td, runs) / 1e6, cmd);
	printf("(16-page ring overwritten flat out for the producer; 2 MiB windows for the decoder;"
	       " medians of %d runs, thread CPU time)\n", runs);
	return 0;
}
