/*
 * metrics.h - mtrace-ship's own figures on its own /metrics (Prometheus text format),
 * served by the project's HTTP front (http-front.h) from a thread of its own, so that
 * the shipper's blocking publish loop never waits for a scrape nor a scrape for it.
 */
#ifndef MTRACE_SHIP_METRICS_H
#define MTRACE_SHIP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the shipper counts (docs/fleet.md, "Delivery"), copied out whole at each update. */
struct ship_figures {
	uint64_t shipped, shipped_bytes, spooled, drained, dropped_msgs, dropped_events;
	uint64_t loss_published, retried;
	uint64_t in_spool, spool_bytes; /* now */
	unsigned acks_pending;          /* publishes waiting for their acknowledgement */
	bool nats_up, mtraced_up;
};

struct ship_metrics;

/* Listen on spec (hf_parse_listen's forms) and serve from a new thread; NULL with err. */
struct ship_metrics *ship_metrics_start(const char *spec, char *err, size_t errlen);
/* The figures the next scrape shows. */
void ship_metrics_update(struct ship_metrics *m, const struct ship_figures *f);
/* Stop the thread, close the listener. */
void ship_metrics_stop(struct ship_metrics *m);

#endif
