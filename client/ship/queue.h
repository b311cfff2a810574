/*
 * queue.h - mtrace-ship's publish queue: every message, in the order mtraced sent it,
 * from queue_put until JetStream has acknowledged it.
 *
 *   - Pipelined: up to max_pending publishes in flight; their acknowledgements come back
 *     through the loop (jetstream.h) while the next ones go out.
 *   - Ordered retry: at the first failure nothing new goes out; once every publish out
 *     there has answered (acknowledged or failed), the oldest one not acknowledged is sent
 *     again alone, with its message id, until it is acknowledged (then the rest follow in
 *     order) or retry_ms have passed; a publish on a new connection never overtakes one
 *     still out on the old.  Order per subject is kept, and what was stored twice is
 *     dropped by the stream's de-duplication.
 *   - The spool behind it: when the retries run out (NATS away), every message not
 *     acknowledged goes to the spool in order, and so does what comes until the spool is
 *     drained again (pipelined too, records leaving the file as they are acknowledged).
 *     Without a spool they are dropped, counted, and told downstream as a Loss notice.
 *   - Bounded: at most queue_max bytes wait in memory (while a failure is resolved, or
 *     when NATS takes less than mtraced sends); beyond that event batches and Stats are
 *     dropped and counted, as mtraced itself drops for a client that reads too slowly,
 *     and the messages readers need to read what arrived at most as much again
 *     (queue_put).
 *   - Never stuck on one message: one over the server's max_payload is cut into parts
 *     that fit (split.h); one no retry would get into the stream (too big still, a
 *     subject the server refuses, an id the stream already had) is set aside, counted
 *     and told downstream as a loss; a spooled record this shipper may not publish
 *     (record.h) is skipped and counted.  The rest goes on.
 */
#ifndef MTRACE_SHIP_QUEUE_H
#define MTRACE_SHIP_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "figures.h"
#include "jetstream.h"
#include "spool.h"

struct queue_config {
	unsigned max_pending; /* publishes in flight at most */
	uint64_t queue_max;   /* bytes waiting in memory at most */
	unsigned retry_ms;    /* a failed publish is sent again for this long, then spooled */
};

struct ship_queue;

/* A queue on base publishing through l; sp may be NULL (no spool). */
struct ship_queue *queue_new(
    struct event_base *base, struct jsl *l, struct spool *sp, const struct queue_config *c);
void queue_free(struct ship_queue *q);

/* Who the queue publishes as: its own Loss notices go to mtrace.<host>._.events with ids
 * of id_base (msgid.h), and spooled records are checked against host_tok; the spool is
 * sent only once this is known. */
void queue_set_host(struct ship_queue *q, const char *host_tok, const char *id_base);

/*
 * One message (a frame of the recording format) to publish, copied.  spare: one that may
 * be dropped when queue_max bytes wait (an Events batch, counted and told downstream as a
 * loss; a Stats, which the next supersedes).  The others (Hello, DomainUp and Down,
 * ClockMap, EvtchnLink, Loss, Error, Goodbye: what a reader needs to read the events
 * that did arrive) may use a second queue_max beyond the first, and only past that are
 * dropped (counted).
 */
void queue_put(struct ship_queue *q, const char *subject, const char *id, const uint8_t *data,
    size_t len, uint32_t events, bool spare);

/*
 * The end: what waits is published (or spooled when NATS is away, or dropped without a
 * spool); NATS away at the start is given up to retry_ms to come back.  done(arg) is
 * called once when nothing is left to do.
 */
void queue_flush(struct ship_queue *q, void (*done)(void *arg), void *arg);

void queue_figures(struct ship_queue *q, struct ship_figures *f);
/* "mtrace-ship: WHEN: shipped=... " on stderr. */
void queue_log(struct ship_queue *q, const char *when);

#endif
