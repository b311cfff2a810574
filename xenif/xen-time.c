/*
 * xen-time.c - the arithmetic of xen-time.h: pvclock's conversion and seqlock, the
 * runstate bounds, and the narrowing of an interval by them.
 */
#include <errno.h>

#include "xen-time.h"

#define PVCLOCK_TRIES 64 /* a block Xen rewrites this often in a row is being rewritten */

uint64_t xentime_pvclock_ns(const struct xentime_pvclock *p, uint64_t tsc)
{
	uint64_t d = tsc - p->tsc_timestamp;
	bool neg = (int64_t)d < 0; /* a TSC read just before the block's own: keep the sign */
	uint64_t ns;

	if (neg)
		d = -d;
	if (p->tsc_shift >= 0)
		d <<= p->tsc_shift & 63;
	else
		d >>= -p->tsc_shift & 63;
	ns = (uint64_t)(((unsigned __int128)d * p->tsc_to_system_mul) >> 32);
	return neg ? p->system_time - ns : p->system_time + ns;
}

int xentime_pvclock_read(
    const volatile struct xentime_pvclock *p, uint64_t (*rdtsc)(void), uint64_t *ns)
{
	for (int i = 0; i < PVCLOCK_TRIES; i++) {
		struct xentime_pvclock c;
		uint32_t v = p->version;

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		c.tsc_timestamp = p->tsc_timestamp;
		c.system_time = p->system_time;
		c.tsc_to_system_mul = p->tsc_to_system_mul;
		c.tsc_shift = p->tsc_shift;
		c.flags = p->flags;
		uint64_t tsc = rdtsc();
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((v & 1) || v != p->version)
			continue;
		if (!(c.flags & XENTIME_PVCLOCK_TSC_STABLE) || c.tsc_to_system_mul == 0) {
			errno = ENOTSUP;
			return -1;
		}
		*ns = xentime_pvclock_ns(&c, tsc);
		return 0;
	}
	errno = EAGAIN;
	return -1;
}

int xentime_runstate_bound(const struct xentime_runstate *a, const struct xentime_runstate *b,
    int64_t before, int64_t after, int64_t *lo, int64_t *hi)
{
	uint64_t away = 0;

	if (b->state != XENTIME_RUNNING || b->entry == a->entry) {
		errno = EAGAIN;
		return -1;
	}
	/* Times only grow, and a later state cannot begin before an earlier one. */
	if (b->entry < a->entry || after < before) {
		errno = EINVAL;
		return -1;
	}
	for (int s = XENTIME_RUNNABLE; s <= XENTIME_OFFLINE; s++) {
		if (b->time[s] < a->time[s]) {
			errno = EINVAL;
			return -1;
		}
		away += b->time[s] - a->time[s];
	}
	if (away > b->entry || b->entry > INT64_MAX) {
		errno = EINVAL;
		return -1;
	}
	*lo = (int64_t)b->entry - after;
	*hi = (int64_t)(b->entry - away) - before;
	if (*hi < *lo) { /* cannot be: the calls were not on the vCPU the clock reads saw */
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static bool meets(const struct xentime_interval *iv, int64_t lo, int64_t hi)
{
	return iv->n > 0 && lo <= iv->hi && hi >= iv->lo;
}

enum xentime_kept_step xentime_kept_add(struct xentime_kept *k, int64_t lo, int64_t hi)
{
	if (k->iv.n == 0 || meets(&k->iv, lo, hi)) {
		xentime_interval_add(&k->iv, lo, hi);
		k->missed.n = 0;
		return XENTIME_NARROWED;
	}
	if (meets(&k->missed, lo, hi)) {
		xentime_interval_add(&k->missed, lo, hi);
		k->iv = k->missed;
		k->missed.n = 0;
		return XENTIME_MOVED;
	}
	k->missed = (struct xentime_interval){ lo, hi, 1 };
	return XENTIME_SET_ASIDE;
}

bool xentime_interval_add(struct xentime_interval *iv, int64_t lo, int64_t hi)
{
	if (iv->n > 0 && lo <= iv->hi && hi >= iv->lo) {
		if (lo > iv->lo)
			iv->lo = lo;
		if (hi < iv->hi)
			iv->hi = hi;
		iv->n++;
		return true;
	}
	bool fresh = iv->n == 0;
	iv->lo = lo;
	iv->hi = hi;
	iv->n = 1;
	return fresh;
}
