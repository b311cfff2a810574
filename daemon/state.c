/*
 * state.c - the hot path: state_apply, one decoded event at a time.
 *
 * A domain pointer is handed in (no domain lookup), the thread table is open
 * addressing with a 16-entry cache, and memory is only taken when a table grows, so
 * the steady state allocates nothing.  What runs per event is here or static inline
 * in state-int.h, so that it inlines without LTO; what runs when a thread is created,
 * removed or labelled lives with its table (state-threads.c, state-labels.c).
 */
#include <stdbool.h>
#include <stdint.h>

#include "ring-reader.h"
#include "state-int.h"
#include "state.h"

/* Events of the last complete second; ev_* are kept by state_apply below. */
uint64_t state_thr_rate(const struct thr *t)
{
	if (t->ev_sec + 1 == state_ctx.cur_sec)
		return (uint32_t)t->events - t->ev_base;
	if (t->ev_sec == state_ctx.cur_sec)
		return t->ev_prev;
	return 0;
}

/* Thread index for id, created on first sight (threads that existed before we attached). */
static inline uint32_t thr_get(struct state_domain *d, uint64_t id, uint64_t ts, uint32_t avoid)
{
	uint32_t i = cache_find(d, id);

	if (i != NO_IDX)
		return i;
	i = tab_find(d, id);
	if (i == NO_IDX) {
		i = state_thr_new(d, id, ts, MTRACE_THREAD_NONE, MTRACE_TT_UNKNOWN, avoid);
		/* created before we saw it: its creation time is not known, nor its wait */
		if (i != NO_IDX)
			d->thr[i].waited = 1;
	}
	if (i != NO_IDX)
		cache_put(d, id, i);
	return i;
}

/* A resolve, a fifth of the events of the Lwt-like mix: inlined by force (one caller),
 * the call and its register saves were about a quarter of its 45 instructions. */
static inline __attribute__((always_inline)) void thr_finish(
    struct state_domain *d, uint32_t i, uint64_t ts, uint8_t state)
{
	struct thr *t = &d->thr[i];

	if (t->state != TS_PENDING)
		return;
	list_del(d, &d->pending, i);
	list_push(d, &d->finished, i);
	t->state = state;
	t->resolved_ns = ts;
	if (__builtin_expect(d->vc != NULL, 0) && !t->waited) /* never ran: waited till now */
		state_vcpu_wait(d, t, ts);
	d->live--;
	d->threads_ended++;
	if (t->label != NO_IDX) {
		struct label *l = &d->lstat[t->label];
		if (l->live)
			l->live--;
		uint64_t life = ts > t->created_ns ? ts - t->created_ns : 0;
		l->hist[hist_bucket(life)]++;
		l->nlife++;
		l->life_sum_ns += life;
	}
	if (t->site != NO_IDX) {
		struct label *l = &d->sites[t->site].st;
		if (l->live)
			l->live--;
		l->hist[hist_bucket(ts > t->created_ns ? ts - t->created_ns : 0)]++;
		l->nlife++;
	}
}

/* COUNTER sets a guest counter, INCREASE adds to it. */
static inline __attribute__((always_inline)) void cval_apply(
    struct state_domain *d, uint32_t ci, const struct mtrace_event *ev, bool set)
{
	if (set)
		d->cval[ci] = (int64_t)ev->arg;
	else
		d->cval[ci] = (int64_t)((uint64_t)d->cval[ci] + ev->arg); /* wraps, no UB */
}

/* A counter name or label its cache does not have: interned (a drop when the table
 * is full), then applied as below. */
static __attribute__((noinline)) void counter_new(
    struct state_domain *d, const struct mtrace_event *ev, bool set)
{
	bool added;
	uint32_t ci = state_intern(
	    &d->counters, &d->counter_cache, ev->str ? ev->str : "", ev->str_len, &added);

	if (ci == NO_IDX) {
		d->counters_dropped++;
		return;
	}
	if (added) {
		d->cval = xreallocarray(d->cval, d->counters.cap, sizeof(int64_t));
		d->cval[ci] = 0;
	}
	cval_apply(d, ci, ev, set);
}

static __attribute__((noinline)) void label_new(
    struct state_domain *d, struct thr *t, const struct mtrace_event *ev)
{
	bool added;
	uint32_t li = state_intern(&d->labels, &d->label_cache, ev->str, ev->str_len, &added);

	/* the same label again changes nothing; a drop is counted there */
	if (li != t->label || li == NO_IDX)
		state_thr_set_label(d, t, li, added);
}

/* Out of line, and what a cache hit runs calls nothing but in its tail: inlined, the
 * interning's registers cost the hot loop an instruction an event, and a call on the
 * way cost every counter event its register saves (bench/daemon/callgrind.sh). */
static __attribute__((noinline)) void counter_apply(
    struct state_domain *d, const struct mtrace_event *ev, bool set)
{
	uint32_t ci =
	    state_str_cached(&d->counters, &d->counter_cache, ev->str ? ev->str : "", ev->str_len);

	if (ci == NO_IDX) {
		counter_new(d, ev, set);
		return;
	}
	cval_apply(d, ci, ev, set);
}

static __attribute__((noinline)) void label_apply(
    struct state_domain *d, struct thr *t, const struct mtrace_event *ev)
{
	uint32_t li = state_str_cached(&d->labels, &d->label_cache, ev->str, ev->str_len);

	if (li == NO_IDX)
		label_new(d, t, ev);
	else if (li != t->label)
		state_thr_set_label(d, t, li, false);
}

/* The running thread changes at ts: charge the interval to the one that ran.  ti:
 * the caller's slot of `to` (the event's thread, looked up and not evicted since:
 * a lookup of the arg avoids it), NO_IDX when it has none. */
static inline void run_switch(struct state_domain *d, uint64_t to, uint32_t ti, uint64_t ts)
{
	if (d->running == to)
		return;
	if (d->running_idx != NO_IDX && ts > d->run_start)
		d->thr[d->running_idx].running_ns += ts - d->run_start;
	d->running = to;
	d->run_start = ts;
	if (ti != NO_IDX)
		d->running_idx = ti;
	else if (to == MTRACE_THREAD_NONE)
		d->running_idx = NO_IDX;
	else
		d->running_idx = tab_find(d, to);
	/* its first run ends the wait since its creation (vcpu.h): only while the hypervisor
	 * source has figures for d, a test of a pointer otherwise */
	if (__builtin_expect(d->vc != NULL, 0) && d->running_idx != NO_IDX &&
	    !d->thr[d->running_idx].waited)
		state_vcpu_wait(d, &d->thr[d->running_idx], ts);
}

/* Not events of a running thread: GC, and mtrace's own records from RING_START on
 * (SITE names the child, not the running thread). */
static void apply_other(struct state_domain *d, const struct mtrace_event *ev)
{
	switch (ev->op) {
	case MTRACE_OP_GC:
		d->gcs++;
		d->gc_ns += ev->arg;
		break;
	case MTRACE_OP_SITE:
		state_site_apply(d, ev);
		break;
	case MTRACE_OP_SITE_NAME:
		state_site_name(d, ev);
		break;
	case MTRACE_OP_MODULE:
		state_module_apply(d, ev);
		break;
	default: /* RING_START */
		break;
	}
}

/*
 * What the hot loop asks of an op, one byte an op (a load and a test, where the
 * comparisons they replace were 4-6 instructions an event): OP_OTHER, not an event of
 * a running thread (apply_other); OP_ARG_THREAD, its arg is a thread the state looks
 * up (prefetched ahead).
 */
enum {
	OP_OTHER = 1,
	OP_ARG_THREAD = 2,
};
static const uint8_t op_kind[256] = {
	[MTRACE_OP_GC] = OP_OTHER,
	[MTRACE_OP_RING_START] = OP_OTHER,
	[MTRACE_OP_SITE] = OP_OTHER,
	[MTRACE_OP_SITE_NAME] = OP_OTHER,
	[MTRACE_OP_MODULE] = OP_OTHER,
	[MTRACE_OP_CREATES] = OP_ARG_THREAD,
	[MTRACE_OP_FULFILLS] = OP_ARG_THREAD,
	[MTRACE_OP_FAILS] = OP_ARG_THREAD,
	[MTRACE_OP_SIGNAL] = OP_ARG_THREAD,
	[MTRACE_OP_SIGNAL_NEW] = OP_ARG_THREAD,
};

/* An event-channel event's port, once a batch (state_batch_ports): a channel's events
 * come in runs, so the last port is the one to compare first. */
static inline void port_note(struct state_domain *d, uint32_t port)
{
	uint32_t n = d->nbports;

	if (n && d->bports[n - 1] == port)
		return;
	for (uint32_t i = 0; i + 1 < n; i++)
		if (d->bports[i] == port)
			return;
	if (n < STATE_BATCH_PORTS)
		d->bports[d->nbports++] = port;
	else
		d->bports_more = true;
}

/* One event, the domain's event count, window and last_ts aside (the callers keep
 * them).  sec: state_ctx.cur_sec, read once per batch (through the global, the
 * compiler reloads it after every store to a thread). */
static inline __attribute__((always_inline)) void apply_one(
    struct state_domain *d, const struct mtrace_event *ev, uint32_t sec)
{
	uint32_t ti = NO_IDX, ai;
	struct thr *t = NULL;
	uint64_t ts = ev->ts;

	d->op_events[ev->op]++;
	if (__builtin_expect(op_kind[ev->op] & OP_OTHER, 0)) {
		apply_other(d, ev);
		return;
	}
	if (ev->thread != MTRACE_THREAD_NONE) {
		ti = thr_get(d, ev->thread, ts, NO_IDX);
		if (ti != NO_IDX) {
			t = &d->thr[ti];
			if (t->ev_sec != sec) { /* first event of this thread in second sec */
				t->ev_prev =
				    t->ev_sec + 1 == sec ? (uint32_t)t->events - t->ev_base : 0;
				t->ev_base = (uint32_t)t->events;
				t->ev_sec = sec;
			}
			t->events++;
		}
	}

	switch (ev->op) {
	case MTRACE_OP_CREATES:
		if (ev->arg == MTRACE_THREAD_NONE)
			break;
		ai = tab_find(d, ev->arg);
		if (ai != NO_IDX && ai == ti) /* a thread cannot create itself */
			break;
		if (ai != NO_IDX) { /* id reused: the old thread is over (ended if pending) */
			if (d->thr[ai].state == TS_PENDING)
				d->threads_ended++;
			state_thr_remove(d, ai);
		}
		ai = state_thr_new(d, ev->arg, ts, ev->thread, ev->type, ti);
		if (ti != NO_IDX)
			d->thr[ti].children++; /* thr_new may have moved the slab */
		if (ai != NO_IDX)              /* a child is usually the next thread seen */
			cache_put(d, ev->arg, ai);
		break;
	case MTRACE_OP_READ:
		if (t)
			t->reads++;
		run_switch(d, ev->thread, ti, ts);
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
			d->thr[ai].failure = state_intern(
			    &d->failures, &d->failure_cache, ev->str, ev->str_len, &added);
			if (d->thr[ai].failure == NO_IDX)
				d->failures_dropped++;
		}
		break;
	case MTRACE_OP_BECOMES:
		if (t)
			t->becomes = ev->arg;
		break;
	case MTRACE_OP_LABEL:
		if (t && ev->str)
			label_apply(d, t, ev);
		break;
	case MTRACE_OP_INCREASE:
		counter_apply(d, ev, false);
		break;
	case MTRACE_OP_COUNTER:
		counter_apply(d, ev, true);
		break;
	case MTRACE_OP_SWITCH:
		run_switch(d, ev->thread, ti, ts);
		break;
	case MTRACE_OP_EVTCHN_SEND:
	case MTRACE_OP_EVTCHN_RECV:
		port_note(d, (uint32_t)ev->arg);
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
			run_switch(d, ev->thread, ti, ts);
		break;
	default:
		break;
	}
}

void state_apply(struct state_domain *d, const struct mtrace_event *ev)
{
	d->events++;
	d->win.cur++;
	if (ev->ts > d->last_ts)
		d->last_ts = ev->ts;
	apply_one(d, ev, (uint32_t)state_ctx.cur_sec);
	if (__builtin_expect(d->tab_long, 0))
		state_tab_rekey(d);
}

/*
 * An event's hash slots (its thread's and its arg's) are fetched SLOT_AHEAD events
 * before it is applied: in a table larger than the caches each is a miss, and an
 * event costs a few ns.  The entries the slots name are fetched ENTRY_AHEAD events
 * before, for tables with many live threads (entry_prefetch).  always_inline: GCC
 * finds a function that only prefetches free of side effects and drops calls to it
 * when it is not inlined.
 */
#define SLOT_AHEAD 12
/*
 * Only with this many live threads or more: the slots an event looks up are those of
 * the threads it names, mostly live ones, one cache line each; a few hundred lines stay
 * in L1 and their prefetch is only its cost, the hash computed twice per thread and
 * arg (19 instructions an event of mtrace-load's mix, a tenth of mtraced's own,
 * bench/daemon/callgrind.sh).
 */
#define SLOT_PREFETCH_LIVE 256

static inline __attribute__((always_inline)) void slot_prefetch(
    const struct state_domain *d, uint64_t id)
{
	__builtin_prefetch(&d->tab[thash(d, id)]);
}

/*
 * The entry the home slot of id names, if that slot is id's (its line was fetched
 * SLOT_AHEAD - ENTRY_AHEAD events ago): the entry's first line, which the event
 * touches.  Only while the live threads' entries alone are more than the L2 holds
 * (ENTRY_PREFETCH_LIVE): with fewer, the entries an event needs are mostly cached
 * and the extra hash and load cost more than the misses they would hide.
 */
#define ENTRY_AHEAD         4
#define ENTRY_PREFETCH_LIVE ((2u << 20) / sizeof(struct thr))

static inline __attribute__((always_inline)) void entry_prefetch(
    const struct state_domain *d, uint64_t id)
{
	const struct tslot *s = &d->tab[thash(d, id)];

	if (s->id == id && s->idx != NO_IDX)
		__builtin_prefetch(&d->thr[s->idx], 1);
}

/* The loop of state_apply_batch, one copy for each kind of prefetch (slots, entries:
 * constants where it is inlined), so that a loop without prefetches tests nothing for
 * them per event.  Returns the latest timestamp. */
static inline __attribute__((always_inline)) uint64_t apply_loop(struct state_domain *d,
    const struct mtrace_event *restrict ev, size_t n, uint32_t sec, uint64_t last_ts, bool slots,
    bool entries)
{
	for (size_t i = 0; i < n; i++) {
		if (slots && i + SLOT_AHEAD < n) {
			const struct mtrace_event *p = &ev[i + SLOT_AHEAD];
			slot_prefetch(d, p->thread);
			if (op_kind[p->op] & OP_ARG_THREAD)
				slot_prefetch(d, p->arg);
		}
		if (entries && i + ENTRY_AHEAD < n) {
			const struct mtrace_event *p = &ev[i + ENTRY_AHEAD];
			entry_prefetch(d, p->thread);
			if (op_kind[p->op] & OP_ARG_THREAD)
				entry_prefetch(d, p->arg);
		}
		if (ev[i].ts > last_ts)
			last_ts = ev[i].ts;
		apply_one(d, &ev[i], sec);
	}
	return last_ts;
}

/* The latest timestamp is kept in a local and stored once a batch: nothing that
 * apply_one runs reads d->last_ts (only the read-outs, state-stats.c, do).  ev is
 * restrict: nothing the state writes is an event, so a field read once stays read (the
 * op was loaded four times an event). */
void state_apply_batch(struct state_domain *d, const struct mtrace_event *restrict ev, size_t n)
{
	uint32_t sec = (uint32_t)state_ctx.cur_sec;
	uint64_t last_ts = d->last_ts;

	d->events += n;
	d->win.cur += n;
	d->nbports = 0;
	d->bports_more = false;
	if (d->live >= ENTRY_PREFETCH_LIVE)
		last_ts = apply_loop(d, ev, n, sec, last_ts, true, true);
	else if (d->live >= SLOT_PREFETCH_LIVE)
		last_ts = apply_loop(d, ev, n, sec, last_ts, true, false);
	else
		last_ts = apply_loop(d, ev, n, sec, last_ts, false, false);
	d->last_ts = last_ts;
	if (__builtin_expect(d->tab_long, 0))
		state_tab_rekey(d);
}

size_t state_batch_ports(const struct state_domain *d, const uint32_t **ports, bool *more)
{
	*ports = d->bports;
	*more = d->bports_more;
	return d->nbports;
}
