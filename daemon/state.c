/*
 * state.c - per-domain, per-thread and per-label state, updated from decoded events.
 *
 * state_apply is the hot path: a domain pointer is handed in (no domain lookup), the
 * thread table is open addressing with a one-entry cache, and memory is only taken
 * when a table grows, so the steady state allocates nothing.  Memory is bounded by
 * max_threads_per_guest (finished threads evicted first, oldest first) and
 * max_labels_per_guest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "ring-reader.h"
#include "state-int.h"

struct state_domain **state_doms;
unsigned state_ndoms;
const struct mtraced_config *state_cfg;
uint64_t state_cur_sec;

static struct mtraced_config cfg_copy;
static struct state_domain *last_dom;	/* state_thread_label is called per event */

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		fprintf(stderr, "mtraced: out of memory\n");
		abort();
	}
	return p;
}

static void *xrealloc(void *p, size_t n, size_t sz)
{
	void *q;

	if (n && sz > SIZE_MAX / n)
		abort();
	q = realloc(p, n && sz ? n * sz : 1);
	if (!q) {
		fprintf(stderr, "mtraced: out of memory\n");
		abort();
	}
	return q;
}

uint64_t state_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- rolling windows ---- */

static void win_roll(struct win *w, uint64_t now_sec)
{
	if (now_sec <= w->sec)
		return;
	w->b[w->sec % WIN_SECS] = (uint32_t)(w->cur > UINT32_MAX ? UINT32_MAX : w->cur);
	for (uint64_t s = w->sec + 1; s < now_sec && s < w->sec + 1 + WIN_SECS; s++)
		w->b[s % WIN_SECS] = 0;
	w->sec = now_sec;
	w->cur = 0;
}

double state_win_rate(const struct win *w, uint64_t now_sec, unsigned secs)
{
	uint64_t sum = 0;

	/* complete seconds only: [now - secs, now) */
	for (uint64_t s = now_sec >= secs ? now_sec - secs : 0; s < now_sec; s++) {
		if (s + WIN_SECS <= w->sec || s > w->sec)
			continue;	/* older than the window, or after the last event */
		sum += s == w->sec ? w->cur : w->b[s % WIN_SECS];
	}
	return (double)sum / secs;
}

uint64_t state_thr_rate(const struct thr *t)
{
	if (t->ev_sec + 1 == state_cur_sec)
		return t->ev_cur;
	if (t->ev_sec == state_cur_sec)
		return t->ev_prev;
	return 0;
}

/* ---- lifetime histogram ---- */

static unsigned hist_bucket(uint64_t v)
{
	unsigned msb;

	if (v < 4)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	return (msb - 1) * 4 + (unsigned)((v >> (msb - 2)) & 3);
}

static uint64_t hist_value(unsigned b)
{
	unsigned msb, sub;
	uint64_t lo, width;

	if (b < 4)
		return b;
	msb = b / 4 + 1;
	sub = b % 4;
	lo = (uint64_t)(4 + sub) << (msb - 2);
	width = (uint64_t)1 << (msb - 2);
	return lo + width / 2;
}

uint64_t state_hist_pct(const struct label *l, double p)
{
	uint64_t want, seen = 0;

	if (!l->nlife)
		return 0;
	want = (uint64_t)(p * (double)l->nlife + 0.999999);
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += l->hist[b];
		if (seen >= want)
			return hist_value(b);
	}
	return hist_value(HIST_BUCKETS - 1);
}

static void label_roll(struct label *l, uint64_t now_sec)
{
	if (now_sec <= l->cr_sec)
		return;
	for (uint64_t s = l->cr_sec + 1; s <= now_sec && s < l->cr_sec + 1 + LABEL_WIN; s++)
		l->cr[s % LABEL_WIN] = 0;
	l->cr_sec = now_sec;
}

uint32_t state_label_rate_sum(const struct label *l, uint64_t now_sec)
{
	uint32_t sum = 0;

	/* the last LABEL_WIN complete seconds */
	for (uint64_t s = now_sec >= LABEL_WIN ? now_sec - LABEL_WIN : 0; s < now_sec; s++)
		if (s <= l->cr_sec && s + LABEL_WIN > l->cr_sec)
			sum += l->cr[s % LABEL_WIN];
	return sum;
}

/* ---- interned strings ---- */

static uint32_t str_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static void strtab_init(struct strtab *t, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
}

static void strtab_free(struct strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->hash);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static void strtab_rehash(struct strtab *t, uint32_t nslots)
{
	free(t->slots);
	t->slots = xcalloc(nslots, sizeof(uint32_t));
	t->nslots = nslots;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t j = t->hash[i] & (nslots - 1);
		while (t->slots[j])
			j = (j + 1) & (nslots - 1);
		t->slots[j] = i + 1;
	}
}

/* Index of s (n bytes) or NO_IDX; *added tells whether it is new.  Full: NO_IDX. */
static uint32_t strtab_intern(struct strtab *t, const char *s, size_t n, bool *added)
{
	uint32_t h, j;

	*added = false;
	if (n >= STR_MAX_STORE)
		n = STR_MAX_STORE - 1;
	h = str_hash(s, n);
	if (t->nslots) {
		for (j = h & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
			uint32_t i = t->slots[j] - 1;
			if (t->hash[i] == h && !strncmp(t->s[i], s, n) && !t->s[i][n])
				return i;
		}
	}
	if (t->n >= t->max)
		return NO_IDX;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->s = xrealloc(t->s, t->cap, sizeof(char *));
		t->hash = xrealloc(t->hash, t->cap, sizeof(uint32_t));
	}
	t->s[t->n] = xcalloc(1, n + 1);
	memcpy(t->s[t->n], s, n);
	t->hash[t->n] = h;
	t->n++;
	if (t->n * 2 > t->nslots)
		strtab_rehash(t, t->nslots ? t->nslots * 2 : 16);
	else {
		for (j = h & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
			;
		t->slots[j] = t->n;
	}
	*added = true;
	return t->n - 1;
}

/* ---- thread table ---- */

static inline uint32_t thash(uint64_t id, uint32_t mask)
{
	return (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static void list_push(struct state_domain *d, struct list *l, uint32_t i)
{
	d->thr[i].prev = l->tail;
	d->thr[i].next = NO_IDX;
	if (l->tail != NO_IDX)
		d->thr[l->tail].next = i;
	else
		l->head = i;
	l->tail = i;
}

static void list_del(struct state_domain *d, struct list *l, uint32_t i)
{
	struct thr *t = &d->thr[i];

	if (t->prev != NO_IDX)
		d->thr[t->prev].next = t->next;
	else
		l->head = t->next;
	if (t->next != NO_IDX)
		d->thr[t->next].prev = t->prev;
	else
		l->tail = t->prev;
}

static void tab_insert(struct state_domain *d, uint64_t id, uint32_t idx)
{
	uint32_t j = thash(id, d->tab_mask);

	while (d->tab[j].idx != NO_IDX)
		j = (j + 1) & d->tab_mask;
	d->tab[j].id = id;
	d->tab[j].idx = idx;
}

static void tab_resize(struct state_domain *d, uint32_t nslots)
{
	struct tslot *old = d->tab;
	uint32_t oldn = d->tab ? d->tab_mask + 1 : 0;

	d->tab = xcalloc(nslots, sizeof(struct tslot));
	d->tab_mask = nslots - 1;
	for (uint32_t j = 0; j < nslots; j++)
		d->tab[j].idx = NO_IDX;
	for (uint32_t j = 0; j < oldn; j++)
		if (old[j].idx != NO_IDX)
			tab_insert(d, old[j].id, old[j].idx);
	free(old);
}

static inline uint32_t tab_find(const struct state_domain *d, uint64_t id)
{
	for (uint32_t j = thash(id, d->tab_mask);; j = (j + 1) & d->tab_mask) {
		if (d->tab[j].idx == NO_IDX)
			return NO_IDX;
		if (d->tab[j].id == id)
			return d->tab[j].idx;
	}
}

/* Linear-probing delete by backward shift: no tombstones, so lookups stay short. */
static void tab_delete(struct state_domain *d, uint64_t id)
{
	uint32_t mask = d->tab_mask, i = thash(id, mask), j, k;

	while (d->tab[i].idx != NO_IDX && d->tab[i].id != id)
		i = (i + 1) & mask;
	if (d->tab[i].idx == NO_IDX)
		return;
	for (j = i;;) {
		d->tab[i].idx = NO_IDX;
		for (;;) {
			j = (j + 1) & mask;
			if (d->tab[j].idx == NO_IDX)
				return;
			k = thash(d->tab[j].id, mask);
			/* move j back to i unless its home k lies cyclically in (i, j] */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		d->tab[i] = d->tab[j];
		i = j;
	}
}

static void label_unlive(struct state_domain *d, struct thr *t)
{
	if (t->label != NO_IDX && d->lstat[t->label].live)
		d->lstat[t->label].live--;
}

static void thr_remove(struct state_domain *d, uint32_t i)
{
	struct thr *t = &d->thr[i];

	if (t->state == TS_PENDING) {
		list_del(d, &d->pending, i);
		d->live--;
		label_unlive(d, t);
	} else {
		list_del(d, &d->finished, i);
	}
	tab_delete(d, t->id);
	if (d->cache_idx == i)
		d->cache_idx = NO_IDX;
	if (d->running_idx == i)
		d->running_idx = NO_IDX;
	t->next = d->free_head;
	d->free_head = i;
	d->nthr--;
}

static uint32_t thr_alloc(struct state_domain *d, uint32_t avoid)
{
	uint32_t max = state_cfg->max_threads_per_guest, i;

	if (d->free_head == NO_IDX && d->thr_cap < max) {
		uint32_t ncap = d->thr_cap ? d->thr_cap * 2 : 64;
		if (ncap > max)
			ncap = max;
		d->thr = xrealloc(d->thr, ncap, sizeof(struct thr));
		for (i = ncap; i-- > d->thr_cap;) {
			d->thr[i].next = d->free_head;
			d->free_head = i;
		}
		d->thr_cap = ncap;
		if ((d->tab_mask + 1) < 2 * ncap)
			tab_resize(d, 2 * ncap);
	}
	if (d->free_head == NO_IDX || d->nthr >= max) {
		/* full: the oldest finished thread goes first, then the oldest pending one */
		uint32_t v = d->finished.head;
		if (v == avoid)
			v = d->thr[v].next;
		if (v == NO_IDX) {
			v = d->pending.head;
			if (v == avoid)
				v = d->thr[v].next;
		}
		if (v == NO_IDX)
			return NO_IDX;
		thr_remove(d, v);
		d->threads_evicted++;
	}
	i = d->free_head;
	d->free_head = d->thr[i].next;
	d->nthr++;
	return i;
}

static uint32_t thr_new(struct state_domain *d, uint64_t id, uint64_t ts, uint64_t parent,
			uint8_t type, uint32_t avoid)
{
	uint32_t i = thr_alloc(d, avoid);
	struct thr *t;

	if (i == NO_IDX)
		return NO_IDX;
	t = &d->thr[i];
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->parent = parent;
	t->becomes = MTRACE_THREAD_NONE;
	t->created_ns = ts;
	t->label = NO_IDX;
	t->failure = NO_IDX;
	t->type = type;
	t->state = TS_PENDING;
	t->ev_sec = (uint32_t)state_cur_sec;
	list_push(d, &d->pending, i);
	tab_insert(d, id, i);
	d->live++;
	d->threads_total++;
	return i;
}

/* Thread index for id, created on first sight (threads that existed before we attached). */
static inline uint32_t thr_get(struct state_domain *d, uint64_t id, uint64_t ts, uint32_t avoid)
{
	uint32_t i;

	if (d->cache_idx != NO_IDX && d->cache_id == id)
		return d->cache_idx;
	i = tab_find(d, id);
	if (i == NO_IDX)
		i = thr_new(d, id, ts, MTRACE_THREAD_NONE, MTRACE_TT_UNKNOWN, avoid);
	if (i != NO_IDX) {
		d->cache_id = id;
		d->cache_idx = i;
	}
	return i;
}

static void thr_finish(struct state_domain *d, uint32_t i, uint64_t ts, uint8_t state)
{
	struct thr *t = &d->thr[i];

	if (t->state != TS_PENDING)
		return;
	list_del(d, &d->pending, i);
	list_push(d, &d->finished, i);
	t->state = state;
	t->resolved_ns = ts;
	d->live--;
	if (t->label != NO_IDX) {
		struct label *l = &d->lstat[t->label];
		if (l->live)
			l->live--;
		l->hist[hist_bucket(ts > t->created_ns ? ts - t->created_ns : 0)]++;
		l->nlife++;
	}
}

static void thr_set_label(struct state_domain *d, struct thr *t, const char *s, size_t n)
{
	bool added;
	uint32_t li = strtab_intern(&d->labels, s, n, &added);
	struct label *l;

	if (li == NO_IDX) {
		d->labels_dropped++;
		return;
	}
	if (added) {
		d->lstat = xrealloc(d->lstat, d->labels.cap, sizeof(struct label));
		memset(&d->lstat[li], 0, sizeof(struct label));
		d->lstat[li].cr_sec = state_cur_sec;
	}
	if (t->label == li)
		return;
	if (t->state == TS_PENDING)
		label_unlive(d, t);
	t->label = li;
	l = &d->lstat[li];
	l->count++;
	if (t->state == TS_PENDING)
		l->live++;
	label_roll(l, state_cur_sec);
	l->cr[state_cur_sec % LABEL_WIN]++;
}

static void counter_apply(struct state_domain *d, const struct mtrace_event *ev, bool set)
{
	bool added;
	uint32_t ci = strtab_intern(&d->counters, ev->str ? ev->str : "", ev->str_len, &added);

	if (ci == NO_IDX) {
		d->counters_dropped++;
		return;
	}
	if (added) {
		d->cval = xrealloc(d->cval, d->counters.cap, sizeof(int64_t));
		d->cval[ci] = 0;
	}
	if (set)
		d->cval[ci] = (int64_t)ev->arg;
	else
		d->cval[ci] = (int64_t)((uint64_t)d->cval[ci] + ev->arg);	/* wraps, no UB */
}

/* The running thread changes at ts: charge the interval to the one that ran. */
static inline void run_switch(struct state_domain *d, uint64_t to, uint64_t ts)
{
	if (d->running == to)
		return;
	if (d->running_idx != NO_IDX && ts > d->run_start)
		d->thr[d->running_idx].running_ns += ts - d->run_start;
	d->running = to;
	d->run_start = ts;
	/* the caller has just looked `to` up: it is the one-entry cache */
	d->running_idx = (to != MTRACE_THREAD_NONE && d->cache_id == to) ? d->cache_idx :
			 to != MTRACE_THREAD_NONE ? tab_find(d, to) : NO_IDX;
}

void state_apply(struct state_domain *d, const struct mtrace_event *ev)
{
	uint32_t ti = NO_IDX, ai;
	struct thr *t = NULL;
	uint64_t ts = ev->ts;

	d->events++;
	d->win.cur++;
	if (ts > d->last_ts)
		d->last_ts = ts;

	if (ev->op == MTRACE_OP_GC) {
		d->gcs++;
		d->gc_ns += ev->arg;
		return;
	}
	if (ev->op == MTRACE_OP_RING_START)
		return;
	if (ev->thread != MTRACE_THREAD_NONE) {
		ti = thr_get(d, ev->thread, ts, NO_IDX);
		if (ti != NO_IDX) {
			t = &d->thr[ti];
			t->events++;
			if (t->ev_sec != (uint32_t)state_cur_sec) {
				t->ev_prev = t->ev_sec + 1 == (uint32_t)state_cur_sec ? t->ev_cur : 0;
				t->ev_cur = 0;
				t->ev_sec = (uint32_t)state_cur_sec;
			}
			t->ev_cur++;
		}
	}

	switch (ev->op) {
	case MTRACE_OP_CREATES:
		if (ev->arg == MTRACE_THREAD_NONE)
			break;
		ai = tab_find(d, ev->arg);
		if (ai != NO_IDX && ai == ti)	/* a thread cannot create itself */
			break;
		if (ai != NO_IDX)		/* id reused: the old thread is gone */
			thr_remove(d, ai);
		ai = thr_new(d, ev->arg, ts, ev->thread, ev->type, ti);
		if (ti != NO_IDX)
			d->thr[ti].children++;	/* thr_new may have moved the slab */
		break;
	case MTRACE_OP_READ:
		if (t)
			t->reads++;
		run_switch(d, ev->thread, ts);
		break;
	case MTRACE_OP_READ_LATER:
	case MTRACE_OP_TRY_READ:
		if (t)
			t->reads++;
		break;
	case MTRACE_OP_FULFILLS:
	case MTRACE_OP_FAILS:
		if (t)
			t->resolves++;
		if (ev->arg == MTRACE_THREAD_NONE)
			break;
		ai = thr_get(d, ev->arg, ts, ti);
		if (ai == NO_IDX)
			break;
		thr_finish(d, ai, ts, ev->op == MTRACE_OP_FULFILLS ? TS_RESOLVED : TS_FAILED);
		if (ev->op == MTRACE_OP_FAILS && ev->str) {
			bool added;
			d->thr[ai].failure = strtab_intern(&d->failures, ev->str, ev->str_len,
							   &added);
		}
		break;
	case MTRACE_OP_BECOMES:
		if (t)
			t->becomes = ev->arg;
		break;
	case MTRACE_OP_LABEL:
		if (t && ev->str)
			thr_set_label(d, t, ev->str, ev->str_len);
		break;
	case MTRACE_OP_INCREASE:
		counter_apply(d, ev, false);
		break;
	case MTRACE_OP_COUNTER:
		counter_apply(d, ev, true);
		break;
	case MTRACE_OP_SWITCH:
		run_switch(d, ev->thread, ts);
		break;
	case MTRACE_OP_SIGNAL:
	case MTRACE_OP_SIGNAL_NEW:
		/* arg signalled thread: arg is the notifier */
		if (ev->arg != MTRACE_THREAD_NONE) {
			ai = thr_get(d, ev->arg, ts, ti);
			if (ai != NO_IDX)
				d->thr[ai].notifies++;
		}
		if (ev->op == MTRACE_OP_SIGNAL)
			run_switch(d, ev->thread, ts);
		break;
	default:
		break;
	}
}

/* ---- domains ---- */

static void domain_free(struct state_domain *d)
{
	if (last_dom == d)
		last_dom = NULL;
	free(d->thr);
	free(d->tab);
	strtab_free(&d->labels);
	free(d->lstat);
	strtab_free(&d->failures);
	strtab_free(&d->counters);
	free(d->cval);
	free(d);
}

static void domain_reset(struct state_domain *d)
{
	uint32_t domid = d->domid;
	char name[NAME_MAX_LEN];

	memcpy(name, d->name, sizeof(name));
	free(d->thr);
	free(d->tab);
	strtab_free(&d->labels);
	free(d->lstat);
	strtab_free(&d->failures);
	strtab_free(&d->counters);
	free(d->cval);
	memset(d, 0, sizeof(*d));
	d->domid = domid;
	memcpy(d->name, name, sizeof(name));
	d->running = MTRACE_THREAD_NONE;
	d->running_idx = NO_IDX;
	d->free_head = NO_IDX;
	d->pending.head = d->pending.tail = NO_IDX;
	d->finished.head = d->finished.tail = NO_IDX;
	d->cache_idx = NO_IDX;
	d->win.sec = state_cur_sec;
	tab_resize(d, 16);
	strtab_init(&d->labels, state_cfg->max_labels_per_guest);
	strtab_init(&d->failures, 256);
	strtab_init(&d->counters, 256);
	snprintf(d->status, sizeof(d->status), "discovered");
}

struct state_domain *state_domain_find(uint32_t domid)
{
	if (last_dom && last_dom->domid == domid)
		return last_dom;
	for (unsigned i = 0; i < state_ndoms; i++)
		if (state_doms[i]->domid == domid)
			return last_dom = state_doms[i];
	return NULL;
}

struct state_domain *state_domain_get(uint32_t domid)
{
	struct state_domain *d = state_domain_find(domid);

	if (d)
		return d;
	d = xcalloc(1, sizeof(*d));
	d->domid = domid;
	domain_reset(d);
	state_doms = xrealloc(state_doms, state_ndoms + 1, sizeof(*state_doms));
	state_doms[state_ndoms++] = d;
	return d;
}

void state_domain_set_name(struct state_domain *d, const char *name)
{
	snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
}

void state_domain_attached(struct state_domain *d, uint32_t rings, uint32_t clock, bool legacy)
{
	/* a re-announce (resume, reload) keeps counting; a new domain with the id of a
	 * dead one starts afresh */
	if (d->gone)
		domain_reset(d);
	d->alive = true;
	d->gone = false;
	d->dead_at_ns = 0;
	d->rings = rings;
	d->clock = clock;
	d->legacy = legacy;
	snprintf(d->status, sizeof(d->status), "running");
}

void state_domain_bad(struct state_domain *d, const char *reason)
{
	if (d->gone)
		domain_reset(d);
	d->alive = false;
	d->gone = false;
	d->dead_at_ns = 0;
	snprintf(d->status, sizeof(d->status), "bad: %s", reason);
}

void state_domain_detached(struct state_domain *d, const char *why, bool gone)
{
	d->alive = false;
	d->gone = gone;
	d->dead_at_ns = state_now_ns();
	if (!d->dead_at_ns)
		d->dead_at_ns = 1;
	snprintf(d->status, sizeof(d->status), "%s", why);
}

void state_domain_forget(uint32_t domid)
{
	for (unsigned i = 0; i < state_ndoms; i++) {
		if (state_doms[i]->domid != domid)
			continue;
		domain_free(state_doms[i]);
		state_doms[i] = state_doms[--state_ndoms];
		return;
	}
}

void state_mark_gone(bool (*exists)(uint32_t domid, bool *crashed, void *arg), void *arg)
{
	for (unsigned i = 0; i < state_ndoms; i++) {
		struct state_domain *d = state_doms[i];
		bool crashed = false;

		if (d->alive || d->gone || !d->dead_at_ns || exists(d->domid, &crashed, arg))
			continue;
		d->gone = true;
		snprintf(d->status, sizeof(d->status), "%s", crashed ? "crashed" : "destroyed");
	}
}

void state_domain_add_counts(struct state_domain *d, uint64_t lost, uint64_t corrupt,
			     uint64_t unknown)
{
	d->lost += lost;
	d->corrupt += corrupt;
	d->unknown += unknown;
}

void state_domain_add_wakeup(struct state_domain *d, bool ratelimited)
{
	if (ratelimited)
		d->ratelimited++;
	else
		d->wakeups++;
}

uint64_t state_domain_events(const struct state_domain *d)
{
	return d->events;
}

uint64_t state_domain_live_threads(const struct state_domain *d)
{
	return d->live;
}

void state_tick(uint64_t now_ns)
{
	uint64_t sec = now_ns / 1000000000u;

	state_cur_sec = sec;
	for (unsigned i = 0; i < state_ndoms; i++) {
		struct state_domain *d = state_doms[i];

		win_roll(&d->win, sec);
		if (d->dead_at_ns && now_ns - d->dead_at_ns >= (uint64_t)state_cfg->dead_keep_s * 1000000000u) {
			domain_free(d);
			state_doms[i--] = state_doms[--state_ndoms];
		}
	}
}

/* ---- the stream server's read-outs ---- */

const char *state_thread_label(uint32_t domid, uint64_t thread)
{
	struct state_domain *d = state_domain_find(domid);
	uint32_t i;

	if (!d || !d->tab)
		return NULL;
	i = tab_find(d, thread);
	if (i == NO_IDX || d->thr[i].label == NO_IDX)
		return NULL;
	return d->labels.s[d->thr[i].label];
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

void state_foreach_domain(state_domain_cb cb, void *arg)
{
	for (unsigned i = 0; i < state_ndoms; i++) {
		struct state_domain *d = state_doms[i];
		if (d->alive)
			cb(d->domid, d->name, d->rings, d->clock, d->legacy, arg);
	}
}

unsigned state_guest_count(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < state_ndoms; i++)
		n += state_doms[i]->alive;
	return n;
}

void state_init(const struct mtraced_config *cfg)
{
	cfg_copy = *cfg;
	state_cfg = &cfg_copy;
	state_cur_sec = state_now_ns() / 1000000000u;
}

void state_reconfigure(const struct mtraced_config *cfg)
{
	/* a smaller thread cap applies as threads are created: thr_alloc evicts down to it */
	cfg_copy = *cfg;
	for (unsigned i = 0; i < state_ndoms; i++)
		state_doms[i]->labels.max = cfg->max_labels_per_guest;
}

void state_fini(void)
{
	for (unsigned i = 0; i < state_ndoms; i++)
		domain_free(state_doms[i]);
	free(state_doms);
	state_doms = NULL;
	state_ndoms = 0;
}
