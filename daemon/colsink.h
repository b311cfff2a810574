/*
 * colsink.h - where one pass over decoded events writes their stream columns as it
 * reads them: the state's pass (state_apply_cols) fills them event by event, so that a
 * decoded array is read once (deliver.c); the stream's own pass (colsink_fill) does the
 * same without the state.  The stream says where the columns are and how many events
 * they take (stream-columns.c, stream_columns_sink) and checks the events' strings
 * after the pass (stream_columns_commit).  Per event: its delta, five stores and a
 * note of whether it has a string.
 */
#ifndef MTRACED_COLSINK_H
#define MTRACED_COLSINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring-reader.h"

/* Events one pass hands the columns at most (a decoded array is 512). */
#define COLSINK_MAX 1024u

struct colsink {
	/* Before the pass: events [0, m) go to the columns (0: none).  After: those that
	 * went, up to the first whose delta from the one before does not fit 32 bits. */
	size_t m;
	size_t ns;        /* of those, the ones with a string: at[0, ns) */
	uint64_t last_ts; /* the columns' last timestamp; after the pass, the pass's */
	/* the columns at their next event */
	int32_t *dts;
	uint8_t *op, *type;
	int64_t *thread, *arg;
	uint16_t at[COLSINK_MAX];
};

/*
 * The pass's copy of a sink, kept in registers by its loop: fields of a struct in
 * memory would be reloaded after every store to a column (the build has
 * -fno-strict-aliasing, and a column of int64_t may alias anything).
 */
struct colsink_run {
	size_t m, ns;
	uint64_t last;
	int32_t *dts;
	uint8_t *op, *type;
	int64_t *thread, *arg;
	uint16_t *at;
};

static inline __attribute__((always_inline)) struct colsink_run colsink_start(struct colsink *k)
{
	return (struct colsink_run){ k->m, 0, k->last_ts, k->dts, k->op, k->type, k->thread, k->arg,
		k->at };
}

static inline __attribute__((always_inline)) void colsink_finish(
    struct colsink *k, const struct colsink_run *r)
{
	k->m = r->m;
	k->ns = r->ns;
	k->last_ts = r->last;
}

/* Event i of the pass (i < r->m) into the columns, or the pass's columns end before
 * it: a delta past 32 bits (a clock stepped back, or a jump of over 2 s) starts a new
 * batch, which the stream's checked path does.  str: e's op carries a string
 * (MTRACE_OPF_STR, from whichever table of ops the caller has at hand). */
static inline __attribute__((always_inline)) void colsink_put(
    struct colsink_run *r, size_t i, const struct mtrace_event *e, unsigned str)
{
	uint64_t d = e->ts - r->last;

	if (__builtin_expect((int64_t)(int32_t)d != (int64_t)d, 0)) {
		r->m = i;
		return;
	}
	r->dts[i] = (int32_t)d;
	r->op[i] = e->op;
	r->thread[i] = (int64_t)e->thread;
	r->arg[i] = (int64_t)e->arg;
	r->type[i] = e->type;
	r->last = e->ts;
	r->at[r->ns] = (uint16_t)i;
	r->ns += str;
}

/* The pass without the state: ev[0, k->m) into the columns. */
static inline void colsink_fill(struct colsink *k, const struct mtrace_event *restrict ev)
{
	struct colsink_run r = colsink_start(k);

	for (size_t i = 0; i < r.m; i++)
		colsink_put(&r, i, &ev[i], mtrace_op_flags[ev[i].op] & MTRACE_OPF_STR);
	colsink_finish(k, &r);
}

#endif
