/*
 * fleet-skew.h - how each host's clock relates to the NATS server's, measured by a
 * reader of the fleet stream (docs/fleet.md, "The hosts' clocks").  A host's timeline
 * is its dom0's CLOCK_REALTIME (docs/stream-protocol.md §4); JetStream stamps every
 * message it stores with its own clock.  A Stats carries the time mtraced read its
 * clock as it made it (time_ns), and the server stored it later, so for each one
 *
 *     time_ns - stored = skew - latency      (latency: mtraced -> mtrace-ship -> stored, >= 0)
 *
 * and the largest of these over a window is the best lower bound of the skew: the
 * host's clock is at least that far ahead of the server's (behind, when negative),
 * and more by the latency of that quickest message, which no reader can know.
 *
 * Only a host's own messages measure it: a host that lies about its time (any host's
 * publisher may) moves its own estimate and no other's.  Every difference saturates.
 * The window is two halves of FLEET_SKEW_HALF_S of stored time (the current and the
 * one before), so a host whose clock was stepped shows its new skew within a minute.
 *
 * Pure (no NATS): the fleet source (fleet.c) feeds it each message decoded.
 */
#ifndef MTRACE_FLEET_SKEW_H
#define MTRACE_FLEET_SKEW_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "fleet-hosts.h"
#include "mtrace.pb-c.h"

#define FLEET_SKEW_HOSTS  256 /* hosts measured at once; the least recently heard goes */
#define FLEET_SKEW_HALF_S 30  /* of stored time: the window is two of them */

/* A host's clock against the server's, as far as the window shows. */
struct fleet_skew_est {
	int64_t skew_ns;    /* the host's clock minus the server's is at least this */
	uint64_t spread_ns; /* the window's largest time_ns - stored minus its smallest: how
	                     * much the latency varied (the slowest was at least this) */
	uint32_t samples;   /* Stats in the window */
};

struct fleet_skew_host {
	char name[FLEET_NAME_MAX];
	uint64_t seen;         /* the tick of its last sample */
	int64_t half_start_ns; /* stored time at which the current half began */
	int64_t max[2], min[2];
	uint32_t n[2]; /* [0]: the current half, [1]: the one before */
	struct fleet_skew_est est;
};

struct fleet_skews {
	struct fleet_skew_host hosts[FLEET_SKEW_HOSTS];
	unsigned n, last; /* last: the host of the last sample (most come in runs) */
	uint64_t tick;
	uint64_t evicted; /* hosts let go to make room (their measure starts again) */
};

/*
 * A decoded message of host, stored at stored_ns (the server's clock, ns since the
 * epoch; 0: not known).  A Stats is a sample: the host's estimate after it (valid until
 * the next call), else NULL.
 */
const struct fleet_skew_est *fleet_skew_msg(
    struct fleet_skews *s, const char *host, const Mtrace__ServerMsg *m, int64_t stored_ns);
/* [host_skew,...] of every host measured (docs/json.md) */
void fleet_skews_json(const struct fleet_skews *s, struct evbuffer *b);

#endif
