/*
 * vcpu-runstate.c - runstate intervals from Xen's scheduler records, the way xenalyze
 * reconstructs them (tools/xentrace/xenalyze.c, its runstate handling): a vCPU's state
 * is known from its first RUNSTATE_CHANGE on (the new state, from the record's time),
 * and each change closes the interval of the state before.  Every such record names the
 * old state as well: one that disagrees with what we knew means records were lost or
 * reordered, and is counted (the interval is still closed, with the state we knew).
 *
 * A LOST_RECORDS record says that one CPU dropped records from first_tsc on: any vCPU
 * could have changed state unseen there, so every vCPU's state becomes unknown from
 * first_tsc (or its last change, if later) until its next change: a gap, never a guess.
 * The running pCPU is the buffer's CPU: Xen switches a vCPU in on the CPU that runs it.
 */
#include <stdlib.h>
#include <string.h>

#include "vcpu-runstate.h"

int vrs_init(struct vcpu_runstate *rs, uint32_t max)
{
	uint32_t cap = 16;

	memset(rs, 0, sizeof(*rs));
	while (cap < 2 * (uint64_t)max && cap < (1u << 24))
		cap *= 2;
	rs->tab = calloc(cap, sizeof(*rs->tab));
	if (!rs->tab)
		return -1;
	rs->mask = cap - 1;
	rs->max = max < cap / 2 ? max : cap / 2;
	return 0;
}

void vrs_free(struct vcpu_runstate *rs)
{
	free(rs->tab);
	rs->tab = NULL;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct vrec *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t vrs_merge(struct vrec *recs, size_t n, uint64_t cut)
{
	size_t lo = 0, hi = n;

	qsort(recs, n, sizeof(*recs), rec_cmp);
	while (lo < hi) { /* the first record at or after cut */
		size_t mid = lo + (hi - lo) / 2;
		if (recs[mid].tsc < cut)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct vrs_vcpu *find(struct vcpu_runstate *rs, uint16_t domid, uint16_t vcpu)
{
	uint32_t key = (uint32_t)domid << 16 | vcpu;
	uint32_t j = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & rs->mask;

	for (;; j = (j + 1) & rs->mask) {
		struct vrs_vcpu *v = &rs->tab[j];
		if (v->used && v->domid == domid && v->vcpu == vcpu)
			return v;
		if (!v->used) {
			if (rs->n >= rs->max) {
				rs->untracked++;
				return NULL;
			}
			rs->n++;
			*v = (struct vrs_vcpu){ .domid = domid,
				.vcpu = vcpu,
				.used = true,
				.state = VRS_UNKNOWN,
				.pcpu = -1 };
			return v;
		}
	}
}

static void emit(const struct vrs_vcpu *v, uint64_t end, const struct vrs_out *o)
{
	if (v->state == VRS_UNKNOWN || end <= v->since)
		return;
	struct vrs_interval iv = { .start_tsc = v->since,
		.end_tsc = end,
		.domid = v->domid,
		.vcpu = v->vcpu,
		.state = v->state,
		.pcpu = v->pcpu };
	o->interval(o->arg, &iv);
}

static void change(struct vcpu_runstate *rs, const struct vrec *r, const struct vrs_out *o)
{
	if (r->domid >= XDOMID_FIRST_RESERVED)
		return; /* the idle domain's vCPUs: the pCPU is idle, no guest's business */
	struct vrs_vcpu *v = find(rs, r->domid, r->vcpu);
	if (!v)
		return;
	if (v->state != VRS_UNKNOWN && v->state != r->old_state)
		rs->mismatches++;
	/* a record older than what was already handed on (a cut assumed no CPU would
	 * publish one): taken at the cut, so that intervals never overlap */
	uint64_t t = r->tsc;
	if (t < v->since) {
		rs->late++;
		t = v->since;
	}
	emit(v, t, o);
	if ((r->old_state == XRUNSTATE_BLOCKED || r->old_state == XRUNSTATE_OFFLINE) &&
	    r->new_state == XRUNSTATE_RUNNABLE && o->wake)
		o->wake(o->arg, r->domid, r->vcpu, t);
	v->state = r->new_state;
	v->since = t;
	v->pcpu = r->new_state == XRUNSTATE_RUNNING ? (int32_t)r->cpu : -1;
}

static void lost(struct vcpu_runstate *rs, const struct vrec *r, const struct vrs_out *o)
{
	rs->resets++;
	for (uint32_t j = 0; j <= rs->mask; j++) {
		struct vrs_vcpu *v = &rs->tab[j];
		if (!v->used || v->state == VRS_UNKNOWN)
			continue;
		uint64_t from = r->first_tsc > v->since ? r->first_tsc : v->since;
		emit(v, from, o);
		v->state = VRS_UNKNOWN;
		v->since = from;
		v->pcpu = -1;
	}
}

void vrs_apply(struct vcpu_runstate *rs, const struct vrec *r, size_t n, const struct vrs_out *o)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].kind == VREC_RUNSTATE)
			change(rs, &r[i], o);
		else if (r[i].kind == VREC_LOST)
			lost(rs, &r[i], o);
		/* the others (wake, block, switch, ...) are counted by the decoder: the
		 * runstate changes beside them already say what they did to the vCPU */
	}
}

void vrs_cut(struct vcpu_runstate *rs, uint64_t tsc, const struct vrs_out *o)
{
	for (uint32_t j = 0; j <= rs->mask; j++) {
		struct vrs_vcpu *v = &rs->tab[j];
		if (!v->used || v->state == VRS_UNKNOWN || tsc <= v->since)
			continue;
		emit(v, tsc, o);
		v->since = tsc;
	}
}
