/*
 * sat.h - sums that saturate: a count of what a reader was sent (a Loss notice says
 * 2^63, twice) stops at UINT64_MAX instead of wrapping to a small number; whoever shows
 * one that reached it says so (">=", "saturated").
 */
#ifndef MTRACE_SAT_H
#define MTRACE_SAT_H

#include <stdbool.h>
#include <stdint.h>

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* *sum += v, saturating. */
static inline void sat_inc(uint64_t *sum, uint64_t v)
{
	*sum = sat_add(*sum, v);
}

static inline bool sat_full(uint64_t v)
{
	return v == UINT64_MAX;
}

#endif
