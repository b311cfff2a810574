/*
 * state-vcpu.c - the state's account of the hypervisor's scheduling (vcpu.h): each
 * domain's and vCPU's running, runnable (steal), blocked and offline time, and the
 * answer to "was the guest running while its thread waited?".
 *
 * A thread waits from its creation to its first run (a switch to it), or, if it never
 * runs, to its resolution.  At that moment its vCPUs' intervals are not here yet (the
 * source reads the hypervisor every few hundred ms): the wait is queued, on the host's
 * timeline, and measured when a batch has covered its end.  The domain's vCPUs are
 * taken together, as the guest's threads see them: over a wait of W ns, running is the
 * vCPUs' running time (at most W: the guest ran), steal their runnable time (at most
 * what is left), blocked their blocked or offline time (at most what is left again).
 * With one vCPU that is exactly its intervals; with several it is what a thread that
 * any of them could run would have seen.  A sampled interval (VCPU_MIXED) counts each
 * part spread evenly over it.
 *
 * To measure a wait in O(log n), a domain keeps the integral of its vCPUs' running,
 * runnable and other rates as points (time, integral so far, rate from there on), one
 * per interval edge, for VC_HORIZON_NS: a wait older than that is counted unattributed.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "mtrace-ring.h"
#include "mtrace.pb-c.h"
#include "state-int.h"
#include "vcpu.h"

#define VC_MAX_VCPUS  512 /* vCPUs listed per domain (its totals count them all) */
#define VC_HORIZON_NS (10 * 1000000000ll)
#define VC_POINTS_MAX 65536u
#define VC_WAITS_MAX  65536u

struct vc_fig {
	uint64_t ns[4]; /* running, runnable, blocked, offline */
	uint64_t wakeups;
	int64_t last_end;
	int32_t pcpu;
	uint8_t state;
	bool seen;
};

struct vc_point {
	int64_t t;
	uint64_t I[3]; /* running, runnable, blocked + offline: integrals up to t */
	double r[3];   /* their rates from t on (vCPUs in that state) */
};

struct vc_wait {
	int64_t a, b; /* host ns */
	uint32_t label, site;
};

struct vcpu_dom {
	struct vc_fig *fig;
	uint32_t nfig;
	uint64_t tot[4], wakeups;
	int64_t since, until;
	struct vc_point *pt; /* ring, pcap a power of two */
	uint32_t pcap, phead, pn;
	struct vc_wait *w; /* ring FIFO */
	uint32_t wcap, whead, wn;
};

static struct {
	uint32_t source;
	uint64_t records, lost, dropped, unattributed;
	int64_t same_kernel;
	bool same_kernel_known;
} vg;

void state_vcpu_source(uint32_t source)
{
	vg.source = source;
}

void state_vcpu_counts(uint64_t records, uint64_t lost, uint64_t dropped)
{
	vg.records += records;
	vg.lost += lost;
	vg.dropped += dropped;
}

void state_vcpu_same_kernel(int64_t mono_to_real_ns, bool known)
{
	vg.same_kernel = mono_to_real_ns;
	vg.same_kernel_known = known;
}

static struct vcpu_dom *vc_of(struct state_domain *d)
{
	if (!d->vc)
		d->vc = xcalloc(1, sizeof(*d->vc));
	return d->vc;
}

void state_vcpu_clock_map(struct state_domain *d, int64_t offset_ns, bool known)
{
	d->host_offset_ns = offset_ns;
	d->host_mapped = known;
}

void state_vcpu_free(struct state_domain *d)
{
	if (!d->vc)
		return;
	free(d->vc->fig);
	free(d->vc->pt);
	free(d->vc->w);
	free(d->vc);
	d->vc = NULL;
}

/* ---- the integral points ---- */

static struct vc_point *pt_at(const struct vcpu_dom *vc, uint32_t i)
{
	return &vc->pt[(vc->phead + i) & (vc->pcap - 1)];
}

static void pt_push(struct vcpu_dom *vc, const struct vc_point *p)
{
	if (vc->pn == vc->pcap && vc->pcap < VC_POINTS_MAX) {
		uint32_t cap = vc->pcap ? vc->pcap * 2 : 64;
		struct vc_point *n = xreallocarray(NULL, cap, sizeof(*n));
		for (uint32_t i = 0; i < vc->pn; i++)
			n[i] = *pt_at(vc, i);
		free(vc->pt);
		vc->pt = n;
		vc->pcap = cap;
		vc->phead = 0;
	}
	if (vc->pn == vc->pcap) { /* at the cap: the oldest goes */
		vc->phead = (vc->phead + 1) & (vc->pcap - 1);
		vc->pn--;
	}
	*pt_at(vc, vc->pn++) = *p;
}

/* The integrals at t; false when t is before the oldest point kept. */
static bool integral(const struct vcpu_dom *vc, int64_t t, double out[3])
{
	uint32_t lo = 0, hi = vc->pn;

	if (!vc->pn || t < pt_at(vc, 0)->t)
		return false;
	while (hi - lo > 1) { /* the last point at or before t */
		uint32_t mid = lo + (hi - lo) / 2;
		if (pt_at(vc, mid)->t <= t)
			lo = mid;
		else
			hi = mid;
	}
	const struct vc_point *p = pt_at(vc, lo);
	for (int s = 0; s < 3; s++)
		out[s] = (double)p->I[s] + p->r[s] * (double)(t - p->t);
	return true;
}

struct edge {
	int64_t t;
	double dr[3];
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* The batch's intervals (clipped to after the last point) as points. */
static void add_points(struct vcpu_dom *vc, const struct vcpu_iv *iv, size_t n, int64_t from)
{
	struct edge *e = xreallocarray(NULL, 2 * n + 1, sizeof(*e));
	size_t ne = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t s = iv[i].start_ns, end = iv[i].start_ns + (int64_t)iv[i].dur_ns;
		if (s < from)
			s = from;
		if (end <= s || iv[i].dur_ns == 0)
			continue;
		double d = (double)iv[i].dur_ns;
		double r[3] = { (double)iv[i].part[0] / d, (double)iv[i].part[1] / d,
			1.0 - (double)(iv[i].part[0] + iv[i].part[1]) / d };
		e[ne].t = s;
		e[ne + 1].t = end;
		for (int k = 0; k < 3; k++) {
			e[ne].dr[k] = r[k];
			e[ne + 1].dr[k] = -r[k];
		}
		ne += 2;
	}
	qsort(e, ne, sizeof(*e), edge_cmp);
	struct vc_point cur = { 0 };
	if (vc->pn)
		cur = *pt_at(vc, vc->pn - 1);
	for (size_t i = 0; i < ne;) {
		int64_t t = e[i].t;
		for (int k = 0; k < 3; k++) {
			double add = cur.r[k] * (double)(t - cur.t);
			cur.I[k] += add > 0 ? (uint64_t)(add + 0.5) : 0;
		}
		cur.t = t;
		for (; i < ne && e[i].t == t; i++)
			for (int k = 0; k < 3; k++)
				cur.r[k] += e[i].dr[k];
		for (int k = 0; k < 3; k++)
			if (cur.r[k] < 1e-9)
				cur.r[k] = 0; /* what rounding leaves of a closed interval */
		pt_push(vc, &cur);
	}
	free(e);
	/* what the waits can no longer reach goes (the newest point always stays) */
	while (vc->pn > 1 && pt_at(vc, 1)->t < vc->until - VC_HORIZON_NS) {
		vc->phead = (vc->phead + 1) & (vc->pcap - 1);
		vc->pn--;
	}
}

/* ---- waits ---- */

static void charge(struct label *l, uint64_t w, uint64_t steal, uint64_t blocked)
{
	l->waits++;
	l->wait_ns += w;
	l->wait_steal_ns += steal;
	l->wait_blocked_ns += blocked;
}

static void measure(struct state_domain *d, const struct vc_wait *w)
{
	double ia[3], ib[3];

	if (!integral(d->vc, w->a, ia) || !integral(d->vc, w->b, ib)) {
		vg.unattributed++;
		return;
	}
	uint64_t len = (uint64_t)(w->b - w->a), part[3];
	for (int k = 0; k < 3; k++) {
		double v = ib[k] - ia[k];
		part[k] = v > 0 ? (uint64_t)(v + 0.5) : 0;
	}
	uint64_t run = part[0] < len ? part[0] : len;
	uint64_t steal = part[1] < len - run ? part[1] : len - run;
	uint64_t blocked = part[2] < len - run - steal ? part[2] : len - run - steal;
	if (w->label != NO_IDX && w->label < d->labels.n)
		charge(&d->lstat[w->label], len, steal, blocked);
	if (w->site != NO_IDX && w->site < d->nsites)
		charge(&d->sites[w->site].st, len, steal, blocked);
}

static void settle(struct state_domain *d)
{
	struct vcpu_dom *vc = d->vc;

	while (vc->wn && vc->w[vc->whead].b <= vc->until) {
		measure(d, &vc->w[vc->whead]);
		vc->whead = (vc->whead + 1) & (vc->wcap - 1);
		vc->wn--;
	}
}

bool state_vcpu_offset(const struct state_domain *d, int64_t *offset_ns)
{
	if (d->host_mapped)
		*offset_ns = d->host_offset_ns;
	else if (vg.source == VCPU_SOURCE_SIM && vg.same_kernel_known)
		*offset_ns = d->clock == MTRACE_CLOCK_REALTIME ? 0 : vg.same_kernel;
	else
		return false;
	return true;
}

/* Called from the hot path (state.c) only while d has vCPU figures: t's wait ends at ts
 * (guest clock). */
void state_vcpu_wait(struct state_domain *d, struct thr *t, uint64_t ts)
{
	struct vcpu_dom *vc = d->vc;
	int64_t off;

	t->waited = 1;
	if (!state_vcpu_offset(d, &off))
		return; /* the guest's clock is not on the host's line: nothing to measure */
	if (ts <= t->created_ns) { /* ran at once: a wait of nothing */
		if (t->label != NO_IDX)
			charge(&d->lstat[t->label], 0, 0, 0);
		if (t->site != NO_IDX)
			charge(&d->sites[t->site].st, 0, 0, 0);
		return;
	}
	if (vc->wn == vc->wcap) {
		if (vc->wcap == VC_WAITS_MAX) {
			vg.unattributed++;
			return;
		}
		uint32_t cap = vc->wcap ? vc->wcap * 2 : 256;
		struct vc_wait *n = xreallocarray(NULL, cap, sizeof(*n));
		for (uint32_t i = 0; i < vc->wn; i++)
			n[i] = vc->w[(vc->whead + i) & (vc->wcap - 1)];
		free(vc->w);
		vc->w = n;
		vc->wcap = cap;
		vc->whead = 0;
	}
	struct vc_wait *w = &vc->w[(vc->whead + vc->wn++) & (vc->wcap - 1)];
	w->a = (int64_t)t->created_ns + off;
	w->b = (int64_t)ts + off;
	w->label = t->label;
	w->site = t->site;
	if (w->b <= vc->until)
		settle(d);
}

/* ---- batches ---- */

void state_vcpu_batch(struct state_domain *d, const struct vcpu_batch *b)
{
	struct vcpu_dom *vc = vc_of(d);
	int64_t from = vc->until;

	if (!vc->since)
		vc->since = b->n ? b->iv[0].start_ns : b->until_ns;
	for (size_t i = 0; i < b->n; i++) {
		const struct vcpu_iv *iv = &b->iv[i];
		int64_t end = iv->start_ns + (int64_t)iv->dur_ns;
		if (end <= from || iv->dur_ns == 0)
			continue; /* before what was already counted (a clock step) */
		double keep =
		    iv->start_ns >= from ? 1.0 : (double)(end - from) / (double)iv->dur_ns;
		uint64_t p[4], sum = 0;
		for (int k = 0; k < 3; k++) {
			p[k] = (uint64_t)((double)iv->part[k] * keep);
			sum += p[k];
		}
		uint64_t dur = (uint64_t)((double)iv->dur_ns * keep);
		p[3] = dur > sum ? dur - sum : 0;
		for (int k = 0; k < 4; k++)
			vc->tot[k] += p[k];
		if (iv->vcpu >= VC_MAX_VCPUS)
			continue;
		if (iv->vcpu >= vc->nfig) {
			uint32_t n = iv->vcpu + 1;
			vc->fig = xreallocarray(vc->fig, n, sizeof(*vc->fig));
			memset(vc->fig + vc->nfig, 0, (n - vc->nfig) * sizeof(*vc->fig));
			vc->nfig = n;
		}
		struct vc_fig *f = &vc->fig[iv->vcpu];
		for (int k = 0; k < 4; k++)
			f->ns[k] += p[k];
		f->seen = true;
		if (end >= f->last_end) {
			f->last_end = end;
			f->state = iv->state;
			f->pcpu = iv->pcpu;
		}
	}
	for (size_t i = 0; i < b->nwakes; i++) {
		vc->wakeups++;
		if (b->wake_vcpu[i] < vc->nfig)
			vc->fig[b->wake_vcpu[i]].wakeups++;
	}
	if (b->until_ns > vc->until)
		vc->until = b->until_ns;
	add_points(vc, b->iv, b->n, from);
	settle(d);
}

/* ---- read-outs (state-stats.c) ---- */

void state_vcpu_fill_domain(struct arena *a, Mtrace__DomainStats *ds, const struct state_domain *d)
{
	const struct vcpu_dom *vc = d->vc;
	size_t n = 0;

	if (!vc || !vc->since)
		return;
	ds->vcpu_running_ns = vc->tot[0];
	ds->vcpu_runnable_ns = vc->tot[1];
	ds->vcpu_blocked_ns = vc->tot[2];
	ds->vcpu_offline_ns = vc->tot[3];
	ds->vcpu_wakeups = vc->wakeups;
	ds->vcpu_since_ns = vc->since;
	ds->vcpu_until_ns = vc->until;
	for (uint32_t i = 0; i < vc->nfig; i++)
		n += vc->fig[i].seen;
	if (!n)
		return;
	ds->vcpus = arena_zalloc(a, n * sizeof(*ds->vcpus));
	for (uint32_t i = 0; i < vc->nfig; i++) {
		const struct vc_fig *f = &vc->fig[i];
		if (!f->seen)
			continue;
		Mtrace__VcpuStats *v = arena_zalloc(a, sizeof(*v));
		mtrace__vcpu_stats__init(v);
		v->vcpu = i;
		v->running_ns = f->ns[0];
		v->runnable_ns = f->ns[1];
		v->blocked_ns = f->ns[2];
		v->offline_ns = f->ns[3];
		v->wakeups = f->wakeups;
		v->state = (Mtrace__VcpuState)f->state;
		v->pcpu = f->pcpu;
		ds->vcpus[ds->n_vcpus++] = v;
	}
}

void state_vcpu_fill_stats(Mtrace__Stats *s)
{
	s->vcpu_source = (Mtrace__VcpuSource)vg.source;
	s->hypervisor_records = vg.records;
	s->hypervisor_lost = vg.lost;
	s->hypervisor_dropped = vg.dropped;
	s->waits_unattributed = vg.unattributed;
}
