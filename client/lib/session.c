/*
 * session.c - the evented session over a source (source.h) and the one reconnect
 * policy.  mtraced's connection is libmtrace-client's (mtrace-client.c): its large
 * read buffer keeps the per-frame cost low at millions of events a second, and the
 * loop only tells us when the socket is readable; the fleet's queue has an eventfd for
 * that; a recording never waits and is read a budget at a time.  Connecting (a local
 * socket, and the Hello mtraced sends at once) is done inline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "select.h"
#include "sat.h"
#include "session.h"

/* Records read per loop turn, so that timers, signals and the program's other sockets
 * are served between: a socket that never runs dry at millions of events a second,
 * and a source that never waits (a file). */
#define TURN_BUDGET 4096
#define PUMP_BUDGET 256

struct mtc_session {
	struct event_base *base;
	struct mtc_source *src;
	struct mtc_session_ops ops;
	void *arg;
	struct event *rd, *retry;
	bool open, up;
	unsigned attempt;       /* tries since the link was last up */
	struct mtc_select *sel; /* stored records: the program's subscription, applied here */
	struct mtc_rec rec;     /* the record being delivered */
	unsigned delivered;     /* in this read */
	bool kept, yield;       /* what on_msg said of the record's message(s) */
	struct mtc_session_counts counts;
};

unsigned mtc_retry_ms(unsigned attempt)
{
	unsigned ms = MTC_RETRY_FIRST_MS;

	while (attempt-- > 0 && ms < MTC_RETRY_MAX_MS)
		ms *= 2;
	return ms < MTC_RETRY_MAX_MS ? ms : MTC_RETRY_MAX_MS;
}

struct mtc *mtc_open(const char *path, const char *software,
    int (*subscribe)(struct mtc *c, void *arg), void *arg, char *err, size_t errlen)
{
	struct mtc *c = mtc_connect(path, software, err, errlen);

	if (c && subscribe && subscribe(c, arg) < 0) {
		snprintf(err, errlen, "subscribe: %s", strerror(errno));
		mtc_close(c);
		c = NULL;
	}
	return c;
}

struct mtc *mtc_open_wait(const char *path, const char *software,
    int (*subscribe)(struct mtc *c, void *arg), bool (*give_up)(void *arg), void *arg)
{
	char err[512];

	for (unsigned attempt = 0;; attempt++) {
		unsigned ms = mtc_retry_ms(attempt);
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
		struct mtc *c;

		if (give_up && give_up(arg))
			return NULL;
		nanosleep(&ts, NULL);
		if (give_up && give_up(arg))
			return NULL;
		if ((c = mtc_open(path, software, subscribe, arg, err, sizeof(err))))
			return c;
	}
}

static void close_link(struct mtc_session *s)
{
	if (s->rd) {
		event_free(s->rd);
		s->rd = NULL;
	}
	if (s->open)
		s->src->ops->close(s->src);
	s->open = s->up = false;
}

void mtc_session_retry(struct mtc_session *s)
{
	unsigned ms = mtc_retry_ms(s->attempt++);
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(s->retry, &tv);
}

void mtc_session_drop(struct mtc_session *s, bool retry)
{
	close_link(s);
	s->attempt = 0;
	if (retry)
		mtc_session_retry(s);
}

static void went_down(struct mtc_session *s, const struct mtc_down *d)
{
	bool again;

	close_link(s);
	again = s->ops.on_down ? s->ops.on_down(s, d, s->arg) : true;
	if (again && d->kind != MTC_DOWN_END)
		mtc_session_retry(s);
}

bool mtc_msg_ends(const Mtrace__ServerMsg *m, struct mtc_down *d, char *why, size_t whylen)
{
	memset(d, 0, sizeof(*d));
	d->transient = true;
	d->why = why;
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_ERROR) {
		d->kind = MTC_DOWN_ERROR;
		d->code = m->error->code;
		d->transient = d->code == MTRACE__ERROR__CODE__TOO_MANY_CLIENTS ||
		    d->code == MTRACE__ERROR__CODE__TIMEOUT;
		snprintf(why, whylen, "mtraced refused the request: %s",
		    m->error->message ? m->error->message : "(no reason)");
		return true;
	}
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_GOODBYE) {
		d->kind = MTC_DOWN_GOODBYE;
		snprintf(why, whylen, "mtraced ended the session: %s",
		    m->goodbye->reason ? m->goodbye->reason : "(no reason)");
		return true;
	}
	return false;
}

static void count(struct mtc_session *s, const Mtrace__ServerMsg *m)
{
	/* stored records are anyone's: the sums saturate (sat.h) */
	s->counts.messages++;
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS)
		sat_inc(&s->counts.events, m->events->n_op);
	else if (m->msg_case == MTRACE__SERVER_MSG__MSG_LOSS) {
		sat_inc(&s->counts.lost_in_ring, m->loss->lost_in_ring);
		sat_inc(&s->counts.dropped_for_client, m->loss->dropped_for_client);
	}
}

/* One message to the program; what it answered is gathered in kept and yield. */
static void give(struct mtc_session *s, Mtrace__ServerMsg *m, bool keepable)
{
	unsigned r;

	count(s, m);
	s->delivered++;
	r = s->ops.on_msg(s, m, s->arg);
	if (keepable && (r & MTC_MSG_KEPT))
		s->kept = true;
	if (r & MTC_MSG_YIELD)
		s->yield = true;
}

static void selected(Mtrace__ServerMsg *m, enum mtc_select_how how, void *arg)
{
	struct mtc_session *s = arg;
	const uint8_t *raw = s->rec.raw;

	if (how != MTC_SELECT_WHOLE)
		s->rec.raw = NULL; /* its frame is not what the program sees */
	give(s, m, how != MTC_SELECT_MADE);
	s->rec.raw = raw;
}

/* A record to the program.  false when the link went down with it. */
static bool deliver(struct mtc_session *s)
{
	Mtrace__ServerMsg *m = s->rec.msg;
	struct mtc_down d;
	char why[512];

	s->kept = s->yield = false;
	if (!s->src->ops->stored && mtc_msg_ends(m, &d, why, sizeof(why))) {
		if (s->ops.see_ends)
			give(s, m, true);
		if (!s->kept)
			mtc_msg_free(m);
		went_down(s, &d);
		return false;
	}
	if (s->sel && mtc_select_msg(s->sel, s->rec.host, m, selected, s) < 0)
		fprintf(stderr, "mtrace: out of memory selecting a message; left out\n");
	else if (!s->sel)
		give(s, m, true);
	if (!s->kept)
		mtc_msg_free(m);
	return true;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct mtc_session *s = arg;
	bool pump = s->src->ops->fd(s->src) < 0;
	unsigned reads = 0;
	char err[512];

	(void)fd;
	(void)what;
	s->delivered = 0;
	while (s->open) {
		struct mtc_down d = { .kind = MTC_DOWN_LOST, .transient = true, .why = err };
		int rc;

		err[0] = '\0';
		rc = s->src->ops->next(s->src, 0, &s->rec, err, sizeof(err));
		if (rc == MTC_NEXT_NONE)
			break;
		if (rc == MTC_NEXT_FAIL) {
			if ((d.errnum = errno) == EINTR)
				continue;
			if (!err[0])
				d.why = "mtraced closed the connection";
			/* a damaged recording is not better read again */
			d.transient = !s->src->ops->stored;
			went_down(s, &d);
			break;
		}
		if (rc == MTC_NEXT_END) {
			d.kind = MTC_DOWN_END;
			d.transient = false;
			went_down(s, &d);
			break;
		}
		if (rc == MTC_NEXT_AWAY) {
			d.recovers = true;
			s->up = false;
			if (s->ops.on_down)
				s->ops.on_down(s, &d, s->arg);
			continue;
		}
		if (rc == MTC_NEXT_UP) {
			s->up = true;
			s->attempt = 0;
			s->counts.connects++;
			if (s->ops.on_up)
				s->ops.on_up(s, NULL, s->arg);
			continue;
		}
		if (!deliver(s))
			break;
		if (s->yield || ++reads >= (pump ? PUMP_BUDGET : TURN_BUDGET)) {
			/* Frames may wait in the client's buffer with nothing on the socket
			 * to wake us (a file never does): come back at the next turn. */
			if (s->rd)
				event_active(s->rd, EV_READ, 0);
			break;
		}
	}
	if (s->delivered && s->ops.on_turn)
		s->ops.on_turn(s, s->delivered, s->arg);
}

/* The program's subscription: sent (mtraced), or the selection of stored records. */
static int subscription(struct mtc_session *s, Mtrace__Subscribe *sub)
{
	struct mtc_select *sel;

	*sub = (Mtrace__Subscribe)MTRACE__SUBSCRIBE__INIT;
	if (!s->ops.subscription)
		return 0;
	s->ops.subscription(sub, s->arg);
	if (!s->src->ops->stored)
		return 0;
	if (!(sel = mtc_select_new(sub)))
		return -1;
	mtc_select_free(s->sel);
	s->sel = NULL;
	if (mtc_select_narrows(sel))
		s->sel = sel;
	else
		mtc_select_free(sel);
	return 0;
}

int mtc_session_resubscribe(struct mtc_session *s)
{
	struct mtc *c = mtc_session_conn(s);
	Mtrace__Subscribe sub;

	if (subscription(s, &sub) < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (!s->up || s->src->ops->stored)
		return 0; /* a new link subscribes with the new options */
	if (s->ops.subscription)
		return s->src->ops->resubscribe(s->src, &sub);
	return c && s->ops.subscribe ? s->ops.subscribe(c, s->arg) : 0;
}

int mtc_session_connect(struct mtc_session *s, char *err, size_t errlen)
{
	Mtrace__Subscribe sub;
	int r, fd;

	if (s->open)
		return 0;
	if (subscription(s, &sub) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r = s->src->ops->open(s->src, s->ops.subscription ? &sub : NULL, err, errlen);
	if (r < 0)
		return -1;
	s->open = true;
	if (!s->ops.subscription && s->ops.subscribe && mtc_source_conn(s->src) &&
	    s->ops.subscribe(mtc_source_conn(s->src), s->arg) < 0) {
		snprintf(err, errlen, "subscribe: %s", strerror(errno));
		close_link(s);
		return -1;
	}
	fd = s->src->ops->fd(s->src);
	s->rd = fd >= 0 ? event_new(s->base, fd, EV_READ | EV_PERSIST, on_readable, s)
	                : event_new(s->base, -1, 0, on_readable, s);
	if (!s->rd || (fd >= 0 && event_add(s->rd, NULL) < 0)) {
		close_link(s);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (r == 0) {
		s->up = true;
		s->attempt = 0;
		s->counts.connects++;
		if (s->ops.on_up)
			s->ops.on_up(s, mtc_session_hello(s), s->arg);
	}
	/* The Hello exchange may have read more than the Hello (a file: the first
	 * records). */
	if (s->rd)
		event_active(s->rd, EV_READ, 0);
	return 0;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	struct mtc_session *s = arg;
	struct mtc_down d = { .kind = MTC_DOWN_CONNECT, .transient = true };
	char err[512];

	(void)fd;
	(void)what;
	if (mtc_session_connect(s, err, sizeof(err)) == 0)
		return;
	d.why = err;
	went_down(s, &d);
}

void mtc_session_start(struct mtc_session *s)
{
	event_active(s->retry, EV_TIMEOUT, 0);
}

struct mtc_session *mtc_session_new_source(
    struct event_base *base, struct mtc_source *src, const struct mtc_session_ops *ops, void *arg)
{
	struct mtc_session *s = src ? calloc(1, sizeof(*s)) : NULL;

	if (!s || !(s->retry = evtimer_new(base, on_retry, s))) {
		free(s);
		if (src)
			src->ops->free(src);
		errno = ENOMEM;
		return NULL;
	}
	s->base = base;
	s->src = src;
	s->ops = *ops;
	s->arg = arg;
	return s;
}

struct mtc_session *mtc_session_new(
    struct event_base *base, const char *path, const struct mtc_session_ops *ops, void *arg)
{
	return mtc_session_new_source(base, mtc_source_mtraced(path, ops->software), ops, arg);
}

void mtc_session_free(struct mtc_session *s)
{
	if (!s)
		return;
	close_link(s);
	event_free(s->retry);
	mtc_select_free(s->sel);
	s->src->ops->free(s->src);
	free(s);
}

bool mtc_session_up(const struct mtc_session *s)
{
	return s->up;
}

struct mtc *mtc_session_conn(const struct mtc_session *s)
{
	return s->up ? mtc_source_conn(s->src) : NULL;
}

const struct mtc_session_counts *mtc_session_counts(const struct mtc_session *s)
{
	return &s->counts;
}

const struct mtc_source *mtc_session_source(const struct mtc_session *s)
{
	return s->src;
}

bool mtc_session_stored(const struct mtc_session *s)
{
	return s->src->ops->stored;
}

const Mtrace__Hello *mtc_session_hello(const struct mtc_session *s)
{
	return s->open && s->src->ops->hello ? s->src->ops->hello(s->src) : NULL;
}

const struct mtc_rec *mtc_session_rec(const struct mtc_session *s)
{
	return &s->rec;
}
