/*
 * test-state-labels.c - the per-guest string tables of the state (labels, counter
 * names) at their caps: interning through the cache of recent strings, and what a
 * guest past max_labels_per_guest distinct labels is told (labels_dropped) while its
 * threads still count as labelled.  max_labels_per_guest is 6 here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "mtrace.pb-c.h"
#include "ring-reader.h"
#include "state-int.h"
#include "state.h"

static void ev_n(
    struct state_domain *d, uint8_t op, uint64_t thread, uint64_t arg, const char *str, size_t n)
{
	struct mtrace_event e = { .ts = 1, .thread = thread, .arg = arg, .op = op };

	e.str = str;
	e.str_len = (uint16_t)n;
	state_apply(d, &e);
}

static uint64_t label_count(Mtrace__Stats *s, const char *label)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (!strcmp(s->labels[i]->label, label))
			return s->labels[i]->count;
	return 0;
}

static uint64_t label_current(Mtrace__Stats *s, const char *label)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (!strcmp(s->labels[i]->label, label))
			return s->labels[i]->current;
	return 0;
}

static int64_t counter_value(Mtrace__DomainStats *ds, const char *name)
{
	for (size_t i = 0; i < ds->n_counters; i++)
		if (!strcmp(ds->counters[i]->name, name))
			return ds->counters[i]->value;
	return -1;
}

/*
 * Interning through the cache of recent strings (state_intern) answers what the
 * table would: strings alike in their first and last 8 bytes, a string stored cut or
 * up to a NUL, more distinct strings than the cache holds, and drops once a table is
 * full, counted at every event (max_labels_per_guest 6 here; counters 256).
 */
static void test_interning(void)
{
	struct state_domain *d = state_domain_get(9);
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	Mtrace__Stats *s;
	char long1[300], long2[300], name[16];
	uint64_t th = 1;

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	memset(long1, 'x', sizeof(long1));
	memcpy(long2, long1, sizeof(long2));
	long2[290] = 'y'; /* past the 255 bytes kept: the same label */
	for (int round = 0; round < 3; round++) {
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "aaaaaaaaXbbbbbbbb", 17);
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "aaaaaaaaYbbbbbbbb", 17);
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "ab\0cd", 5); /* "ab" */
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "ab", 2);
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "ab\0xy", 5);
		ev_n(d, MTRACE_OP_LABEL, th++, 0, long1, sizeof(long1));
		ev_n(d, MTRACE_OP_LABEL, th++, 0, long2, sizeof(long2));
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "c", 1);
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "d", 1); /* the 6th label */
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "e", 1); /* past the cap: dropped */
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "f", 1);
		ev_n(d, MTRACE_OP_LABEL, th++, 0, "g", 1);
		ev_n(d, MTRACE_OP_INCREASE, 1, 7, "", 0);
		ev_n(d, MTRACE_OP_INCREASE, 1, 7, "q\0", 2); /* "q" */
		for (unsigned k = 0; k < 256; k++) {
			snprintf(name, sizeof(name), "counter-%u", k);
			ev_n(d, MTRACE_OP_INCREASE, 1, k, name, strlen(name));
		}
	}
	sub.label_stats = 1;
	sub.domids = (uint32_t[]){ 9 };
	sub.n_domids = 1;
	s = state_stats(&sub, 0);
	CHECK(s->n_domains == 1 && s->n_labels == 6);
	CHECK(label_count(s, "aaaaaaaaXbbbbbbbb") == 3 && label_count(s, "aaaaaaaaYbbbbbbbb") == 3);
	CHECK(label_count(s, "ab") == 9 && label_count(s, "c") == 3 && label_count(s, "d") == 3);
	long1[STR_MAX_STORE - 1] = '\0';
	CHECK(label_count(s, long1) == 6 && label_count(s, "e") == 0);
	if (s->n_domains == 1) {
		Mtrace__DomainStats *ds = s->domains[0];
		/* 36 label events, each of a thread of its own: 36 threads labelled, of
		 * which 9 by a label dropped */
		CHECK(ds->labels_dropped == 9 && ds->threads_labelled == 36);
		/* "", "q" and 254 counter-k; counter-254 and -255 dropped at every round */
		CHECK(ds->n_counters == 256 && ds->counters_dropped == 6);
		CHECK(
		    counter_value(ds, "counter-0") == 0 && counter_value(ds, "counter-253") == 759);
		CHECK(counter_value(ds, "") == 21 && counter_value(ds, "q") == 21);
		CHECK(counter_value(ds, "counter-254") == -1);
	}
	state_stats_free(s);
	state_domain_forget(9);
}

static Mtrace__DomainStats *domain_of(Mtrace__Stats *s)
{
	return s->n_domains == 1 ? s->domains[0] : NULL;
}

static const char *thread_label(Mtrace__Stats *s, int64_t id)
{
	for (size_t i = 0; i < s->n_threads; i++)
		if (s->threads[i]->id == id)
			return s->threads[i]->label;
	return NULL;
}

/*
 * Past the cap: a label event whose label the full table cannot take is one
 * labels_dropped, whoever's it is and however often; its thread counts in
 * threads_labelled once, whether its first label was dropped or kept, and keeps the
 * label it had.  Before: a thread labelled only past the cap was no labelled thread
 * (threads_labelled 7 here, not 8; labels_dropped 6 either way).
 */
static void test_label_drops(void)
{
	struct state_domain *d = state_domain_get(10);
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	Mtrace__DomainStats *ds;
	Mtrace__Stats *s;
	char name[16];
	uint64_t sum = 0;

	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	for (unsigned k = 0; k < 6; k++) { /* threads 1..6: l0..l5, the table full */
		snprintf(name, sizeof(name), "l%u", k);
		ev_n(d, MTRACE_OP_LABEL, k + 1, 0, name, strlen(name));
	}
	ev_n(d, MTRACE_OP_LABEL, 7, 0, "x", 1);  /* dropped: 7 labelled */
	ev_n(d, MTRACE_OP_LABEL, 7, 0, "y", 1);  /* dropped: 7 counted once */
	ev_n(d, MTRACE_OP_LABEL, 7, 0, "l0", 2); /* kept: 7 is l0's, not labelled again */
	ev_n(d, MTRACE_OP_LABEL, 1, 0, "z", 1);  /* dropped: 1 stays l0's */
	ev_n(d, MTRACE_OP_LABEL, 2, 0, "l3", 2); /* a relabel: history kept */
	ev_n(d, MTRACE_OP_LABEL, 2, 0, "w", 1);  /* dropped: 2 stays l3's */
	ev_n(d, MTRACE_OP_LABEL, 8, 0, "x", 1);  /* 8: only dropped labels */
	ev_n(d, MTRACE_OP_LABEL, 8, 0, "x", 1);
	sub.label_stats = 1;
	sub.top_n = 16;
	sub.domids = (uint32_t[]){ 10 };
	sub.n_domids = 1;
	s = state_stats(&sub, 0);
	ds = domain_of(s);
	CHECK(ds && ds->threads_labelled == 8 && ds->labels_dropped == 6);
	CHECK(s->n_labels == 6 && label_count(s, "x") == 0 && label_count(s, "z") == 0);
	CHECK(label_count(s, "l0") == 2 && label_current(s, "l0") == 2);
	CHECK(label_count(s, "l3") == 2 && label_current(s, "l3") == 2);
	CHECK(label_current(s, "l1") == 0);
	/* the labelled threads but 8 (no label kept) are in one label's current each */
	for (size_t i = 0; i < s->n_labels; i++)
		sum += s->labels[i]->current;
	CHECK(sum == 7);
	CHECK(thread_label(s, 1) && !strcmp(thread_label(s, 1), "l0"));
	CHECK(thread_label(s, 2) && !strcmp(thread_label(s, 2), "l3"));
	CHECK(thread_label(s, 8) && !strcmp(thread_label(s, 8), ""));
	state_stats_free(s);
	state_domain_forget(10);
}

int main(void)
{
	struct mtraced_config cfg;

	config_defaults(&cfg);
	cfg.max_labels_per_guest = 6;
	state_init(&cfg);
	state_tick(state_now_ns());
	test_interning();
	test_label_drops();
	state_fini();
	return check_status("state-labels");
}
