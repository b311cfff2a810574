/*
 * pingpong-guest - a guest that plays event-channel ping-pong with other guests, one
 * channel per peer, one thread and one ring per channel, and traces every send and
 * receive: the send before the notification, the receive after the wake-up, so that
 * on any true clock each send comes before its receive.  Each side sends only after
 * its last send was answered, so no notification coalesces: the k-th send of a
 * channel is its k-th receive, which is how the tests pair them.
 *
 *   pingpong-guest --clock C [--serve D,...] [--join D,...] --rounds N --summary FILE
 *
 * C: monotonic, realtime, xen, tsc (a line on CLOCK_MONOTONIC) or tsc-xen (the same
 * line named the xen timeline, which is what the simulated Xen's system time reads).
 * --serve D: offer domain D a port (written to data/pingpong/serve-D; the test copies
 * it to D's data/pingpong/join-<us>, as a toolstack would), then answer D's pings.
 * --join D: bind to the port D offers (read from our data/pingpong/join-D), then ping
 * D N times.  Every channel starts once dom0 reads every ring (nothing of it is missed);
 * at the end the guest waits until dom0 has read everything, writes the summary
 * (JSON: per channel its peer, port, role, sends and receives) and stays up until
 * SIGTERM.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mtrace-guest.h"
#include "xenif.h"

#define PEERS_MAX 16
#define WAIT_S    60 /* for a peer, a port, a reader, a wake-up */

struct chan {
	uint32_t peer;
	bool serve;
	struct mtrace_ring *r;
	struct xenif *x;
	int port;
	uint64_t sends, recvs;
	const char *err;
	pthread_t tid;
};

static struct chan ch[PEERS_MAX];
static unsigned nch, rounds;
static uint32_t self;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for our port to fire (-1: it did not within WAIT_S), then unmask it. */
static int wait_port(struct chan *c)
{
	struct pollfd p = { c->x->ops->evtchn_fd(c->x), POLLIN, 0 };
	double end = now_s() + WAIT_S;

	for (;;) {
		int port = c->x->ops->evtchn_pending(c->x);
		if (port == c->port)
			return c->x->ops->evtchn_unmask(c->x, (uint32_t)port);
		if (port >= 0) {
			c->x->ops->evtchn_unmask(c->x, (uint32_t)port);
			continue;
		}
		if (errno != EAGAIN || now_s() > end || stop)
			return -1;
		poll(&p, 1, 100);
	}
}

static char *xs_get(struct xenif *x, const char *path)
{
	size_t len;

	return x->ops->xs_read(x, 0, path, &len);
}

static int setup(struct chan *c)
{
	char path[128], val[32];
	char *v = NULL;
	double end = now_s() + WAIT_S;

	if (c->serve) {
		if ((c->port = c->x->ops->evtchn_bind_unbound(c->x, c->peer)) < 0)
			return -1;
		snprintf(path, sizeof(path), "data/pingpong/serve-%" PRIu32, c->peer);
		snprintf(val, sizeof(val), "%d", c->port);
		return c->x->ops->xs_write(c->x, 0, path, val, strlen(val));
	}
	snprintf(path, sizeof(path), "data/pingpong/join-%" PRIu32, c->peer);
	while (!(v = xs_get(c->x, path)) && now_s() < end && !stop)
		usleep(20000);
	if (!v)
		return -1;
	c->port = c->x->ops->evtchn_bind_interdomain(c->x, c->peer, (uint32_t)atoi(v));
	free(v);
	/* Xen sets a freshly bound port pending once: not a ping of the peer */
	return c->port < 0 ? -1 : wait_port(c);
}

static void send_one(struct chan *c)
{
	mtrace_evtchn_send(c->r, c->peer, (uint32_t)c->port);
	c->sends++;
	c->x->ops->evtchn_notify(c->x, (uint32_t)c->port);
}

static int recv_one(struct chan *c)
{
	if (wait_port(c) < 0)
		return -1;
	mtrace_evtchn_recv(c->r, c->peer, (uint32_t)c->port);
	c->recvs++;
	return 0;
}

static bool reader_attached(const struct mtrace_ring *r)
{
	return __atomic_load_n(&r->hdr->req_event, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&r->hdr->reader_pos, __ATOMIC_RELAXED) != 0;
}

static bool reader_done(const struct mtrace_ring *r)
{
	return __atomic_load_n(&r->hdr->reader_pos, __ATOMIC_RELAXED) >=
	    __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED);
}

static void *play(void *arg)
{
	struct chan *c = arg;
	double end = now_s() + WAIT_S;

	while (!reader_attached(c->r) && now_s() < end && !stop)
		usleep(5000);
	if (!reader_attached(c->r)) {
		c->err = "no reader attached";
		return NULL;
	}
	if (setup(c) < 0) {
		c->err = "channel set-up failed";
		return NULL;
	}
	for (unsigned k = 0; k < rounds && !stop; k++) {
		if (!c->serve)
			send_one(c);
		if (recv_one(c) < 0) {
			c->err = "the peer went quiet";
			return NULL;
		}
		if (c->serve)
			send_one(c);
	}
	mtrace_ring_kick(c->r);
	return NULL;
}

static int add_peers(const char *list, bool serve)
{
	char *copy = strdup(list), *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (nch == PEERS_MAX)
			return -1;
		ch[nch].peer = (uint32_t)strtoul(t, NULL, 10);
		ch[nch++].serve = serve;
	}
	free(copy);
	return 0;
}

int main(int argc, char **argv)
{
	struct mtrace_guest_config cfg = { .data_pages = 64 };
	const char *summary = NULL;
	struct mtrace_guest *g;
	char err[256];
	int rc = 0;
	FILE *out;

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--clock")) {
			cfg.clock = !strcmp(v, "realtime") ? MTRACE_CLOCK_REALTIME
			    : !strcmp(v, "xen")            ? MTRACE_CLOCK_XEN
			    : !strncmp(v, "tsc", 3)        ? MTRACE_CLOCK_TSC
			                                   : MTRACE_CLOCK_MONOTONIC;
			cfg.tsc_timeline = !strcmp(v, "tsc-xen") ? MTRACE_CLOCK_XEN : 0;
		} else if (!strcmp(k, "--serve") || !strcmp(k, "--join")) {
			if (add_peers(v, !strcmp(k, "--serve")) < 0)
				return 2;
		} else if (!strcmp(k, "--rounds")) {
			rounds = (unsigned)atoi(v);
		} else if (!strcmp(k, "--summary")) {
			summary = v;
		} else {
			fprintf(stderr, "pingpong-guest: unknown option %s\n", k);
			return 2;
		}
	}
	if (!nch || !rounds || !summary) {
		fprintf(stderr, "pingpong-guest: --serve/--join, --rounds and --summary\n");
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	cfg.rings = nch;
	if (!(g = mtrace_guest_open(&cfg, err, sizeof(err)))) {
		fprintf(stderr, "pingpong-guest: %s\n", err);
		return 1;
	}
	self = mtrace_guest_domid(g);
	for (unsigned i = 0; i < nch; i++) {
		ch[i].r = mtrace_guest_ring(g, i);
		ch[i].x = xenif_open(NULL, NULL, XENIF_EVTCHN | XENIF_XS, err, sizeof(err));
		if (!ch[i].x) {
			fprintf(stderr, "pingpong-guest: %s\n", err);
			return 1;
		}
		pthread_create(&ch[i].tid, NULL, play, &ch[i]);
	}
	for (unsigned i = 0; i < nch; i++) {
		pthread_join(ch[i].tid, NULL);
		if (ch[i].err) {
			fprintf(stderr, "pingpong-guest: dom%" PRIu32 ", peer %" PRIu32 ": %s\n",
			    self, ch[i].peer, ch[i].err);
			rc = 1;
		}
	}
	for (double end = now_s() + WAIT_S; now_s() < end && !stop;) {
		unsigned done = 0;
		for (unsigned i = 0; i < nch; i++)
			done += reader_done(ch[i].r);
		if (done == nch)
			break;
		usleep(10000);
	}
	if (!(out = fopen(summary, "w")))
		return 1;
	fprintf(out, "{\"domid\":%" PRIu32 ",\"clock\":%" PRIu32 ",\"channels\":[", self,
	    mtrace_guest_clock(g));
	for (unsigned i = 0; i < nch; i++)
		fprintf(out,
		    "%s{\"peer\":%" PRIu32 ",\"port\":%d,\"role\":\"%s\",\"sends\":%" PRIu64
		    ",\"recvs\":%" PRIu64 "}",
		    i ? "," : "", ch[i].peer, ch[i].port, ch[i].serve ? "serve" : "join",
		    ch[i].sends, ch[i].recvs);
	fprintf(out, "]}\n");
	fclose(out);
	while (!stop)
		pause();
	for (unsigned i = 0; i < nch; i++)
		xenif_close(ch[i].x);
	mtrace_guest_close(g);
	return rc;
}
