/*
 * session.c - the exporter's subscription to mtraced: statistics with per-label
 * aggregates, no events, no threads (a thread id is never a Prometheus label).  When
 * mtraced goes away the statistics go with it (mtrace_up 0, no domain series) and the
 * library's session tries again by its policy, so restarting mtraced needs nothing here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exporter.h"
#include "session.h"
#include "timeline.h"

struct session {
	struct mtc_session *s;
	unsigned interval_ms;
	Mtrace__ServerMsg *last; /* the latest Stats */
	struct tl *clocks;       /* the clock maps told (timeline.h) */
	struct timespec last_at;
	uint64_t stats_received;
	char last_err[256]; /* said once until it changes */
	const char *path;
	void (*on_stats)(void *);
	void *arg;
};

static void say(struct session *e, const char *msg)
{
	if (!strcmp(e->last_err, msg))
		return;
	snprintf(e->last_err, sizeof(e->last_err), "%s", msg);
	fprintf(stderr, "mtrace-exporter: %s\n", msg);
}

static int subscribe(struct mtc *c, void *arg)
{
	struct session *e = arg;
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;

	sub.events = 0;
	sub.stats_interval_ms = e->interval_ms;
	sub.label_stats = 1;
	sub.top_n = 0;
	return mtc_subscribe(c, &sub);
}

static unsigned on_msg(struct mtc_session *s, Mtrace__ServerMsg *m, void *arg)
{
	struct session *e = arg;

	(void)s;
	/* how the domains' clocks lie on the host timeline: mtrace_clock_* */
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_CLOCK_MAP ||
	    m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN)
		tl_msg(e->clocks, NULL, m);
	if (m->msg_case != MTRACE__SERVER_MSG__MSG_STATS)
		return 0;
	mtc_msg_free(e->last);
	e->last = m;
	clock_gettime(CLOCK_MONOTONIC, &e->last_at);
	e->stats_received++;
	e->last_err[0] = '\0';
	if (e->on_stats)
		e->on_stats(e->arg);
	return MTC_MSG_KEPT;
}

static void on_up(struct mtc_session *s, const Mtrace__Hello *h, void *arg)
{
	struct session *e = arg;

	(void)s;
	(void)h;
	fprintf(stderr, "mtrace-exporter: connected to mtraced at %s\n",
	    e->path ? e->path : mtc_default_socket());
	e->last_err[0] = '\0';
}

static bool on_down(struct mtc_session *s, const struct mtc_down *d, void *arg)
{
	struct session *e = arg;

	(void)s;
	mtc_msg_free(e->last);
	e->last = NULL;
	say(e, d->why);
	if (e->on_stats)
		e->on_stats(e->arg); /* what is shown changes: mtrace_up 0 */
	return true;
}

struct session *session_new(struct event_base *base, const char *socket_path, unsigned interval_ms,
    void (*on_stats)(void *), void *arg)
{
	static const struct mtc_session_ops ops = {
		.software = "mtrace-exporter " MTRACE_VERSION,
		.subscribe = subscribe,
		.on_msg = on_msg,
		.on_up = on_up,
		.on_down = on_down,
	};
	struct session *e = calloc(1, sizeof(*e));

	if (!e || !(e->clocks = tl_new())) {
		free(e);
		return NULL;
	}
	tl_forget_gone(e->clocks); /* it runs as long as the host: domains come and go */
	e->interval_ms = interval_ms;
	e->on_stats = on_stats;
	e->arg = arg;
	e->path = socket_path;
	if (!(e->s = mtc_session_new(base, socket_path, &ops, e))) {
		tl_free(e->clocks);
		free(e);
		return NULL;
	}
	/* from the loop, once the caller holds the session its callback will ask about */
	mtc_session_start(e->s);
	return e;
}

void session_free(struct session *e)
{
	if (!e)
		return;
	mtc_session_free(e->s);
	mtc_msg_free(e->last);
	tl_free(e->clocks);
	free(e);
}

const Mtrace__Stats *session_stats(const struct session *e)
{
	return e->last ? e->last->stats : NULL;
}

void session_self(const struct session *e, struct expo_self *out)
{
	struct timespec now;

	memset(out, 0, sizeof(*out));
	out->up = mtc_session_up(e->s) && e->last;
	out->connects = mtc_session_counts(e->s)->connects;
	out->stats_received = e->stats_received;
	out->stats_age_s = -1;
	out->clocks = e->clocks;
	if (e->last) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		out->stats_age_s = (double)(now.tv_sec - e->last_at.tv_sec) +
		    (double)(now.tv_nsec - e->last_at.tv_nsec) / 1e9;
	}
}
