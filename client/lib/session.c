/*
 * session.c - the evented session with mtraced and the one reconnect policy.  The
 * connection is libmtrace-client's (mtrace-client.c): its large read buffer keeps the
 * per-frame cost low at millions of events a second, and the loop only tells us when
 * the socket is readable.  Connecting (a local socket, and the Hello mtraced sends at
 * once) is done inline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session.h"

struct mtc_session {
	struct event_base *base;
	char *path;
	struct mtc_session_ops ops;
	void *arg;
	struct mtc *c;
	struct event *rd, *retry;
	unsigned attempt; /* tries since the link was last up */
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
	mtc_close(s->c);
	s->c = NULL;
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
	if (again)
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

/* Error and Goodbye end the link; true when m did. */
static bool ends_link(struct mtc_session *s, Mtrace__ServerMsg *m)
{
	struct mtc_down d;
	char why[512];

	if (!mtc_msg_ends(m, &d, why, sizeof(why)))
		return false;
	mtc_msg_free(m);
	went_down(s, &d);
	return true;
}

static void count(struct mtc_session *s, const Mtrace__ServerMsg *m)
{
	s->counts.messages++;
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS)
		s->counts.events += m->events->n_op;
	else if (m->msg_case == MTRACE__SERVER_MSG__MSG_LOSS) {
		s->counts.lost_in_ring += m->loss->lost_in_ring;
		s->counts.dropped_for_client += m->loss->dropped_for_client;
	}
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct mtc_session *s = arg;
	unsigned n = 0;
	char err[256];

	(void)fd;
	(void)what;
	while (s->c) {
		Mtrace__ServerMsg *m;
		unsigned r;
		int rc;

		err[0] = '\0';
		rc = mtc_next(s->c, 0, &m, NULL, NULL, err, sizeof(err));
		if (rc == 0)
			break;
		if (rc < 0) {
			struct mtc_down d = { .kind = MTC_DOWN_LOST, .transient = true };
			if (errno == EINTR)
				continue;
			d.why = err[0] ? err : "mtraced closed the connection";
			went_down(s, &d);
			break;
		}
		if (ends_link(s, m))
			break;
		count(s, m);
		n++;
		r = s->ops.on_msg(s, m, s->arg);
		if (!(r & MTC_MSG_KEPT))
			mtc_msg_free(m);
		if (r & MTC_MSG_YIELD) {
			/* Frames may wait in the client's buffer with nothing on the socket
			 * to wake us: come back at the next turn. */
			if (s->rd)
				event_active(s->rd, EV_READ, 0);
			break;
		}
	}
	if (n && s->ops.on_turn)
		s->ops.on_turn(s, n, s->arg);
}

int mtc_session_connect(struct mtc_session *s, char *err, size_t errlen)
{
	struct mtc *c;

	if (s->c)
		return 0;
	c = mtc_open(s->path, s->ops.software, s->ops.subscribe, s->arg, err, errlen);
	if (!c)
		return -1;
	s->rd = event_new(s->base, mtc_fd(c), EV_READ | EV_PERSIST, on_readable, s);
	if (!s->rd || event_add(s->rd, NULL) < 0) {
		if (s->rd)
			event_free(s->rd);
		s->rd = NULL;
		mtc_close(c);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->c = c;
	s->attempt = 0;
	s->counts.connects++;
	if (s->ops.on_up)
		s->ops.on_up(s, mtc_server_hello(c), s->arg);
	/* The Hello exchange may have read more than the Hello. */
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

struct mtc_session *mtc_session_new(
    struct event_base *base, const char *path, const struct mtc_session_ops *ops, void *arg)
{
	struct mtc_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->base = base;
	s->ops = *ops;
	s->arg = arg;
	if ((path && !(s->path = strdup(path))) || !(s->retry = evtimer_new(base, on_retry, s))) {
		free(s->path);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void mtc_session_free(struct mtc_session *s)
{
	if (!s)
		return;
	close_link(s);
	event_free(s->retry);
	free(s->path);
	free(s);
}

bool mtc_session_up(const struct mtc_session *s)
{
	return s->c != NULL;
}

struct mtc *mtc_session_conn(const struct mtc_session *s)
{
	return s->c;
}

const struct mtc_session_counts *mtc_session_counts(const struct mtc_session *s)
{
	return &s->counts;
}
