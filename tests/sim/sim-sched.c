/*
 * sim-sched.c - sim-test's case "sched": the simulated Xen's clock and scheduling
 * (XENIF_CLOCK, XENIF_TBUF): a clock sample against this process's own clocks, no trace
 * buffers, and a domain's vCPUs (its process's tasks) read from /proc: the one that
 * spins runs, the one that sleeps does not, and each keeps its id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "sim-test.h"
#include "xenif.h"

static int64_t now_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

#define MAXV 16

static int sample(struct xenif *x, unsigned dom, struct xenif_vcpu_sample *v, int64_t *when)
{
	uint64_t width = 0;
	int n = x->ops->sched_sample(x, dom, v, MAXV, when, &width);
	CHECK(n < 0 || width < 1000000000u, "a sample's reads take less than a second");
	return n;
}

static const struct xenif_vcpu_sample *find(const struct xenif_vcpu_sample *v, int n, uint32_t id)
{
	for (int i = 0; i < n; i++)
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

int case_sched(void)
{
	struct xenif *x = open_x(XENIF_CTRL | XENIF_XS | XENIF_CLOCK | XENIF_TBUF);
	struct xenif_clock_sample cs;
	int64_t r0 = now_ns(CLOCK_REALTIME), m0 = now_ns(CLOCK_MONOTONIC);
	REQUIRE(x->ops->clock_sample(x, &cs) == 0, "clock sample: %s", strerror(errno));
	int64_t r1 = now_ns(CLOCK_REALTIME), m1 = now_ns(CLOCK_MONOTONIC);
	CHECK(cs.realtime_ns >= r0 && cs.realtime_ns <= r1, "sample's realtime within ours");
	CHECK((int64_t)cs.xen_ns >= m0 && (int64_t)cs.xen_ns <= m1,
	    "the simulation's Xen time is the host's monotonic clock");
	CHECK(cs.width_ns <= (uint64_t)(r1 - r0), "bracket width %llu",
	    (unsigned long long)cs.width_ns);

	struct xenif_tbuf_info ti;
	errno = 0;
	CHECK(x->ops->tbuf_open(x, 8, 0x29000, &ti) < 0 && errno == ENOTSUP,
	    "no trace buffers in the simulation");

	struct xenif_vcpu_sample a[MAXV], b[MAXV];
	int64_t ta, tb;
	errno = 0;
	CHECK(sample(x, 0, a, &ta) < 0 && errno == ESRCH, "dom0 is no process of the simulation");
	errno = 0;
	CHECK(sample(x, 4000, a, &ta) < 0 && errno == ESRCH, "no such domain");

	unsigned d = create_guest("spinner", "", "spin");
	free(wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", d));
	int na = sample(x, d, a, &ta);
	sleep_ms(600);
	int nb = sample(x, d, b, &tb);
	REQUIRE(na == 2 && nb == 2, "two vCPUs (tasks): %d, %d", na, nb);
	CHECK(tb - ta >= 500000000, "600 ms between the samples: %lld ns", (long long)(tb - ta));
	uint64_t most = 0, least = UINT64_MAX;
	for (int i = 0; i < nb; i++) {
		const struct xenif_vcpu_sample *p = find(a, na, b[i].id);
		REQUIRE(p, "task %u in both samples", b[i].id);
		CHECK(b[i].run_ns >= p->run_ns && b[i].wait_ns >= p->wait_ns &&
		        b[i].slices >= p->slices,
		    "counts only grow");
		uint64_t ran = b[i].run_ns - p->run_ns;
		most = ran > most ? ran : most;
		least = ran < least ? ran : least;
	}
	/* on a machine shared with three other tests, a spinner gets a good part of a core */
	CHECK(
	    most > 60000000, "the spinning task ran (%llu ns of 600 ms)", (unsigned long long)most);
	CHECK(least < 20000000, "the sleeping task did not (%llu ns)", (unsigned long long)least);
	CHECK(cli(NULL, 0, "destroy %u", d) == 0, "destroy");
	errno = 0;
	CHECK(sample(x, d, a, &ta) < 0 && errno == ESRCH, "a destroyed domain has no vCPUs");

	xenif_close(x);
	return check_failures != 0;
}
