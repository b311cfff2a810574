/*
 * cat-chrome.h - Chrome trace-event JSON for Perfetto UI (ui.perfetto.dev) and
 * chrome://tracing, built for causality: a process per domain, a track per thread
 * named from its labels, each thread a slice from creation to resolve or fail with its
 * running intervals inside, flow arrows for creates, reads, resolves, signals and
 * becomes, counter tracks, GC slices, event-channel instants.
 *
 * Streamed: events are written as they come; the only state is per live thread,
 * per ring and per counter name.  Every slice still open is closed by cat_chrome_end
 * (or when its domain goes down).
 */
#ifndef MTRACE_CAT_CHROME_H
#define MTRACE_CAT_CHROME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mtrace.pb-c.h"
#include "timeline.h"

/* The trace goes to f at cat_chrome_end; until then its objects are written aside (a
 * temporary file), their times on the host timeline: the trace's base, its smallest
 * time, is known only at the end. */
void cat_chrome_begin(FILE *f);
void cat_chrome_domain_up(FILE *f, uint32_t domid, const char *name);
void cat_chrome_domain_down(FILE *f, uint32_t domid);
/* Event i at host time `at` (timeline.h); returns the track of its instant for an
 * event-channel send or receive (the end of a pair; *written: its time), else 0. */
uint32_t cat_chrome_event(FILE *f, const Mtrace__EventBatch *b, size_t i, const struct tl_time *at,
    const char *str, uint64_t *written);
/* A pair of an event-channel send and its receive: an arrow when it is ordered, said so
 * when not (chrome-time.c). */
void cat_chrome_pair(FILE *f, const struct tl_pair *p);
/* The trace to f: every time relative to the base, the metadata with the clocks of tl
 * (NULL: none) and what was paired.  -1 when the trace could not be written. */
int cat_chrome_end(FILE *f, const struct tl *tl);
/* For cat-chrome-vcpu.c: the writer with the domain's process named, *f set to where
 * the objects go (aside until the end, host times); NULL when out of memory. */
struct chrome_emit;
struct chrome_emit *cat_chrome_domain(FILE **f, uint32_t domid);

/* cat-chrome-vcpu.c: a domain's vCPU intervals as tracks of its process (issue 38). */
void cat_chrome_vcpu(FILE *f, const Mtrace__VcpuIntervals *v);
void cat_chrome_vcpu_end(void); /* says what it left out, forgets its tracks */

#endif
