/*
 * chrome-emit.h - trace-event JSON objects for cat-chrome.c: a separator between
 * objects, an object's head (ph, pid, tid, ts, name, cat; the caller writes the rest
 * and the closing brace), thread names, instants.
 */
#ifndef MTRACE_CHROME_EMIT_H
#define MTRACE_CHROME_EMIT_H

#include <stdint.h>
#include <stdio.h>

void chrome_emit_reset(void);
/* A JSON string (json_str of client/lib/json.h) onto f. */
void cat_json_str(FILE *f, const char *s);
void chrome_sep(FILE *f);
void chrome_put_ts(FILE *f, uint64_t ns);
void chrome_head(FILE *f, const char *ph, uint32_t pid, uint32_t tid, uint64_t ts, const char *name,
    const char *cat);
void chrome_thread_name(FILE *f, uint32_t pid, uint32_t tid, const char *name);
void chrome_instant(
    FILE *f, uint32_t domid, uint32_t tid, uint64_t ts, const char *name, const char *cat);

#endif
