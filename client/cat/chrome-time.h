/*
 * chrome-time.h - the time of mtrace-cat -f chrome's trace (cat-chrome.c writes its
 * objects): written aside with host times, made relative to the smallest at the end,
 * the metadata with every domain's clock map, and event-channel pairs as arrows
 * between domains when they are ordered, said so when not.
 */
#ifndef MTRACE_CHROME_TIME_H
#define MTRACE_CHROME_TIME_H

#include <stdint.h>
#include <stdio.h>

#include "chrome-emit.h"
#include "timeline.h"

/* What became of the pairs. */
struct chrome_pairs {
	uint64_t arrows;           /* ordered: an arrow "evtchn" */
	uint64_t uncertain_arrows; /* forward, but within the uncertainty: "evtchn_uncertain" */
	uint64_t not_drawn;        /* backward or unmapped: a marker on the receive instead */
};

/* A temporary file for the objects (in $TMPDIR, else /tmp), NULL when none can be made. */
FILE *chrome_body_open(void);
/* A pair's arrow or marker; the ends' user is the track of their instant, user2 the
 * time it was written at. */
void chrome_pair(struct chrome_emit *e, struct chrome_pairs *pc, FILE *f, const struct tl_pair *p);
/* The whole trace to out: the array (body rebased, then closed; NULL: the objects went
 * to out already, with absolute times), then the metadata.  -1 on a write error. */
int chrome_finish(FILE *out, FILE *body, const struct chrome_emit *e, const struct chrome_pairs *pc,
    const struct tl *tl, uint64_t clamped);

#endif
