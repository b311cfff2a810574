/*
 * ring-read.c - a minimal dom0 reader for the ring tests (not the daemon): waits for
 * a guest's announcement, maps its rings through xenif, drains them on event-channel
 * wake-ups plus a periodic drain until the guest withdraws ("closed" or gone), then
 * prints what it read as JSON.  It checks the guest session (grants, event channel,
 * xenstore keys) end to end against the same decoder mtraced uses.
 *
 * usage: ring-read [--sim-dir DIR] [--timeout S] DOMID
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "mtrace-ring.h"
#include "ring-reader.h"
#include "xenif.h"

#define OPS 256

struct rring {
	void *hdr, *data;
	uint32_t pages;
	struct ring_reader *rd;
	uint64_t per_op[OPS];
	uint64_t labels;
	uint64_t ts_min, ts_max;	/* decoded timestamps (ns on the ring's clock) */
	int64_t ahead_ns;		/* most a decoded ts lay ahead of our CLOCK_MONOTONIC */
};

static struct xenif *x;
static char base[128];

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *
xs_get(const char *key)
{
	char path[256];
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", base, key);
	return x->ops->xs_read(x, 0, path, &len);
}

static bool
xs_uint(const char *key, unsigned long max, unsigned long *v)
{
	char *s = xs_get(key), *end;
	bool ok = false;

	if (s != NULL) {
		errno = 0;
		*v = strtoul(s, &end, 10);
		ok = errno == 0 && end != s && *end == 0 && *v <= max;
	}
	free(s);
	return ok;
}

static void
on_event(const struct mtrace_event *e, void *arg)
{
	struct rring *rr = arg;

	rr->per_op[e->op]++;
	if (e->op == MTRACE_OP_LABEL)
		rr->labels++;
	if (rr->ts_min == 0 || e->ts < rr->ts_min)
		rr->ts_min = e->ts;
	if (e->ts > rr->ts_max)
		rr->ts_max = e->ts;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
drain(struct rring *rings, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		bool more = true;
		for (int k = 0; more && k < 1000; k++)
			ring_reader_drain(rings[i].rd, 4096, on_event, &rings[i], &more);
		/* Same host, same CLOCK_MONOTONIC: an event cannot be stamped after we read it. */
		int64_t ahead = (int64_t)(rings[i].ts_max - mono_ns());
		if (rings[i].ts_max && ahead > rings[i].ahead_ns)
			rings[i].ahead_ns = ahead;
	}
}

static void
die(const char *what)
{
	fprintf(stderr, "ring-read: %s\n", what);
	exit(1);
}

int
main(int argc, char **argv)
{
	const char *sim_dir = NULL;
	double timeout = 30;
	unsigned long domid, nrings, port, version;
	char err[256];
	int i;

	for (i = 1; i < argc - 1; i += 2) {
		if (strcmp(argv[i], "--sim-dir") == 0)
			sim_dir = argv[i + 1];
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout = atof(argv[i + 1]);
		else
			break;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: ring-read [--sim-dir DIR] [--timeout S] DOMID\n");
		return 2;
	}
	domid = strtoul(argv[i], NULL, 10);
	x = xenif_open(NULL, sim_dir, XENIF_GNTTAB | XENIF_EVTCHN | XENIF_XS, err, sizeof(err));
	if (x == NULL)
		die(err);
	snprintf(base, sizeof(base), "/local/domain/%lu/%s", domid, MTRACE_XS_DIR);

	double end = now_s() + timeout;
	for (;;) {
		char *st = xs_get("state");
		bool ready = st != NULL && strcmp(st, "ready") == 0;
		free(st);
		if (ready)
			break;
		if (now_s() > end)
			die("timed out waiting for state=ready");
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	char *clk = xs_get("clock");
	if (!xs_uint("version", 1000, &version) || version < MTRACE_RING_VERSION_MIN ||
	    version > MTRACE_RING_VERSION)
		die("bad version key");
	if (!xs_uint("rings", MTRACE_MAX_RINGS, &nrings) || nrings == 0)
		die("bad rings key");
	if (!xs_uint("event-channel", 1ul << 20, &port))
		die("bad event-channel key");
	if (clk == NULL || (strcmp(clk, "monotonic") && strcmp(clk, "xen") && strcmp(clk, "realtime") &&
			    strcmp(clk, "tsc")))
		die("bad clock key");

	struct rring *rings = calloc(nrings, sizeof(*rings));
	for (unsigned r = 0; r < nrings; r++) {
		char key[64];
		unsigned long ref, pages;
		uint32_t refs[MTRACE_RING_MAX_PAGES];
		struct mtrace_ring_hdr hcopy;
		xenif_gref_t href;

		snprintf(key, sizeof(key), "ring/%u/ref", r);
		if (!xs_uint(key, UINT32_MAX, &ref))
			die("bad ring ref key");
		snprintf(key, sizeof(key), "ring/%u/pages", r);
		if (!xs_uint(key, MTRACE_RING_MAX_PAGES, &pages))
			die("bad ring pages key");
		href = (xenif_gref_t)ref;
		rings[r].hdr = x->ops->gnttab_map(x, (xenif_domid_t)domid, 1, &href,
						  PROT_READ | PROT_WRITE);
		if (rings[r].hdr == NULL)
			die("mapping a header page failed");
		if (ring_hdr_copy(rings[r].hdr, (uint32_t)pages, &hcopy, refs, err, sizeof(err)) < 0)
			die(err);
		rings[r].data = x->ops->gnttab_map(x, (xenif_domid_t)domid, (uint32_t)pages, refs,
						   PROT_READ);
		if (rings[r].data == NULL)
			die("mapping data pages failed");
		rings[r].pages = (uint32_t)pages;
		rings[r].ahead_ns = INT64_MIN;
		rings[r].rd = ring_reader_attach_copy(rings[r].hdr, &hcopy, rings[r].data,
						      (uint32_t)pages, err, sizeof(err));
		if (rings[r].rd == NULL)
			die(err);
	}
	int lport = x->ops->evtchn_bind_interdomain(x, (xenif_domid_t)domid, (xenif_port_t)port);
	if (lport < 0)
		die("binding the event channel failed");

	uint64_t wakeups = 0, loops = 0, t_attach = mono_ns();
	bool withdrawn = false;
	while (now_s() < end) {
		drain(rings, (unsigned)nrings);
		bool again = false;
		for (unsigned r = 0; r < nrings; r++)
			again |= ring_reader_request_wakeup(rings[r].rd, 0);
		if (again)
			continue;
		if (withdrawn)
			break;
		/* Sleep until kicked; 20 ms periodic drain covers a missed wake-up. */
		struct pollfd pfd = { .fd = x->ops->evtchn_fd(x), .events = POLLIN };
		if (poll(&pfd, 1, 20) > 0) {
			int p;
			while ((p = x->ops->evtchn_pending(x)) >= 0) {
				wakeups++;
				x->ops->evtchn_unmask(x, (xenif_port_t)p);
			}
		}
		if (++loops % 5 == 0) {
			char *st = xs_get("state");
			withdrawn = st == NULL || strcmp(st, "ready") != 0;
			free(st);
		}
	}
	drain(rings, (unsigned)nrings);

	printf("{\"withdrawn\": %s, \"wakeups\": %" PRIu64 ", \"clock\": \"%s\", \"attach_ns\": %"
	       PRIu64 ", \"done_ns\": %" PRIu64 ", \"rings\": [",
	       withdrawn ? "true" : "false", wakeups, clk, t_attach, mono_ns());
	for (unsigned r = 0; r < nrings; r++) {
		const struct ring_reader_stats *st = ring_reader_stats(rings[r].rd);
		const struct ring_reader_info *in = ring_reader_info(rings[r].rd);
		printf("%s\n {\"ring\": %u, \"name\": \"%s\", \"index\": %" PRIu32 ", \"pages\": %"
		       PRIu32 ", \"events\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"corrupt\": %"
		       PRIu64 ", \"unknown\": %" PRIu64 ", \"resyncs\": %" PRIu64 ", \"clock\": %"
		       PRIu32 ", \"source_clock\": %" PRIu32 ", \"ts_min\": %" PRIu64 ", \"ts_max\": %"
		       PRIu64 ", \"ahead_ns\": %" PRId64 ", \"time_updates\": %" PRIu64
		       ", \"per_op\": {",
		       r ? "," : "", r, in->name, in->ring_index, in->data_pages, st->events, st->lost,
		       st->corrupt, st->unknown, st->resyncs, in->clock, in->source_clock,
		       rings[r].ts_min, rings[r].ts_max, rings[r].ahead_ns,
		       ring_reader_time_updates(rings[r].rd));
		bool first = true;
		for (unsigned op = 0; op < OPS; op++) {
			if (rings[r].per_op[op] == 0)
				continue;
			printf("%s\"%s\": %" PRIu64, first ? "" : ", ", mtrace_op_name(op),
			       rings[r].per_op[op]);
			first = false;
		}
		printf("}}");
	}
	printf("]}\n");
	for (unsigned r = 0; r < nrings; r++) {
		ring_reader_free(rings[r].rd);
		x->ops->gnttab_unmap(x, rings[r].data, rings[r].pages);
		x->ops->gnttab_unmap(x, rings[r].hdr, 1);
	}
	x->ops->evtchn_unbind(x, (xenif_port_t)lport);
	free(rings);
	free(clk);
	xenif_close(x);
	return 0;
}
