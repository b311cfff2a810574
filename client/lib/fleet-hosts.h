/*
 * fleet-hosts.h - one message of the fleet stream decoded, and what was wrong with the
 * others counted per host (docs/fleet.md, "What a reader trusts").  The stream holds
 * what anyone allowed to publish on mtrace.> put there: a message that is not one frame
 * mtrace-ship could have published on its subject is skipped and counted under the host
 * its subject names (a subject naming none: "unknown"), the log said at a rate (the
 * first one, then a summary every FLEET_LOG_EVERY_S), and the reader goes on.
 *
 * Pure (no NATS): the fleet source (fleet.c) calls it for each message, the fuzz target
 * over the NATS frame path (tests/fleet/fuzz-nats.c) for its inputs.
 */
#ifndef MTRACE_FLEET_HOSTS_H
#define MTRACE_FLEET_HOSTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/buffer.h>

#include "mtrace.pb-c.h"

#define FLEET_BAD_HOSTS   256 /* hosts with a count of their own; least recently bad go */
#define FLEET_LOG_EVERY_S 10  /* a summary of what was skipped, at most this often */
#define FLEET_NAME_MAX    256 /* a host's name: 255 bytes (subject.h) and its NUL */
/* An unpacked message takes at most this many times its bytes, and at most
 * FLEET_UNPACK_MAX: mtraced's densest (an event batch of one-byte varints) takes about 8 */
#define FLEET_UNPACK_FACTOR 16
#define FLEET_UNPACK_MAX    (64u << 20)

struct fleet_bad_host {
	char name[FLEET_NAME_MAX];
	uint64_t bad;  /* saturating */
	uint64_t seen; /* the tick of its last bad message */
};

struct fleet_hosts {
	const char *prog; /* "PROG: " on the log */
	FILE *log;        /* NULL: nothing said */
	struct fleet_bad_host hosts[FLEET_BAD_HOSTS];
	unsigned n;
	uint64_t tick;
	/* saturating */
	uint64_t good, total, unknown;
	uint64_t evicted, evicted_bad; /* hosts that made room, and their counts */
	/* the log's rate */
	int64_t logged_ms; /* monotonic; 0: nothing said yet */
	uint64_t unsaid;   /* skipped since the last line */
	/* the last message decoded: its host */
	char host[FLEET_NAME_MAX];
};

void fleet_hosts_init(struct fleet_hosts *h, const char *prog, FILE *log);
/*
 * One NATS message: its subject and its data.  0: *m is the message (arena_msg_free
 * it) and h->host the host its subject names.  -1: skipped, counted and perhaps said.
 * now_ms: a monotonic clock, for the log's rate.
 */
int fleet_decode(struct fleet_hosts *h, const char *subject, const uint8_t *data, size_t len,
    int64_t now_ms, Mtrace__ServerMsg **m);
/* The summary of what the log has not said yet, whatever the rate (at the end). */
void fleet_hosts_flush(struct fleet_hosts *h, int64_t now_ms);
/* {"total":N,"saturated":B,"unknown_host":N,"hosts_evicted":N,"evicted_hosts_bad":N,
 * "hosts":{"NAME":N,...}} (docs/json.md) */
void fleet_hosts_json(const struct fleet_hosts *h, struct evbuffer *b);

#endif
