/*
 * test-state.c - the state tables on their own: thread life cycle, running time, labels,
 * counters, eviction bounds and Stats read-outs, with hand-built events whose expected
 * results are worked out here.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "ring-reader.h"
#include "mtrace.pb-c.h"
#include "state-int.h"
#include "state.h"

static void ev(struct state_domain *d, uint8_t op, uint8_t type, uint64_t ts, uint64_t thread,
    uint64_t arg, const char *str)
{
	struct mtrace_event e = { .ts = ts, .thread = thread, .arg = arg, .op = op, .type = type };

	if (str) {
		e.str = str;
		e.str_len = (uint16_t)strlen(str);
	}
	state_apply(d, &e);
}

static Mtrace__ThreadStats *find_thread(Mtrace__Stats *s, uint32_t domid, int64_t id)
{
	for (size_t i = 0; i < s->n_threads; i++)
		if (s->threads[i]->domid == domid && s->threads[i]->id == id)
			return s->threads[i];
	return NULL;
}

static void test_lifecycle(void)
{
	struct state_domain *d = state_domain_get(1);
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	Mtrace__Stats *s;
	Mtrace__ThreadStats *t;

	state_domain_set_name(d, "alpha");
	state_domain_attached(d, 2, MTRACE_CLOCK_MONOTONIC, false);
	ev(d, MTRACE_OP_SWITCH, 0, 100, 1, 0, NULL);
	ev(d, MTRACE_OP_CREATES, MTRACE_TT_TASK, 110, 1, 2, NULL);
	ev(d, MTRACE_OP_CREATES, MTRACE_TT_BIND, 120, 1, 3, NULL);
	ev(d, MTRACE_OP_LABEL, 0, 125, 2, 0, "net.read");
	ev(d, MTRACE_OP_LABEL, 0, 126, 3, 0, "net.read");
	ev(d, MTRACE_OP_SWITCH, 0, 200, 2, 0, NULL); /* 1 ran 100 ns */
	ev(d, MTRACE_OP_READ, 0, 210, 2, 3, NULL);
	ev(d, MTRACE_OP_FULFILLS, 0, 300, 2, 3, NULL);     /* 3 lived 180 ns */
	ev(d, MTRACE_OP_SIGNAL, 0, 350, 1, 2, NULL);       /* 2 ran 150, 2 notified */
	ev(d, MTRACE_OP_FAILS, 0, 400, 1, 2, "Not_found"); /* 2 lived 290 ns */
	ev(d, MTRACE_OP_BECOMES, 0, 410, 1, 7, NULL);
	ev(d, MTRACE_OP_COUNTER, 0, 420, 1, 5, "queue");
	ev(d, MTRACE_OP_INCREASE, 0, 430, 1, (uint64_t)-2, "queue");
	ev(d, MTRACE_OP_INCREASE, 0, 440, 1, 10, "bytes");
	ev(d, MTRACE_OP_SWITCH, 0, 500, MTRACE_THREAD_NONE, 0, NULL); /* 1 ran 150 more */
	state_domain_add_counts(d, 3, 1, 2);
	state_domain_add_wakeup(d, false);
	state_domain_add_wakeup(d, true);

	CHECK(state_domain_events(d) == 15);
	CHECK(state_domain_live_threads(d) == 1); /* thread 1 (first seen) is pending */
	CHECK(state_thread_label(1, 2) && !strcmp(state_thread_label(1, 2), "net.read"));
	CHECK(state_thread_label(1, 1) == NULL);
	CHECK(state_thread_label(9, 1) == NULL);

	sub.top_n = 10;
	sub.include_finished = 1;
	sub.label_stats = 1;
	sub.sort = MTRACE__SORT_KEY__SORT_ID;
	s = state_stats(&sub, 7);
	CHECK(s->dropped_for_client == 7);
	CHECK(s->n_domains == 1);
	if (s->n_domains == 1) {
		Mtrace__DomainStats *ds = s->domains[0];
		CHECK(ds->domid == 1 && !strcmp(ds->name, "alpha") && ds->alive && ds->rings == 2);
		CHECK(ds->events == 15 && ds->lost == 3 && ds->corrupt == 1 && ds->unknown == 2);
		CHECK(ds->wakeups == 1 && ds->ratelimited == 1);
		CHECK(ds->threads_total == 3 && ds->live_threads == 1);
		CHECK(!strcmp(ds->state, "running"));
		CHECK(ds->n_counters == 2);
		for (size_t i = 0; i < ds->n_counters; i++) {
			if (!strcmp(ds->counters[i]->name, "queue"))
				CHECK(ds->counters[i]->value == 3);
			else
				CHECK(!strcmp(ds->counters[i]->name, "bytes") &&
				    ds->counters[i]->value == 10);
		}
	}
	CHECK(s->n_threads == 3);
	CHECK(s->n_threads == 3 && s->threads[0]->id == 1 && s->threads[2]->id == 3);
	t = find_thread(s, 1, 1);
	CHECK(t && t->running_ns == 250 && t->children == 2 && t->resolves == 1 && t->becomes == 7);
	CHECK(t && t->parent == -1 && t->type == MTRACE_TT_UNKNOWN &&
	    t->state == MTRACE__THREAD_STATE__PENDING);
	t = find_thread(s, 1, 2);
	CHECK(t && t->running_ns == 150 && t->reads == 1 && t->notifies == 1 && t->resolves == 1);
	CHECK(t && t->state == MTRACE__THREAD_STATE__FAILED && !strcmp(t->failure, "Not_found"));
	CHECK(t && t->parent == 1 && t->type == MTRACE_TT_TASK && t->created_ns == 110 &&
	    t->resolved_ns == 400 && t->pending_ns == 290 && !strcmp(t->label, "net.read"));
	t = find_thread(s, 1, 3);
	CHECK(t && t->state == MTRACE__THREAD_STATE__RESOLVED && t->pending_ns == 180);
	CHECK(s->n_labels == 1);
	if (s->n_labels == 1) {
		Mtrace__LabelStats *l = s->labels[0];
		CHECK(!strcmp(l->label, "net.read") && l->count == 2 && l->live == 0);
		/* 180 and 290 ns: log-linear buckets are within 25 % */
		CHECK(l->lifetime_p50_ns >= 150 && l->lifetime_p50_ns <= 210);
		CHECK(l->lifetime_p99_ns >= 240 && l->lifetime_p99_ns <= 340);
	}
	state_stats_free(s);

	/* without include_finished only pending threads; sort by running time */
	sub.include_finished = 0;
	sub.sort = MTRACE__SORT_KEY__SORT_RUNNING;
	s = state_stats(&sub, 0);
	CHECK(s->n_threads == 1 && s->threads[0]->id == 1);
	state_stats_free(s);
}

/*
 * docs/figures.md's edge cases: becomes ends nothing, a read's source is no thread seen,
 * an id created again while pending ends the old thread, a second fulfils ends nothing
 * more, -1 is no thread; current follows a thread's last label while count remembers.
 */
static void test_figures(void)
{
	struct state_domain *d = state_domain_get(4);
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	Mtrace__Stats *s;

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	ev(d, MTRACE_OP_CREATES, 0, 10, MTRACE_THREAD_NONE, 1, NULL); /* created: 1 */
	ev(d, MTRACE_OP_CREATES, 0, 11, 1, 2, NULL);                  /* 2 */
	ev(d, MTRACE_OP_READ, 0, 12, 2, 99, NULL);    /* 99 only read: not a thread */
	ev(d, MTRACE_OP_BECOMES, 0, 13, 2, 98, NULL); /* 98 neither; 2 stays pending */
	ev(d, MTRACE_OP_LABEL, 0, 14, 2, 0, "a");
	ev(d, MTRACE_OP_LABEL, 0, 15, 2, 0, "b");     /* 2: count a, b; current b */
	ev(d, MTRACE_OP_LABEL, 0, 16, 1, 0, "a");     /* 1: current a */
	ev(d, MTRACE_OP_FULFILLS, 0, 17, 1, 1, NULL); /* 1 ends */
	ev(d, MTRACE_OP_FULFILLS, 0, 18, 2, 1, NULL); /* again: nothing */
	ev(d, MTRACE_OP_CREATES, 0, 19, 1, 2, NULL);  /* 2 reused while pending: ends, 3rd */
	ev(d, MTRACE_OP_FULFILLS, 0, 20, 1, 7, NULL); /* first sight of 7, ended: 4th */
	ev(d, MTRACE_OP_LABEL, 0, 21, MTRACE_THREAD_NONE, 0, "a"); /* no thread */

	sub.label_stats = 1;
	sub.domids = (uint32_t[]){ 4 };
	sub.n_domids = 1;
	s = state_stats(&sub, 0);
	CHECK(s->n_domains == 1);
	if (s->n_domains == 1) {
		Mtrace__DomainStats *ds = s->domains[0];
		CHECK(ds->threads_total == 4 && ds->threads_ended == 3 && ds->live_threads == 1);
		CHECK(ds->threads_labelled == 2);
	}
	CHECK(s->n_labels == 2);
	for (size_t i = 0; i < s->n_labels; i++) {
		Mtrace__LabelStats *l = s->labels[i];
		if (!strcmp(l->label, "a")) /* 1 (ended) and the old 2 carried it; 1's is current */
			CHECK(l->count == 2 && l->current == 1 && l->live == 0);
		else /* the old 2's last label; it ended when its id was reused */
			CHECK(!strcmp(l->label, "b") && l->count == 1 && l->current == 1 &&
			    l->live == 0);
	}
	state_stats_free(s);
	state_domain_forget(4); /* the tests after count domains */
}

static void test_filters(void)
{
	struct state_domain *d = state_domain_get(2);
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	char *names[] = { "beta" };
	uint32_t ids[] = { 1 };
	char *labels[] = { "net." };
	Mtrace__Stats *s;

	state_domain_set_name(d, "beta");
	state_domain_attached(d, 1, MTRACE_CLOCK_XEN, true);
	ev(d, MTRACE_OP_CREATES, 0, 10, 1, 5, NULL);
	ev(d, MTRACE_OP_LABEL, 0, 11, 5, 0, "disk.write");
	CHECK(state_guest_count() == 2);
	CHECK(state_domain_matches(2, &sub));
	sub.n_domain_names = 1;
	sub.domain_names = names;
	CHECK(state_domain_matches(2, &sub) && !state_domain_matches(1, &sub));
	sub.n_domain_names = 0;
	sub.n_domids = 1;
	sub.domids = ids;
	CHECK(!state_domain_matches(2, &sub) && state_domain_matches(1, &sub));
	sub.n_domids = 0;
	sub.top_n = 100;
	sub.include_finished = 1;
	sub.n_labels = 1;
	sub.labels = labels;
	sub.label_stats = 1;
	s = state_stats(&sub, 0);
	CHECK(s->n_domains == 2);
	for (size_t i = 0; i < s->n_threads; i++)
		CHECK(!strncmp(s->threads[i]->label, "net.", 4));
	CHECK(s->n_threads == 2);
	CHECK(s->n_labels == 1);
	state_stats_free(s);

	state_domain_detached(d, "destroyed", true);
	CHECK(state_guest_count() == 1);
	s = state_stats(NULL, 0);
	CHECK(s->n_domains == 2);
	for (size_t i = 0; i < s->n_domains; i++)
		if (s->domains[i]->domid == 2)
			CHECK(!s->domains[i]->alive && !strcmp(s->domains[i]->state, "destroyed") &&
			    s->domains[i]->legacy);
	state_stats_free(s);
	/* a new domain with the same id starts afresh */
	state_domain_attached(d, 1, MTRACE_CLOCK_XEN, false);
	CHECK(state_domain_events(d) == 0);
	state_domain_bad(d, "rings: \"x\" is not a number");
	s = state_stats(NULL, 0);
	for (size_t i = 0; i < s->n_domains; i++)
		if (s->domains[i]->domid == 2)
			CHECK(!strncmp(s->domains[i]->state, "bad: rings", 10));
	state_stats_free(s);
	state_domain_forget(2);
	CHECK(state_domain_find(2) == NULL);
}

/* Memory stays bounded: past the cap finished threads go first, counted. */
static void test_eviction(unsigned cap)
{
	struct state_domain *d = state_domain_get(3);
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	uint64_t n = 10 * (uint64_t)cap, ts = 1;
	Mtrace__Stats *s;

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	/* thread 1 stays pending all along; children come and go */
	for (uint64_t i = 0; i < n; i++) {
		ev(d, MTRACE_OP_CREATES, MTRACE_TT_TASK, ts++, 1, 1000 + i, NULL);
		ev(d, MTRACE_OP_LABEL, 0, ts++, 1000 + i, 0, i % 2 ? "odd" : "even");
		if (i % 4)
			ev(d, MTRACE_OP_FULFILLS, 0, ts++, 1, 1000 + i, NULL);
	}
	sub.n_domids = 1;
	sub.domids = (uint32_t[]){ 3 };
	sub.top_n = 5;
	sub.label_stats = 1;
	sub.sort = MTRACE__SORT_KEY__SORT_CHILDREN;
	s = state_stats(&sub, 0);
	CHECK(s->n_domains == 1);
	if (s->n_domains == 1) {
		Mtrace__DomainStats *ds = s->domains[0];
		CHECK(ds->threads_total == n + 1);
		CHECK(ds->threads_evicted == n + 1 - cap);
		/* every pending child (i % 4 == 0) beyond the cap pushed out a pending one */
		CHECK(ds->live_threads <= cap);
	}
	CHECK(s->n_threads >= 1 && s->threads[0]->id == 1 && s->threads[0]->children == n);
	CHECK(s->n_labels == 2);
	for (size_t i = 0; i < s->n_labels; i++) {
		CHECK(s->labels[i]->count == n / 2);
		CHECK(s->labels[i]->live <= cap);
	}
	state_stats_free(s);
	state_domain_forget(3);
}

/* A full table of pending threads only (none finished), then threads nobody created:
 * the oldest pending ones go.  Used to read past the thread slab (mtraced crashed). */
static void test_all_pending(unsigned cap)
{
	struct state_domain *d = state_domain_get(4);
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	Mtrace__Stats *s;

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	for (uint64_t i = 0; i < cap + 10; i++)
		ev(d, MTRACE_OP_SWITCH, 0, i + 1, 5000 + i, 0, NULL);
	sub.n_domids = 1;
	sub.domids = (uint32_t[]){ 4 };
	s = state_stats(&sub, 0);
	CHECK(s->n_domains == 1);
	if (s->n_domains == 1) {
		CHECK(s->domains[0]->live_threads == cap);
		CHECK(s->domains[0]->threads_evicted == 10);
	}
	state_stats_free(s);
	state_domain_forget(4);
}

/*
 * A thread that takes the slot of an evicted one starts with nothing of it: no label
 * history (kept beside the slab since the entry became two cache lines; a stale one
 * made a relabelled thread's successor "already counted" for its old labels) and no
 * place in the lookup cache (which must not answer the old id with the new
 * thread's slot).  cap must be the configured max_threads_per_guest.
 */
static void test_slot_reuse(unsigned cap)
{
	struct state_domain *d = state_domain_get(5);
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	Mtrace__Stats *s;
	uint64_t ts = 1;

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	ev(d, MTRACE_OP_SWITCH, 0, ts++, 1, 0, NULL);
	for (uint64_t i = 0; i < cap - 2; i++) /* pending, never evicted before 10 */
		ev(d, MTRACE_OP_CREATES, MTRACE_TT_TASK, ts++, 1, 100 + i, NULL);
	ev(d, MTRACE_OP_CREATES, MTRACE_TT_TASK, ts++, 1, 10, NULL);
	ev(d, MTRACE_OP_LABEL, 0, ts++, 10, 0, "a");
	ev(d, MTRACE_OP_LABEL, 0, ts++, 10, 0, "b"); /* 10 remembers "a" */
	ev(d, MTRACE_OP_FULFILLS, 0, ts++, 1, 10, NULL);
	CHECK(state_domain_live_threads(d) == cap - 1); /* full: 1, the children, 10 */
	/* 500, first seen running, evicts 10 (the only finished thread) and takes its
	 * slot while 10 is still in the cache */
	ev(d, MTRACE_OP_SWITCH, 0, ts++, 500, 0, NULL);
	/* 10 again: a thread never seen (first sight), not 500 */
	ev(d, MTRACE_OP_READ, 0, ts++, 10, 1, NULL);
	ev(d, MTRACE_OP_READ, 0, ts++, 10, 1, NULL);
	ev(d, MTRACE_OP_LABEL, 0, ts++, 500, 0, "a");

	sub.n_domids = 1;
	sub.domids = (uint32_t[]){ 5 };
	sub.top_n = cap + 10;
	sub.include_finished = 1;
	sub.label_stats = 1;
	s = state_stats(&sub, 0);
	CHECK(s->n_labels == 2);
	for (size_t i = 0; i < s->n_labels; i++) {
		if (!strcmp(s->labels[i]->label, "a"))
			CHECK(s->labels[i]->count == 2); /* 10 and 500 */
		else
			CHECK(!strcmp(s->labels[i]->label, "b") && s->labels[i]->count == 1);
	}
	Mtrace__ThreadStats *t500 = find_thread(s, 5, 500), *t10 = find_thread(s, 5, 10);
	CHECK(t500 && t500->events == 2 && t500->reads == 0 && !strcmp(t500->label, "a"));
	CHECK(t10 && t10->events == 2 && t10->reads == 2 && t10->parent == -1 &&
	    t10->state == MTRACE__THREAD_STATE__PENDING);
	state_stats_free(s);
	state_domain_forget(5);
}

/* Consecutive ids, the common case (a counter in the guest), spread over the hash
 * table without collisions: the table's middle bits, hashed before, gave 1.7 probes a
 * lookup on average at load 0.5, and more for ids not there yet. */
static void test_hash_spread(void)
{
	enum {
		SLOTS = 32768,
		IDS = SLOTS / 2
	};
	static uint8_t used[SLOTS];
	const uint64_t bases[] = { 1, 1u << 20, 0x7f0012345678ull };
	struct state_domain dom = { .tab_mask = SLOTS - 1 };

	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		uint64_t probes = 0;

		memset(used, 0, sizeof(used));
		for (uint64_t id = bases[b]; id < bases[b] + IDS; id++) {
			uint32_t j = thash(&dom, id);

			for (probes++; used[j]; j = (j + 1) % SLOTS)
				probes++;
			used[j] = 1;
		}
		CHECK(probes <= IDS + IDS / 20); /* <= 1.05 probes a lookup */
		if (probes > IDS + IDS / 20)
			fprintf(stderr, "ids from %" PRIu64 ": %.2f probes a lookup\n", bases[b],
			    (double)probes / IDS);
	}
}

/* The longest run of occupied slots in d's table: what a lookup that lands in it walks. */
static uint32_t longest_run(const struct state_domain *d)
{
	uint32_t best = 0, run = 0;

	/* twice round, so that a run across the end counts whole */
	for (uint64_t j = 0; j < 2 * ((uint64_t)d->tab_mask + 1); j++) {
		run = d->tab[j & d->tab_mask].idx != NO_IDX ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

/*
 * A guest that knows the hash's multiplier aims its ids at consecutive home slots of
 * the table it will fill (cap 16384: 32768 slots): one run of 16000 slots, which any
 * lookup landing in it walks.  The table must notice and rebuild itself on a key the
 * guest cannot know, keep every thread, and leave an honest guest's hash alone.
 * cap must be the configured max_threads_per_guest (16384).
 */
static void test_hash_aimed(unsigned cap)
{
	struct state_domain *d = state_domain_get(6), *h;
	uint64_t inv = 0x9E3779B97F4A7C15ull;
	enum {
		AIMED = 16000
	};

	for (int k = 0; k < 5; k++) /* Newton: the multiplier's inverse mod 2^64 */
		inv *= 2 - 0x9E3779B97F4A7C15ull * inv;
	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	for (uint64_t k = 1; k <= AIMED; k++)
		ev(d, MTRACE_OP_CREATES, MTRACE_TT_TASK, k, 1, (k << 49) * inv, NULL);
	/* lookups of ids not there, homed at the start of the run */
	for (uint64_t k = 0; k < 100; k++)
		ev(d, MTRACE_OP_FULFILLS, 0, AIMED + k, 1, ((AIMED + 1 + k) << 49) * inv, NULL);
	CHECK(d->hash_key != 0);
	CHECK(longest_run(d) < 200);
	if (longest_run(d) >= 200)
		fprintf(stderr, "aimed ids: a run of %u slots\n", longest_run(d));
	for (uint64_t k = 1; k <= AIMED; k++) {
		uint32_t i = tab_find(d, (k << 49) * inv);
		CHECK(i != NO_IDX && d->thr[i].id == (k << 49) * inv);
	}
	state_domain_forget(6);

	h = state_domain_get(7);
	state_domain_attached(h, 1, MTRACE_CLOCK_MONOTONIC, false);
	for (uint64_t id = 2; id <= cap; id++)
		ev(h, MTRACE_OP_CREATES, MTRACE_TT_TASK, id, 1, id, NULL);
	CHECK(h->hash_key == 0);
	CHECK(longest_run(h) <= TAB_PROBE_MAX);
	state_domain_forget(7);
}

/*
 * The slab is reserved for the cap when the first thread comes and grows in place:
 * the entries never move (a doubling slab was copied into fresh pages at every step,
 * which with many guests filling their tables cost page faults and copies), and a cap
 * raised by a reload grows it further with every thread kept as it was.
 */
static void test_slab_in_place(struct mtraced_config *cfg, unsigned cap)
{
	struct state_domain *d = state_domain_get(8);
	const struct thr *first;
	bool same = true, kept = true;

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	ev(d, MTRACE_OP_SWITCH, 0, 1, 100, 0, NULL);
	first = d->thr;
	for (uint64_t id = 101; id < 100 + cap; id++) {
		ev(d, MTRACE_OP_CREATES, MTRACE_TT_TASK, id, 100, id, NULL);
		same &= d->thr == first;
	}
	CHECK(same && d->thr_cap == cap && d->nthr == cap && d->threads_evicted == 0);
	/* a reload raises the cap: the table grows past its reservation */
	cfg->max_threads_per_guest = 4 * cap;
	state_reconfigure(cfg);
	for (uint64_t id = 100 + cap; id < 100 + 4 * cap; id++)
		ev(d, MTRACE_OP_CREATES, MTRACE_TT_TASK, id, 100, id, NULL);
	for (uint64_t id = 100; id < 100 + 4 * cap; id++) {
		uint32_t i = tab_find(d, id);
		kept &= i != NO_IDX && d->thr[i].id == id && d->thr[i].state == TS_PENDING &&
		    d->thr[i].parent == (id == 100 ? MTRACE_THREAD_NONE : 100) &&
		    d->thr[i].created_ns == (id == 100 ? 1 : id);
	}
	CHECK(kept && d->nthr == 4 * cap && d->threads_evicted == 0 && d->live == 4 * cap);
	CHECK(d->thr[tab_find(d, 100)].children == 4 * cap - 1);
	state_domain_forget(8);
	cfg->max_threads_per_guest = cap;
	state_reconfigure(cfg);
}

static uint64_t rate_of(uint64_t id)
{
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	Mtrace__Stats *s;
	Mtrace__ThreadStats *t;
	uint64_t r = UINT64_MAX;

	sub.top_n = 10;
	sub.include_finished = 1;
	sub.sort = MTRACE__SORT_KEY__SORT_ID;
	s = state_stats(&sub, 0);
	t = find_thread(s, 1, (int64_t)id);
	if (t)
		r = (uint64_t)t->events_rate;
	state_stats_free(s);
	return r;
}

/* A thread's events_rate is its event count in the last complete second, through
 * state_apply and state_apply_batch, with seconds skipped (state_tick sets the second). */
static void test_thread_rate(void)
{
	struct state_domain *d = state_domain_get(1);
	struct mtrace_event b[5];

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	state_tick(1000 * 1000000000ull);
	ev(d, MTRACE_OP_SWITCH, 0, 1, 1, 0, NULL);
	ev(d, MTRACE_OP_READ_LATER, 0, 2, 1, 0, NULL);
	ev(d, MTRACE_OP_READ_LATER, 0, 3, 1, 0, NULL);
	ev(d, MTRACE_OP_SWITCH, 0, 4, 2, 0, NULL);
	CHECK(rate_of(1) == 0 && rate_of(2) == 0); /* second 1000 is not complete */
	state_tick(1001 * 1000000000ull);
	CHECK(rate_of(1) == 3 && rate_of(2) == 1);
	for (int i = 0; i < 5; i++)
		b[i] = (struct mtrace_event){
			.ts = 10u + (unsigned)i, .thread = 1, .op = MTRACE_OP_READ_LATER
		};
	state_apply_batch(d, b, 5);
	CHECK(rate_of(1) == 3 && rate_of(2) == 1); /* still second 1000's */
	state_tick(1002 * 1000000000ull);
	CHECK(rate_of(1) == 5 && rate_of(2) == 0);
	ev(d, MTRACE_OP_READ_LATER, 0, 20, 1, 0, NULL);
	state_tick(1004 * 1000000000ull); /* 1003 had nothing */
	CHECK(rate_of(1) == 0);
	ev(d, MTRACE_OP_READ_LATER, 0, 30, 1, 0, NULL);
	ev(d, MTRACE_OP_READ_LATER, 0, 31, 1, 0, NULL);
	CHECK(rate_of(1) == 0);
	state_tick(1005 * 1000000000ull);
	CHECK(rate_of(1) == 2);
	state_tick(1006 * 1000000000ull);
	CHECK(rate_of(1) == 0);
}

/*
 * The ports a batch's event-channel events name (state_batch_ports), which guest-time.c
 * asks Xen about once a batch: distinct, in the order first seen, only this batch's;
 * past STATE_BATCH_PORTS distinct ones, "more" (the caller reads the batch then).
 */
static void test_batch_ports(void)
{
	struct state_domain *d = state_domain_get(12);
	struct mtrace_event b[2 * STATE_BATCH_PORTS + 4];
	static const uint32_t runs[] = { 5, 5, 3, 5, 9, 3, 3 };
	const uint32_t *ports;
	size_t n = 0, np;
	bool more;

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		b[n++] = (struct mtrace_event){ .ts = i + 1,
			.thread = 1,
			.arg = runs[i],
			.op = i % 2 ? MTRACE_OP_EVTCHN_RECV : MTRACE_OP_EVTCHN_SEND };
		/* other ops naming a number are no ports */
		b[n++] = (struct mtrace_event){
			.ts = i + 1, .thread = 1, .arg = 77, .op = MTRACE_OP_READ
		};
	}
	state_apply_batch(d, b, n);
	np = state_batch_ports(d, &ports, &more);
	CHECK(np == 3 && !more && ports[0] == 5 && ports[1] == 3 && ports[2] == 9);
	/* a batch without any: none (the last batch's are forgotten) */
	state_apply_batch(d, b + 1, 1);
	np = state_batch_ports(d, &ports, &more);
	CHECK(np == 0 && !more);
	/* more distinct ports than kept */
	n = 0;
	for (uint32_t k = 0; k < STATE_BATCH_PORTS + 2; k++)
		b[n++] = (struct mtrace_event){
			.ts = 100 + k, .thread = 2, .arg = 1000 + k, .op = MTRACE_OP_EVTCHN_SEND
		};
	state_apply_batch(d, b, n);
	np = state_batch_ports(d, &ports, &more);
	CHECK(np == STATE_BATCH_PORTS && more && ports[0] == 1000 &&
	    ports[STATE_BATCH_PORTS - 1] == 1000 + STATE_BATCH_PORTS - 1);
	state_domain_forget(12);
}

int main(void)
{
	struct mtraced_config cfg;

	config_defaults(&cfg);
	cfg.max_threads_per_guest = 64;
	cfg.dead_keep_s = 60;
	state_init(&cfg);
	state_tick(state_now_ns());
	test_lifecycle();
	test_figures();
	test_filters();
	test_eviction(64);
	test_all_pending(64);
	test_slot_reuse(64);
	test_hash_spread();
	test_batch_ports();
	state_fini();
	/* a cap that is not a power of two (the hash table must still be one) */
	cfg.max_threads_per_guest = 100;
	state_init(&cfg);
	state_tick(state_now_ns());
	test_eviction(100);
	test_all_pending(100);
	test_slot_reuse(100);
	state_fini();
	cfg.max_threads_per_guest = 16384;
	state_init(&cfg);
	state_tick(state_now_ns());
	test_hash_aimed(16384);
	test_slab_in_place(&cfg, 16384);
	state_fini();
	cfg.max_threads_per_guest = 1u << 17; /* a raised cap: a huge-page slab */
	state_init(&cfg);
	state_tick(state_now_ns());
	test_slab_in_place(&cfg, 1u << 17);
	state_fini();
	state_init(&cfg);
	test_thread_rate();
	state_fini();
	return check_status("state");
}
