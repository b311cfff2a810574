/*
 * chrome-emit.h - trace-event JSON objects for cat-chrome.c: a separator between
 * objects, an object's head (ph, pid, tid, ts, name, cat; the caller writes the rest
 * and the closing brace), process and thread names, instants, counters and flows.
 */
#ifndef MTRACE_CHROME_EMIT_H
#define MTRACE_CHROME_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "thread-table.h"

struct evbuffer;

/* The writer of one trace-event array, owned by the converter's state: whether an
 * object was written yet (no separator before the first), and the buffer strings are
 * escaped in (json_str), made at the first string and freed by chrome_emit_free. */
struct chrome_emit {
	struct evbuffer *str;
	uint64_t flow_id; /* the last flow's */
	uint64_t min_ts;  /* the smallest ts written (with any_ts): the trace's base */
	bool first, any_ts;
};

/* A new array: its first object has no separator, its first flow is 1. */
void chrome_emit_reset(struct chrome_emit *e);
void chrome_emit_free(struct chrome_emit *e);
/* A JSON string (json_str of client/lib/json.h) onto f. */
void chrome_str(struct chrome_emit *e, FILE *f, const char *s);
void chrome_sep(struct chrome_emit *e, FILE *f);
void chrome_put_ts(FILE *f, uint64_t ns);
void chrome_head(struct chrome_emit *e, FILE *f, const char *ph, uint32_t pid, uint32_t tid,
    uint64_t ts, const char *name, const char *cat);
void chrome_thread_name(
    struct chrome_emit *e, FILE *f, uint32_t pid, uint32_t tid, const char *name);
/* Whole objects: a process's name, a counter's value, a flow arrow (its start on from's
 * track, its end on to's, numbered here). */
void chrome_process_name(struct chrome_emit *e, FILE *f, uint32_t pid, const char *name);
void chrome_counter(
    struct chrome_emit *e, FILE *f, uint32_t pid, uint64_t ts, const char *name, int64_t v);
void chrome_flow(struct chrome_emit *e, FILE *f, uint32_t pid, uint32_t from, uint32_t to,
    uint64_t ts, const char *cat);
void chrome_instant(struct chrome_emit *e, FILE *f, uint32_t domid, uint32_t tid, uint64_t ts,
    const char *name, const char *cat);
/* A flow arrow from one process's track at one time to another's at another (an
 * event-channel send and its receive); the caller writes the f's args, if any, and
 * its closing brace. */
void chrome_flow_between(struct chrome_emit *e, FILE *f, uint32_t pid_a, uint32_t tid_a,
    uint64_t ts_a, uint32_t pid_b, uint32_t tid_b, uint64_t ts_b, const char *cat);

/* Counter tracks: the running sum of each (domain, counter name), kept for the
 * first COUNTERS_MAX names; an increase adds to it, a counter sets it. */
struct chrome_counters {
	struct ttab t; /* (domid, hash of name) */
};
void chrome_counters_init(struct chrome_counters *cs);
void chrome_counters_free(struct chrome_counters *cs);
void chrome_counter_event(struct chrome_emit *e, struct chrome_counters *cs, FILE *f,
    uint32_t domid, const char *name, int64_t v, bool delta, uint64_t ts);

/*
 * The objects are written with ts on the host timeline (ns since the epoch, as µs);
 * the trace's time base is the smallest of them, known only at the end.  Copy in to
 * out with every "ts" made relative to base: 0, or -1 on a read or write error.
 */
int chrome_rebase(FILE *in, FILE *out, uint64_t base);

#endif
