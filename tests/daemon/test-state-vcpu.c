/*
 * test-state-vcpu.c - the state's account of the vCPUs (daemon/state-vcpu.c): a domain's
 * and its vCPUs' figures from the source's batches, and thread waits measured against
 * them once a batch covers them: exact intervals and sampled ones (their parts spread
 * evenly), several vCPUs taken together, a thread that never runs, a wait older than the
 * history, a domain whose clock has no mapping to the host's, and one with a mapping
 * but no source (nothing measured: the hot path stays a test of a pointer).
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
#include "vcpu.h"

#define OFF  1000000000000ll /* host = guest + OFF (the simulation's same-kernel map) */
#define MS   1000000ll
#define BASE (5000 * MS) /* guest ns of the first event */

static void ev(
    struct state_domain *d, uint8_t op, uint64_t ts, uint64_t th, uint64_t arg, const char *str)
{
	struct mtrace_event e = { .ts = ts,
		.thread = th,
		.arg = arg,
		.op = op,
		.str = str,
		.str_len = (uint16_t)(str ? strlen(str) : 0) };
	state_apply(d, &e);
}

/* One vCPU interval on the host's line: guest times a..b, its parts in per mille. */
static struct vcpu_iv iv(uint32_t vcpu, int64_t a, int64_t b, int run, int steal, int blk)
{
	uint64_t dur = (uint64_t)(b - a);
	struct vcpu_iv v = {
		.start_ns = a + OFF, .dur_ns = dur, .vcpu = vcpu, .pcpu = -1, .state = VCPU_MIXED
	};
	v.part[0] = dur * (uint64_t)run / 1000;
	v.part[1] = dur * (uint64_t)steal / 1000;
	v.part[2] = dur * (uint64_t)blk / 1000;
	for (int k = 0; k < 3; k++)
		if (v.part[k] == dur)
			v.state = (uint8_t)k;
	if (run == 1000)
		v.pcpu = 1;
	return v;
}

static void batch(struct state_domain *d, const struct vcpu_iv *v, size_t n, int64_t until)
{
	struct vcpu_batch b = { .domid = d->domid,
		.source = VCPU_SOURCE_SIM,
		.iv = v,
		.n = n,
		.until_ns = until + OFF };
	state_vcpu_batch(d, &b);
}

static const Mtrace__LabelStats *label(Mtrace__Stats *s, uint32_t domid, const char *name)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (s->labels[i]->domid == domid && !strcmp(s->labels[i]->label, name))
			return s->labels[i];
	return NULL;
}

static Mtrace__Stats *stats(void)
{
	static Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	sub.label_stats = true;
	return state_stats(&sub, 0);
}

/* A thread of label name created at a, first run at b (or resolved then, never run). */
static void thread_wait(
    struct state_domain *d, uint64_t id, const char *name, uint64_t a, uint64_t b, bool runs)
{
	ev(d, MTRACE_OP_CREATES, a, 1, id, NULL);
	ev(d, MTRACE_OP_LABEL, a, id, 0, name);
	if (runs) {
		ev(d, MTRACE_OP_SWITCH, b, id, 0, NULL);
		ev(d, MTRACE_OP_SWITCH, b + 10, 1, 0, NULL);
	} else {
		ev(d, MTRACE_OP_FULFILLS, b, 1, id, NULL);
	}
}

static void test_one_vcpu(void)
{
	struct state_domain *d = state_domain_get(3);
	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	batch(d, NULL, 0, BASE); /* the source sees the domain: waits are measured from now */
	ev(d, MTRACE_OP_SWITCH, BASE + 1, 1, 0, NULL);

	/* exact: running 100 ms, runnable 100 ms, blocked 100 ms */
	thread_wait(d, 10, "exact", BASE + 50 * MS, BASE + 250 * MS, true);
	/* sampled: 300 ms of which 50 % ran, 30 % waited for a CPU, 20 % slept */
	thread_wait(d, 11, "mixed", BASE + 400 * MS, BASE + 500 * MS, true);
	/* never runs: its wait ends at its resolution */
	thread_wait(d, 12, "promise", BASE + 300 * MS, BASE + 350 * MS, false);
	Mtrace__Stats *s = stats();
	const Mtrace__LabelStats *l = label(s, 3, "exact");
	CHECK(l && l->waits == 0, "not measured before a batch covers the wait");
	state_stats_free(s);

	struct vcpu_iv v[] = {
		iv(0, 0 + BASE, 100 * MS + BASE, 1000, 0, 0),
		iv(0, 100 * MS + BASE, 200 * MS + BASE, 0, 1000, 0),
		iv(0, 200 * MS + BASE, 300 * MS + BASE, 0, 0, 1000),
		iv(0, 300 * MS + BASE, 600 * MS + BASE, 500, 300, 200),
	};
	batch(d, v, 4, 600 * MS + BASE);
	s = stats();
	Mtrace__DomainStats *ds = s->domains[0];
	CHECK(ds->vcpu_since_ns == BASE + OFF && ds->vcpu_until_ns == 600 * MS + BASE + OFF,
	    "the figures' span");
	CHECK(ds->vcpu_running_ns == 250 * MS && ds->vcpu_runnable_ns == 190 * MS &&
	        ds->vcpu_blocked_ns == 160 * MS && ds->vcpu_offline_ns == 0,
	    "the domain's totals: %" PRIu64 " %" PRIu64 " %" PRIu64, ds->vcpu_running_ns,
	    ds->vcpu_runnable_ns, ds->vcpu_blocked_ns);
	CHECK(ds->n_vcpus == 1 && ds->vcpus[0]->state == MTRACE__VCPU_STATE__VCPU_MIXED,
	    "one vCPU, its last interval a sample");
	/* [50, 250): running 50, runnable 100, blocked 50 */
	l = label(s, 3, "exact");
	CHECK(l && l->waits == 1 && l->wait_ns == 200 * MS && l->wait_steal_ns == 100 * MS &&
	        l->wait_blocked_ns == 50 * MS,
	    "exact: steal 100 ms and blocked 50 ms of 200 (%" PRIu64 ", %" PRIu64 ")",
	    l ? l->wait_steal_ns : 0, l ? l->wait_blocked_ns : 0);
	/* [400, 500) in the sample: 30 % and 20 % of 100 ms */
	l = label(s, 3, "mixed");
	CHECK(l && l->waits == 1 && l->wait_ns == 100 * MS && l->wait_steal_ns > 29 * MS &&
	        l->wait_steal_ns < 31 * MS && l->wait_blocked_ns > 19 * MS &&
	        l->wait_blocked_ns < 21 * MS,
	    "a sample's parts spread evenly (%" PRIu64 ", %" PRIu64 ")", l ? l->wait_steal_ns : 0,
	    l ? l->wait_blocked_ns : 0);
	/* [300, 350) for a thread that never ran: 15 ms steal, 10 ms blocked */
	l = label(s, 3, "promise");
	CHECK(l && l->waits == 1 && l->wait_ns == 50 * MS && l->wait_steal_ns > 14 * MS &&
	        l->wait_steal_ns < 16 * MS,
	    "a thread that never runs: waited to its resolution");
	state_stats_free(s);

	/* a wait older than the ten seconds of history kept: unattributed */
	thread_wait(d, 13, "old", BASE + 610 * MS, BASE + 15000 * MS, true);
	struct vcpu_iv w[] = { iv(0, 600 * MS + BASE, 16000 * MS + BASE, 0, 0, 1000) };
	batch(d, w, 1, 16000 * MS + BASE);
	for (int64_t t = 1; t <= 3; t++) { /* the history moves on */
		struct vcpu_iv x = iv(0, (16000 + (t - 1) * 1000) * MS + BASE,
		    (16000 + t * 1000) * MS + BASE, 0, 0, 1000);
		batch(d, &x, 1, (16000 + t * 1000) * MS + BASE);
	}
	s = stats();
	l = label(s, 3, "old");
	CHECK(l && l->waits == 1 && l->wait_blocked_ns > 14000 * MS, "a long wait, blocked");
	thread_wait(d, 14, "older", BASE + 550 * MS, BASE + 18500 * MS, true);
	state_stats_free(s);
	struct vcpu_iv y = iv(0, 19000 * MS + BASE, 19100 * MS + BASE, 1000, 0, 0);
	batch(d, &y, 1, 19100 * MS + BASE);
	s = stats();
	l = label(s, 3, "older");
	CHECK(l && l->waits == 0 && s->waits_unattributed >= 1,
	    "a wait that began before the history kept: unattributed");
	state_stats_free(s);
}

static void test_two_vcpus_and_unmapped(void)
{
	struct state_domain *d = state_domain_get(4);
	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	batch(d, NULL, 0, BASE);
	ev(d, MTRACE_OP_SWITCH, BASE + 1, 1, 0, NULL);
	thread_wait(d, 20, "both", BASE + 100 * MS, BASE + 200 * MS, true);
	/* vCPU 0 ran all along while vCPU 1 waited: the guest was running */
	struct vcpu_iv v[] = {
		iv(0, BASE, BASE + 300 * MS, 1000, 0, 0),
		iv(1, BASE, BASE + 300 * MS, 0, 1000, 0),
	};
	batch(d, v, 2, BASE + 300 * MS);
	Mtrace__Stats *s = stats();
	const Mtrace__LabelStats *l = label(s, 4, "both");
	CHECK(l && l->waits == 1 && l->wait_steal_ns == 0 && l->wait_blocked_ns == 0,
	    "one vCPU running: no steal, whatever the other did");
	CHECK(s->domains[1]->n_vcpus == 2 && s->domains[1]->vcpus[0]->pcpu == 1,
	    "two vCPUs, the running one's physical CPU");
	state_stats_free(s);

	/* a domain on real Xen without issue 37's mapping: its waits are not measured */
	state_vcpu_source(VCPU_SOURCE_XEN);
	struct state_domain *x = state_domain_get(5);
	state_domain_attached(x, 1, MTRACE_CLOCK_MONOTONIC, false);
	batch(x, NULL, 0, BASE);
	ev(x, MTRACE_OP_SWITCH, BASE + 1, 1, 0, NULL);
	thread_wait(x, 30, "unmapped", BASE + 100 * MS, BASE + 200 * MS, true);
	batch(x, v, 2, BASE + 300 * MS);
	s = stats();
	l = label(s, 5, "unmapped");
	CHECK(l && l->waits == 0, "no clock mapping: not measured");
	state_stats_free(s);
	/* with one (state_vcpu_clock_map), measured */
	state_vcpu_clock_map(x, OFF, true);
	thread_wait(x, 31, "mapped", BASE + 400 * MS, BASE + 500 * MS, true);
	struct vcpu_iv z = iv(0, BASE + 300 * MS, BASE + 600 * MS, 0, 1000, 0);
	batch(x, &z, 1, BASE + 600 * MS);
	s = stats();
	l = label(s, 5, "mapped");
	CHECK(l && l->waits == 1 && l->wait_steal_ns == 100 * MS, "mapped: all steal");
	CHECK(s->vcpu_source == MTRACE__VCPU_SOURCE__VCPU_SOURCE_XEN, "the source named");
	state_stats_free(s);
}

/* The source off: a domain's clock map is kept, and no wait is queued for figures that
 * will never come. */
static void test_map_without_source(void)
{
	struct state_domain *d = state_domain_get(7);
	Mtrace__Stats *s = stats();
	uint64_t unattributed = s->waits_unattributed;
	const Mtrace__LabelStats *l;

	state_stats_free(s);
	state_vcpu_source(VCPU_SOURCE_NONE);
	state_domain_attached(d, 1, MTRACE_CLOCK_MONOTONIC, false);
	state_vcpu_clock_map(d, OFF, true);
	for (uint64_t i = 0; i < 100; i++)
		thread_wait(d, 40 + i, "nosource", BASE + i * MS, BASE + (i + 1) * MS, i % 2);
	CHECK(d->vc == NULL, "a map alone made no vCPU account");
	s = stats();
	l = label(s, 7, "nosource");
	CHECK(l && l->waits == 0 && s->waits_unattributed == unattributed,
	    "no source: nothing measured, nothing unattributed (%" PRIu64 ")",
	    s->waits_unattributed - unattributed);
	state_stats_free(s);
	state_domain_detached(d, "test", true);
}

int main(void)
{
	struct mtraced_config cfg;

	config_defaults(&cfg);
	state_init(&cfg);
	state_tick(state_now_ns());
	state_vcpu_source(VCPU_SOURCE_SIM);
	state_vcpu_same_kernel(OFF, true);
	test_one_vcpu();
	test_two_vcpus_and_unmapped();
	test_map_without_source();
	state_fini();
	return check_status("state-vcpu");
}
