/*
 * vcpu-runstate.h - Xen's scheduler records (vcpu-decode.h), all physical CPUs merged in
 * time order, turned into each vCPU's runstate intervals (vcpu-runstate.c).  Pure: TSC
 * ticks in, TSC ticks out; the caller maps them onto the host's clock.
 */
#ifndef MTRACED_VCPU_RUNSTATE_H
#define MTRACED_VCPU_RUNSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vcpu-decode.h"

#define VRS_UNKNOWN 0xff /* no record of the vCPU yet, or since a loss */

/* One vCPU in one runstate (XRUNSTATE_*) over [start_tsc, end_tsc). */
struct vrs_interval {
	uint64_t start_tsc, end_tsc;
	uint16_t domid, vcpu;
	uint8_t state;
	int32_t pcpu; /* RUNNING: the physical CPU; else -1 */
};

struct vrs_out {
	void (*interval)(void *arg, const struct vrs_interval *iv);
	/* a vCPU made runnable again after blocking or being offline, at tsc */
	void (*wake)(void *arg, uint16_t domid, uint16_t vcpu, uint64_t tsc);
	void *arg;
};

struct vrs_vcpu {
	uint64_t since; /* start of the open interval */
	uint16_t domid, vcpu;
	uint8_t state; /* XRUNSTATE_* or VRS_UNKNOWN */
	bool used;
	int32_t pcpu;
};

struct vcpu_runstate {
	struct vrs_vcpu *tab; /* open addressing on (domid, vcpu) */
	uint32_t mask, n, max;
	uint64_t mismatches; /* a change whose old state was not the one we knew */
	uint64_t untracked;  /* records of vCPUs past max, ignored */
	uint64_t resets;     /* losses that made every vCPU's state unknown */
	uint64_t late;       /* records older than a cut already made: taken at the cut */
};

/* Room for max vCPUs (all domains together); -1 when out of memory. */
int vrs_init(struct vcpu_runstate *rs, uint32_t max);
void vrs_free(struct vcpu_runstate *rs);

/*
 * Sort recs (all CPUs, any order) by TSC, ties by CPU then decoding order, and return
 * how many of them come before cut: those are ready to apply, in order, at the front;
 * the rest (at the end) wait for the next pass, since another CPU may still publish
 * records older than they are.
 */
size_t vrs_merge(struct vrec *recs, size_t n, uint64_t cut);

/* Apply n records in time order: every interval they close goes to o. */
void vrs_apply(struct vcpu_runstate *rs, const struct vrec *r, size_t n, const struct vrs_out *o);
/* Every vCPU's open interval, up to tsc, to o (and it goes on from tsc): the host sees
 * each vCPU up to the pass's end, whether or not it changed state. */
void vrs_cut(struct vcpu_runstate *rs, uint64_t tsc, const struct vrs_out *o);

#endif
