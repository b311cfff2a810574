/*
 * bench-drain.c - decode + state update throughput of mtraced's drain path, in one
 * process on one core: local rings (mtrace_ring_init_local) are filled by the real
 * producer code, then drained by the real decoder (ring_reader_drain_batch) into the
 * real state update (state_apply_batch), as mtraced does for a guest.  Only the drain
 * is timed.
 *
 *   bench-drain [GUESTS [MILLION_EVENTS [LIVE_THREADS]]]  (default 1 guest, 50 M events)
 *
 * With LIVE_THREADS, the mix is spread instead: that many threads stay pending in
 * each guest and every event picks them at random (switch, read, signal; one in four
 * steps resolves one and creates its successor), as mtrace-load does; the thread cap
 * is raised to twice that.  This is how the state's cost grows with its tables.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "mtrace-guest.h"
#include "ring-reader.h"
#include "state.h"

#define PAGES  512u   /* 2 MiB of data per ring */
#define FILL   60000u /* events per fill, below the ring's 65536 */
#define BUDGET 65536u /* drain.c's default per-guest budget */

struct g {
	struct mtrace_ring prod;
	void *hdr, *data;
	struct ring_reader *rr;
	struct state_domain *sd;
	uint64_t next_id, cur;
	unsigned step;
	uint64_t *live, rnd; /* the spread mix: live thread ids, xorshift state */
};

static unsigned nlive; /* LIVE_THREADS, 0: the Lwt-like mix */

static uint64_t rnd(struct g *g)
{
	g->rnd ^= g->rnd << 13;
	g->rnd ^= g->rnd >> 7;
	g->rnd ^= g->rnd << 17;
	return g->rnd;
}

/* CPU time of this thread: the figure is per core, and the machine may be shared */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* mtraced's path: each copy window decoded into arrays of EVCAP events (small enough
 * to stay in L1), applied as a batch */
#define EVCAP 256
static struct mtrace_event evbuf[EVCAP];

static void on_batch(const struct mtrace_event *ev, size_t n, void *arg)
{
	state_apply_batch(arg, ev, n);
}

/* The spread mix: random threads among the nlive pending ones. */
static void fill_spread(struct g *g, unsigned n)
{
	struct mtrace_ring *r = &g->prod;
	uint64_t ts = now_ns();

	for (unsigned i = 0; i < n; ts += 10) {
		uint64_t a = g->live[rnd(g) % nlive], b = g->live[rnd(g) % nlive];
		mtrace_emit_ts(r, MTRACE_OP_SWITCH, 0, ts, a, 0);
		mtrace_emit_ts(r, MTRACE_OP_READ, 0, ts + 1, a, b);
		mtrace_emit_ts(r, MTRACE_OP_SIGNAL, 0, ts + 2, b, a);
		i += 3;
		if (++g->step % 4 == 0) {
			unsigned k = (unsigned)(rnd(g) % nlive);
			uint64_t c = g->next_id++;
			mtrace_emit_ts(r, MTRACE_OP_FULFILLS, 0, ts + 3, b, g->live[k]);
			mtrace_emit_ts(r, MTRACE_OP_CREATES, MTRACE_TT_TASK, ts + 4, b, c);
			g->live[k] = c;
			i += 2;
		}
	}
}

/* The spread mix's threads, created before anything is timed; returns how many
 * events it wrote (at most n: one fill). */
static unsigned create_spread(struct g *g, unsigned n)
{
	uint64_t ts = now_ns();
	unsigned i = 0;

	if (!g->live) {
		g->live = calloc(nlive, sizeof(*g->live));
		if (!g->live)
			abort();
		g->rnd = 0x9E3779B97F4A7C15ull;
	}
	for (; g->step < nlive && i < n; g->step++, i++) {
		g->live[g->step] = g->next_id++;
		mtrace_emit_ts(&g->prod, MTRACE_OP_CREATES, MTRACE_TT_TASK, ts++,
		    MTRACE_THREAD_NONE, g->live[g->step]);
	}
	return i;
}

/* A Lwt-like mix: create, switch, read, signal, resolve an older thread; a label now
 * and then.  About 1000 threads stay pending; finished ones are evicted past the cap. */
static void fill(struct g *g, unsigned n)
{
	struct mtrace_ring *r = &g->prod;
	uint64_t ts = now_ns();

	for (unsigned i = 0; i < n; ts += 10) {
		uint64_t c = g->next_id++;
		mtrace_emit_ts(r, MTRACE_OP_CREATES, MTRACE_TT_TASK, ts, g->cur, c);
		mtrace_emit_ts(r, MTRACE_OP_SWITCH, 0, ts + 1, c, 0);
		mtrace_emit_ts(r, MTRACE_OP_READ, 0, ts + 2, c, g->cur);
		mtrace_emit_ts(r, MTRACE_OP_SIGNAL, 0, ts + 3, g->cur, c);
		mtrace_emit_ts(r, MTRACE_OP_FULFILLS, 0, ts + 4, c, c > 1000 ? c - 1000 : 0);
		i += 5;
		if (++g->step % 64 == 0) {
			mtrace_label(r, c, g->step % 128 ? "worker" : "net.rx");
			i++;
		}
		g->cur = c;
	}
}

int main(int argc, char **argv)
{
	unsigned nguests = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	uint64_t want = (argc > 2 ? (uint64_t)atof(argv[2]) : 50) * 1000000u;
	struct mtraced_config cfg;
	struct g *gs;
	uint64_t done = 0, t_drain = 0, lost = 0, corrupt = 0;
	double best = 1e9; /* ns/event of the fastest fill: the least disturbed by others */
	char err[128];

	if (nguests < 1 || nguests > 1024) {
		fprintf(stderr, "usage: bench-drain [GUESTS [MILLION_EVENTS [LIVE_THREADS]]]\n");
		return 2;
	}
	config_defaults(&cfg);
	nlive = argc > 3 ? (unsigned)atoi(argv[3]) : 0;
	if (nlive)
		cfg.max_threads_per_guest = nlive * 2;
	if (getenv("BENCH_MAX_THREADS"))
		cfg.max_threads_per_guest = (uint32_t)atoi(getenv("BENCH_MAX_THREADS"));
	state_init(&cfg);
	state_tick(state_now_ns());
	gs = calloc(nguests, sizeof(*gs));
	for (unsigned i = 0; i < nguests; i++) {
		struct g *g = &gs[i];
		g->hdr = aligned_alloc(MTRACE_PAGE_SIZE, MTRACE_PAGE_SIZE);
		g->data = aligned_alloc(MTRACE_PAGE_SIZE, (size_t)PAGES * MTRACE_PAGE_SIZE);
		memset(g->hdr, 0, MTRACE_PAGE_SIZE);
		memset(g->data, 0, (size_t)PAGES * MTRACE_PAGE_SIZE);
		mtrace_ring_init_local(
		    &g->prod, g->hdr, g->data, PAGES, MTRACE_CLOCK_MONOTONIC, 0, "bench");
		struct mtrace_ring_hdr hc;

		g->rr = NULL;
		if (ring_hdr_copy(g->hdr, PAGES, &hc, NULL, err, sizeof(err)) == 0)
			g->rr =
			    ring_reader_attach_copy(g->hdr, &hc, g->data, PAGES, err, sizeof(err));
		if (!g->rr) {
			fprintf(stderr, "attach: %s\n", err);
			return 1;
		}
		g->sd = state_domain_get(i + 1);
		state_domain_attached(g->sd, 1, MTRACE_CLOCK_MONOTONIC, false);
		g->next_id = 1;
		g->cur = MTRACE_THREAD_NONE;
	}
	for (bool more = nlive > 0; more;) { /* the spread mix's threads, untimed */
		more = false;
		for (unsigned i = 0; i < nguests; i++) {
			bool m = false;
			if (create_spread(&gs[i], FILL))
				more = true;
			while (ring_reader_drain_batch(
			           gs[i].rr, BUDGET, evbuf, EVCAP, on_batch, gs[i].sd, &m) ||
			    m)
				;
		}
	}
	while (done < want) {
		for (unsigned i = 0; i < nguests; i++) {
			if (nlive)
				fill_spread(&gs[i], FILL);
			else
				fill(&gs[i], FILL);
		}
		state_tick(state_now_ns());
		uint64_t t0 = cpu_ns(), done0 = done;
		/* round robin with a budget, as drain.c serves busy guests */
		for (bool any = true; any;) {
			any = false;
			for (unsigned i = 0; i < nguests; i++) {
				bool more = false;
				done += ring_reader_drain_batch(
				    gs[i].rr, BUDGET, evbuf, EVCAP, on_batch, gs[i].sd, &more);
				any |= more;
			}
		}
		uint64_t dt = cpu_ns() - t0;
		t_drain += dt;
		if (getenv("BENCH_FILLS"))
			fprintf(stderr, "%.1f\n", (double)dt / (double)(done - done0));
		if (done > done0 && (double)dt / (double)(done - done0) < best)
			best = (double)dt / (double)(done - done0);
	}
	for (unsigned i = 0; i < nguests; i++) {
		lost += ring_reader_stats(gs[i].rr)->lost;
		corrupt += ring_reader_stats(gs[i].rr)->corrupt;
	}
	printf("bench-drain: %u guest%s, %" PRIu64 " events decoded + applied in %.3f s of CPU: "
	       "%.1f M events/s per core (%.1f ns/event), lost %" PRIu64 ", corrupt %" PRIu64 "\n",
	    nguests, nguests == 1 ? "" : "s", done, t_drain / 1e9, done / (t_drain / 1e9) / 1e6,
	    (double)t_drain / (double)done, lost, corrupt);
	printf("  fastest fill (%u events a guest): %.1f ns/event\n", FILL, best);
	for (unsigned i = 0; i < nguests && i < 1; i++)
		printf("  domain 1: %" PRIu64 " events, %" PRIu64 " live threads\n",
		    state_domain_events(gs[i].sd), state_domain_live_threads(gs[i].sd));
	if (lost || corrupt) {
		fprintf(stderr, "bench-drain: the bench itself lost or corrupted events\n");
		return 1;
	}
	return 0;
}
