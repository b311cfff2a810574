/*
 * xenif-xen-clock.h - Xen system time on real Xen (xenif-xen-clock.c), for the real
 * backend's clock_sample and clock_pair.
 */
#ifndef MTRACE_XENIF_XEN_CLOCK_H
#define MTRACE_XENIF_XEN_CLOCK_H

#include <stdbool.h>
#include <time.h>

#include "xenif.h"

struct xen_clock;

/* Find a source (never fails for want of one: pair then says ENOTSUP); NULL if out of
 * memory.  keep: a long-lived reader's, narrowed by a thread from now on (.c file). */
struct xen_clock *xenif_xen_clock_open(bool keep);
void xenif_xen_clock_close(struct xen_clock *c);
/* Xen system time and clk read together; -1/ENOTSUP where no source is open to us. */
int xenif_xen_clock_pair(struct xen_clock *c, clockid_t clk, struct xenif_clock_pair *p);

#endif
