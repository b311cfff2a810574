/*
 * figures.h - what mtrace-ship counts (docs/fleet.md, "Delivery"): in its log every
 * --log-every seconds and at exit, and on its /metrics.
 */
#ifndef MTRACE_SHIP_FIGURES_H
#define MTRACE_SHIP_FIGURES_H

#include <stdbool.h>
#include <stdint.h>

struct ship_figures {
	uint64_t shipped, shipped_bytes, spooled, drained, dropped_msgs, dropped_events;
	uint64_t loss_published, retried;
	uint64_t split;     /* messages cut to fit the server's max_payload */
	uint64_t set_aside; /* messages no server would take (too big, subject refused) */
	uint64_t taken;     /* messages whose id the stream had before they were sent */
	uint64_t spool_bad; /* spooled records this shipper may not publish, skipped */
	uint64_t in_spool, spool_bytes; /* now */
	unsigned acks_pending;          /* publishes waiting for their acknowledgement now */
	unsigned acks_pending_max;      /* the most at once since the start */
	bool nats_up, mtraced_up;
};

#endif
