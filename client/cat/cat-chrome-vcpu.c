/*
 * cat-chrome-vcpu.c - a domain's vCPU runstate intervals (VcpuIntervals, issue 38) in
 * mtrace-cat's Chrome trace (cat-chrome.c): in the domain's process, one track per vCPU
 * ("vCPU N"), above its threads, each interval a slice named after its state (running,
 * runnable (steal), blocked, offline) with the physical CPU in its args; a sampled
 * interval (the simulated Xen) is a "sample" slice whose args hold its parts, and the
 * parts as counters ("vCPU N run %", "vCPU N steal %"); wake-ups are instants.
 *
 * The intervals are on the host timeline, as the trace is (its events' guest times mapped
 * onto it, cat-chrome.c), so they are written as they come and made relative with the
 * rest at the end.
 * Slices are B/E pairs (a time written as text is exact to the ns; a "dur" is not).
 */
#include <inttypes.h>
#include <stdio.h>

#include "cat-chrome.h"
#include "chrome-emit.h"
#include "mtrace.pb-c.h"

/* Above every tid cat-chrome.c hands out (from 1 << 16, in order of first sight), one
 * per (domain, vCPU): a vCPU past VCPU_TIDS is not drawn. */
#define VCPU_TID(domid, vcpu) ((1u << 30) + (domid)*1024u + (vcpu))
#define VCPU_TIDS             1024u
#define NAMED_MAX             4096 /* (domain, vCPU) tracks named so far */

static struct {
	uint32_t named[NAMED_MAX];
	unsigned nnamed;
	uint64_t before, many;
} V;

static const char *const slice[] = { "running", "runnable (steal)", "blocked", "offline",
	"sample" };

static void name_track(struct chrome_emit *e, FILE *f, uint32_t domid, uint32_t tid, uint32_t vcpu)
{
	char buf[32];

	for (unsigned i = 0; i < V.nnamed; i++)
		if (V.named[i] == tid)
			return;
	if (V.nnamed < NAMED_MAX)
		V.named[V.nnamed++] = tid;
	snprintf(buf, sizeof(buf), "vCPU %u", vcpu);
	chrome_thread_name(e, f, domid, tid, buf);
}

/* A time of the host's on the trace's axis (host ns; before 1970 none of ours is). */
static bool axis(int64_t host, uint64_t *ts)
{
	*ts = host >= 0 ? (uint64_t)host : 0;
	return host >= 0;
}

/* A counter of the vCPU's track, its category "vcpu" (a guest's counters have none). */
static void percent(struct chrome_emit *e, FILE *f, uint32_t domid, uint64_t ts, uint32_t vcpu,
    const char *what, uint64_t part, uint64_t dur)
{
	char name[48];

	snprintf(name, sizeof(name), "vCPU %u %s %%", vcpu, what);
	chrome_head(e, f, "C", domid, VCPU_TID(domid, vcpu), ts, name, "vcpu");
	fprintf(f, ",\"args\":{\"value\":%" PRIu64 "}}", dur ? 100 * part / dur : 0);
}

void cat_chrome_vcpu(FILE *f, const Mtrace__VcpuIntervals *v)
{
	size_t n = v->n_vcpu;
	uint32_t d = v->domid;
	struct chrome_emit *e;

	if (v->n_start_ns != n || v->n_dur_ns != n || v->n_state != n || v->n_running_ns != n ||
	    v->n_runnable_ns != n || v->n_blocked_ns != n || v->n_pcpu != n ||
	    v->n_wake_ns != v->n_wake_vcpu)
		return; /* a broken or hostile peer's columns */
	if (!(e = cat_chrome_domain(&f, d)))
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t vc = v->vcpu[i], tid = VCPU_TID(d, vc);
		unsigned st = v->state[i] < 5 ? v->state[i] : 4;
		uint64_t a, b;
		if (vc >= VCPU_TIDS) {
			V.many++;
			continue;
		}
		if (!axis(v->start_ns[i], &a) ||
		    !axis(v->start_ns[i] + (int64_t)v->dur_ns[i], &b)) {
			V.before++;
			continue;
		}
		name_track(e, f, d, tid, vc);
		chrome_head(e, f, "B", d, tid, a, slice[st], "vcpu");
		fprintf(f,
		    ",\"args\":{\"pcpu\":%" PRId32 ",\"running_ns\":%" PRIu64
		    ",\"runnable_ns\":%" PRIu64 ",\"blocked_ns\":%" PRIu64 "}}",
		    v->pcpu[i], v->running_ns[i], v->runnable_ns[i], v->blocked_ns[i]);
		chrome_head(e, f, "E", d, tid, b, slice[st], "vcpu");
		fputc('}', f);
		if (st == 4) {
			percent(e, f, d, a, vc, "run", v->running_ns[i], v->dur_ns[i]);
			percent(e, f, d, a, vc, "steal", v->runnable_ns[i], v->dur_ns[i]);
		}
	}
	for (size_t i = 0; i < v->n_wake_vcpu; i++) {
		uint64_t t;
		if (v->wake_vcpu[i] < VCPU_TIDS && axis(v->wake_ns[i], &t)) {
			name_track(e, f, d, VCPU_TID(d, v->wake_vcpu[i]), v->wake_vcpu[i]);
			chrome_instant(e, f, d, VCPU_TID(d, v->wake_vcpu[i]), t, "wake", "vcpu");
		}
	}
}

void cat_chrome_vcpu_end(void)
{
	if (V.before || V.many)
		fprintf(stderr,
		    "mtrace-cat: %" PRIu64 " vCPU intervals before 1970, %" PRIu64
		    " of vCPUs past %u, left out\n",
		    V.before, V.many, VCPU_TIDS - 1);
	V.nnamed = 0;
	V.before = V.many = 0;
}
