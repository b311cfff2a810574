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

void cat_chrome_begin(FILE *f);
void cat_chrome_domain_up(FILE *f, uint32_t domid, const char *name);
void cat_chrome_domain_down(FILE *f, uint32_t domid);
void cat_chrome_event(FILE *f, const Mtrace__EventBatch *b, size_t i, uint64_t ts, const char *str);
void cat_chrome_end(FILE *f);
/* For cat-chrome-vcpu.c: a time on the guests' clock on the output's axis (ns from the
 * origin, the first time given; false when before it, *rel 0), and the writer with the
 * domain's process named.  NULL when out of memory. */
struct chrome_emit;
bool cat_chrome_time(uint64_t ts, uint64_t *rel);
struct chrome_emit *cat_chrome_domain(FILE *f, uint32_t domid);

/* cat-chrome-vcpu.c: a domain's vCPU intervals as tracks of its process (issue 38). */
void cat_chrome_vcpu(FILE *f, const Mtrace__VcpuIntervals *v);
void cat_chrome_vcpu_end(void); /* says what it left out, forgets its tracks */

#endif
