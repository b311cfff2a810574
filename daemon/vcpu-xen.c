/*
 * vcpu-xen.c - real Xen's scheduling from its trace buffers (XENIF_TBUF).
 *
 * A pass: read dom0's TSC (the cut), then copy every physical CPU's window (the seam
 * copies once and gives the window back), decode it (vcpu-decode.c), merge all CPUs in
 * TSC order and apply what is older than the cut (vcpu-runstate.c): a record another
 * CPU publishes after we read its buffer was stamped after the cut, so nothing older
 * than the cut can still come; what is newer waits for the next pass.  Every vCPU's
 * open interval is then cut there, so each domain is known up to the cut.
 *
 * Times: the records carry the physical CPUs' TSC.  Xen's system time is that TSC
 * scaled, and dom0's CLOCK_REALTIME follows it; a Linux dom0 keeps its own Xen time
 * scale where user space cannot read it (its vcpu_info is registered elsewhere than
 * the shared_info page), and the seam's clock_sample is issue 37's (not there yet), so
 * the TSC is mapped to CLOCK_REALTIME directly: each pass reads dom0's TSC between two
 * realtime reads, the scale is the line through two such samples a second or more
 * apart, the offset the newest.  This is the same map as TSC -> Xen time -> realtime
 * wherever Xen has one time base (an invariant, synchronised TSC, as Xen requires for
 * it); the intervals' uncertainty is the newest bracket's half width.  x86 only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "log.h"
#include "state.h"
#include "vcpu-decode.h"
#include "vcpu-runstate.h"
#include "vcpu-xen.h"
#include "vcpu.h"
#include "xalloc.h"
#include "xenif.h"

#define CAL_N       16
#define CAL_SPAN_NS 1000000000ll /* the scale from samples at least this far apart */
#define RECS_MAX    (1u << 20)   /* records decoded and not yet applied */
#define HOLD_MAX    (1u << 16)   /* held past a cut: more, and the oldest go anyway */
#define BRACKET_MAX 50000        /* ns: a wider bracket was preempted, read again */

struct cal {
	uint64_t tsc;
	int64_t real, width;
};

struct xiv {
	struct vcpu_iv iv;
	uint16_t domid;
	uint32_t order;
};

struct xwake {
	int64_t ns;
	uint16_t domid, vcpu;
};

struct vcpu_xen {
	struct xenif *x;
	struct xenif_tbuf_info info;
	uint8_t *buf;
	struct vdec_cpu *dc;
	struct vdec_stats st;
	uint64_t windows_bad, told_kept, told_lost, told_drop;
	uint64_t forced; /* records applied before the cut reached them (HOLD_MAX) */
	struct vrec *recs;
	size_t nrecs, caprecs;
	struct vcpu_runstate rs;
	struct cal cal[CAL_N];
	unsigned ncal;
	double ns_per_tick;
	struct xiv *out;
	size_t nout, capout;
	struct xwake *wk;
	size_t nwk, capwk;
	struct vcpu_iv *one; /* one domain's intervals, contiguous for its batch */
	uint32_t *wv;
	int64_t *wn;
};

#if defined(__x86_64__) || defined(__i386__)
static uint64_t tsc_now(void)
{
	return __builtin_ia32_rdtsc();
}
#define HAVE_TSC 1
#else
static uint64_t tsc_now(void)
{
	return 0;
}
#define HAVE_TSC 0
#endif

static int64_t real_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* dom0's TSC between two realtime reads, the narrowest of a few tries. */
static struct cal bracket(void)
{
	struct cal best = { 0, 0, INT64_MAX };

	for (int i = 0; i < 4 && best.width > BRACKET_MAX; i++) {
		int64_t r1 = real_ns();
		uint64_t t = tsc_now();
		int64_t r2 = real_ns();
		if (r2 >= r1 && r2 - r1 < best.width)
			best = (struct cal){ t, r1 + (r2 - r1) / 2, r2 - r1 };
	}
	return best;
}

static void calibrate(struct vcpu_xen *v)
{
	struct cal c = bracket();

	if (c.width == INT64_MAX)
		return; /* the realtime clock stepped back under us: the old scale stays */
	if (v->ncal == CAL_N) {
		memmove(v->cal, v->cal + 1, (CAL_N - 1) * sizeof(*v->cal));
		v->ncal--;
	}
	v->cal[v->ncal++] = c;
	/* the oldest sample a second or more before the newest, else the oldest */
	const struct cal *far = &v->cal[0];
	for (unsigned i = v->ncal - 1; i-- > 0;)
		if (c.real - v->cal[i].real >= CAL_SPAN_NS) {
			far = &v->cal[i];
			break;
		}
	if (c.tsc > far->tsc && c.real > far->real)
		v->ns_per_tick = (double)(c.real - far->real) / (double)(c.tsc - far->tsc);
}

static int64_t tsc_real(const struct vcpu_xen *v, uint64_t tsc)
{
	const struct cal *c = &v->cal[v->ncal - 1];
	return c->real + (int64_t)((double)(int64_t)(tsc - c->tsc) * v->ns_per_tick);
}

static void on_iv(void *arg, const struct vrs_interval *r)
{
	struct vcpu_xen *v = arg;
	int64_t a = tsc_real(v, r->start_tsc), b = tsc_real(v, r->end_tsc);

	if (b <= a)
		return;
	if (v->nout == v->capout) {
		v->capout = v->capout ? 2 * v->capout : 1024;
		v->out = xreallocarray(v->out, v->capout, sizeof(*v->out));
	}
	struct xiv *o = &v->out[v->nout];
	o->domid = r->domid;
	o->order = (uint32_t)v->nout++;
	o->iv = (struct vcpu_iv){ .start_ns = a,
		.dur_ns = (uint64_t)(b - a),
		.vcpu = r->vcpu,
		.pcpu = r->pcpu,
		.state = r->state };
	if (r->state < 3)
		o->iv.part[r->state] = o->iv.dur_ns; /* offline: none of the three */
}

static void on_wake(void *arg, uint16_t domid, uint16_t vcpu, uint64_t tsc)
{
	struct vcpu_xen *v = arg;

	if (v->nwk == v->capwk) {
		v->capwk = v->capwk ? 2 * v->capwk : 256;
		v->wk = xreallocarray(v->wk, v->capwk, sizeof(*v->wk));
	}
	v->wk[v->nwk++] = (struct xwake){ tsc_real(v, tsc), domid, vcpu };
}

static int xiv_cmp(const void *a, const void *b)
{
	const struct xiv *x = a, *y = b;
	if (x->domid != y->domid)
		return x->domid < y->domid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int xwake_cmp(const void *a, const void *b)
{
	const struct xwake *x = a, *y = b;
	if (x->domid != y->domid)
		return x->domid < y->domid ? -1 : 1;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* The pass's intervals and wake-ups, one batch per domain, known up to until. */
static void deliver(struct vcpu_xen *v, vcpu_deliver_fn fn, void *arg, int64_t until)
{
	size_t i = 0, w = 0;

	qsort(v->out, v->nout, sizeof(*v->out), xiv_cmp);
	qsort(v->wk, v->nwk, sizeof(*v->wk), xwake_cmp);
	v->one = xreallocarray(v->one, v->nout + 1, sizeof(*v->one));
	v->wv = xreallocarray(v->wv, v->nwk + 1, sizeof(*v->wv));
	v->wn = xreallocarray(v->wn, v->nwk + 1, sizeof(*v->wn));
	while (i < v->nout || w < v->nwk) {
		uint16_t d = i < v->nout && (w == v->nwk || v->out[i].domid <= v->wk[w].domid)
		    ? v->out[i].domid
		    : v->wk[w].domid;
		size_t n = 0, nw = 0;
		for (; i < v->nout && v->out[i].domid == d; i++)
			v->one[n++] = v->out[i].iv;
		for (; w < v->nwk && v->wk[w].domid == d; w++, nw++) {
			v->wv[nw] = v->wk[w].vcpu;
			v->wn[nw] = v->wk[w].ns;
		}
		struct vcpu_batch b = { .domid = d,
			.source = VCPU_SOURCE_XEN,
			.iv = v->one,
			.n = n,
			.wake_vcpu = v->wv,
			.wake_ns = v->wn,
			.nwakes = nw,
			.until_ns = until,
			.uncertainty_ns = (uint64_t)v->cal[v->ncal - 1].width / 2 };
		fn(arg, &b);
	}
	v->nout = v->nwk = 0;
}

static void read_cpu(struct vcpu_xen *v, uint32_t cpu)
{
	long n = v->x->ops->tbuf_read(v->x, cpu, v->buf, v->info.data_size);

	if (n < 0) {
		if (errno != ENOENT)
			v->windows_bad++;
		return;
	}
	size_t room = (size_t)n / 12 + 1; /* a timed record is 12 bytes at least */
	if (v->nrecs + room > v->caprecs && v->caprecs < RECS_MAX) {
		size_t cap = v->caprecs ? v->caprecs : 4096;
		while (cap < v->nrecs + room && cap < RECS_MAX)
			cap *= 2;
		v->recs = xreallocarray(v->recs, cap, sizeof(*v->recs));
		v->caprecs = cap;
	}
	v->nrecs += vcpu_decode(
	    &v->dc[cpu], cpu, v->buf, (size_t)n, v->recs + v->nrecs, v->caprecs - v->nrecs, &v->st);
}

void vcpu_xen_tick(struct vcpu_xen *v, vcpu_deliver_fn fn, void *arg)
{
	struct vrs_out o = { on_iv, on_wake, v };

	calibrate(v);
	uint64_t cut = tsc_now();
	for (uint32_t c = 0; c < v->info.ncpus; c++)
		read_cpu(v, c);
	size_t ready = vrs_merge(v->recs, v->nrecs, cut);
	/* a cut that stays behind the CPUs' clocks (a TSC not in step with dom0's) would
	 * hold everything back: past HOLD_MAX, the oldest are applied all the same */
	if (v->nrecs - ready > HOLD_MAX) {
		v->forced += v->nrecs - ready - HOLD_MAX;
		ready = v->nrecs - HOLD_MAX;
	}
	vrs_apply(&v->rs, v->recs, ready, &o);
	memmove(v->recs, v->recs + ready, (v->nrecs - ready) * sizeof(*v->recs));
	v->nrecs -= ready;
	vrs_cut(&v->rs, cut, &o);
	deliver(v, fn, arg, tsc_real(v, cut));

	uint64_t drop = v->st.bad + v->st.backwards + v->windows_bad + v->rs.late + v->rs.untracked;
	state_vcpu_counts(
	    v->st.kept - v->told_kept, v->st.lost - v->told_lost, drop - v->told_drop);
	v->told_kept = v->st.kept;
	v->told_lost = v->st.lost;
	v->told_drop = drop;
}

struct vcpu_xen *vcpu_xen_new(
    struct xenif *x, const struct mtraced_config *cfg, char *err, size_t errlen)
{
	if (!HAVE_TSC) {
		snprintf(err, errlen,
		    "vcpu source: Xen's trace records are timed by the TSC, "
		    "which this build cannot read (x86 only)");
		return NULL;
	}
	struct vcpu_xen *v = xcalloc(1, sizeof(*v));
	v->x = x;
	if (x->ops->tbuf_open(x, cfg->tbuf_pages, XTRC_MTRACE_MASK, &v->info) < 0) {
		snprintf(err, errlen, "vcpu source: Xen's trace buffers: %s", strerror(errno));
		free(v);
		return NULL;
	}
	if (vrs_init(&v->rs, cfg->vcpu_max) < 0) {
		snprintf(err, errlen, "vcpu source: out of memory");
		x->ops->tbuf_close(x);
		free(v);
		return NULL;
	}
	v->buf = xreallocarray(NULL, v->info.data_size, 1);
	v->dc = xcalloc(v->info.ncpus, sizeof(*v->dc));
	/* a first scale from two samples 100 ms apart; the passes refine it */
	calibrate(v);
	nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	calibrate(v);
	if (v->ncal < 2 || v->ns_per_tick <= 0) {
		snprintf(
		    err, errlen, "vcpu source: the TSC does not advance against CLOCK_REALTIME");
		vcpu_xen_free(v);
		return NULL;
	}
	log_info("vcpu source: Xen's trace buffers, %u CPUs, %u pages each, TSC at %.3f MHz",
	    v->info.ncpus, v->info.pages, v->ns_per_tick > 0 ? 1000.0 / v->ns_per_tick : 0.0);
	return v;
}

void vcpu_xen_free(struct vcpu_xen *v)
{
	v->x->ops->tbuf_close(v->x);
	vrs_free(&v->rs);
	free(v->buf);
	free(v->dc);
	free(v->recs);
	free(v->out);
	free(v->wk);
	free(v->one);
	free(v->wv);
	free(v->wn);
	free(v);
}
