/*
 * session.h - a session with mtraced on the caller's libevent loop: connect, Hello,
 * Subscribe, frames, Error and Goodbye, loss counts and the one reconnect policy of
 * every client.  Programs get callbacks for messages and for the link going up or
 * down; what a message means stays in the program.  For simple tools that block,
 * mtc_open and mtc_open_wait do the same on a plain struct mtc (mtrace-client.h).
 */
#ifndef MTRACE_SESSION_H
#define MTRACE_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "mtrace-client.h"

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
};

struct mtc_down {
	enum mtc_down_kind kind;
	Mtrace__Error__Code code; /* MTC_DOWN_ERROR only */
	/* Another connection may well be taken: anything but an Error about the request
	 * itself (a place or a deadline are worth waiting for). */
	bool transient;
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
	/* Send the program's Subscribe on a new connection (mtc_subscribe): 0, or -1 with
	 * errno. */
	int (*subscribe)(struct mtc *c, void *arg);
	/* Every message after Hello but Error and Goodbye, which take the session down. */
	unsigned (*on_msg)(struct mtc_session *s, Mtrace__ServerMsg *m, void *arg);
	/* Optional: the end of a loop turn that delivered n > 0 messages. */
	void (*on_turn)(struct mtc_session *s, unsigned n, void *arg);
	/* Optional: the link is up (subscribed); h is the daemon's Hello. */
	void (*on_up)(struct mtc_session *s, const Mtrace__Hello *h, void *arg);
	/* The link is down (or a try failed).  Return true to try again when the policy
	 * says, false to stay down.  NULL: always try again. */
	bool (*on_down)(struct mtc_session *s, const struct mtc_down *d, void *arg);
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
 * A session on base with the socket at path (NULL: mtc_default_socket()).  Nothing is
 * connected yet: call mtc_session_connect (now, with an error for the user) or
 * mtc_session_start (from the loop, failures to on_down).  ops is copied; arg is the
 * callbacks' own.  NULL with errno on failure.
 */
struct mtc_session *mtc_session_new(
    struct event_base *base, const char *path, const struct mtc_session_ops *ops, void *arg);
/* Do not call from one of the session's own callbacks. */
void mtc_session_free(struct mtc_session *s);

/* Connect, Hello and Subscribe now: 0 (on_up was called), or -1 with a sentence in err
 * and no callback (the caller decides: exit, or mtc_session_retry). */
int mtc_session_connect(struct mtc_session *s, char *err, size_t errlen);
/* The first try from the loop at its next turn; a failure goes to on_down. */
void mtc_session_start(struct mtc_session *s);
/* A try after the policy's next wait (a failed first mtc_session_connect). */
void mtc_session_retry(struct mtc_session *s);
/* Take the link down now (on_down is not called) and try again by the policy. */
void mtc_session_drop(struct mtc_session *s, bool retry);

bool mtc_session_up(const struct mtc_session *s);
/* The connection while up (to subscribe again with new options), else NULL. */
struct mtc *mtc_session_conn(const struct mtc_session *s);
const struct mtc_session_counts *mtc_session_counts(const struct mtc_session *s);

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
