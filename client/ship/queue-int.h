/*
 * queue-int.h - the publish queue's state, shared by its three files: queue.c (the
 * states, the publishes and queue.h's interface), queue-aside.c (what leaves the queue
 * without being published: the accounting, the Loss notices, the spool's records checked
 * and messages cut to fit, the log's rate limits) and queue-ring.c (the ring of
 * entries), each calling only the ones after it.
 */
#ifndef MTRACE_SHIP_QUEUE_INT_H
#define MTRACE_SHIP_QUEUE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "figures.h"
#include "jetstream.h"
#include "msgid.h"
#include "spool.h"

#define MSG_ID_HDR "Nats-Msg-Id"

enum {
	E_WAIT,
	E_FLIGHT,
	E_FAILED,
	E_ACKED,
	E_ASIDE /* settled without being stored: why says why */
};

/* Why an entry was set aside (each counted in its figure, docs/fleet.md). */
enum {
	W_BAD,     /* a spooled record this shipper may not publish (record.h) */
	W_TOO_BIG, /* over the server's max_payload and not to be cut (split.h) */
	W_REFUSED, /* the server refuses its subject (permissions), or its size */
	W_TAKEN,   /* the stream had its id before it was ever sent */
};

/* Kinds of log lines, each at most a few every few seconds (the rest counted). */
enum {
	SAY_BAD,
	SAY_TOO_BIG,
	SAY_REFUSED,
	SAY_TAKEN,
	SAY_NATS,
	SAY_LOSS,
	SAY_N
};

struct entry {
	natsMsg *m;     /* NULL once settled; the library's while in flight */
	uint64_t loss;  /* a Loss notice of this many events (0: one of mtraced's messages) */
	double sent_at; /* of its last publish */
	uint32_t len, events;
	uint8_t state, why;
	uint8_t tries; /* publishes so far (at most 255 counted) */
	bool spooled;  /* read from the spool: read again after a give-up, never put aside */
	bool pops;     /* its leaving drops the spool's head record (the last part of one) */
};

struct ship_queue {
	struct event_base *base;
	struct jsl *js;
	struct spool *spool;
	struct {
		unsigned max_pending, retry_ms;
		uint64_t queue_max;
	} c; /* queue.h's queue_config, as given */
	struct event *wake, *timer;
	/* entries [head, head + n) of the ring, in publish order; [0, next) of them were
	 * sent in this pass (in flight, acknowledged or set aside) */
	struct entry *v;
	size_t cap, head, n, next;
	uint64_t bytes;
	unsigned in_flight;
	uint64_t flight_gen; /* the connection those in flight went out on */
	/* hold */
	bool hold, probing, refused;
	double hold_until, next_probe;
	unsigned pause_ms;
	/* away */
	bool away, was_away, acked_since_try, spool_broken;
	double next_try;
	uint64_t drained_at_away;
	/* this shipper's own losses */
	uint64_t pending_loss, loss_seq;
	bool loss_queued, queue_full_said;
	double loss_pause_until; /* a Loss notice refused: the next one not before */
	/* who we publish as: set with mtraced's Hello (or --host); the spool waits for it */
	char host_tok[SUBJECT_TOKEN_MAX], loss_subject[16 + SUBJECT_TOKEN_MAX];
	char id_base[MSGID_BASE_MAX];
	/* the log's rate limits */
	double say_window[SAY_N];
	unsigned say_n[SAY_N];
	uint64_t say_unsaid[SAY_N];
	/* the end */
	bool flushing;
	double flush_until;
	void (*done)(void *);
	void *done_arg;
	struct jsl_done *took;
	struct ship_figures fig;
};

/* queue-ring.c */
struct entry *q_at(struct ship_queue *q, size_t i);
struct entry *q_push(
    struct ship_queue *q, natsMsg *m, uint32_t events, uint64_t loss, bool spooled);
natsMsg *q_message(const char *subject, const char *id, const uint8_t *data, size_t len);
double q_mono(void);

/* queue-aside.c */
/* A log line of kind k, unless a few were said in the last seconds (then counted, and
 * the count said with the next line of the kind). */
void q_say(struct ship_queue *q, unsigned k, double now, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Messages neither published nor spooled: counted, and told in a Loss notice. */
void q_lose(struct ship_queue *q, uint32_t events);
/* The Loss notice of what was lost, queued behind everything (when there is one). */
void q_put_loss(struct ship_queue *q, double now);
/* e, acknowledged or set aside, leaves the queue: counted, its spool record dropped. */
void q_leave(struct ship_queue *q, struct entry *e, double now);
/* e settled without being published, for why (W_*). */
void q_aside(struct ship_queue *q, struct entry *e, unsigned why, double now);
/* Entry i made to fit the server's max_payload before it is published: 0 (it fits, or
 * it is now the first of its parts, which do), or 1 when it is set aside. */
int q_fit(struct ship_queue *q, size_t i, double now);
/* The spool's next record into the queue, checked (record.h): 1, 0 none left, -1 error. */
int q_read_spooled(struct ship_queue *q, double now);

#endif
