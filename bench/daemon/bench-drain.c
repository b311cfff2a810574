/*
 * bench-drain.c - decode + state update throughput of mtraced's drain path, in one
 * process on one core: local rings (mtrace_ring_init_local) are filled by the real
 * producer code, then drained by the real decoder (ring_reader_drain_batch) into the
 * real state update (state_apply_batch), as mtraced does for a guest.  Only the drain
 * is timed.
 *
 *   bench-drain [GUESTS [MILLION_EVENTS]]     (default 1 guest, 50 M events)
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

#define PAGES		512u			/* 2 MiB of data per ring */
#define FILL		60000u			/* events per fill, below the ring's 65536 */
#define BUDGET		65536u			/* drain.c's default per-guest budget */

struct g {
	struct mtrace_ring prod;
	void *hdr, *data;
	struct ring_reader *rr;
	struct state_domain *sd;
	uint64_t next_id, cur;
	unsigned step;
};

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
	char err[128];

	if (nguests < 1 || nguests > 1024) {
		fprintf(stderr, "usage: bench-drain [GUESTS [MILLION_EVENTS]]\n");
		return 2;
	}
	config_defaults(&cfg);
	state_init(&cfg);
	state_tick(state_now_ns());
	gs = calloc(nguests, sizeof(*gs));
	for (unsigned i = 0; i < nguests; i++) {
		struct g *g = &gs[i];
		g->hdr = aligned_alloc(MTRACE_PAGE_SIZE, MTRACE_PAGE_SIZE);
		g->data = aligned_alloc(MTRACE_PAGE_SIZE, (size_t)PAGES * MTRACE_PAGE_SIZE);
		memset(g->hdr, 0, MTRACE_PAGE_SIZE);
		memset(g->data, 0, (size_t)PAGES * MTRACE_PAGE_SIZE);
		mtrace_ring_init_local(&g->prod, g->hdr, g->data, PAGES, MTRACE_CLOCK_MONOTONIC, 0,
				       "bench");
		struct mtrace_ring_hdr hc;

		g->rr = NULL;
		if (ring_hdr_copy(g->hdr, PAGES, &hc, NULL, err, sizeof(err)) == 0)
			g->rr = ring_reader_attach_copy(g->hdr, &hc, g->data, PAGES, err, sizeof(err));
		if (!g->rr) {
			fprintf(stderr, "attach: %s\n", err);
			return 1;
		}
		g->sd = state_domain_get(i + 1);
		state_domain_attached(g->sd, 1, MTRACE_CLOCK_MONOTONIC, false);
		g->next_id = 1;
		g->cur = MTRACE_THREAD_NONE;
	}
	while (done < want) {
		for (unsigned i = 0; i < nguests; i++)
			fill(&gs[i], FILL);
		state_tick(state_now_ns());
		uint64_t t0 = cpu_ns();
		/* round robin with a budget, as drain.c serves busy guests */
		for (bool any = true; any;) {
			any = false;
			for (unsigned i = 0; i < nguests; i++) {
				bool more = false;
				done += ring_reader_drain_batch(gs[i].rr, BUDGET, evbuf,
								EVCAP, on_batch,
								gs[i].sd, &more);
				any |= more;
			}
		}
		t_drain += cpu_ns() - t0;
	}
	for (unsigned i = 0; i < nguests; i++) {
		lost += ring_reader_stats(gs[i].rr)->lost;
		corrupt += ring_reader_stats(gs[i].rr)->corrupt;
	}
	printf("bench-drain: %u guest%s, %" PRIu64 " events decoded + applied in %.3f s of CPU: "
	       "%.1f M events/s per core (%.1f ns/event), lost %" PRIu64 ", corrupt %" PRIu64 "\n",
	       nguests, nguests == 1 ? "" : "s", done, t_drain / 1e9,
	       done / (t_drain / 1e9) / 1e6, (double)t_drain / (double)done, lost, corrupt);
	for (unsigned i = 0; i < nguests && i < 1; i++)
		printf("  domain 1: %" PRIu64 " events, %" PRIu64 " live threads\n",
		       state_domain_events(gs[i].sd), state_domain_live_threads(gs[i].sd));
	if (lost || corrupt) {
		fprintf(stderr, "bench-drain: the bench itself lost or corrupted events\n");
		return 1;
	}
	return 0;
}
