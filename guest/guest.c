/*
 * guest.c - a guest's tracing session: share the rings with dom0 through grant
 * tables, offer an event channel and announce both in xenstore (xenif, so the same
 * code runs on Xen and on the simulated Xen), with the ring clock against Xen system
 * time (clock-sync.c).
 *
 * A session has one thread of its own when it needs one: a TSC clock's recalibration
 * (every recalibrate_ms), and the clock-sync check (once a second, where a source of Xen
 * time answered at open).  Producers never wait for it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock-sync.h"
#include "mtrace-guest.h"
#include "xenif.h"

#define XS_TX_TRIES   64   /* EAGAIN retries of the announcement transaction */
#define TSC_SETTLE_US 5000 /* first calibration: two samples this far apart */
#define TSC_PERIOD_MS 100  /* default recalibration period */
#define SYNC_WAKE_MS  1000 /* the thread's period when only clock-sync needs it */

struct guest_ring {
	struct mtrace_ring ring;
	void *hdr_page;
	void *data;
	xenif_gref_t hdr_ref;
};

struct mtrace_guest {
	struct xenif *x;
	xenif_domid_t domid;
	xenif_domid_t backend;
	int port; /* -1 until bound */
	unsigned nrings;
	unsigned data_pages;
	uint32_t clock, tsc_timeline;
	pthread_mutex_t kick_lock;
	uint64_t kicks_skipped;
	/* TSC clock: the calibration the session thread keeps (and the headers) current */
	struct mtrace_tsc_cal tsc;
	unsigned tsc_period_ms;
	struct clock_sync sync; /* the ring clock against Xen system time */
	bool sync_on;           /* a source answered at open: the thread checks it */
	/* the session thread (TSC recalibration, clock-sync checks) */
	bool th_on;
	bool th_stop;
	pthread_t th_tid;
	pthread_mutex_t th_lock;
	pthread_cond_t th_cond;
	struct guest_ring rings[];
};

static void __attribute__((format(printf, 3, 4)))
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const char *clock_name(uint32_t clock)
{
	switch (clock) {
	case MTRACE_CLOCK_XEN:
		return "xen";
	case MTRACE_CLOCK_REALTIME:
		return "realtime";
	case MTRACE_CLOCK_TSC:
		return "tsc";
	default:
		return "monotonic";
	}
}

/*
 * Several producer threads may kick at once.  If one is already notifying, another
 * notification adds nothing dom0 would not see on that wake-up's drain, and a
 * producer must never wait: skip it.
 */
static void guest_notify(struct mtrace_guest *g)
{
	if (g->port < 0)
		return;
	if (pthread_mutex_trylock(&g->kick_lock) != 0) {
		__atomic_fetch_add(&g->kicks_skipped, 1, __ATOMIC_RELAXED);
		return;
	}
	g->x->ops->evtchn_notify(g->x, (xenif_port_t)g->port);
	pthread_mutex_unlock(&g->kick_lock);
}

static int __attribute__((format(printf, 4, 5)))
xs_printf(struct mtrace_guest *g, uint32_t tx, const char *path, const char *fmt, ...)
{
	char val[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(val)) {
		errno = EOVERFLOW;
		return -1;
	}
	return g->x->ops->xs_write(g->x, tx, path, val, (size_t)n);
}

static int announce_tx(struct mtrace_guest *g, uint32_t tx, const char *base)
{
	char path[256];
	unsigned i;

	/* A previous announcement may have had more rings: start from nothing. */
	if (g->x->ops->xs_rm(g->x, tx, base) < 0 && errno != ENOENT)
		return -1;
#define W(key, ...)                                               \
	do {                                                      \
		snprintf(path, sizeof(path), "%s/%s", base, key); \
		if (xs_printf(g, tx, path, __VA_ARGS__) < 0)      \
			return -1;                                \
	} while (0)
	W("version", "%u", g->clock == MTRACE_CLOCK_TSC ? MTRACE_RING_VERSION : 1);
	W("clock", "%s", clock_name(g->clock));
	W("event-channel", "%d", g->port);
	W("rings", "%u", g->nrings);
	/* the ring clock against Xen system time, when a source answered */
	if (clock_sync_put(&g->sync, tx, base) < 0)
		return -1;
	for (i = 0; i < g->nrings; i++) {
		char key[32];
		snprintf(key, sizeof(key), "ring/%u/ref", i);
		W(key, "%" PRIu32, g->rings[i].hdr_ref);
		snprintf(key, sizeof(key), "ring/%u/pages", i);
		W(key, "%u", g->data_pages);
	}
	/* Last: dom0 reads nothing before it sees "ready". */
	W("state", "ready");
#undef W
	return 0;
}

/* Run fn in a xenstore transaction, retrying on EAGAIN (another writer raced us). */
static int xs_transact(struct mtrace_guest *g,
    int (*fn)(struct mtrace_guest *, uint32_t, const char *), const char *base)
{
	for (int tries = 0; tries < XS_TX_TRIES; tries++) {
		uint32_t tx = g->x->ops->xs_transaction_start(g->x);
		if (tx == 0)
			return -1;
		if (fn(g, tx, base) < 0) {
			int e = errno;
			g->x->ops->xs_transaction_end(g->x, tx, true);
			errno = e;
			return -1;
		}
		if (g->x->ops->xs_transaction_end(g->x, tx, false) == 0)
			return 0;
		if (errno != EAGAIN)
			return -1;
	}
	errno = EAGAIN;
	return -1;
}

static void base_path(const struct mtrace_guest *g, char *buf, size_t len)
{
	snprintf(buf, len, "/local/domain/%" PRIu32 "/%s", g->domid, MTRACE_XS_DIR);
}

int mtrace_guest_reannounce(struct mtrace_guest *g)
{
	char base[128];
	int rc = -1, e;

	/* Measured before the lock: on real Xen it may sleep (xenif's clock_pair).  After
	 * a resume the relation is another host's Xen time: measured again here. */
	clock_sync_measure(&g->sync);
	/* The xenif handle is not shared between threads: producers notifying meanwhile
	 * find the lock taken and skip (the reader's periodic drain covers them). */
	pthread_mutex_lock(&g->kick_lock);
	/* After resume or migration the domid may have changed. */
	if (g->x->ops->xs_get_domid(g->x, &g->domid) == 0) {
		base_path(g, base, sizeof(base));
		rc = xs_transact(g, announce_tx, base);
	}
	e = errno;
	pthread_mutex_unlock(&g->kick_lock);
	errno = e;
	return rc;
}

static int withdraw_tx(struct mtrace_guest *g, uint32_t tx, const char *base)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/state", base);
	return g->x->ops->xs_write(g->x, tx, path, "closed", 6);
}

static void tsc_publish_all(struct mtrace_guest *g)
{
	for (unsigned i = 0; i < g->nrings; i++)
		mtrace_tsc_publish(&g->tsc, g->rings[i].ring.hdr);
}

/* The clock-sync check: measured once a second, rewritten when it moved. */
static void sync_check(struct mtrace_guest *g)
{
	char base[128];

	if (!g->sync_on || !clock_sync_due(&g->sync) || !clock_sync_measure(&g->sync) ||
	    !clock_sync_moved(&g->sync))
		return;
	pthread_mutex_lock(&g->kick_lock);
	base_path(g, base, sizeof(base));
	clock_sync_put(&g->sync, 0, base); /* a failure is retried at the next check */
	pthread_mutex_unlock(&g->kick_lock);
}

/* Recalibrate the TSC every period, check clock-sync, until the session closes. */
static void *session_main(void *arg)
{
	struct mtrace_guest *g = arg;
	unsigned period = g->clock == MTRACE_CLOCK_TSC ? g->tsc_period_ms : SYNC_WAKE_MS;
	struct timespec dl;

	pthread_mutex_lock(&g->th_lock);
	clock_gettime(CLOCK_MONOTONIC, &dl);
	while (!g->th_stop) {
		dl.tv_nsec += (long)period * 1000000;
		while (dl.tv_nsec >= 1000000000) {
			dl.tv_nsec -= 1000000000;
			dl.tv_sec++;
		}
		if (pthread_cond_timedwait(&g->th_cond, &g->th_lock, &dl) == ETIMEDOUT) {
			if (g->clock == MTRACE_CLOCK_TSC) {
				mtrace_tsc_recalibrate(&g->tsc);
				tsc_publish_all(g);
			}
			sync_check(g);
			clock_gettime(CLOCK_MONOTONIC, &dl);
		}
	}
	pthread_mutex_unlock(&g->th_lock);
	return NULL;
}

static void session_stop(struct mtrace_guest *g)
{
	if (!g->th_on)
		return;
	pthread_mutex_lock(&g->th_lock);
	g->th_stop = true;
	pthread_cond_signal(&g->th_cond);
	pthread_mutex_unlock(&g->th_lock);
	pthread_join(g->th_tid, NULL);
	pthread_cond_destroy(&g->th_cond);
	g->th_on = false;
}

/* Clock TSC is kept only where it is invariant and calibrates; else monotonic. */
static void tsc_choose(struct mtrace_guest *g)
{
	if (g->clock != MTRACE_CLOCK_TSC)
		return;
	if (mtrace_tsc_calibrate(&g->tsc, TSC_SETTLE_US) < 0)
		g->clock = MTRACE_CLOCK_MONOTONIC;
	else if (g->tsc_timeline == MTRACE_CLOCK_XEN)
		g->tsc.ti.timeline = MTRACE_CLOCK_XEN; /* the same reads, named so */
}

/* The session thread, where the TSC or clock-sync needs one. */
static int session_start(struct mtrace_guest *g, char *err, size_t errlen)
{
	pthread_condattr_t ca;
	int e;

	if (g->clock == MTRACE_CLOCK_TSC)
		tsc_publish_all(g);
	if (g->clock != MTRACE_CLOCK_TSC && !g->sync_on)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->th_cond, &ca);
	pthread_condattr_destroy(&ca);
	if ((e = pthread_create(&g->th_tid, NULL, session_main, g)) != 0) {
		set_err(err, errlen, "starting the session thread: %s", strerror(e));
		pthread_cond_destroy(&g->th_cond);
		errno = e;
		return -1;
	}
	g->th_on = true;
	return 0;
}

static void guest_free(struct mtrace_guest *g)
{
	session_stop(g);
	for (unsigned i = 0; i < g->nrings; i++) {
		struct guest_ring *gr = &g->rings[i];
		if (gr->data != NULL)
			g->x->ops->gntshr_unshare(g->x, gr->data, g->data_pages);
		if (gr->hdr_page != NULL)
			g->x->ops->gntshr_unshare(g->x, gr->hdr_page, 1);
	}
	if (g->port >= 0)
		g->x->ops->evtchn_unbind(g->x, (xenif_port_t)g->port);
	xenif_close(g->x);
	clock_sync_destroy(&g->sync);
	pthread_mutex_destroy(&g->kick_lock);
	pthread_mutex_destroy(&g->th_lock);
	free(g);
}

static int share_ring(struct mtrace_guest *g, unsigned i, char *err, size_t errlen)
{
	struct guest_ring *gr = &g->rings[i];
	struct mtrace_ring_hdr *hdr;
	char name[40];

	/* The header page is writable by dom0 (req_event); the data is not. */
	gr->hdr_page = g->x->ops->gntshr_share(g->x, g->backend, 1, &gr->hdr_ref, true);
	if (gr->hdr_page == NULL) {
		set_err(err, errlen, "sharing header page of ring %u: %s", i, strerror(errno));
		return -1;
	}
	hdr = gr->hdr_page;
	gr->data = g->x->ops->gntshr_share(g->x, g->backend, g->data_pages, hdr->data_refs, false);
	if (gr->data == NULL) {
		set_err(err, errlen, "sharing %u data pages of ring %u: %s", g->data_pages, i,
		    strerror(errno));
		return -1;
	}
	/* init_local zeroes the header page: keep the refs across it. */
	uint32_t refs[MTRACE_RING_MAX_PAGES];
	memcpy(refs, hdr->data_refs, g->data_pages * sizeof(uint32_t));
	snprintf(name, sizeof(name), "ring%u", i);
	mtrace_ring_init_local(&gr->ring, hdr, gr->data, g->data_pages, g->clock, i, name);
	memcpy(hdr->data_refs, refs, g->data_pages * sizeof(uint32_t));
	gr->ring.guest = g;
	gr->ring.notify = guest_notify;
	return 0;
}

/*
 * A guest program's first run is often from a shell: no Xen device (ENOENT; ENOSYS in
 * a build without the real backend) and no simulated Xen chosen.  The device's error
 * alone does not say what to do: say where the program must run.  Kept under 256
 * bytes, the err buffer of the guest programs.
 */
static void no_domain_hint(const struct mtrace_guest_config *cfg, char *err, size_t errlen)
{
	const char *env = getenv("MTRACE_SIM_DIR");
	char why[128];
	int e = errno;

	if ((cfg->backend && strcmp(cfg->backend, "auto") != 0) ||
	    (cfg->sim_dir && *cfg->sim_dir) || (env && *env) || (e != ENOENT && e != ENOSYS) ||
	    err == NULL || errlen == 0)
		return;
	snprintf(why, sizeof(why), "%s", err);
	set_err(err, errlen,
	    "not in a Xen domain (%s) and no simulated Xen (MTRACE_SIM_DIR unset): run it in a "
	    "Xen domU, or in a simulated one: mtrace-simxen create --name NAME -- PROG ARGS",
	    why);
	errno = e;
}

struct mtrace_guest *mtrace_guest_open(
    const struct mtrace_guest_config *cfg, char *err, size_t errlen)
{
	struct mtrace_guest *g;
	struct xenif *x;
	unsigned pages = cfg->data_pages;
	uint32_t clock = cfg->clock ? cfg->clock : MTRACE_CLOCK_MONOTONIC;
	int e;

	if (cfg->rings < 1 || cfg->rings > MTRACE_MAX_RINGS) {
		set_err(err, errlen, "rings must be 1..%u", MTRACE_MAX_RINGS);
		errno = EINVAL;
		return NULL;
	}
	if (pages < MTRACE_RING_MIN_PAGES || pages > MTRACE_RING_MAX_PAGES ||
	    (pages & (pages - 1)) != 0) {
		set_err(err, errlen, "data pages must be a power of two in %u..%u",
		    MTRACE_RING_MIN_PAGES, MTRACE_RING_MAX_PAGES);
		errno = EINVAL;
		return NULL;
	}
	if (clock > MTRACE_CLOCK_TSC) {
		set_err(err, errlen, "unknown clock %u", clock);
		errno = EINVAL;
		return NULL;
	}
	if (cfg->tsc_timeline && cfg->tsc_timeline != MTRACE_CLOCK_MONOTONIC &&
	    cfg->tsc_timeline != MTRACE_CLOCK_XEN) {
		set_err(err, errlen, "a TSC timeline is monotonic or xen, not clock %u",
		    cfg->tsc_timeline);
		errno = EINVAL;
		return NULL;
	}
	x = xenif_open(cfg->backend, cfg->sim_dir,
	    XENIF_GNTSHR | XENIF_EVTCHN | XENIF_XS | XENIF_CLOCK, err, errlen);
	if (x == NULL) {
		no_domain_hint(cfg, err, errlen);
		return NULL;
	}
	g = calloc(1, sizeof(*g) + cfg->rings * sizeof(g->rings[0]));
	if (g == NULL) {
		set_err(err, errlen, "out of memory");
		xenif_close(x);
		errno = ENOMEM;
		return NULL;
	}
	g->x = x;
	g->backend = cfg->backend_domid;
	g->port = -1;
	g->nrings = cfg->rings;
	g->data_pages = pages;
	g->clock = clock;
	g->tsc_timeline = cfg->tsc_timeline;
	pthread_mutex_init(&g->kick_lock, NULL);
	pthread_mutex_init(&g->th_lock, NULL);
	g->tsc_period_ms = cfg->recalibrate_ms ? cfg->recalibrate_ms : TSC_PERIOD_MS;
	tsc_choose(g);
	clock_sync_init(&g->sync, x, g->clock);
	if (x->ops->xs_get_domid(x, &g->domid) < 0) {
		set_err(err, errlen, "reading own domid: %s", strerror(errno));
		goto fail;
	}
	/* The reader's own domain (dom0 on Xen; a shell with MTRACE_SIM_DIR set on the
	 * simulated Xen) would announce rings nobody reads: every event lost, silently. */
	if (g->domid == g->backend) {
		set_err(err, errlen,
		    "not running in a guest domain (this is domain %" PRIu32
		    ", the reader's own): start it in a guest (mtrace-simxen create --name NAME -- "
		    "PROG on the simulated Xen)",
		    g->domid);
		errno = EPERM;
		goto fail;
	}
	for (unsigned i = 0; i < g->nrings; i++)
		if (share_ring(g, i, err, errlen) < 0)
			goto fail;
	g->port = x->ops->evtchn_bind_unbound(x, g->backend);
	if (g->port < 0) {
		set_err(err, errlen, "binding an event channel for dom%" PRIu32 ": %s", g->backend,
		    strerror(errno));
		goto fail;
	}
	/* Xen time now, so that the thread checks it only where a source answered (a
	 * failure other than "no source" may pass: the thread tries again). */
	g->sync_on = clock_sync_measure(&g->sync) || g->sync.err != ENOTSUP;
	/* The time block is in place before the first record and the announcement. */
	if (session_start(g, err, errlen) < 0)
		goto fail;
	for (unsigned i = 0; i < g->nrings; i++)
		mtrace_ring_start(&g->rings[i].ring);
	if (cfg->modules)
		mtrace_modules(&g->rings[0].ring);
	if (mtrace_guest_reannounce(g) < 0) {
		set_err(err, errlen, "announcing in xenstore: %s", strerror(errno));
		goto fail;
	}
	return g;
fail:
	e = errno;
	guest_free(g);
	errno = e;
	return NULL;
}

struct mtrace_ring *mtrace_guest_ring(struct mtrace_guest *g, unsigned i)
{
	return i < g->nrings ? &g->rings[i].ring : NULL;
}

uint32_t mtrace_guest_domid(const struct mtrace_guest *g)
{
	return g->domid;
}

uint32_t mtrace_guest_port(const struct mtrace_guest *g)
{
	return g->port < 0 ? 0 : (uint32_t)g->port;
}

uint32_t mtrace_guest_clock(const struct mtrace_guest *g)
{
	return g->clock;
}

uint64_t mtrace_guest_kicks_skipped(const struct mtrace_guest *g)
{
	return __atomic_load_n(&g->kicks_skipped, __ATOMIC_RELAXED);
}

void mtrace_guest_close(struct mtrace_guest *g)
{
	char base[128];

	if (g == NULL)
		return;
	base_path(g, base, sizeof(base));
	/* "closed" first so a watching dom0 stops before the keys vanish; best effort:
	 * the toolstack removes the domain's tree anyway when it dies. */
	if (xs_transact(g, withdraw_tx, base) == 0)
		g->x->ops->xs_rm(g->x, 0, base);
	guest_free(g);
}
