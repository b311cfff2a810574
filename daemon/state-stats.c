/*
 * state-stats.c - build a Stats message for one subscription from the state tables:
 * the state's one edge with the wire format (proto/mtrace.proto), with the filters of
 * a Subscribe that the stream applies too.
 * Everything the message points to lives in one arena freed by state_stats_free, so
 * the message never aliases state that the next event may change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "clock.h"
#include "config.h"
#include "label-prefix.h"
#include "mtrace-ring.h"
#include "mtrace.pb-c.h"
#include "sites.h"
#include "state-int.h"
#include "state.h"

struct stats_box {
	Mtrace__Stats s; /* first: state_stats_free gets it back by cast */
	struct arena a;
};

static void *arena_get(struct stats_box *b, size_t n)
{
	return arena_zalloc(&b->a, n);
}

static char *arena_str(struct stats_box *b, const char *s)
{
	return arena_strdup(&b->a, s);
}

bool state_domain_matches(uint32_t domid, const Mtrace__Subscribe *sub)
{
	struct state_domain *d;

	if (!sub || (!sub->n_domids && !sub->n_domain_names))
		return true;
	for (size_t i = 0; i < sub->n_domids; i++)
		if (sub->domids[i] == domid)
			return true;
	if (!sub->n_domain_names)
		return false;
	d = state_domain_find(domid);
	if (!d)
		return false;
	for (size_t i = 0; i < sub->n_domain_names; i++)
		if (sub->domain_names[i] && !strcmp(sub->domain_names[i], d->name))
			return true;
	return false;
}

struct cand {
	const struct state_domain *d;
	const struct thr *t;
	uint64_t key;
};

static uint64_t thr_pending_ns(const struct state_domain *d, const struct thr *t)
{
	uint64_t end = t->state == TS_PENDING ? d->last_ts : t->resolved_ns;

	return end > t->created_ns ? end - t->created_ns : 0;
}

static uint64_t sort_key(const struct state_domain *d, const struct thr *t, int sort)
{
	switch (sort) {
	case MTRACE__SORT_KEY__SORT_RUNNING:
		return t->running_ns;
	case MTRACE__SORT_KEY__SORT_PENDING:
		return thr_pending_ns(d, t);
	/* oldest first: invert so that "largest key first" holds for every key */
	case MTRACE__SORT_KEY__SORT_AGE:
		return UINT64_MAX - t->created_ns;
	case MTRACE__SORT_KEY__SORT_CHILDREN:
		return t->children;
	case MTRACE__SORT_KEY__SORT_READS:
		return t->reads;
	case MTRACE__SORT_KEY__SORT_RESOLVES:
		return t->resolves;
	case MTRACE__SORT_KEY__SORT_ID:
		return UINT64_MAX - t->id; /* ascending ids */
	default:
		return state_thr_rate(t);
	}
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->d->domid != y->d->domid)
		return x->d->domid < y->d->domid ? -1 : 1;
	return x->t->id < y->t->id ? -1 : x->t->id > y->t->id;
}

static int cand_cmp_rev(const void *a, const void *b)
{
	return -cand_cmp(a, b);
}

static void fill_op_events(
    struct stats_box *b, Mtrace__DomainStats *ds, const struct state_domain *d)
{
	size_t n = 0;

	for (unsigned op = 0; op < 256; op++)
		n += d->op_events[op] != 0;
	if (!n)
		return;
	ds->op_events = arena_get(b, n * sizeof(*ds->op_events));
	for (unsigned op = 0; op < 256; op++) {
		Mtrace__OpEvents *o;

		if (!d->op_events[op])
			continue;
		o = arena_get(b, sizeof(*o));
		mtrace__op_events__init(o);
		o->op = op;
		o->events = d->op_events[op];
		ds->op_events[ds->n_op_events++] = o;
	}
}

static void fill_domain(struct stats_box *b, Mtrace__DomainStats *ds, const struct state_domain *d)
{
	mtrace__domain_stats__init(ds);
	ds->domid = d->domid;
	ds->name = arena_str(b, d->name);
	ds->alive = d->alive;
	ds->legacy = d->legacy;
	ds->rings = d->rings;
	ds->events = d->events;
	ds->lost = d->lost;
	ds->corrupt = d->corrupt;
	ds->unknown = d->unknown;
	ds->rate_1s = state_win_rate(&d->win, state_ctx.cur_sec, 1);
	ds->rate_10s = state_win_rate(&d->win, state_ctx.cur_sec, 10);
	ds->rate_60s = state_win_rate(&d->win, state_ctx.cur_sec, 60);
	ds->live_threads = d->live;
	ds->threads_total = d->threads_total;
	ds->threads_evicted = d->threads_evicted;
	ds->threads_ended = d->threads_ended;
	ds->threads_labelled = d->threads_labelled;
	ds->clock = d->clock;
	ds->wakeups = d->wakeups;
	ds->ratelimited = d->ratelimited;
	ds->state = arena_str(b, d->status);
	ds->labels_dropped = d->labels_dropped;
	ds->counters_dropped = d->counters_dropped;
	ds->failures_dropped = d->failures_dropped;
	fill_op_events(b, ds, d);
	ds->sites_dropped = d->sites_dropped;
	ds->sites_bad = d->sites_bad;
	ds->site_edges_dropped = d->edges_dropped;
	ds->modules_dropped = d->modules_dropped;
	ds->clock_sync_bad = d->clock_sync_bad;
	state_vcpu_fill_domain(&b->a, ds, d);
	if (d->counters.n) {
		ds->n_counters = d->counters.n;
		ds->counters = arena_get(b, d->counters.n * sizeof(*ds->counters));
		for (uint32_t i = 0; i < d->counters.n; i++) {
			Mtrace__Counter *c = arena_get(b, sizeof(*c));
			mtrace__counter__init(c);
			c->name = arena_str(b, strtab_str(&d->counters, i));
			c->value = d->cval[i];
			ds->counters[i] = c;
		}
	}
}

static void fill_thread(
    struct stats_box *b, Mtrace__ThreadStats *ts, const struct state_domain *d, const struct thr *t)
{
	mtrace__thread_stats__init(ts);
	ts->domid = d->domid;
	ts->id = (int64_t)t->id;
	ts->label = arena_str(b, t->label != NO_IDX ? strtab_str(&d->labels, t->label) : "");
	ts->type = t->type;
	ts->state = t->state == TS_RESOLVED ? MTRACE__THREAD_STATE__RESOLVED
	    : t->state == TS_FAILED         ? MTRACE__THREAD_STATE__FAILED
	                                    : MTRACE__THREAD_STATE__PENDING;
	ts->parent = (int64_t)t->parent;
	ts->created_ns = t->created_ns;
	ts->resolved_ns = t->resolved_ns;
	ts->reads = t->reads;
	ts->resolves = t->resolves;
	ts->notifies = t->notifies;
	ts->children = t->children;
	ts->running_ns = t->running_ns;
	/* the thread running now has run since run_start */
	if (d->running == t->id && d->last_ts > d->run_start)
		ts->running_ns += d->last_ts - d->run_start;
	ts->pending_ns = thr_pending_ns(d, t);
	ts->events_rate = (double)state_thr_rate(t);
	ts->events = t->events;
	ts->becomes = (int64_t)t->becomes;
	ts->failure =
	    arena_str(b, t->failure != NO_IDX ? strtab_str(&d->failures, t->failure) : "");
	ts->site_index = -1;
	if (t->site != NO_IDX) {
		char site[512];
		state_site_display(d, t->site, site, sizeof(site));
		ts->site = arena_str(b, site);
		ts->site_index = (int32_t)t->site;
	}
}

typedef int (*cand_cmp_fn)(const void *, const void *);

/* The kept candidates are a heap with the one that sorts last at the root. */
static void heap_down(struct cand *h, size_t n, size_t i, cand_cmp_fn cmp)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && cmp(&h[l], &h[m]) > 0)
			m = l;
		if (r < n && cmp(&h[r], &h[m]) > 0)
			m = r;
		if (m == i)
			return;
		struct cand t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_up(struct cand *h, size_t i, cand_cmp_fn cmp)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (cmp(&h[i], &h[p]) <= 0)
			return;
		struct cand t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

/*
 * Top-N without sorting every thread: one pass keeps the best `top` in a heap
 * (O(threads x log top)), and only those are sorted.  The heap is at most max_top_n
 * entries, allocated once per Stats.
 */
static void add_threads(
    struct stats_box *b, const Mtrace__Subscribe *sub, const struct label_filter *lf)
{
	cand_cmp_fn cmp = sub->sort_reverse ? cand_cmp_rev : cand_cmp;
	unsigned top = sub->top_n;
	size_t n = 0;
	struct cand *h;

	if (top > state_ctx.cfg->max_top_n)
		top = state_ctx.cfg->max_top_n;
	if (!top)
		return;
	h = xreallocarray(NULL, top, sizeof(*h));
	for (unsigned i = 0; i < state_ctx.ndoms; i++) {
		const struct state_domain *d = state_ctx.doms[i];
		if (!state_domain_matches(d->domid, sub))
			continue;
		for (int which = 0; which < 2; which++) {
			uint32_t j = which ? d->finished.head : d->pending.head;
			if (which && !sub->include_finished)
				break;
			for (; j != NO_IDX; j = d->thr[j].next) {
				const struct thr *t = &d->thr[j];
				struct cand c = { d, t, 0 };
				if (!label_filter_match(lf,
				        t->label != NO_IDX ? strtab_str(&d->labels, t->label)
				                           : NULL))
					continue;
				c.key = sort_key(d, t, sub->sort);
				if (n < top) {
					h[n] = c;
					heap_up(h, n++, cmp);
				} else if (cmp(&c, &h[0]) < 0) {
					h[0] = c;
					heap_down(h, n, 0, cmp);
				}
			}
		}
	}
	if (n > 1)
		qsort(h, n, sizeof(*h), cmp);
	b->s.n_threads = n;
	b->s.threads = arena_get(b, (n ? n : 1) * sizeof(*b->s.threads));
	for (size_t k = 0; k < n; k++) {
		b->s.threads[k] = arena_get(b, sizeof(Mtrace__ThreadStats));
		fill_thread(b, b->s.threads[k], h[k].d, h[k].t);
	}
	free(h);
}

static void add_labels(
    struct stats_box *b, const Mtrace__Subscribe *sub, const struct label_filter *lf)
{
	size_t n = 0, k = 0;

	for (unsigned i = 0; i < state_ctx.ndoms; i++)
		if (state_domain_matches(state_ctx.doms[i]->domid, sub))
			n += state_ctx.doms[i]->labels.n;
	b->s.labels = arena_get(b, (n ? n : 1) * sizeof(*b->s.labels));
	for (unsigned i = 0; i < state_ctx.ndoms; i++) {
		const struct state_domain *d = state_ctx.doms[i];
		if (!state_domain_matches(d->domid, sub))
			continue;
		for (uint32_t j = 0; j < d->labels.n; j++) {
			const struct label *l = &d->lstat[j];
			Mtrace__LabelStats *ls;

			if (!label_filter_match(lf, strtab_str(&d->labels, j)))
				continue;
			ls = arena_get(b, sizeof(*ls));
			mtrace__label_stats__init(ls);
			ls->domid = d->domid;
			ls->label = arena_str(b, strtab_str(&d->labels, j));
			ls->count = l->count;
			ls->current = l->current;
			ls->relabels = l->relabels;
			ls->live = l->live;
			ls->creation_rate =
			    state_label_rate_sum(l, state_ctx.cur_sec) / (double)LABEL_WIN;
			ls->lifetime_p50_ns = state_hist_pct(l, 0.50);
			ls->lifetime_p99_ns = state_hist_pct(l, 0.99);
			ls->lifetime_sum_ns = l->life_sum_ns;
			ls->lifetime_count = l->nlife;
			ls->waits = l->waits;
			ls->wait_ns = l->wait_ns;
			ls->wait_steal_ns = l->wait_steal_ns;
			ls->wait_blocked_ns = l->wait_blocked_ns;
			b->s.labels[k++] = ls;
		}
	}
	b->s.n_labels = k;
}

struct pend {
	uint32_t site;
	uint64_t ns;
};

static int pend_cmp(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* p in [0,1] of the sorted run v[0..n) (nearest rank) */
static uint64_t run_pct(const struct pend *v, size_t n, double p)
{
	size_t k = (size_t)(p * (double)n + 0.999999);

	if (!n)
		return 0;
	if (k < 1)
		k = 1;
	return v[k > n ? n - 1 : k - 1].ns;
}

static void fill_site(struct stats_box *b, Mtrace__SiteStats *ss, const struct state_domain *d,
    uint32_t si, const struct pend *pv, size_t pn)
{
	const struct site *s = &d->sites[si];
	char buf[512];

	mtrace__site_stats__init(ss);
	ss->domid = d->domid;
	ss->index = si;
	state_site_display(d, si, buf, sizeof(buf));
	ss->site = arena_str(b, buf);
	ss->named = s->kind == MTRACE_SITE_NAMED;
	ss->address = s->value;
	ss->module = "";
	if (s->tried && s->mod != NO_IDX && s->mod < d->nmods) {
		const struct gmod *m = &d->mods[s->mod];
		for (unsigned i = 0; i < m->idlen; i++)
			snprintf(buf + 2 * i, 3, "%02x", m->id[i]);
		ss->module = arena_str(b, buf);
	}
	ss->offset = s->tried ? s->rel : s->value;
	ss->resolved = s->sym != NULL;
	if (s->sym) {
		ss->n_frames = s->sym->nframes;
		ss->frames = arena_get(b, ss->n_frames * sizeof(*ss->frames));
		for (unsigned k = 0; k < s->sym->nframes; k++) {
			Mtrace__SiteFrame *f = arena_get(b, sizeof(*f));
			mtrace__site_frame__init(f);
			f->function = arena_str(b, s->sym->frames[k].func);
			f->file = arena_str(b, s->sym->frames[k].file);
			f->line = s->sym->frames[k].line;
			ss->frames[k] = f;
		}
	}
	ss->count = s->st.count;
	ss->live = s->st.live;
	ss->creation_rate = state_label_rate_sum(&s->st, state_ctx.cur_sec) / (double)LABEL_WIN;
	ss->lifetime_p50_ns = state_hist_pct(&s->st, 0.50);
	ss->lifetime_p99_ns = state_hist_pct(&s->st, 0.99);
	ss->pending_p50_ns = run_pct(pv, pn, 0.50);
	ss->pending_p99_ns = run_pct(pv, pn, 0.99);
	ss->waits = s->st.waits;
	ss->wait_ns = s->st.wait_ns;
	ss->wait_steal_ns = s->st.wait_steal_ns;
	ss->wait_blocked_ns = s->st.wait_blocked_ns;
}

static void add_sites(struct stats_box *b, const Mtrace__Subscribe *sub)
{
	size_t n = 0, ne = 0, k = 0, ke = 0;

	for (unsigned i = 0; i < state_ctx.ndoms; i++)
		if (state_domain_matches(state_ctx.doms[i]->domid, sub)) {
			n += state_ctx.doms[i]->nsites;
			ne += state_ctx.doms[i]->nedges;
		}
	b->s.sites = arena_get(b, n * sizeof(*b->s.sites));
	b->s.site_edges = arena_get(b, ne * sizeof(*b->s.site_edges));
	for (unsigned i = 0; i < state_ctx.ndoms; i++) {
		const struct state_domain *d = state_ctx.doms[i];
		struct pend *pv;
		size_t pn = 0, at = 0;

		if (!state_domain_matches(d->domid, sub) || !d->nsites)
			continue;
		/* how long the pending threads of each site have been pending so far */
		pv = xreallocarray(NULL, d->live ? d->live : 1, sizeof(*pv));
		for (uint32_t j = d->pending.head; j != NO_IDX && pn < d->live; j = d->thr[j].next)
			if (d->thr[j].site != NO_IDX) {
				pv[pn].site = d->thr[j].site;
				pv[pn++].ns = thr_pending_ns(d, &d->thr[j]);
			}
		qsort(pv, pn, sizeof(*pv), pend_cmp);
		for (uint32_t j = 0; j < d->nsites; j++) {
			size_t from = at;
			while (at < pn && pv[at].site == j)
				at++;
			b->s.sites[k] = arena_get(b, sizeof(Mtrace__SiteStats));
			fill_site(b, b->s.sites[k++], d, j, pv + from, at - from);
		}
		free(pv);
		for (uint32_t j = 0; d->edges && j <= d->edge_mask; j++) {
			const struct site_edge *e = &d->edges[j];
			Mtrace__SiteEdge *se;

			if (!e->count)
				continue;
			se = arena_get(b, sizeof(*se));
			mtrace__site_edge__init(se);
			se->domid = d->domid;
			se->parent = e->from == NO_IDX ? -1 : (int32_t)e->from;
			se->child = e->to;
			se->count = e->count;
			b->s.site_edges[ke++] = se;
		}
	}
	b->s.n_sites = k;
	b->s.n_site_edges = ke;
}

Mtrace__Stats *state_stats(const Mtrace__Subscribe *sub, uint64_t dropped_for_client)
{
	static const Mtrace__Subscribe all = MTRACE__SUBSCRIBE__INIT;
	struct stats_box *b = xcalloc(1, sizeof(*b));
	size_t k = 0;

	if (!sub)
		sub = &all;
	arena_init(&b->a, 65536);
	mtrace__stats__init(&b->s);
	b->s.time_ns = clock_ns(CLOCK_REALTIME);
	b->s.dropped_for_client = dropped_for_client;
	state_vcpu_fill_stats(&b->s);
	b->s.domains = arena_get(b, state_ctx.ndoms * sizeof(*b->s.domains));
	for (unsigned i = 0; i < state_ctx.ndoms; i++) {
		if (!state_domain_matches(state_ctx.doms[i]->domid, sub))
			continue;
		b->s.domains[k] = arena_get(b, sizeof(Mtrace__DomainStats));
		fill_domain(b, b->s.domains[k++], state_ctx.doms[i]);
	}
	b->s.n_domains = k;
	struct label_filter lf;
	if (label_filter_compile(&lf, sub->labels, sub->n_labels) < 0)
		abort(); /* as xalloc: statistics have no way to report it */
	add_threads(b, sub, &lf);
	if (sub->label_stats)
		add_labels(b, sub, &lf);
	label_filter_free(&lf);
	if (sub->site_stats)
		add_sites(b, sub);
	return &b->s;
}

void state_stats_free(Mtrace__Stats *s)
{
	struct stats_box *b = (struct stats_box *)s;

	if (!s)
		return;
	arena_free(&b->a);
	free(b);
}
