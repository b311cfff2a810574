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

struct evbuffer;

/* The writer of one trace-event array, owned by the converter's state: whether an
 * object was written yet (no separator before the first), and the buffer strings are
 * escaped in (json_str), made at the first string and freed by chrome_emit_free. */
struct chrome_emit {
	struct evbuffer *str;
	uint64_t flow_id; /* the last flow's */
	bool first;
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

#endif
