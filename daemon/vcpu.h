/*
 * vcpu.h - what mtraced knows of the hypervisor's scheduling of each domain's vCPUs
 * (issue 38): runstate intervals on the host's timeline (dom0 CLOCK_REALTIME ns), as
 * the hypervisor source delivers them (vcpu-source.c: Xen's trace buffers, vcpu-xen.c,
 * or the simulated Xen's schedstat, vcpu-sim.c), kept by the state (state-vcpu.c) as
 * per-domain and per-vCPU figures and as the history that thread waits are measured
 * against, and streamed (stream_vcpu) as VcpuIntervals.
 */
#ifndef MTRACED_VCPU_H
#define MTRACED_VCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct state_domain;

/* As enum VcpuState of proto/mtrace.proto (Xen's runstates, then a sampled mix). */
enum {
	VCPU_RUNNING = 0,
	VCPU_RUNNABLE = 1,
	VCPU_BLOCKED = 2,
	VCPU_OFFLINE = 3,
	VCPU_MIXED = 4,
};

/* As enum VcpuSource. */
enum {
	VCPU_SOURCE_NONE = 0,
	VCPU_SOURCE_XEN = 1,
	VCPU_SOURCE_SIM = 2,
};

/* One vCPU over [start_ns, start_ns + dur_ns): its parts running, runnable, blocked;
 * what is left of dur_ns is offline.  One state (state < MIXED): that part is dur_ns. */
struct vcpu_iv {
	int64_t start_ns;
	uint64_t dur_ns;
	uint64_t part[3];
	uint32_t vcpu;
	int32_t pcpu; /* RUNNING: the physical CPU; else -1 */
	uint8_t state;
};

/* A batch of one domain's intervals, all within (the previous batch's until, until]:
 * until is how far the source has seen every vCPU of the domain.  wakes: vCPU ids. */
struct vcpu_batch {
	uint32_t domid;
	uint32_t source; /* VCPU_SOURCE_* */
	const struct vcpu_iv *iv;
	size_t n;
	const uint32_t *wake_vcpu;
	const int64_t *wake_ns;
	size_t nwakes;
	int64_t until_ns;
	uint64_t uncertainty_ns;
	/* the domain's ring clock to the host's: host = guest + offset (state_vcpu_offset) */
	int64_t guest_offset_ns;
	bool guest_mapped;
};

/* Where a source's batches go (vcpu-source.c: the state and the clients). */
typedef void (*vcpu_deliver_fn)(void *arg, const struct vcpu_batch *b);

/* ---- state-vcpu.c (the core: no Xen, no loop) ---- */

/* The source is on (its kind) or off: Stats say which. */
void state_vcpu_source(uint32_t source);
/* A batch of d's: its figures, its history, and the waits it lets us measure. */
void state_vcpu_batch(struct state_domain *d, const struct vcpu_batch *b);
/* The hypervisor's records, all domains: deltas since the last call. */
void state_vcpu_counts(uint64_t records, uint64_t lost, uint64_t dropped);
/*
 * How thread times (the guest's ring clock, as decoded) map onto the host's timeline,
 * to measure their waits: host_ns = guest_ns + offset_ns.  Per domain, from issue 37's
 * clock mapping when there is one (state_vcpu_clock_map); else, in the simulated Xen,
 * where every guest clock is one of this kernel's, from dom0's own monotonic-to-
 * realtime offset (state_vcpu_same_kernel): realtime rings 0, the others that offset.
 * Neither: the domain's waits are not measured (its clock is not on the host's line).
 */
void state_vcpu_clock_map(struct state_domain *d, int64_t offset_ns, bool known);
/* The offset d's thread times are put on the host's line with; false: none. */
bool state_vcpu_offset(const struct state_domain *d, int64_t *offset_ns);
void state_vcpu_same_kernel(int64_t mono_to_real_ns, bool known);

#endif
