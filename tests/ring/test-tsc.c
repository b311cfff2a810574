/*
 * test-tsc.c - the TSC clock end to end in one process: the guest library's calibration
 * (recalibrated on a thread of its own, as a session does), records stamped with raw
 * rdtsc, and the checked decoder converting them with the header's time block.
 *
 * Each record carries its own bracket: CLOCK_MONOTONIC read just before (thread field)
 * and just after (arg field) the rdtsc that stamped it.  The decoded ts must lie inside
 * [before - 1 us, after + 1 us].
 *
 *   test-tsc agree SECONDS   agreement over SECONDS (CI: a few; bench/: 600)
 *   test-tsc header          what a reader refuses or survives in the time block
 *
 * Exits 77 (skipped) where the TSC is not invariant.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "mtrace-guest.h"
#include "ring-reader.h"

#define PAGES     16
#define TOL_NS    1000 /* the promise: within 1 us of CLOCK_MONOTONIC */
#define BURST     256  /* events between drains */
#define PERIOD_MS 100  /* recalibration period (the session's default) */

static _Alignas(4096) uint8_t hdr_page[MTRACE_PAGE_SIZE];
static _Alignas(4096) uint8_t data[PAGES * MTRACE_PAGE_SIZE];

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* dom0's attach: check a private copy of the header, attach over it */
static struct ring_reader *attach(void *hdr, void *d, uint32_t pages, char *err, size_t errlen)
{
	struct mtrace_ring_hdr copy;

	if (ring_hdr_copy(hdr, pages, &copy, NULL, err, errlen) < 0)
		return NULL;
	return ring_reader_attach_copy(hdr, &copy, d, pages, err, errlen);
}

struct cal_thread {
	struct mtrace_tsc_cal cal;
	struct mtrace_ring_hdr *hdr;
	volatile int stop;
	unsigned recals;
};

static void *cal_main(void *arg)
{
	struct cal_thread *c = arg;
	struct timespec d = { 0, PERIOD_MS * 1000000L };

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		nanosleep(&d, NULL);
		mtrace_tsc_recalibrate(&c->cal);
		mtrace_tsc_publish(&c->cal, c->hdr);
		c->recals++;
	}
	return NULL;
}

struct agree {
	uint64_t n, bad;
	int64_t worst;     /* largest distance outside the bracket, ns */
	int64_t worst_mid; /* largest |ts - bracket midpoint|, ns */
	uint64_t widest;   /* widest bracket seen */
	unsigned skipped_wide;
};

static void agree_cb(const struct mtrace_event *e, void *arg)
{
	struct agree *a = arg;
	uint64_t lo = e->thread, hi = e->arg;
	int64_t out = 0, mid;

	if (e->op != MTRACE_OP_READ)
		return;
	a->n++;
	if (hi - lo > a->widest)
		a->widest = hi - lo;
	if (e->ts < lo)
		out = (int64_t)(lo - e->ts);
	else if (e->ts > hi)
		out = (int64_t)(e->ts - hi);
	mid = (int64_t)(e->ts - (lo + (hi - lo) / 2));
	if (mid < 0)
		mid = -mid;
	/* A bracket wider than the tolerance (the thread was preempted between the reads)
	 * cannot judge 1 us: count it, do not use it. */
	if (hi - lo > TOL_NS) {
		a->skipped_wide++;
		return;
	}
	if (mid > a->worst_mid)
		a->worst_mid = mid;
	if (out > a->worst)
		a->worst = out;
	if (out > TOL_NS && a->bad++ < 5)
		fprintf(stderr,
		    "event %" PRIu32 ": ts %" PRIu64 " outside [%" PRIu64 ", %" PRIu64
		    "] by %" PRId64 " ns\n",
		    e->seq, e->ts, lo, hi, out);
}

static int t_agree(double seconds)
{
	struct mtrace_ring r;
	struct cal_thread c = { 0 };
	struct agree a = { 0 };
	char err[128];
	pthread_t th;
	bool more;
	uint64_t t_end, t_start = mono(), next_report;
	struct timespec gap = { 0, 1000000 };

	mtrace_ring_init_local(
	    &r, (struct mtrace_ring_hdr *)hdr_page, data, PAGES, MTRACE_CLOCK_TSC, 0, "tsc");
	if (mtrace_tsc_calibrate(&c.cal, 5000) < 0) {
		printf("tsc: not usable here (%s): skipped\n", strerror(errno));
		return 77;
	}
	c.hdr = r.hdr;
	mtrace_tsc_publish(&c.cal, r.hdr);
	struct ring_reader *rd = attach(r.hdr, data, PAGES, err, sizeof(err));
	if (rd == NULL) {
		fprintf(stderr, "attach: %s\n", err);
		return 1;
	}
	if (ring_reader_info(rd)->clock != MTRACE_CLOCK_MONOTONIC ||
	    ring_reader_info(rd)->source_clock != MTRACE_CLOCK_TSC) {
		fprintf(stderr, "reader clocks %u/%u\n", ring_reader_info(rd)->clock,
		    ring_reader_info(rd)->source_clock);
		return 1;
	}
	if (pthread_create(&th, NULL, cal_main, &c) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	t_end = t_start + (uint64_t)(seconds * 1e9);
	next_report = t_start + 60000000000ull;
	while (mono() < t_end) {
		for (int i = 0; i < BURST; i++) {
			uint64_t lo = mono();
			uint64_t t = mtrace_rdtsc();
			uint64_t hi = mono();
			mtrace_emit_ts(&r, MTRACE_OP_READ, 0, t, lo, hi);
		}
		/* dom0 converts later, with whatever block is current then */
		do
			ring_reader_drain(rd, 4096, agree_cb, &a, &more);
		while (more);
		nanosleep(&gap, NULL);
		if (mono() > next_report) {
			printf("  %.0f s: %" PRIu64 " events, worst outside %" PRId64
			       " ns, worst from midpoint %" PRId64 " ns, %u recalibrations\n",
			    (mono() - t_start) / 1e9, a.n, a.worst, a.worst_mid, c.recals);
			fflush(stdout);
			next_report += 60000000000ull;
		}
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	const struct ring_reader_stats *st = ring_reader_stats(rd);
	printf("tsc agree %.0f s: %" PRIu64 " events (%u with a bracket over 1 us not judged), "
	       "lost %" PRIu64 "; worst outside the bracket %" PRId64 " ns, worst from its "
	       "midpoint %" PRId64 " ns; %u recalibrations, %" PRIu64 " seen by the reader, "
	       "last error %.1f ns, rate %.6f ns/tick\n",
	    seconds, a.n, a.skipped_wide, st->lost, a.worst, a.worst_mid, c.recals,
	    ring_reader_time_updates(rd), c.cal.last_err_ns, c.cal.rate);
	printf("  (command: test-tsc agree %.0f)\n", seconds);
	int rc = 0;
	if (a.bad) {
		fprintf(stderr, "%" PRIu64 " timestamps off CLOCK_MONOTONIC by more than %d ns\n",
		    a.bad, TOL_NS);
		rc = 1;
	}
	if (a.n < 1000 || a.skipped_wide > a.n / 2) {
		fprintf(stderr, "too few events judged (%" PRIu64 ", %u skipped)\n", a.n,
		    a.skipped_wide);
		rc = 1;
	}
	if (seconds >= 1 && ring_reader_time_updates(rd) == 0) {
		fprintf(stderr, "the reader never picked up a recalibration\n");
		rc = 1;
	}
	ring_reader_free(rd);
	return rc;
}

static uint64_t last_ts;
static void last_cb(const struct mtrace_event *e, void *arg)
{
	(void)arg;
	last_ts = e->ts;
}

/* Refusals at attach, and a block the guest keeps scribbling on. */
static int t_header(void)
{
	struct mtrace_ring r;
	struct mtrace_ring_hdr *h = (struct mtrace_ring_hdr *)hdr_page;
	struct ring_reader *rd;
	char err[128] = "";
	bool more;

	/* A hand-made line: 1 ns per tick from tick 1000 = 5000 ns. */
	mtrace_ring_init_local(&r, h, data, PAGES, MTRACE_CLOCK_TSC, 0, "tsc");
	CHECK(h->version == 2, "a TSC header is version 2, not %u", h->version);
	h->time.timeline = MTRACE_CLOCK_MONOTONIC;
	h->time.tsc_timestamp = 1000;
	h->time.system_time = 5000;
	h->time.tsc_to_system_mul = 0x80000000u;
	h->time.tsc_shift = 1;

	h->version = 1;
	CHECK(attach(h, data, PAGES, err, sizeof(err)) == NULL, "v1 + tsc attached");
	CHECK(strstr(err, "unknown clock 4") != NULL, "v1 + tsc: %s", err);
	h->version = 2;
	h->time.timeline = 7;
	CHECK(attach(h, data, PAGES, err, sizeof(err)) == NULL, "timeline 7");
	CHECK(strstr(err, "timeline") != NULL, "timeline 7: %s", err);
	h->time.timeline = MTRACE_CLOCK_MONOTONIC;
	h->version = 3;
	CHECK(attach(h, data, PAGES, err, sizeof(err)) == NULL, "v3 attached");
	h->version = 2;

	rd = attach(h, data, PAGES, err, sizeof(err));
	CHECK(rd != NULL, "attach: %s", err);
	if (rd == NULL)
		return 1;
	mtrace_emit_ts(&r, MTRACE_OP_READ, 0, 3000, 1, 2);
	ring_reader_drain(rd, 100, last_cb, NULL, &more);
	CHECK(last_ts == 7000, "tick 3000 -> %" PRIu64 ", want 7000", last_ts);
	mtrace_emit_ts(&r, MTRACE_OP_READ, 0, 400, 1, 2);
	ring_reader_drain(rd, 100, last_cb, NULL, &more);
	CHECK(last_ts == 4400, "tick 400 (before the base) -> %" PRIu64 ", want 4400", last_ts);

	/* Stuck odd (mid-update forever): the previous block stays, the drain finishes. */
	h->time.seq = 3;
	h->time.system_time = 999999;
	mtrace_emit_ts(&r, MTRACE_OP_READ, 0, 3000, 1, 2);
	ring_reader_drain(rd, 100, last_cb, NULL, &more);
	CHECK(last_ts == 7000, "odd seq: %" PRIu64 ", want the old block's 7000", last_ts);
	CHECK(ring_reader_time_retries(rd) == 1, "retries %" PRIu64, ring_reader_time_retries(rd));
	/* Completed: picked up. */
	h->time.seq = 4;
	mtrace_emit_ts(&r, MTRACE_OP_READ, 0, 3000, 1, 2);
	ring_reader_drain(rd, 100, last_cb, NULL, &more);
	CHECK(last_ts == 999999 + 2000, "even seq: %" PRIu64, last_ts);
	/* Garbage (huge shift, mul): bounded arithmetic, some timestamp, no fault. */
	h->time.tsc_shift = 127;
	h->time.tsc_to_system_mul = UINT32_MAX;
	h->time.seq = 6;
	mtrace_emit_ts(&r, MTRACE_OP_READ, 0, UINT64_MAX, 1, 2);
	ring_reader_drain(rd, 100, last_cb, NULL, &more);
	ring_reader_free(rd);

	/* The library publishes a consistent, even block. */
	struct mtrace_tsc_cal c;
	if (mtrace_tsc_calibrate(&c, 1000) == 0) {
		mtrace_tsc_publish(&c, h);
		CHECK(h->time.seq % 2 == 0 && h->time.seq == 8, "seq %u", h->time.seq);
		CHECK(h->time.tsc_to_system_mul >= 0x80000000u, "mul %#x not normalised",
		    h->time.tsc_to_system_mul);
	}
	/* A monotonic ring stays version 1: readers from before the TSC clock read it. */
	mtrace_ring_init_local(&r, h, data, PAGES, MTRACE_CLOCK_MONOTONIC, 0, "mono");
	CHECK(h->version == 1, "a monotonic header is version 1, not %u", h->version);
	return check_status("header");
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "agree") == 0) {
		if (!mtrace_tsc_invariant()) {
			printf("tsc: not invariant here: skipped\n");
			return 77;
		}
		return t_agree(argc > 2 ? atof(argv[2]) : 3);
	}
	if (argc >= 2 && strcmp(argv[1], "header") == 0)
		return t_header();
	fprintf(stderr, "usage: %s agree [SECONDS] | header\n", argv[0]);
	return 2;
}
