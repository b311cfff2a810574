/*
 * xen-verify - a dom0 client of mtraced that checks the exact-accounting promise on
 * real Xen: per ring, every event arrives once and in order (the batches' sequence
 * numbers are contiguous), and every gap is explained, to the event, by a Loss notice.
 * It also records the daemon's own statistics (DomainStats) for the shell to check.
 *
 *   xen-verify --name NAME [--socket P] [--timeout S] [--grace MS]
 *              [--expect D:R:N]...   ring R of domain D: seqs 0..N-1 delivered or lost
 *              [--lost D:R:L]...     ...of which exactly L lost (default 0)
 *              [--any-lost D:R]      ...any number lost, but every one accounted for
 *              [--resume D]          domain D was read before (mtraced restarted): count
 *                                    from the first sequence number seen, not from 0
 *              [--ignore D]          do not judge domain D's rings (a hostile guest)
 *              [--flowing D]         domain D must deliver >= 50 events while we watch,
 *                                    in order, every gap accounted for by a Loss notice
 *              [--up D]... [--down D]...  expect DomainUp / DomainDown for D
 *              [--stats-file F]      write the last DomainStats per domain to F
 *              [--events-file F]     append "dom ring seq op arg" per event (small runs)
 *
 * Prints "XENTEST PASS|FAIL NAME_..." lines; exit 0 iff all passed.  Exits as soon as
 * every expectation is met plus a grace period (to catch duplicates), or at timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtrace-client.h"

#define MAXR 64
#define MAXD 16

struct ring_acct {
	uint32_t domid, ring;
	bool seen;
	uint64_t first, next; /* first seq seen, next seq expected */
	uint64_t delivered, lost, gaps, dups;
	uint64_t expect_n, expect_lost;
	bool expected, any_lost;
};

static uint32_t resume_dom[MAXD], ignore_dom[MAXD], flowing_dom[MAXD];
static unsigned n_resume, n_ignore, n_flowing;
#define FLOWING_MIN 50

static struct ring_acct rings[MAXR];
static unsigned nrings;
static uint32_t want_up[MAXD], want_down[MAXD], got_up[MAXD], got_down[MAXD];
static unsigned n_want_up, n_want_down, n_up, n_down;
static Mtrace__DomainStats *last_stats[MAXD];
static const char *name = "verify";
static int nfail;
static volatile sig_atomic_t stop;

static void on_signal(int s)
{
	(void)s;
	stop = 1;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct ring_acct *ring_get(uint32_t d, uint32_t r)
{
	for (unsigned i = 0; i < nrings; i++)
		if (rings[i].domid == d && rings[i].ring == r)
			return &rings[i];
	if (nrings == MAXR)
		return NULL;
	struct ring_acct *a = &rings[nrings++];
	a->domid = d;
	a->ring = r;
	return a;
}

static void result(bool ok, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void result(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;
	printf("XENTEST %s %s_%s: ", ok ? "PASS" : "FAIL", name, what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	nfail += !ok;
}

static bool in(const uint32_t *v, unsigned n, uint32_t x)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void on_batch(const Mtrace__EventBatch *b, FILE *evf)
{
	struct ring_acct *a = ring_get(b->domid, b->ring);
	if (!a || b->n_op == 0)
		return;
	/*
	 * seqs count from the ring's start: the guest's first record is seq 0.  A ring
	 * read by an earlier mtraced starts wherever the new one resumes; rings we were
	 * not told about are judged only for order.
	 */
	if (!a->seen) {
		a->seen = true;
		a->first = b->first_seq;
		if (a->expected && !in(resume_dom, n_resume, b->domid)) {
			a->next = 0;
		} else {
			a->next = b->first_seq;
			a->lost = 0; /* notices before the first batch cover what precedes it */
		}
	}
	/* an expected ring is judged on seqs [0, N): a workload may go on after that */
	uint64_t n = b->n_op;
	if (a->expected) {
		if (b->first_seq >= a->expect_n)
			return;
		if (b->first_seq + n > a->expect_n)
			n = a->expect_n - b->first_seq;
	}
	if (b->first_seq > a->next)
		a->gaps += b->first_seq - a->next;
	else if (b->first_seq < a->next)
		a->dups += a->next - b->first_seq;
	a->next = b->first_seq + n;
	a->delivered += n;
	if (evf)
		for (size_t i = 0; i < n; i++)
			fprintf(evf, "%u %u %" PRIu64 " %u %" PRId64 "\n", b->domid, b->ring,
			    b->first_seq + i, b->op[i], i < b->n_arg ? b->arg[i] : 0);
}

static uint64_t dom_delivered(uint32_t d)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < nrings; i++)
		if (rings[i].domid == d)
			n += rings[i].delivered;
	return n;
}

static bool all_met(void)
{
	for (unsigned i = 0; i < n_flowing; i++)
		if (dom_delivered(flowing_dom[i]) < FLOWING_MIN)
			return false;
	for (unsigned i = 0; i < nrings; i++)
		if (rings[i].expected && rings[i].next < rings[i].expect_n)
			return false;
	for (unsigned i = 0; i < n_want_up; i++)
		if (!in(got_up, n_up, want_up[i]))
			return false;
	for (unsigned i = 0; i < n_want_down; i++)
		if (!in(got_down, n_down, want_down[i]))
			return false;
	return true;
}

static int parse3(const char *s, uint32_t *d, uint32_t *r, uint64_t *n)
{
	return sscanf(s, "%" SCNu32 ":%" SCNu32 ":%" SCNu64, d, r, n) == 3 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *stats_file = NULL, *events_file = NULL;
	double timeout = 60, grace = 1.0;
	static const struct option lo[] = {
		{ "name", 1, 0, 'N' },
		{ "socket", 1, 0, 's' },
		{ "timeout", 1, 0, 't' },
		{ "grace", 1, 0, 'g' },
		{ "expect", 1, 0, 'e' },
		{ "lost", 1, 0, 'l' },
		{ "up", 1, 0, 'u' },
		{ "down", 1, 0, 'd' },
		{ "stats-file", 1, 0, 'S' },
		{ "events-file", 1, 0, 'E' },
		{ "any-lost", 1, 0, 'a' },
		{ "resume", 1, 0, 'r' },
		{ "ignore", 1, 0, 'i' },
		{ "flowing", 1, 0, 'F' },
		{ 0, 0, 0, 0 },
	};
	int c;
	uint32_t d, r;
	uint64_t n;
	struct ring_acct *a;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'N':
			name = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 't':
			timeout = atof(optarg);
			break;
		case 'g':
			grace = atof(optarg) / 1000;
			break;
		case 'S':
			stats_file = optarg;
			break;
		case 'E':
			events_file = optarg;
			break;
		case 'e':
		case 'l':
			if (parse3(optarg, &d, &r, &n) || !(a = ring_get(d, r))) {
				fprintf(stderr, "xen-verify: bad D:R:N '%s'\n", optarg);
				return 2;
			}
			a->expected = true;
			if (c == 'e')
				a->expect_n = n;
			else
				a->expect_lost = n;
			break;
		case 'a':
			if (sscanf(optarg, "%" SCNu32 ":%" SCNu32, &d, &r) != 2 ||
			    !(a = ring_get(d, r))) {
				fprintf(stderr, "xen-verify: bad D:R '%s'\n", optarg);
				return 2;
			}
			a->any_lost = true;
			break;
		case 'r':
			if (n_resume < MAXD)
				resume_dom[n_resume++] = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'i':
			if (n_ignore < MAXD)
				ignore_dom[n_ignore++] = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'F':
			if (n_flowing < MAXD)
				flowing_dom[n_flowing++] = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'u':
			if (n_want_up < MAXD)
				want_up[n_want_up++] = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			if (n_want_down < MAXD)
				want_down[n_want_down++] = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: see the comment at the top of xen-verify.c\n");
			return 2;
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);

	char err[256];
	struct mtc *m = NULL;
	double t0 = now(), end = t0 + timeout;
	/* the daemon may still be starting: retry the connection for a few seconds */
	while (!(m = mtc_connect(sock, "xen-verify", err, sizeof err)) && now() < t0 + 10)
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	if (!m) {
		result(false, "connect", "%s", err);
		return 1;
	}
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	sub.events = true;
	sub.stats_interval_ms = 200;
	if (mtc_subscribe(m, &sub) < 0) {
		result(false, "subscribe", "%s", strerror(errno));
		return 1;
	}
	printf("XENTEST INFO %s subscribed\n", name);
	FILE *evf = events_file ? fopen(events_file, "a") : NULL;
	double met_at = 0;
	bool eof = false;
	while (!stop && now() < end) {
		if (!met_at && all_met())
			met_at = now();
		if (met_at && now() > met_at + grace)
			break;
		Mtrace__ServerMsg *msg = NULL;
		int rc = mtc_next(m, 100, &msg, NULL, NULL, err, sizeof err);
		if (rc < 0) {
			eof = true;
			printf("XENTEST INFO %s: daemon connection ended: %s\n", name,
			    errno ? err : "EOF");
			break;
		}
		if (rc == 0 || !msg)
			continue;
		switch (msg->msg_case) {
		case MTRACE__SERVER_MSG__MSG_EVENTS:
			on_batch(msg->events, evf);
			break;
		case MTRACE__SERVER_MSG__MSG_LOSS:
			if (msg->loss->lost_in_ring &&
			    (a = ring_get(msg->loss->domid, msg->loss->ring)))
				a->lost += msg->loss->lost_in_ring;
			if (msg->loss->dropped_for_client)
				printf("XENTEST INFO %s: daemon dropped %" PRIu64
				       " events for us\n",
				    name, msg->loss->dropped_for_client);
			break;
		case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
			printf("XENTEST INFO %s: domain up %u %s rings=%u\n", name,
			    msg->domain_up->domid, msg->domain_up->name, msg->domain_up->rings);
			if (n_up < MAXD)
				got_up[n_up++] = msg->domain_up->domid;
			break;
		case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
			printf("XENTEST INFO %s: domain down %u %s\n", name,
			    msg->domain_down->domid, msg->domain_down->reason);
			if (n_down < MAXD)
				got_down[n_down++] = msg->domain_down->domid;
			break;
		case MTRACE__SERVER_MSG__MSG_STATS:
			for (size_t i = 0; i < msg->stats->n_domains; i++) {
				Mtrace__DomainStats *ds = msg->stats->domains[i];
				unsigned k = ds->domid % MAXD;
				if (last_stats[k])
					mtrace__domain_stats__free_unpacked(last_stats[k], NULL);
				/* keep a private copy: the message is freed below */
				size_t len = mtrace__domain_stats__get_packed_size(ds);
				uint8_t *buf = malloc(len ? len : 1);
				mtrace__domain_stats__pack(ds, buf);
				last_stats[k] = mtrace__domain_stats__unpack(NULL, len, buf);
				free(buf);
			}
			break;
		default:
			break;
		}
		mtc_msg_free(msg);
	}
	if (evf)
		fclose(evf);

	for (unsigned i = 0; i < nrings; i++) {
		a = &rings[i];
		printf("XENTEST INFO %s ring dom=%u ring=%u delivered=%" PRIu64 " lost=%" PRIu64
		       " gaps=%" PRIu64 " dups=%" PRIu64 " first_seq=%" PRIu64 " next_seq=%" PRIu64
		       "\n",
		    name, a->domid, a->ring, a->delivered, a->lost, a->gaps, a->dups, a->first,
		    a->next);
		char what[64];
		snprintf(what, sizeof what, "d%u_r%u", a->domid, a->ring);
		if (in(ignore_dom, n_ignore, a->domid))
			continue;
		if (a->expected) {
			uint64_t from = a->next >= a->delivered + a->gaps
			    ? a->next - a->delivered - a->gaps
			    : 0;
			result(from + a->delivered + a->lost == a->expect_n &&
			        a->next == a->expect_n &&
			        (a->any_lost || a->lost == a->expect_lost) && a->gaps == a->lost &&
			        !a->dups,
			    what,
			    "expected %" PRIu64 " events (%" PRIu64 " lost): delivered %" PRIu64
			    " lost %" PRIu64 " gaps %" PRIu64 " dups %" PRIu64 " next_seq %" PRIu64,
			    a->expect_n, a->expect_lost, a->delivered, a->lost, a->gaps, a->dups,
			    a->next);
		} else if (in(flowing_dom, n_flowing, a->domid)) {
			result(a->seen && !a->dups && a->gaps == a->lost, what,
			    "flowing, in order: delivered %" PRIu64 " dups %" PRIu64
			    " gaps %" PRIu64 " lost %" PRIu64,
			    a->delivered, a->dups, a->gaps, a->lost);
		} else if (a->seen) {
			/* not a workload ring we know: still in order and fully accounted */
			result(!a->dups, what,
			    "in order (not a workload ring): dups %" PRIu64 " gaps %" PRIu64
			    " lost %" PRIu64,
			    a->dups, a->gaps, a->lost);
		}
	}
	for (unsigned i = 0; i < n_flowing; i++)
		result(dom_delivered(flowing_dom[i]) >= FLOWING_MIN, "flowing",
		    "dom%u delivered %" PRIu64 " events (want >= %d)", flowing_dom[i],
		    dom_delivered(flowing_dom[i]), FLOWING_MIN);
	for (unsigned i = 0; i < n_want_up; i++)
		result(in(got_up, n_up, want_up[i]), "domain_up", "dom%u", want_up[i]);
	for (unsigned i = 0; i < n_want_down; i++)
		result(in(got_down, n_down, want_down[i]), "domain_down", "dom%u", want_down[i]);
	FILE *sf = stats_file ? fopen(stats_file, "w") : NULL;
	for (unsigned k = 0; k < MAXD; k++) {
		Mtrace__DomainStats *ds = last_stats[k];
		if (!ds)
			continue;
		char line[512];
		snprintf(line, sizeof line,
		    "dom=%u name=%s alive=%d rings=%u events=%" PRIu64 " lost=%" PRIu64
		    " corrupt=%" PRIu64 " unknown=%" PRIu64 " wakeups=%" PRIu64
		    " ratelimited=%" PRIu64 " state=%s",
		    ds->domid, ds->name, ds->alive, ds->rings, ds->events, ds->lost, ds->corrupt,
		    ds->unknown, ds->wakeups, ds->ratelimited, ds->state);
		printf("XENTEST INFO %s stats %s\n", name, line);
		if (sf)
			fprintf(sf, "%s\n", line);
		mtrace__domain_stats__free_unpacked(ds, NULL);
	}
	if (sf)
		fclose(sf);
	if (!all_met())
		result(false, "complete", "timeout after %.1f s%s", now() - t0,
		    eof ? " (daemon went away)" : "");
	mtc_close(m);
	return nfail ? 1 : 0;
}
