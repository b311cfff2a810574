/*
 * xentime.c - unit tests of xenif/xen-time.c: pvclock's conversion and seqlock, and the
 * runstate bounds on made-up vCPU histories whose Xen time is known (a vCPU that runs,
 * blocks, waits and runs again as Xen would account it), so that every bound can be
 * held against the truth.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "xen-time.h"

static void pvclock_convert(void)
{
	/* 1 ns a tick: mul 0.5 after a shift of 1 */
	struct xentime_pvclock p = { .tsc_timestamp = 1000,
		.system_time = 1000000000,
		.tsc_to_system_mul = 1u << 31,
		.tsc_shift = 1 };

	CHECK(xentime_pvclock_ns(&p, 6000) == 1000005000u);
	CHECK(xentime_pvclock_ns(&p, 1000) == 1000000000u);
	/* a TSC read a little before the block's own counts backwards, not 2^64 ahead */
	CHECK(xentime_pvclock_ns(&p, 400) == 999999400u);
	/* 2.6 GHz as Xen writes it (rate < 1: shift -1 or -2, mul in [2^31, 2^32)) */
	double rate = 1 / 2.6;
	int shift = 0;
	while (rate < 0.5) {
		rate *= 2;
		shift--;
	}
	p.tsc_shift = (int8_t)shift;
	p.tsc_to_system_mul = (uint32_t)llround(rate * 4294967296.0);
	uint64_t ticks = 2600000000ull * 3; /* three seconds */
	uint64_t ns = xentime_pvclock_ns(&p, 1000 + ticks) - 1000000000u;
	CHECK(llabs((long long)ns - 3000000000ll) <= 2, "3 s of ticks gave %llu ns",
	    (unsigned long long)ns);
}

static uint64_t fixed_tsc(void)
{
	return 2000;
}

static void pvclock_seqlock(void)
{
	struct xentime_pvclock p = { .version = 4,
		.tsc_timestamp = 1000,
		.system_time = 50,
		.tsc_to_system_mul = 1u << 31,
		.tsc_shift = 1,
		.flags = XENTIME_PVCLOCK_TSC_STABLE };
	uint64_t ns = 0;

	CHECK(xentime_pvclock_read(&p, fixed_tsc, &ns) == 0 && ns == 1050);
	/* not stable: each vCPU has its own block, no process can use vCPU 0's */
	p.flags = 0;
	CHECK(xentime_pvclock_read(&p, fixed_tsc, &ns) < 0 && errno == ENOTSUP);
	/* Xen forever in the middle of a rewrite */
	p.flags = XENTIME_PVCLOCK_TSC_STABLE;
	p.version = 5;
	CHECK(xentime_pvclock_read(&p, fixed_tsc, &ns) < 0 && errno == EAGAIN);
}

/*
 * A vCPU's history: it enters states[i] at at[i] (at[0] its creation, offline), and
 * a runstate call at Xen time t sees what Xen's vcpu_runstate_get would.
 */
struct history {
	unsigned n;
	uint64_t at[64];
	int state[64];
};

static struct xentime_runstate snap(const struct history *h, uint64_t t)
{
	struct xentime_runstate r = { 0 };
	unsigned i = 0;

	while (i + 1 < h->n && h->at[i + 1] <= t)
		i++;
	for (unsigned k = 0; k < i; k++)
		r.time[h->state[k]] += h->at[k + 1] - h->at[k];
	r.state = h->state[i];
	r.entry = h->at[i];
	r.time[r.state] += t - h->at[i];
	return r;
}

static int state_at(const struct history *h, uint64_t t)
{
	return snap(h, t).state;
}

/* Running time in [a, b]. */
static uint64_t ran(const struct history *h, uint64_t a, uint64_t b)
{
	return snap(h, b).time[XENTIME_RUNNING] - snap(h, a).time[XENTIME_RUNNING];
}

static void runstate_sleep(void)
{
	/* clk = Xen - C; the process reads clk at 1000, calls at 1010, sleeps (blocked from
	 * 1020, runnable at 1300, running at 1310), calls at 1320, reads clk at 1330 */
	const int64_t C = 5000000000;
	struct history h = { 5, { 0, 100, 1020, 1300, 1310 },
		{ XENTIME_OFFLINE, XENTIME_RUNNING, XENTIME_BLOCKED, XENTIME_RUNNABLE,
		    XENTIME_RUNNING } };
	struct xentime_runstate a = snap(&h, 1010), b = snap(&h, 1320);
	int64_t lo, hi;

	CHECK(xentime_runstate_bound(&a, &b, 1000 - C, 1330 - C, &lo, &hi) == 0);
	CHECK(lo <= C && C <= hi, "C %lld not in [%lld, %lld]", (long long)C, (long long)lo,
	    (long long)hi);
	/* the width is the time the vCPU ran between the clock reads */
	CHECK(hi - lo == 40, "width %lld", (long long)(hi - lo));
	/* no wake-up between the calls: nothing to bound with */
	b = snap(&h, 1015);
	CHECK(xentime_runstate_bound(&a, &b, 1000 - C, 1016 - C, &lo, &hi) < 0 && errno == EAGAIN);
	/* the second call seeing the vCPU not running: not the caller's vCPU */
	b = snap(&h, 1100);
	CHECK(xentime_runstate_bound(&a, &b, 1000 - C, 1330 - C, &lo, &hi) < 0 && errno == EAGAIN);
	/* times that go backwards cannot be one vCPU's */
	a = snap(&h, 1320);
	b = snap(&h, 1010);
	b.entry = 1310;
	b.state = XENTIME_RUNNING;
	CHECK(xentime_runstate_bound(&a, &b, 1000 - C, 1330 - C, &lo, &hi) < 0);
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Random histories (preemptions, several sleeps between the calls): every bound that is
 * given holds C, and is as wide as the time between the clock reads less the time the
 * vCPU did not run between the calls. */
static void runstate_random(void)
{
	uint64_t seed = 37;
	unsigned given = 0;

	for (int trial = 0; trial < 2000; trial++) {
		struct history h = { 1, { 0 }, { XENTIME_OFFLINE } };
		uint64_t t = 1 + rnd(&seed) % 1000;
		int s = XENTIME_RUNNING;
		while (h.n < 64) {
			h.at[h.n] = t;
			h.state[h.n++] = s;
			t += 1 + rnd(&seed) % 500;
			int next = (int)(rnd(&seed) % 3);
			s = next == s ? (s + 1) % 3 : next;
		}
		/* the caller runs at each call and each read: pick such instants in order */
		uint64_t pts[4], last = h.at[1];
		int k = 0;
		for (uint64_t x = last; k < 4 && x < h.at[h.n - 1]; x += 1 + rnd(&seed) % 700)
			if (state_at(&h, x) == XENTIME_RUNNING)
				pts[k++] = x;
		if (k < 4)
			continue;
		int64_t C = (int64_t)(rnd(&seed) % 100000) - 50000, lo, hi;
		struct xentime_runstate a = snap(&h, pts[1]), b = snap(&h, pts[2]);
		int rc = xentime_runstate_bound(
		    &a, &b, (int64_t)pts[0] - C, (int64_t)pts[3] - C, &lo, &hi);
		if (b.entry == a.entry) {
			CHECK(rc < 0 && errno == EAGAIN);
			continue;
		}
		CHECK(rc == 0, "trial %d: refused (errno %d)", trial, errno);
		if (rc < 0)
			continue;
		given++;
		CHECK(lo <= C && C <= hi, "trial %d: C %lld not in [%lld, %lld]", trial,
		    (long long)C, (long long)lo, (long long)hi);
		uint64_t want = pts[3] - pts[0] - (pts[2] - pts[1] - ran(&h, pts[1], pts[2]));
		CHECK((uint64_t)(hi - lo) == want, "trial %d: width %lld, want %llu", trial,
		    (long long)(hi - lo), (unsigned long long)want);
	}
	CHECK(given > 500, "only %u bounds given", given);
}

static void interval(void)
{
	struct xentime_interval iv = { 0 };

	CHECK(xentime_interval_add(&iv, 10, 50) && iv.lo == 10 && iv.hi == 50 && iv.n == 1);
	CHECK(xentime_interval_add(&iv, 20, 60) && iv.lo == 20 && iv.hi == 50 && iv.n == 2);
	CHECK(xentime_interval_add(&iv, 0, 40) && iv.lo == 20 && iv.hi == 40 && iv.n == 3);
	/* a bound that does not meet it: C moved, start again from the new bound */
	CHECK(!xentime_interval_add(&iv, 100, 120) && iv.lo == 100 && iv.hi == 120 && iv.n == 1);
}

/* A kept interval: one bound that misses it is set aside, two that agree move it. */
static void kept(void)
{
	struct xentime_kept k = { 0 };

	CHECK(xentime_kept_add(&k, 10, 50) == XENTIME_NARROWED && k.iv.n == 1);
	CHECK(xentime_kept_add(&k, 20, 60) == XENTIME_NARROWED && k.iv.lo == 20 && k.iv.hi == 50);
	/* one bad bound: the narrowing stays */
	CHECK(xentime_kept_add(&k, 100, 120) == XENTIME_SET_ASIDE && k.iv.lo == 20 &&
	    k.iv.hi == 50 && k.iv.n == 2 && k.missed.n == 1);
	/* the next meets the interval again: what was set aside is dropped */
	CHECK(xentime_kept_add(&k, 30, 70) == XENTIME_NARROWED && k.iv.lo == 30 && k.iv.hi == 50 &&
	    k.iv.n == 3 && k.missed.n == 0);
	/* C moved: two bounds that agree with each other and not with the interval */
	CHECK(xentime_kept_add(&k, 200, 260) == XENTIME_SET_ASIDE && k.iv.lo == 30);
	CHECK(xentime_kept_add(&k, 90, 110) == XENTIME_SET_ASIDE && k.missed.lo == 90 &&
	        k.missed.n == 1,
	    "a miss that misses the one set aside replaces it");
	CHECK(xentime_kept_add(&k, 100, 140) == XENTIME_MOVED && k.iv.lo == 100 && k.iv.hi == 110 &&
	    k.iv.n == 2 && k.missed.n == 0);
	CHECK(xentime_kept_add(&k, 105, 130) == XENTIME_NARROWED && k.iv.lo == 105 &&
	    k.iv.hi == 110 && k.iv.n == 3);
}

const struct unit_test unit_xentime[] = {
	{ "xentime", "pvclock_convert", pvclock_convert },
	{ "xentime", "pvclock_seqlock", pvclock_seqlock },
	{ "xentime", "runstate_sleep", runstate_sleep },
	{ "xentime", "runstate_random", runstate_random },
	{ "xentime", "interval", interval },
	{ "xentime", "kept", kept },
	{ NULL, NULL, NULL },
};
