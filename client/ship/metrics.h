/*
 * metrics.h - mtrace-ship's own figures on its own /metrics (Prometheus text format),
 * served by the project's HTTP front (http-front.h) on the shipper's loop: a scrape
 * reads the figures as they are at that turn of the loop.
 */
#ifndef MTRACE_SHIP_METRICS_H
#define MTRACE_SHIP_METRICS_H

#include <stddef.h>

#include <event2/event.h>

#include "figures.h"

struct ship_metrics;

/* Listen on spec (hf_parse_listen's forms) on base; each scrape asks fill(arg) for the
 * figures.  NULL with err. */
struct ship_metrics *ship_metrics_start(struct event_base *base, const char *spec,
    void (*fill)(void *arg, struct ship_figures *f), void *arg, char *err, size_t errlen);
/* Close the listener and its connections. */
void ship_metrics_stop(struct ship_metrics *m);

#endif
