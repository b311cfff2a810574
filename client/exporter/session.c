/*
 * session.c - the exporter's subscription to mtraced: statistics with per-label
 * aggregates, no events, no threads (a thread id is never a Prometheus label).  When
 * mtraced goes away the statistics go with it (mtrace_up 0, no domain series) and the
 * session is opened again every RETRY_MS, so restarting mtraced needs nothing here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "exporter.h"
#include "mtrace-client.h"

#define RETRY_MS 2000

struct session {
	struct event_base *base;
	char *path;
	unsigned interval_ms;
	struct mtc *c;
	struct event *rd, *retry;
	Mtrace__ServerMsg *last; /* the latest Stats */
	struct timespec last_at;
	uint64_t connects, stats_received;
	char last_err[256]; /* said once until it changes */
	void (*on_stats)(void *);
	void *arg;
};

static void say(struct session *s, const char *msg)
{
	if (!strcmp(s->last_err, msg))
		return;
	snprintf(s->last_err, sizeof(s->last_err), "%s", msg);
	fprintf(stderr, "mtrace-exporter: %s\n", msg);
}

static void drop(struct session *s, const char *why)
{
	struct timeval tv = { RETRY_MS / 1000, (RETRY_MS % 1000) * 1000 };

	if (s->rd) {
		event_free(s->rd);
		s->rd = NULL;
	}
	mtc_close(s->c);
	s->c = NULL;
	mtc_msg_free(s->last);
	s->last = NULL;
	say(s, why);
	evtimer_add(s->retry, &tv);
	if (s->on_stats)
		s->on_stats(s->arg); /* what is shown changes: mtrace_up 0 */
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;
	char err[256];

	for (;;) {
		Mtrace__ServerMsg *m;
		int r = mtc_next(s->c, 0, &m, NULL, NULL, err, sizeof(err));
		if (r == 0)
			return;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			drop(s, err);
			return;
		}
		if (m->msg_case == MTRACE__SERVER_MSG__MSG_STATS) {
			mtc_msg_free(s->last);
			s->last = m;
			clock_gettime(CLOCK_MONOTONIC, &s->last_at);
			s->stats_received++;
			s->last_err[0] = '\0';
			if (s->on_stats)
				s->on_stats(s->arg);
			continue;
		}
		if (m->msg_case == MTRACE__SERVER_MSG__MSG_ERROR ||
		    m->msg_case == MTRACE__SERVER_MSG__MSG_GOODBYE) {
			snprintf(err, sizeof(err), "mtraced ended the session: %s",
			    m->msg_case == MTRACE__SERVER_MSG__MSG_ERROR
			        ? (m->error->message ? m->error->message : "error")
			        : (m->goodbye->reason ? m->goodbye->reason : "goodbye"));
			mtc_msg_free(m);
			drop(s, err);
			return;
		}
		mtc_msg_free(m);
	}
}

static void try_connect(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	char err[256];

	s->c = mtc_connect(s->path, "mtrace-exporter " MTRACE_VERSION, err, sizeof(err));
	if (!s->c) {
		drop(s, err);
		return;
	}
	sub.events = 0;
	sub.stats_interval_ms = s->interval_ms;
	sub.label_stats = 1;
	sub.top_n = 0;
	if (mtc_subscribe(s->c, &sub) < 0) {
		snprintf(err, sizeof(err), "subscribing: %s", strerror(errno));
		drop(s, err);
		return;
	}
	s->rd = event_new(s->base, mtc_fd(s->c), EV_READ | EV_PERSIST, on_read, s);
	if (!s->rd || event_add(s->rd, NULL) < 0) {
		drop(s, "out of memory");
		return;
	}
	s->connects++;
	fprintf(stderr, "mtrace-exporter: connected to mtraced at %s\n",
	    s->path ? s->path : mtc_default_socket());
	s->last_err[0] = '\0';
}

struct session *session_new(struct event_base *base, const char *socket_path, unsigned interval_ms,
    void (*on_stats)(void *), void *arg)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->base = base;
	s->path = socket_path ? strdup(socket_path) : NULL;
	s->interval_ms = interval_ms;
	s->on_stats = on_stats;
	s->arg = arg;
	s->retry = evtimer_new(base, try_connect, s);
	if (!s->retry) {
		free(s);
		return NULL;
	}
	/* from the loop, once the caller holds the session its callback will ask about */
	event_active(s->retry, EV_TIMEOUT, 0);
	return s;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	if (s->rd)
		event_free(s->rd);
	event_free(s->retry);
	mtc_close(s->c);
	mtc_msg_free(s->last);
	free(s->path);
	free(s);
}

const Mtrace__Stats *session_stats(const struct session *s)
{
	return s->last ? s->last->stats : NULL;
}

void session_self(const struct session *s, struct expo_self *out)
{
	struct timespec now;

	memset(out, 0, sizeof(*out));
	out->up = s->c && s->last;
	out->connects = s->connects;
	out->stats_received = s->stats_received;
	out->stats_age_s = -1;
	if (s->last) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		out->stats_age_s = (double)(now.tv_sec - s->last_at.tv_sec) +
		    (double)(now.tv_nsec - s->last_at.tv_nsec) / 1e9;
	}
}
