/*
 * ship.h - mtrace-ship's state, one struct passed down: the options, the loop, the
 * session with mtraced (frames.c), the publish queue with the JetStream link and the
 * spool behind it (queue.h), the metrics endpoint, and the way out (main.c).
 */
#ifndef MTRACE_SHIP_SHIP_H
#define MTRACE_SHIP_SHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "jetstream.h"
#include "metrics.h"
#include "msgid.h"
#include "queue.h"
#include "session.h"
#include "ship-args.h"
#include "spool.h"
#include "subject.h"

#define SHIP_MAX_DOMID 65536u

struct ship {
	struct ship_opts o;
	struct event_base *base;
	struct jsl *js;
	struct spool *spool;
	struct ship_queue *q;
	struct ship_metrics *metrics;

	/* mtraced's side (frames.c) */
	struct mtc_session *session;
	bool mtraced_up;
	char host_tok[SUBJECT_TOKEN_MAX];
	char id_base[MSGID_BASE_MAX]; /* the host and 128 random bits, per connection */
	uint64_t seq;                 /* of the last message id on it */
	char **dom_tok;               /* SHIP_MAX_DOMID subject tokens, by domid */
	uint8_t *frame;               /* a message packed again, as mtraced sent it */
	size_t frame_cap;

	/* the way out (main.c): SIGTERM, then what mtraced already sent, then the queue */
	int sig_fd;
	struct event *sig_ev, *tail_ev, *log_ev;
	bool stopping;
	double tail_until;
};

#endif
