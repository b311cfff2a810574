/*
 * xen-time.h - the arithmetic of reading Xen system time from a Linux user process,
 * without Xen (so that tests/unit checks it on made-up inputs); xenif-xen-clock.c does
 * the reading.  Two sources (docs/xen-time.md):
 *
 *  - pvclock: a vcpu_time_info Xen keeps up to date (public/xen.h), which a PV or PVH
 *    Linux maps into every process's vDSO when Xen says the TSC is stable
 *    (PVCLOCK_TSC_STABLE_BIT): system time = system_time + scaled(tsc - tsc_timestamp),
 *    read under the version seqlock.
 *  - runstate bounds: VCPUOP_get_runstate_info gives, for a vCPU, the Xen system time
 *    its current state began and the time it spent in each state (the current one up to
 *    the call).  Two calls around a wake-up of the calling vCPU bound Xen system time
 *    against any clock read before the first and after the second (below).
 */
#ifndef MTRACE_XEN_TIME_H
#define MTRACE_XEN_TIME_H

#include <stdbool.h>
#include <stdint.h>

/* struct vcpu_time_info (public/xen.h; Linux's struct pvclock_vcpu_time_info). */
struct xentime_pvclock {
	uint32_t version; /* odd while Xen rewrites the block */
	uint32_t pad0;
	uint64_t tsc_timestamp;     /* TSC at system_time */
	uint64_t system_time;       /* ns since Xen's boot */
	uint32_t tsc_to_system_mul; /* ns per tick as a 0.32 fraction, after tsc_shift */
	int8_t tsc_shift;
	uint8_t flags;
	uint8_t pad[2];
};
#define XENTIME_PVCLOCK_TSC_STABLE 0x01 /* one block serves every vCPU (PVCLOCK_TSC_STABLE_BIT) */

/* Xen system time at tsc by the block's line (Xen's and Linux's pvclock_scale_delta). */
uint64_t xentime_pvclock_ns(const struct xentime_pvclock *p, uint64_t tsc);

/*
 * Copy a live block under its seqlock and convert rdtsc() read inside it: 0, or -1 with
 * errno EAGAIN (Xen kept rewriting it) or ENOTSUP (the block does not say the TSC is
 * stable, so it is no vCPU's but one CPU's: unusable from user space).
 */
int xentime_pvclock_read(
    const volatile struct xentime_pvclock *p, uint64_t (*rdtsc)(void), uint64_t *ns);

/* struct vcpu_runstate_info (public/vcpu.h), the update flag of its entry time cleared. */
#define XENTIME_RUNNING  0
#define XENTIME_RUNNABLE 1
#define XENTIME_BLOCKED  2
#define XENTIME_OFFLINE  3
struct xentime_runstate {
	int state;
	uint64_t entry;   /* Xen system time the state began */
	uint64_t time[4]; /* ns spent in each state, the current one up to the call */
};

/*
 * Bounds on C = Xen system time - clk, from a read of clk (before), runstate a, runstate
 * b of the same vCPU, a read of clk (after).  Valid when b says the vCPU is running and
 * entered that state after a was taken (b.entry != a.entry): then it ran without a break
 * from b.entry to the second call, so
 *     e' = b.entry - (blocked + runnable + offline time between the calls)
 * is the first call's time plus the time it ran before that last wake-up, and
 *     before + C <= first call <= e'   and   b.entry <= second call <= after + C.
 * The width (hi - lo) is the time the vCPU ran between the two clock reads: small when
 * it slept in between.  -1 with errno EAGAIN when b does not qualify (no wake-up between
 * the calls: sleep and try again), EINVAL when the two cannot be one vCPU's.
 */
int xentime_runstate_bound(const struct xentime_runstate *a, const struct xentime_runstate *b,
    int64_t before, int64_t after, int64_t *lo, int64_t *hi);

/* An interval C lies in, narrowed by every bound on the same C. */
struct xentime_interval {
	int64_t lo, hi;
	unsigned n; /* bounds taken since the last reset */
};

/*
 * Narrow iv by [lo, hi].  Bounds that do not meet mean C moved (a resume, a clock step
 * or a clocksource change): iv starts again from [lo, hi] and the call returns false.
 */
bool xentime_interval_add(struct xentime_interval *iv, int64_t lo, int64_t hi);

/*
 * An interval narrowed for minutes by a bound a second (a long-lived reader's C): a
 * bound that does not meet it is one bad bound (skewed by Xen's pCPUs) or a moved C (a
 * resume), so it is set aside, and only a second bound that meets the one set aside and
 * not iv starts iv again from the two; a bound that meets iv drops what was set aside.
 */
struct xentime_kept {
	struct xentime_interval iv;     /* what C is known to lie in */
	struct xentime_interval missed; /* bounds set aside (n = 0: none) */
};
enum xentime_kept_step {
	XENTIME_NARROWED,
	XENTIME_SET_ASIDE,
	XENTIME_MOVED
};
enum xentime_kept_step xentime_kept_add(struct xentime_kept *k, int64_t lo, int64_t hi);

#endif
