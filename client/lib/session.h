/*
 * session.h - a reader's session on the caller's libevent loop, over any source of
 * records (source.h): mtraced (connect, Hello, Subscribe, Error and Goodbye, the one
 * reconnect policy of every client), a recording, or the fleet stream.  Programs get
 * callbacks for messages and for the link going up or down; what a message means stays
 * in the program.  The program's subscription is mtraced's to apply, or, for stored
 * records, the session's (select.h): the same filters whatever the source.  For simple
 * tools that block, mtc_open and mtc_open_wait connect to mtraced on a plain struct mtc
 * (mtrace-client.h).
 */
#ifndef MTRACE_SESSION_H
#define MTRACE_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "mtrace-client.h"
#include "source.h"

/*
 * The reconnect policy of every client: the first try again after 250 ms, each next
 * one waits twice as long, never more than 5 s.  A restarting mtraced is back within
 * the first few tries; a stopped one costs a connect() every 5 s.
 */
#define MTC_RETRY_FIRST_MS 250u
#define MTC_RETRY_MAX_MS   5000u
/* The wait before try number attempt (0, 1, ...) after the link went down. */
unsigned mtc_retry_ms(unsigned attempt);

/* Why a session went down. */
enum mtc_down_kind {
	MTC_DOWN_CONNECT, /* the connection or its Hello failed */
	MTC_DOWN_LOST,    /* the socket closed or a frame was bad */
	MTC_DOWN_ERROR,   /* mtraced sent Error */
	MTC_DOWN_GOODBYE, /* mtraced sent Goodbye (it stops or restarts) */
	MTC_DOWN_END,     /* the records ended: a recording's end, the stream read to its end */
};

struct mtc_down {
	enum mtc_down_kind kind;
	Mtrace__Error__Code code; /* MTC_DOWN_ERROR only */
	/* Another connection may well be taken: anything but an Error about the request
	 * itself (a place or a deadline are worth waiting for), or the end. */
	bool transient;
	/* The source brings the link back itself (libnats reconnects to NATS): the session
	 * neither closes nor retries, and on_down's answer is not asked; on_up follows. */
	bool recovers;
	int errnum;      /* MTC_DOWN_LOST: errno, 0 when mtraced closed the link */
	const char *why; /* a sentence for the user */
};

/*
 * Whether m (Error or Goodbye) ends the link: true with d filled in (d->why points into
 * why), else false.  The session uses it; blocking tools call it on what mtc_next gave.
 */
bool mtc_msg_ends(const Mtrace__ServerMsg *m, struct mtc_down *d, char *why, size_t whylen);

/* on_msg's answer, or-ed. */
#define MTC_MSG_KEPT  0x1 /* the program keeps the message (frees it with mtc_msg_free) */
#define MTC_MSG_YIELD 0x2 /* stop reading for this loop turn; go on at the next */

struct mtc_session;

struct mtc_session_ops {
	const char *software; /* for the Hello ("mtrace-top 1.2") */
	/* What the program asks for: fill sub in (it starts as MTRACE__SUBSCRIBE__INIT;
	 * what it points to must last until the next call).  mtraced selects by it; for
	 * stored records the session does (select.h).  NULL: subscribe instead. */
	void (*subscription)(Mtrace__Subscribe *sub, void *arg);
	/* Or send the program's Subscribe itself on a new connection to mtraced
	 * (mtc_subscribe): 0, or -1 with errno.  Stored records are then not selected. */
	int (*subscribe)(struct mtc *c, void *arg);
	/* Every message after Hello but Error and Goodbye, which take a link to mtraced
	 * down (and reach on_msg first with see_ends).  In stored records they are what a
	 * daemon said then: messages like the others. */
	unsigned (*on_msg)(struct mtc_session *s, Mtrace__ServerMsg *m, void *arg);
	/* Optional: the end of a loop turn that delivered n > 0 messages. */
	void (*on_turn)(struct mtc_session *s, unsigned n, void *arg);
	/* Optional: the link is up (subscribed); h is the daemon's Hello (NULL for stored
	 * records, where the Hello is a message). */
	void (*on_up)(struct mtc_session *s, const Mtrace__Hello *h, void *arg);
	/* The link is down (or a try failed), or the records ended.  Return true to try
	 * again when the policy says, false to stay down (the end is never tried again).
	 * NULL: always try again. */
	bool (*on_down)(struct mtc_session *s, const struct mtc_down *d, void *arg);
	/* mtraced's Error and Goodbye go to on_msg too, before the link goes down (a
	 * program that prints or records them). */
	bool see_ends;
};

/* What the session counted, across reconnections. */
struct mtc_session_counts {
	uint64_t connects;           /* links that came up */
	uint64_t messages;           /* delivered to on_msg */
	uint64_t events;             /* operations in Events messages */
	uint64_t lost_in_ring;       /* sums of the Loss notices */
	uint64_t dropped_for_client; /* ... */
};

/*
 * A session on base with mtraced at path (NULL: mtc_default_socket()).  Nothing is
 * connected yet: call mtc_session_connect (now, with an error for the user) or
 * mtc_session_start (from the loop, failures to on_down).  ops is copied; arg is the
 * callbacks' own.  NULL with errno on failure.
 */
struct mtc_session *mtc_session_new(
    struct event_base *base, const char *path, const struct mtc_session_ops *ops, void *arg);
/* A session over src (taken: freed with the session, or at once on failure). */
struct mtc_session *mtc_session_new_source(
    struct event_base *base, struct mtc_source *src, const struct mtc_session_ops *ops, void *arg);
/* Do not call from one of the session's own callbacks. */
void mtc_session_free(struct mtc_session *s);

/* Connect, Hello and Subscribe now (open the recording, connect to NATS and subscribe):
 * 0 (on_up was called, or for a source that connects in the background will be), or
 * -1 with a sentence in err and no callback (the caller decides: exit, or
 * mtc_session_retry). */
int mtc_session_connect(struct mtc_session *s, char *err, size_t errlen);
/* The first try from the loop at its next turn; a failure goes to on_down. */
void mtc_session_start(struct mtc_session *s);
/* A try after the policy's next wait (a failed first mtc_session_connect). */
void mtc_session_retry(struct mtc_session *s);
/* Take the link down now (on_down is not called) and try again by the policy. */
void mtc_session_drop(struct mtc_session *s, bool retry);

/* The program's subscription changed: mtraced is asked again, stored records are
 * selected by it from now on.  0, or -1 with errno. */
int mtc_session_resubscribe(struct mtc_session *s);

bool mtc_session_up(const struct mtc_session *s);
/* The connection to mtraced while up, else NULL. */
struct mtc *mtc_session_conn(const struct mtc_session *s);
const struct mtc_session_counts *mtc_session_counts(const struct mtc_session *s);
const struct mtc_source *mtc_session_source(const struct mtc_session *s);
/* Whether the records are stored ones (a recording, the fleet stream). */
bool mtc_session_stored(const struct mtc_session *s);
/* The daemon's Hello while up (mtraced only), else NULL. */
const Mtrace__Hello *mtc_session_hello(const struct mtc_session *s);
/* During on_msg: the record the message came in (its frame, or raw NULL when the
 * session made the message by selecting; its host and time in the fleet). */
const struct mtc_rec *mtc_session_rec(const struct mtc_session *s);

/* Blocking: connect, Hello, and subscribe(c, arg) (as in mtc_session_ops); NULL with a
 * sentence in err. */
struct mtc *mtc_open(const char *path, const char *software,
    int (*subscribe)(struct mtc *c, void *arg), void *arg, char *err, size_t errlen);
/*
 * Blocking: try mtc_open by the reconnect policy until it succeeds, or give_up(arg)
 * says true (a signal, a deadline; checked before each wait and try; NULL: never).
 * NULL when given up.
 */
struct mtc *mtc_open_wait(const char *path, const char *software,
    int (*subscribe)(struct mtc *c, void *arg), bool (*give_up)(void *arg), void *arg);

#endif
