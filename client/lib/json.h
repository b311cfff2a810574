/*
 * json.h - the one JSON encoding of ServerMsg, schema in docs/json.md.  Every
 * top-level object has "v" (JSON_V) and "type".  Guest strings are escaped so the
 * output is valid JSON and safe JavaScript for any bytes.
 */
#ifndef MTRACE_CLIENT_JSON_H
#define MTRACE_CLIENT_JSON_H

#include <event2/buffer.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mtrace.pb-c.h"

/* The schema's version, in every object; bumped when a field changes meaning. */
#define JSON_V "1"

/* A JSON string: ", \ and control bytes escaped, valid UTF-8 kept (U+2028/2029 as
 * \u escapes), every byte that is not UTF-8 as \u00XX (read as Latin-1). */
void json_str(struct evbuffer *b, const char *s);
/* Write b to f and drain it. */
void json_write(FILE *f, struct evbuffer *b);

/* Event i of a batch as one object (ts already summed; str the event's string or NULL). */
void json_event(
    struct evbuffer *b, const Mtrace__EventBatch *eb, size_t i, uint64_t ts, const char *str);
/* A whole EventBatch as one column object; -1 if its columns disagree. */
int json_batch(struct evbuffer *b, const Mtrace__EventBatch *eb, uint64_t recv_ms);
void json_domain_up(struct evbuffer *b, const Mtrace__DomainUp *u);
void json_domain_down(struct evbuffer *b, const Mtrace__DomainDown *d);
void json_loss(struct evbuffer *b, const Mtrace__Loss *l);
/* full: threads, labels and sites too (the per-second SSE stats leave them out). */
void json_stats(struct evbuffer *b, const Mtrace__Stats *s, bool full);
/* Any message but Events; -1 (nothing written) for a kind without an encoding. */
int json_other(struct evbuffer *b, const Mtrace__ServerMsg *m);

#endif
