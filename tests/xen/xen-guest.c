/*
 * xen-guest - the domU programs of the real-Xen suite, on the guest library (real
 * gntalloc, event channel and xenstore):
 *
 *   xen-guest load [--rings R] [--pages P] [--events N] [--rate EPS] [--labels]
 *                  [--wait-go|--go-first] [--go-key KEY] [--linger S] [--then-rate R]
 *                  [--then-garbage S] [--until-key KEY]
 *       A known workload: on every ring, N events after the RING_START record, event k
 *       carrying arg = k (so seq = k + 1).  --rate paces it (events/s over all rings),
 *       --wait-go first waits for dom0 to write data/mtrace-test/go (or --go-key KEY;
 *       --go-first: before
 *       even opening the session, so that no mtraced has read the ring), --linger keeps the
 *       grants alive afterwards (dom0 may read them later), --then-rate keeps writing
 *       R events/s per ring meanwhile, --then-garbage S turns hostile for S seconds
 *       (as below) once dom0 writes data/mtrace-test/go2, --until-key ends the linger
 *       early once dom0 writes data/mtrace-test/KEY and then closes the session (so
 *       that the domU's next program can open one).  The summary (a JSON line)
 *       goes to stdout and to xenstore data/mtrace-test/summary.
 *
 *   xen-guest wait KEY
 *       until dom0 writes data/mtrace-test/KEY (for /init)
 *
 *   xen-guest publish KEY FILE
 *       FILE into xenstore data/mtrace-test/KEY-0, KEY-1, ... and KEY-n (for /init)
 *
 *   xen-guest garbage [--seconds S] [--rings R] [--pages P] [--seed X] [--wait-go]
 *       A hostile guest: announces properly, then scribbles random bytes over its ring
 *       data and producer positions and floods its event channel.  dom0 must count the
 *       damage against this domain only: the other guests' counts stay exact and
 *       mtraced stays responsive.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtrace-guest.h"
#include "xenif.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

/* xorshift: reproducible garbage from --seed */
static uint64_t rnd(void)
{
	uint64_t x = rnd_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rnd_state = x;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	nanosleep(&t, NULL);
}

/* dom0 starts each check at a moment it chooses by writing our data/mtrace-test/KEY:
 * 0 once it is there, 1 after timeout seconds without it, -1 on error.  Waited for
 * with a xenstore watch (set before the first read, so no write is missed), not by
 * reading in a loop: each read wakes xenstored in dom0, which is dear under TCG
 * while the other domains boot. */
static int wait_key_for(const char *backend, const char *key, double timeout)
{
	char err[256];
	struct xenif *xs = xenif_open(backend, NULL, XENIF_XS, err, sizeof err);
	if (!xs) {
		fprintf(stderr, "xen-guest: xenstore: %s\n", err);
		return -1;
	}
	char *v;
	char path[128];
	double end = now() + timeout;
	snprintf(path, sizeof path, "data/mtrace-test/%s", key);
	int fd = xs->ops->xs_watch(xs, path, "go") == 0 ? xs->ops->xs_fileno(xs) : -1;
	while (!(v = xs->ops->xs_read(xs, 0, path, NULL))) {
		double left = end - now();
		if (left <= 0)
			break;
		if (fd >= 0) {
			/* a bounded wait: the read above settles it, whatever the watch says */
			struct pollfd p = { .fd = fd, .events = POLLIN };
			struct xenif_xs_watch_event ev;
			poll(&p, 1, left < 1 ? (int)(left * 1000) + 1 : 1000);
			while (xs->ops->xs_read_watch(xs, &ev) == 0)
				;
		} else {
			sleep_s(left < 0.05 ? left : 0.05);
		}
	}
	free(v);
	xenif_close(xs);
	return v ? 0 : 1;
}

static int wait_key(const char *backend, const char *key)
{
	return wait_key_for(backend, key, INFINITY) == 0 ? 0 : -1;
}

/* Scribble over every ring and storm the event channel for `seconds`. */
static void garbage(struct mtrace_guest *g, unsigned rings, double seconds)
{
	uint64_t notifies = 0, scribbles = 0;
	double end = now() + seconds;
	while (now() < end) {
		for (unsigned i = 0; i < rings; i++) {
			struct mtrace_ring *r = mtrace_guest_ring(g, i);
			size_t size = (size_t)r->mask + 1;
			/* random bytes, then some plausible-looking but wrong records */
			for (size_t o = 0; o + 8 <= size; o += 8) {
				uint64_t v = rnd();
				memcpy(r->data + o, &v, 8);
			}
			for (size_t o = 0; o + 32 <= size; o += 64 + (rnd() % 8) * 8) {
				struct mtrace_rec *rec = (struct mtrace_rec *)(r->data + o);
				rec->len =
				    (uint16_t)(rnd() % 3 == 0 ? 0xfff8 : 32 + (rnd() % 4) * 8);
				rec->op = (uint8_t)(rnd() % 5 == 0 ? MTRACE_OP_LABEL : rnd());
			}
			/* producer positions: backwards, far ahead, unaligned */
			uint64_t h;
			switch (rnd() % 4) {
			case 0:
				h = rnd();
				break;
			case 1:
				h = __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED) + size * 1000 +
				    4;
				break;
			case 2:
				h = 0;
				break;
			default:
				h = __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED) + size;
				break;
			}
			__atomic_store_n(
			    &r->hdr->tail, rnd() % 2 ? h - size : rnd(), __ATOMIC_RELAXED);
			__atomic_store_n(&r->hdr->head, h, __ATOMIC_RELEASE);
			scribbles++;
			/* the storm: every one of these is a real EVTCHNOP_send */
			for (int k = 0; k < 2000; k++) {
				mtrace_ring_kick(r);
				notifies++;
			}
		}
	}
	printf("garbage: notifies=%" PRIu64 " scribbles=%" PRIu64 "\n", notifies, scribbles);
}

static int run_garbage(int argc, char **argv)
{
	double seconds = 10;
	bool go = false;
	struct mtrace_guest_config cfg = { .rings = 1, .data_pages = 4, .backend = "xen" };
	static const struct option lo[] = {
		{ "seconds", 1, 0, 's' },
		{ "rings", 1, 0, 'r' },
		{ "pages", 1, 0, 'p' },
		{ "seed", 1, 0, 'x' },
		{ "backend", 1, 0, 'b' },
		{ "wait-go", 0, 0, 'w' },
		{ 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = atof(optarg);
			break;
		case 'r':
			cfg.rings = (unsigned)atoi(optarg);
			break;
		case 'p':
			cfg.data_pages = (unsigned)atoi(optarg);
			break;
		case 'x':
			rnd_state = strtoull(optarg, NULL, 0) | 1;
			break;
		case 'b':
			cfg.backend = optarg;
			break;
		case 'w':
			go = true;
			break;
		default:
			fprintf(stderr,
			    "usage: xen-guest garbage [--seconds S] [--rings N] [--pages P] [--seed X] [--wait-go]\n");
			return 2;
		}
	}
	char err[256];
	struct mtrace_guest *g = mtrace_guest_open(&cfg, err, sizeof err);
	if (!g) {
		fprintf(stderr, "xen-guest: %s\n", err);
		return 1;
	}
	printf("garbage: dom%u port %u rings %u\n", mtrace_guest_domid(g), mtrace_guest_port(g),
	    cfg.rings);
	fflush(stdout);
	{
		struct xenif *xs = xenif_open(cfg.backend, NULL, XENIF_XS, err, sizeof err);
		if (xs) {
			xs->ops->xs_write(xs, 0, "data/mtrace-test/announced", "1", 1);
			xenif_close(xs);
		}
	}
	/* a few honest events first, so that dom0 attaches and starts reading */
	for (unsigned i = 0; i < cfg.rings; i++)
		for (int k = 0; k < 100; k++)
			mtrace_switch(mtrace_guest_ring(g, i), (uint64_t)k);
	if (go && wait_key(cfg.backend, "go") < 0)
		return 1;

	garbage(g, cfg.rings, seconds);

	fflush(stdout);
	/* leave the wreck announced: dom0 must cope until the domain is destroyed */
	return 0;
}

static int run_load(int argc, char **argv)
{
	struct mtrace_guest_config cfg = { .rings = 2, .data_pages = 16, .backend = "xen" };
	uint64_t events = 10000;
	double rate = 0, linger = 0;
	bool labels = false, go = false, go_first = false;
	double then_rate = 0, then_garbage = 0;
	const char *go_key = "go", *until_key = NULL;
	static const struct option lo[] = {
		{ "rings", 1, 0, 'r' },
		{ "pages", 1, 0, 'p' },
		{ "events", 1, 0, 'n' },
		{ "rate", 1, 0, 'R' },
		{ "labels", 0, 0, 'l' },
		{ "wait-go", 0, 0, 'w' },
		{ "linger", 1, 0, 'L' },
		{ "backend", 1, 0, 'b' },
		{ "go-first", 0, 0, 'f' },
		{ "then-rate", 1, 0, 't' },
		{ "then-garbage", 1, 0, 'G' },
		{ "go-key", 1, 0, 'k' },
		{ "until-key", 1, 0, 'u' },
		{ 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			cfg.rings = (unsigned)atoi(optarg);
			break;
		case 'p':
			cfg.data_pages = (unsigned)atoi(optarg);
			break;
		case 'n':
			events = strtoull(optarg, NULL, 10);
			break;
		case 'R':
			rate = atof(optarg);
			break;
		case 'l':
			labels = true;
			break;
		case 'w':
			go = true;
			break;
		case 'f':
			go_first = true;
			break;
		case 't':
			then_rate = atof(optarg);
			break;
		case 'k':
			go_key = optarg;
			break;
		case 'u':
			until_key = optarg;
			break;
		case 'G':
			then_garbage = atof(optarg);
			break;
		case 'L':
			linger = atof(optarg);
			break;
		case 'b':
			cfg.backend = optarg;
			break;
		default:
			fprintf(stderr,
			    "usage: xen-guest load [--rings R] [--pages P] [--events N] "
			    "[--rate EPS] [--labels] [--wait-go] [--linger S]\n");
			return 2;
		}
	}
	char err[256];
	struct xenif *xs = xenif_open(cfg.backend, NULL, XENIF_XS, err, sizeof err);
	if (!xs) {
		fprintf(stderr, "xen-guest: xenstore: %s\n", err);
		return 1;
	}
	if (go_first && wait_key(cfg.backend, go_key) < 0)
		return 1;
	struct mtrace_guest *g = mtrace_guest_open(&cfg, err, sizeof err);
	if (!g) {
		fprintf(stderr, "xen-guest: %s\n", err);
		return 1;
	}
	printf("load: dom%u port %u rings %u pages %u events %" PRIu64 "\n", mtrace_guest_domid(g),
	    mtrace_guest_port(g), cfg.rings, cfg.data_pages, events);
	fflush(stdout);
	xs->ops->xs_write(xs, 0, "data/mtrace-test/announced", "1", 1);
	if (go && wait_key(cfg.backend, go_key) < 0)
		return 1;
	double t0 = now();
	/* pace in slices of 10 ms: the rate is what dom0 sees, not a burst per second */
	uint64_t per_slice = rate > 0 ? (uint64_t)(rate / 100 / cfg.rings) + 1 : events;
	for (uint64_t k = 0; k < events;) {
		uint64_t stop = k + per_slice < events ? k + per_slice : events;
		for (unsigned i = 0; i < cfg.rings; i++) {
			struct mtrace_ring *r = mtrace_guest_ring(g, i);
			for (uint64_t j = k; j < stop; j++) {
				if (labels && j % 64 == 0) {
					char l[48];
					snprintf(l, sizeof l, "label-%u-%" PRIu64, i, j);
					/* a string op, still carrying k in its place in the sequence */
					mtrace_label(r, j, l);
				} else {
					switch (j % 4) {
					case 0:
						mtrace_creates(r, 1, j, MTRACE_TT_TASK);
						break;
					case 1:
						mtrace_switch(r, j);
						break;
					case 2:
						mtrace_read(r, 1, j);
						break;
					default:
						mtrace_fulfills(r, 1, j);
						break;
					}
				}
			}
		}
		k = stop;
		if (rate > 0) {
			double due = t0 + (double)k * cfg.rings / rate;
			if (due > now())
				sleep_s(due - now());
		}
	}
	double dt = now() - t0;
	char sum[256];
	snprintf(sum, sizeof sum,
	    "{\"domid\":%u,\"rings\":%u,\"pages\":%u,\"events_per_ring\":%" PRIu64
	    ",\"records_per_ring\":%" PRIu64 ",\"seconds\":%.3f,\"kicks_skipped\":%" PRIu64 "}",
	    mtrace_guest_domid(g), cfg.rings, cfg.data_pages, events, events + 1, dt,
	    mtrace_guest_kicks_skipped(g));
	printf("%s\n", sum);
	fflush(stdout);
	xs->ops->xs_write(xs, 0, "data/mtrace-test/summary", sum, strlen(sum));
	if (then_garbage > 0) {
		/* turn hostile when dom0 says so: the same session, now scribbled over */
		if (wait_key(cfg.backend, "go2") < 0)
			return 1;
		garbage(g, cfg.rings, then_garbage);
		xs->ops->xs_write(xs, 0, "data/mtrace-test/garbage-done", "1", 1);
	}
	/* keep producing slowly (the sequence goes on from `events`) until linger ends */
	double until = now() + linger;
	for (uint64_t k = events; then_rate > 0 && now() < until; k++) {
		for (unsigned i = 0; i < cfg.rings; i++)
			mtrace_switch(mtrace_guest_ring(g, i), k);
		sleep_s(1 / then_rate);
	}
	if (until_key && until > now() &&
	    wait_key_for(cfg.backend, until_key, until - now()) == 0) {
		/* dom0 is done with this session: close it, for the next one */
		mtrace_guest_close(g);
		return 0;
	}
	if (until > now())
		sleep_s(until - now());
	/* leave the session as it is: dom0 must drain what is left before the grants go */
	return 0;
}

/* Publish a file in our xenstore home as KEY-0, KEY-1, ... (xenstored takes at most
 * 2048 bytes a node from a domU; '.' is not a valid xenstore path character) and
 * KEY-n = the chunk count. */
static int run_publish(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: xen-guest publish KEY FILE\n");
		return 2;
	}
	char err[256], path[160], buf[1024];
	struct xenif *xs = xenif_open("xen", NULL, XENIF_XS, err, sizeof err);
	if (!xs) {
		fprintf(stderr, "xen-guest: xenstore: %s\n", err);
		return 1;
	}
	FILE *f = fopen(argv[2], "r");
	unsigned k = 0;
	size_t n;
	int rc = 0;
	while (f && (n = fread(buf, 1, sizeof buf, f)) > 0) {
		snprintf(path, sizeof path, "data/mtrace-test/%s-%u", argv[1], k++);
		if (xs->ops->xs_write(xs, 0, path, buf, n) < 0) {
			fprintf(stderr, "xen-guest: write %s: %s\n", path, strerror(errno));
			rc = 1;
		}
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof path, "data/mtrace-test/%s-n", argv[1]);
	snprintf(buf, sizeof buf, "%u", k);
	if (xs->ops->xs_write(xs, 0, path, buf, strlen(buf)) < 0) {
		fprintf(stderr, "xen-guest: write %s: %s\n", path, strerror(errno));
		rc = 1;
	}
	xenif_close(xs);
	return rc;
}

static int run_wait(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: xen-guest wait KEY\n");
		return 2;
	}
	return wait_key("xen", argv[1]) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "load"))
		return run_load(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "garbage"))
		return run_garbage(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "publish"))
		return run_publish(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "wait"))
		return run_wait(argc - 1, argv + 1);
	fprintf(stderr, "usage: xen-guest load|garbage|publish|wait [options]\n");
	return 2;
}
