/*
 * vcpu-sim.c - the simulated Xen's scheduling, as honest as what it simulates: a
 * simulated domain is a Linux process, and its vCPUs are that process's tasks, each
 * one a vCPU for as long as it lives (numbered in the order they are first seen: the
 * main task, listed first, is vCPU 0; a task that ends is a vCPU gone, its intervals
 * stop).  Between two samples the host kernel's schedstat says how long each task was
 * on a CPU (running) and on a run queue (runnable: steal); the rest of the time it
 * slept (blocked).  It does not say in what order: an interval holding more than one
 * of them is VCPU_MIXED, its parts as measured.  Which physical CPU ran it is not
 * followed (pcpu -1), nor wake-ups (schedstat has none).
 *
 * The samples are the seam's (xenif sched_sample), of the domains mtraced traces, at
 * times read on dom0's CLOCK_REALTIME around the reads: the intervals are on the host's
 * timeline with half the reads' span as their uncertainty.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "state.h"
#include "vcpu-sim.h"
#include "vcpu.h"
#include "xalloc.h"
#include "xenif.h"

#define SIM_MAX_TASKS 256 /* tasks of one domain followed; more are not seen */

struct sim_task {
	uint32_t tid, vcpu;
	uint64_t run, wait;
	uint64_t run_owed, wait_owed; /* counted, not yet placed in an interval (below) */
};

struct sim_dom {
	uint32_t domid;
	bool seen;
	struct sim_task *t;
	uint32_t nt, next_vcpu;
	int64_t at;     /* the last sample's time */
	uint64_t width; /* its reads' span */
};

struct vcpu_sim {
	struct xenif *x;
	struct sim_dom *d;
	unsigned nd;
	uint32_t *ids; /* the traced domains of this pass */
	unsigned nids, capids;
	struct xenif_vcpu_sample smp[SIM_MAX_TASKS];
	struct vcpu_iv iv[SIM_MAX_TASKS];
	bool told; /* a failing sample is logged once */
};

struct vcpu_sim *vcpu_sim_new(struct xenif *x)
{
	struct vcpu_sim *s = calloc(1, sizeof(*s));

	if (s)
		s->x = x;
	return s;
}

void vcpu_sim_free(struct vcpu_sim *s)
{
	for (unsigned i = 0; i < s->nd; i++)
		free(s->d[i].t);
	free(s->d);
	free(s->ids);
	free(s);
}

static void collect(
    uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy, void *arg)
{
	struct vcpu_sim *s = arg;

	(void)name, (void)rings, (void)clock, (void)legacy;
	if (s->nids == s->capids) {
		s->capids = s->capids ? 2 * s->capids : 16;
		s->ids = xreallocarray(s->ids, s->capids, sizeof(*s->ids));
	}
	s->ids[s->nids++] = domid;
}

static struct sim_dom *dom(struct vcpu_sim *s, uint32_t domid)
{
	for (unsigned i = 0; i < s->nd; i++)
		if (s->d[i].domid == domid)
			return &s->d[i];
	s->d = xreallocarray(s->d, s->nd + 1, sizeof(*s->d));
	s->d[s->nd] = (struct sim_dom){ .domid = domid };
	return &s->d[s->nd++];
}

static const struct sim_task *task(const struct sim_dom *d, uint32_t tid)
{
	for (uint32_t i = 0; i < d->nt; i++)
		if (d->t[i].tid == tid)
			return &d->t[i];
	return NULL;
}

/*
 * One task's interval between the samples: its parts, and its one state if it had one.
 * The kernel adds a task's run-queue wait when the task next runs, and its CPU time at
 * ticks and switches: a long wait arrives in one lump, more than the interval it ends
 * in can hold.  What does not fit is owed, and placed in the next intervals with room,
 * so that over any stretch the totals are the kernel's.
 */
static void interval(
    struct vcpu_iv *iv, struct sim_task *t, int64_t at, uint64_t dur, uint64_t ran, uint64_t waited)
{
	uint64_t r = ran + t->run_owed, w = waited + t->wait_owed;
	uint64_t run = r < dur ? r : dur;
	uint64_t wait = w < dur - run ? w : dur - run;

	t->run_owed = r - run;
	t->wait_owed = w - wait;
	*iv = (struct vcpu_iv){ .start_ns = at, .dur_ns = dur, .pcpu = -1 };
	iv->part[0] = run;
	iv->part[1] = wait;
	iv->part[2] = dur - run - wait;
	iv->state = VCPU_MIXED;
	for (int k = 0; k < 3; k++)
		if (iv->part[k] == dur)
			iv->state = (uint8_t)k; /* VCPU_RUNNING, RUNNABLE, BLOCKED */
}

static void sample(struct vcpu_sim *s, vcpu_deliver_fn deliver, void *arg, uint32_t domid)
{
	int64_t t;
	uint64_t width;
	int n = s->x->ops->sched_sample(s->x, domid, s->smp, SIM_MAX_TASKS, &t, &width);

	if (n < 0) {
		if (errno != ESRCH && !s->told) {
			log_warnx("vcpu source: domain %u: %s", domid, strerror(errno));
			s->told = true;
		}
		return;
	}
	struct sim_dom *d = dom(s, domid);
	struct sim_task *now = xreallocarray(NULL, n ? (size_t)n : 1, sizeof(*now));
	bool first = d->at == 0 || t <= d->at;
	uint64_t dur = first ? 0 : (uint64_t)(t - d->at);
	size_t k = 0;

	d->seen = true;
	for (int i = 0; i < n; i++) {
		const struct xenif_vcpu_sample *p = &s->smp[i];
		const struct sim_task *was = task(d, p->id);
		now[i] = (struct sim_task){ p->id, 0, p->run_ns, p->wait_ns, 0, 0 };
		/* a task seen before, whose counts did not go back (a reused id would) */
		if (was && p->run_ns >= was->run && p->wait_ns >= was->wait) {
			now[i].vcpu = was->vcpu;
			now[i].run_owed = was->run_owed;
			now[i].wait_owed = was->wait_owed;
			if (!first) {
				interval(&s->iv[k], &now[i], d->at, dur, p->run_ns - was->run,
				    p->wait_ns - was->wait);
				s->iv[k++].vcpu = was->vcpu;
			}
		} else {
			now[i].vcpu = d->next_vcpu++;
		}
	}
	free(d->t);
	d->t = now;
	d->nt = (uint32_t)n;
	uint64_t unc = (width > d->width ? width : d->width) / 2;
	d->at = t;
	d->width = width;
	struct vcpu_batch b = { .domid = domid,
		.source = VCPU_SOURCE_SIM,
		.iv = s->iv,
		.n = k,
		.until_ns = t,
		.uncertainty_ns = unc };
	deliver(arg, &b);
}

void vcpu_sim_tick(struct vcpu_sim *s, vcpu_deliver_fn deliver, void *arg)
{
	s->nids = 0;
	state_foreach_domain(collect, s);
	for (unsigned i = 0; i < s->nd; i++)
		s->d[i].seen = false;
	for (unsigned i = 0; i < s->nids; i++)
		sample(s, deliver, arg, s->ids[i]);
	/* domains no longer traced, or without a process: forgotten */
	for (unsigned i = 0; i < s->nd;) {
		if (s->d[i].seen) {
			i++;
			continue;
		}
		free(s->d[i].t);
		s->d[i] = s->d[--s->nd];
	}
}
