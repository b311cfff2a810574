/*
 * mtrace-load - a workload guest: opens a tracing session (simulated or real Xen),
 * runs one producer pthread per ring writing a deterministic mix of the whole
 * vocabulary, and prints a JSON summary of exactly what it wrote, so tests can
 * compare the daemon's counts with the truth.  --garbage makes it a hostile guest;
 * --pingpong makes it one side of event-channel round trips with another domain
 * (pingpong.c), each send and receive recorded.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "load.h"
#include "pingpong.h"
#include "xenif.h"

static volatile sig_atomic_t stop, reannounce;
static unsigned finished; /* producer threads done (atomic) */
static unsigned reannounced;
static struct mtrace_guest *guest;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		reannounce = 1;
	else
		stop = 1;
}

/* SIGUSR1: announce again, as after resume or migration (main thread only). */
static void service_signals(void)
{
	if (!reannounce)
		return;
	reannounce = 0;
	if (mtrace_guest_reannounce(guest) < 0)
		fprintf(stderr, "mtrace-load: re-announce failed: %s\n", strerror(errno));
	else
		reannounced++;
}

static uint64_t rnd(struct ring_job *j)
{
	/* xorshift64*: deterministic per (seed, ring) */
	j->rng ^= j->rng >> 12;
	j->rng ^= j->rng << 25;
	j->rng ^= j->rng >> 27;
	return j->rng * 2685821657736338717ull;
}

static double now_s(void)
{
	return clock_mono_s();
}

static void sleep_s(double s)
{
	struct timespec ts;
	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void count(struct ring_job *j, uint8_t op)
{
	j->events++;
	j->per_op[op]++;
}

/* Follow-up ops of a thread replacement: resolve the old one, create, label the new. */
enum {
	Q_RESOLVE = 1,
	Q_CREATE,
	Q_LABEL
};

/* One event of the mix. */
static void step(struct ring_job *j)
{
	const struct opts *o = j->o;
	struct mtrace_ring *r = j->r;
	unsigned slot = (unsigned)(rnd(j) % o->threads);
	uint64_t other = j->slots[slot];
	char s[32];

	if (j->queued > 0) {
		uint64_t q = j->queue[--j->queued];
		unsigned kind = (unsigned)(q >> 56);
		uint64_t id = q & ((1ull << 56) - 1);
		if (kind == Q_RESOLVE) {
			if (rnd(j) % 100 < o->fail_pct) {
				mtrace_fails(r, j->cur, id, "Failure(\"mtrace-load\")");
				count(j, MTRACE_OP_FAILS);
			} else {
				mtrace_fulfills(r, j->cur, id);
				count(j, MTRACE_OP_FULFILLS);
			}
		} else if (kind == Q_CREATE) {
			mtrace_creates(r, j->cur, id, (uint8_t)(rnd(j) % MTRACE_TT_COUNT));
			count(j, MTRACE_OP_CREATES);
		} else {
			unsigned k = (unsigned)(rnd(j) % o->labels);
			snprintf(s, sizeof(s), "label-%u", k);
			mtrace_label(r, id, o->label_names[k] ? o->label_names[k] : s);
			count(j, MTRACE_OP_LABEL);
			j->labels[k]++;
		}
		return;
	}
	if (rnd(j) % 100 < o->evtchn_pct) {
		mtrace_evtchn_send(r, j->cur, j->port);
		count(j, MTRACE_OP_EVTCHN_SEND);
		return;
	}
	switch (rnd(j) % 16) {
	case 0: { /* replace a thread: resolve it, create its successor, maybe label it */
		uint64_t id = j->next_id++;
		j->slots[slot] = id;
		if (o->labels > 0)
			j->queue[j->queued++] = ((uint64_t)Q_LABEL << 56) | id;
		j->queue[j->queued++] = ((uint64_t)Q_CREATE << 56) | id;
		j->queue[j->queued++] = ((uint64_t)Q_RESOLVE << 56) | other;
		step(j);
		return;
	}
	case 1:
	case 2:
	case 3:
	case 4:
		j->cur = other;
		mtrace_switch(r, other);
		count(j, MTRACE_OP_SWITCH);
		return;
	case 5:
	case 6:
	case 7:
		mtrace_read(r, j->cur, other);
		count(j, MTRACE_OP_READ);
		return;
	case 8:
		mtrace_try_read(r, j->cur, other);
		count(j, MTRACE_OP_TRY_READ);
		return;
	case 9:
		mtrace_signal(r, other, j->cur);
		j->cur = other;
		count(j, MTRACE_OP_SIGNAL);
		return;
	case 10:
		if (o->counters > 0) {
			unsigned k = (unsigned)(rnd(j) % o->counters);
			snprintf(s, sizeof(s), "counter-%u", k);
			mtrace_counter(r, j->cur, s, (int64_t)(rnd(j) % 100000));
			count(j, MTRACE_OP_COUNTER);
			j->counters[k]++;
			return;
		}
		break;
	case 11:
		if (o->counters > 0) {
			unsigned k = (unsigned)(rnd(j) % o->counters);
			snprintf(s, sizeof(s), "counter-%u", k);
			mtrace_increase(r, j->cur, s, (int64_t)(rnd(j) % 100) - 50);
			count(j, MTRACE_OP_INCREASE);
			j->counters[k]++;
			return;
		}
		break;
	case 12:
		mtrace_becomes(r, other, j->cur);
		count(j, MTRACE_OP_BECOMES);
		return;
	case 13:
		mtrace_gc(r, 1000 + rnd(j) % 100000);
		count(j, MTRACE_OP_GC);
		return;
	case 14:
		mtrace_evtchn_recv(r, j->cur, j->port);
		count(j, MTRACE_OP_EVTCHN_RECV);
		return;
	default:
		break;
	}
	/* guest goes idle */
	j->cur = MTRACE_THREAD_NONE;
	mtrace_switch(r, MTRACE_THREAD_NONE);
	count(j, MTRACE_OP_SWITCH);
}

/*
 * Hostile writes straight into our own ring, bypassing the library: what a broken
 * or malicious guest could put there.  Afterwards the producer state is reset to
 * an empty ring a lap further on, so valid events can follow.
 */
static void garbage_step(struct ring_job *j, enum garbage g)
{
	struct mtrace_ring *r = j->r;
	struct mtrace_ring_hdr *h = r->hdr;
	uint64_t size = r->mask + 1;
	uint64_t base = r->head, n, i;
	struct mtrace_rec rec;

	if (g == G_MIXED)
		g = (enum garbage)(G_RANDOM + rnd(j) % 4);
	switch (g) {
	case G_RANDOM:
		n = 8 * (1 + rnd(j) % (size / 16));
		for (i = 0; i < n; i++)
			r->data[(base + i) & r->mask] = (uint8_t)rnd(j);
		__atomic_store_n(&h->head, base + n, __ATOMIC_RELEASE);
		break;
	case G_LENGTHS: {
		static const uint16_t bad[] = { 0, 7, 12, 24, 4104, 65528, 1000 };
		memset(&rec, 0, sizeof(rec));
		rec.len = bad[rnd(j) % (sizeof(bad) / sizeof(bad[0]))];
		rec.op = MTRACE_OP_READ;
		rec.seq = r->seq;
		memcpy(r->data + (base & r->mask), &rec, 8);
		__atomic_store_n(&h->head, base + 64, __ATOMIC_RELEASE);
		break;
	}
	case G_STRINGS:
		memset(&rec, 0, sizeof(rec));
		rec.len = 64;
		rec.op = MTRACE_OP_LABEL;
		rec.seq = r->seq;
		if ((base & r->mask) + 64 <= size) {
			memcpy(r->data + (base & r->mask), &rec, sizeof(rec));
			memset(r->data + (base & r->mask) + 32, 'A', 32);
			__atomic_store_n(&h->head, base + 64, __ATOMIC_RELEASE);
		}
		break;
	case G_INDEXES:
		switch (rnd(j) % 4) {
		case 0:
			__atomic_store_n(&h->head, base + 4, __ATOMIC_RELEASE);
			break;
		case 1:
			__atomic_store_n(&h->tail, base + 4096, __ATOMIC_RELEASE);
			break;
		case 2:
			__atomic_store_n(&h->head, rnd(j), __ATOMIC_RELEASE);
			__atomic_store_n(&h->tail, rnd(j), __ATOMIC_RELEASE);
			break;
		default:
			__atomic_store_n(&h->head, base > 4096 ? base - 4096 : 0, __ATOMIC_RELEASE);
			break;
		}
		break;
	default:
		return;
	}
	j->garbage_writes++;
	/* Leave it there long enough for dom0 to look at it, then start clean a lap on. */
	sleep_s(0.002);
	r->head = (base + 2 * size) & ~(uint64_t)7;
	r->tail = r->head;
	__atomic_store_n(&h->tail, r->tail, __ATOMIC_RELEASE);
	__atomic_store_n(&h->head, r->head, __ATOMIC_RELEASE);
}

static void *ring_main(void *arg)
{
	struct ring_job *j = arg;
	const struct opts *o = j->o;
	double t0 = now_s(), end = o->duration > 0 ? t0 + o->duration : 0;
	uint64_t target = o->duration > 0 ? UINT64_MAX : o->events;
	uint64_t batch = o->rate ? (uint64_t)((double)o->rate * (double)o->batch_us / 1e6) : 256;

	if (batch == 0)
		batch = 1;

	while (j->events < target && !stop) {
		for (uint64_t i = 0; i < batch && j->events < target; i++) {
			if (o->garbage != G_NONE && rnd(j) % 64 == 0)
				garbage_step(j, o->garbage);
			else
				step(j);
		}
		double now = now_s();
		if (end > 0 && now >= end)
			break;
		if (o->rate) {
			/* absolute schedule: sleeping late does not accumulate drift */
			double due = t0 + (double)(j->events - 1) / (double)o->rate;
			if (end > 0 && due > end)
				due = end;
			if (o->spin) /* a vCPU that never blocks (the vCPU tests: issue 38) */
				while (now_s() < due && !stop)
					;
			else
				sleep_s(due - now);
		}
	}
	__atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* --pingpong: each send and receive on ring 0, as the workload's are, thread 1. */
static void pp_sent(void *arg, uint32_t port)
{
	struct ring_job *j = arg;

	mtrace_evtchn_send(j->r, 1, port);
	count(j, MTRACE_OP_EVTCHN_SEND);
}

static void pp_received(void *arg, uint32_t port)
{
	struct ring_job *j = arg;

	mtrace_evtchn_recv(j->r, 1, port);
	count(j, MTRACE_OP_EVTCHN_RECV);
}

/* One exchange: its role from data/mtrace-pingpong/NAME/role, then the round trips. */
/* One exchange; its port is left bound in *bound (pingpong_all unbinds them all at the
 * end): a port closed here would be the next exchange's, and mtraced, which asks Xen
 * about a port when it reads the first event naming it (EvtchnLink), would find it
 * closed, or bound to the next exchange's peer. */
static int pingpong_one(struct xenif *x, const struct opts *o, const struct pingpong_spec *sp,
    struct ring_job *j, int *bound)
{
	struct pingpong_hooks h = { pp_sent, pp_received, j };
	char base[128], path[160], err[160] = "";
	unsigned domid, rport, n = 0;
	xenif_domid_t self;
	int port = -1, starts = 0;

	if (x->ops->xs_get_domid(x, &self) < 0) {
		fprintf(
		    stderr, "mtrace-load: pingpong %s: own domid: %s\n", sp->name, strerror(errno));
		return -1;
	}
	snprintf(base, sizeof(base), "/local/domain/%u/data/mtrace-pingpong/%s", self, sp->name);
	snprintf(path, sizeof(path), "%s/role", base);
	char *role = pingpong_wait_key(x, path, o->pingpong_timeout);
	if (!role) {
		fprintf(stderr, "mtrace-load: pingpong %s: no %s in %.0f s\n", sp->name, path,
		    o->pingpong_timeout);
		return -1;
	}
	if (sscanf(role, "offer %u", &domid) == 1) {
		char v[16];
		port = pingpong_offer(x, domid);
		snprintf(path, sizeof(path), "%s/port", base);
		snprintf(v, sizeof(v), "%d", port);
		if (port < 0 || x->ops->xs_write(x, 0, path, v, strlen(v)) < 0)
			snprintf(err, sizeof(err), "offering a port to dom%u: %s", domid,
			    strerror(errno));
	} else if (sscanf(role, "connect %u %u", &domid, &rport) == 2) {
		port = pingpong_connect(x, domid, rport, o->pingpong_timeout, err, sizeof(err));
		starts = 1;
	} else
		snprintf(
		    err, sizeof(err), "role \"%.40s\" is neither offer D nor connect D P", role);
	free(role);
	if (port >= 0 && !err[0])
		n = pingpong_run(
		    x, (uint32_t)port, starts, sp->n, o->pingpong_timeout, &h, err, sizeof(err));
	*bound = port;
	if (n < sp->n) {
		fprintf(stderr, "mtrace-load: pingpong %s: %u of %u round trips: %s\n", sp->name, n,
		    sp->n, err);
		return -1;
	}
	return 0;
}

static bool wait_rings(
    struct ring_job *jobs, unsigned n, double timeout, bool (*pred)(struct mtrace_ring *));
static bool reader_done(struct mtrace_ring *r);

static int pingpong_all(const struct opts *o, struct ring_job *j)
{
	char err[256];
	struct xenif *x =
	    xenif_open(o->backend, o->sim_dir, XENIF_EVTCHN | XENIF_XS, err, sizeof(err));
	int rc = 0, bound[PINGPONG_MAX];

	if (!x) {
		fprintf(stderr, "mtrace-load: pingpong: %s\n", err);
		return -1;
	}
	for (unsigned i = 0; i < PINGPONG_MAX; i++)
		bound[i] = -1;
	for (unsigned i = 0; i < o->npingpong && rc == 0 && !stop; i++)
		rc = pingpong_one(x, o, &o->pingpong[i], j, &bound[i]);
	/* and bound until dom0's reader has read every event naming them (mtraced delivers
	 * an event before it moves reader_pos past it), up to --linger */
	if (o->linger > 0) {
		mtrace_ring_kick(j->r);
		wait_rings(j, 1, o->linger, reader_done);
	}
	for (unsigned i = 0; i < o->npingpong; i++)
		if (bound[i] >= 0)
			x->ops->evtchn_unbind(x, (xenif_port_t)bound[i]);
	xenif_close(x);
	return rc;
}

/* Wait until every ring satisfies pred, or timeout; returns true if it did. */
static bool wait_rings(
    struct ring_job *jobs, unsigned n, double timeout, bool (*pred)(struct mtrace_ring *))
{
	double end = now_s() + timeout;

	for (;;) {
		unsigned ok = 0;
		for (unsigned i = 0; i < n; i++)
			ok += pred(jobs[i].r);
		if (ok == n)
			return true;
		if (now_s() >= end || stop)
			return false;
		service_signals();
		sleep_s(0.005);
	}
}

static bool reader_attached(struct mtrace_ring *r)
{
	return __atomic_load_n(&r->hdr->req_event, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&r->hdr->reader_pos, __ATOMIC_RELAXED) != 0;
}

static bool reader_done(struct mtrace_ring *r)
{
	return __atomic_load_n(&r->hdr->reader_pos, __ATOMIC_RELAXED) >=
	    __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct mtrace_guest_config cfg = { 0 };
	struct mtrace_guest *g;
	struct ring_job *jobs;
	pthread_t *th;
	char err[256];
	struct sigaction sa = { 0 };
	FILE *out = stdout;
	int rc = 0;

	if (load_parse_args(argc, argv, &o) < 0)
		return 2;
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	cfg.rings = o.rings;
	cfg.data_pages = o.pages;
	cfg.clock = o.clock;
	cfg.backend = o.backend;
	cfg.sim_dir = o.sim_dir;
	cfg.backend_domid = o.backend_domid;
	g = guest = mtrace_guest_open(&cfg, err, sizeof(err));
	if (g == NULL) {
		fprintf(stderr, "mtrace-load: %s\n", err);
		load_free_labels(&o);
		return 1;
	}
	jobs = calloc(o.rings, sizeof(*jobs));
	th = calloc(o.rings, sizeof(*th));
	if (jobs == NULL || th == NULL) {
		fprintf(stderr, "mtrace-load: out of memory\n");
		mtrace_guest_close(g);
		return 1;
	}
	for (unsigned i = 0; i < o.rings; i++) {
		struct ring_job *j = &jobs[i];
		j->o = &o;
		j->r = mtrace_guest_ring(g, i);
		j->index = i;
		j->port = mtrace_guest_port(g);
		j->rng = (o.seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
		j->slots = calloc(o.threads, sizeof(uint64_t));
		if (j->slots == NULL) {
			fprintf(stderr, "mtrace-load: out of memory\n");
			return 1;
		}
		/* Each ring is a vCPU running threads of its own: thread ids are the
		 * domain's, and two vCPUs never create the same one.  A shared id space
		 * made both rings create threads N+1, N+2, ... (N = -t) at about the
		 * same time, and which
		 * creation and which label the daemon saw last depended on how it
		 * interleaved the rings (a label counted once instead of twice). */
		uint64_t base = (uint64_t)i << RING_ID_SHIFT;
		for (unsigned k = 0; k < o.threads; k++)
			j->slots[k] = base + k + 1;
		j->next_id = base + o.threads + 1;
		j->cur = MTRACE_THREAD_NONE;
		/* The session already wrote RING_START (seq 0). */
		count(j, MTRACE_OP_RING_START);
	}
	if (o.wait_reader > 0 && !wait_rings(jobs, o.rings, o.wait_reader, reader_attached))
		fprintf(stderr, "mtrace-load: no reader attached after %.1f s; writing anyway\n",
		    o.wait_reader);

	double t0 = now_s();
	unsigned nth = o.rings; /* producer threads */
	if (o.npingpong) {
		/* instead of the workload: ring 0 records every send and receive */
		if (pingpong_all(&o, &jobs[0]) < 0)
			rc = 1;
		nth = 0;
	}
	for (unsigned i = 0; i < nth; i++)
		if (pthread_create(&th[i], NULL, ring_main, &jobs[i]) != 0) {
			fprintf(stderr, "mtrace-load: pthread_create failed\n");
			stop = 1;
			nth = i;
			rc = 1;
			break;
		}
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < nth) {
		service_signals();
		sleep_s(0.01);
	}
	for (unsigned i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	double elapsed = now_s() - t0;

	bool caught_up = false;
	if (o.linger > 0) {
		/* Ask dom0 to wake at once for the rest, then wait for it to catch up. */
		for (unsigned i = 0; i < o.rings; i++)
			mtrace_ring_kick(jobs[i].r);
		caught_up = wait_rings(jobs, o.rings, o.linger, reader_done);
	}
	if (o.summary != NULL && (out = fopen(o.summary, "w")) == NULL) {
		fprintf(stderr, "mtrace-load: %s: %s\n", o.summary, strerror(errno));
		out = stdout;
		rc = 1;
	}
	load_summary(out, &o, g, jobs, elapsed, caught_up, reannounced);
	if (out != stdout)
		fclose(out);
	else
		fflush(stdout);
	/* The domain stays as the workload left it (its pending threads pending), so that
	 * every reader's figures can settle on the same numbers (test-outlets-agree). */
	while (o.hold && !stop) {
		service_signals();
		sleep_s(0.05);
	}
	mtrace_guest_close(g);
	for (unsigned i = 0; i < o.rings; i++)
		free(jobs[i].slots);
	free(jobs);
	load_free_labels(&o);
	free(th);
	return rc;
}
