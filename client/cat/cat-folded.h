/*
 * cat-folded.h - mtrace-cat -f folded: the creation tree as folded stacks (label or
 * site paths from each root thread) for flame-graph tools.  Fed every event and
 * every Stats (for the sites' names); printed once, at exit.
 */
#ifndef MTRACE_CAT_FOLDED_H
#define MTRACE_CAT_FOLDED_H

#include <stdint.h>
#include <stdio.h>

#include "mtrace.pb-c.h"

enum folded_frames {
	FOLDED_AUTO,  /* the label, else "@site" (an automatic label), else "(Type)" */
	FOLDED_LABEL, /* the label, else "(Type)" */
	FOLDED_SITE,  /* the creation site, else "(Type)" */
};

enum folded_weight {
	FOLDED_COUNT,   /* 1 per thread */
	FOLDED_PENDING, /* ns from creation to resolution (or the last event seen) */
	FOLDED_RUNNING, /* ns running (switch, read, signal) */
};

void folded_init(enum folded_frames frames, enum folded_weight weight);
void folded_event(uint32_t domid, uint8_t op, uint8_t type, uint64_t ts, int64_t thread,
    int64_t arg, const char *str);
void folded_stats(const Mtrace__Stats *s);
void folded_print(FILE *f);

#endif
