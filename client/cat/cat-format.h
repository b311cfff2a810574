/*
 * cat-format.h - mtrace-cat's printers: one ServerMsg as human text or JSON lines.
 * Guest-chosen strings are escaped in both forms so that a trace can never drive
 * the terminal or break a JSON reader.
 */
#ifndef MTRACE_CAT_FORMAT_H
#define MTRACE_CAT_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mtrace.pb-c.h"
#include "timeline.h"

enum cat_format {
	CAT_TEXT,
	CAT_JSON,
	CAT_PROTO,
	CAT_COUNT,
	CAT_CHROME,
	CAT_CTF,
	CAT_FOLDED
};

/* Domain names learnt from DomainUp, for the text form. */
void cat_names_note(uint32_t domid, const char *name);
const char *cat_names_get(uint32_t domid);

/*
 * Print event i of batch b as text or a JSON line (ts already summed by the caller, at its
 * place on the host timeline: printed too when known).  str is the batch's string for
 * this event or NULL.
 */
void cat_event(FILE *f, enum cat_format fmt, const Mtrace__EventBatch *b, size_t i, uint64_t ts,
    const struct tl_time *at, const char *str);
/* An event-channel send paired with its receive (text and JSON). */
void cat_pair(FILE *f, enum cat_format fmt, const struct tl_pair *p);
/* Print any non-event message. */
void cat_other(FILE *f, enum cat_format fmt, const Mtrace__ServerMsg *m);

#endif
