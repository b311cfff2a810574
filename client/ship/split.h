/*
 * split.h - a message too big for the NATS server (its max_payload, which it tells every
 * client) cut into messages that fit and say the same, so that nothing mtraced sends is
 * refused for its size (docs/fleet.md, "Messages over max_payload"):
 *
 *   EventBatch  consecutive batches of the same domain and ring, each with its own
 *               base_ts (its first event's time) and its own strings; every part keeps
 *               the batch's first_seq (mtraced's sequence number of the first event of
 *               the batch it came from).
 *   Stats       one Stats per group of domains, all with the same time_ns; the tables
 *               (labels, threads, sites, site edges) go with the first and are cut, as
 *               mtraced cuts its own to fit its frame, when they take more than half
 *               the room (each cut counted in its *_omitted); a domain too big alone
 *               has its counters cut (counters_omitted).
 *
 * Anything else (a Goodbye with a reason of 100 KiB, a batch whose one event does not
 * fit) cannot be cut.
 */
#ifndef MTRACE_SHIP_SPLIT_H
#define MTRACE_SHIP_SPLIT_H

#include <stddef.h>
#include <stdint.h>

struct split {
	size_t n;
	uint8_t **frame; /* n frames of the recording format, each at most the limit */
	size_t *len;
	uint32_t *events; /* in each (a batch's events; 0 for a Stats) */
};

/*
 * frame (len bytes, one frame of a ServerMsg) cut into frames of at most limit bytes:
 * 1 with *out filled (split_free it), 0 when it fits already, -1 when it cannot be cut
 * (or is not a frame, or memory ran out).
 */
int split_frame(const uint8_t *frame, size_t len, size_t limit, struct split *out);
void split_free(struct split *s);

#endif
