/*
 * batch.c - mtrace-top without a terminal (top -b, xentop -b): every statistics update
 * prints the same lines the screen shows, as plain text, then a blank line.  One loop
 * and the client library's session, whatever the source: live it waits for mtraced
 * when it goes (one line on stderr when it goes, one when it is back); from a
 * recording or the fleet stream it prints each Stats they hold and ends with them.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "mtrace-client.h"
#include "session.h"
#include "top.h"

#define BATCH_MIN_WAIT_MS 10000 /* a stalled daemon is reported, not waited on forever */

struct batch {
	struct top_opts *o;
	struct event_base *base;
	struct mtc_session *s;
	struct event *stall; /* live: no statistics for wait_ms */
	int wait_ms;
	struct top_model m;
	long iterations, done;
	bool waiting;
	int status;
};

static bool batch_line(struct top_sink *s, enum top_attr a, const char *text)
{
	(void)s;
	(void)a;
	return fputs(text, stdout) >= 0 && putchar('\n') != EOF;
}

static void stop(struct batch *b, int status)
{
	b->status = status;
	event_base_loopbreak(b->base);
}

/* Live, statistics come every delay: their silence is news. */
static void arm_stall(struct batch *b)
{
	struct timeval tv = tv_from_ns((uint64_t)b->wait_ms * 1000000u);

	if (!mtc_session_stored(b->s))
		evtimer_add(b->stall, &tv);
}

static void on_stall(evutil_socket_t fd, short what, void *arg)
{
	struct batch *b = arg;

	(void)fd;
	(void)what;
	fprintf(stderr, "mtrace-top: no statistics from mtraced for %d s\n", b->wait_ms / 1000);
	stop(b, 1);
}

static void subscription(Mtrace__Subscribe *sub, void *arg)
{
	session_subscription(sub, ((struct batch *)arg)->o);
}

static unsigned on_msg(struct mtc_session *s, Mtrace__ServerMsg *msg, void *arg)
{
	struct batch *b = arg;
	struct top_sink sink = { .line = batch_line, .cursor = -1, .row = -1 };

	(void)s;
	if (b->done == b->iterations)
		return MTC_MSG_YIELD; /* done: the loop is ending */
	if (msg->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS)
		return 0; /* not for a statistics view */
	if (session_apply(&b->m, msg) == 0)
		return MTC_MSG_KEPT; /* session_apply freed it */
	view_render(b->o, &b->m, &sink);
	putchar('\n');
	/* Flush per update: a script reading a pipe sees each one as it happens. */
	if (fflush(stdout) == EOF) {
		/* The reader went away (EPIPE); that is the end of the job, not an error. */
		stop(b, errno == EPIPE ? 0 : 1);
		return MTC_MSG_KEPT | MTC_MSG_YIELD;
	}
	arm_stall(b);
	if (++b->done == b->iterations) {
		stop(b, 0);
		return MTC_MSG_KEPT | MTC_MSG_YIELD;
	}
	return MTC_MSG_KEPT; /* the model keeps it */
}

static void on_up(struct mtc_session *s, const Mtrace__Hello *h, void *arg)
{
	struct batch *b = arg;

	(void)s;
	if (h)
		snprintf(b->m.host, sizeof(b->m.host), "%s", h->host ? h->host : "");
	if (b->waiting)
		fprintf(stderr, "mtrace-top: reconnected to %s\n", session_peer(b->o));
	b->waiting = false;
	arm_stall(b);
}

static bool on_down(struct mtc_session *s, const struct mtc_down *d, void *arg)
{
	struct batch *b = arg;

	evtimer_del(b->stall);
	if (d->kind == MTC_DOWN_CONNECT)
		return true; /* still waiting: every failed try is not news */
	if (d->kind == MTC_DOWN_END) {
		stop(b, 0);
		return false;
	}
	if (!d->recovers && (mtc_session_stored(s) || b->o->no_reconnect || !d->transient)) {
		fprintf(stderr, "mtrace-top: %s\n", d->why);
		stop(b, 1);
		return false;
	}
	fprintf(stderr, "mtrace-top: %s; waiting for %s\n", d->why, session_peer(b->o));
	b->waiting = true;
	return true;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	stop(arg, 0);
}

int batch_run(struct top_opts *o, long iterations)
{
	static const struct mtc_session_ops ops = {
		.software = "mtrace-top " MTRACE_VERSION,
		.subscription = subscription,
		.on_msg = on_msg,
		.on_up = on_up,
		.on_down = on_down,
	};
	struct batch b = { .o = o, .iterations = iterations, .wait_ms = (int)o->delay_ms * 5 };
	struct event *sigint = NULL, *sigterm = NULL;
	char err[512] = "out of memory"; /* unless the source says why */

	if (b.wait_ms < BATCH_MIN_WAIT_MS)
		b.wait_ms = BATCH_MIN_WAIT_MS;
	b.status = 1;
	if (!(b.base = event_base_new())) {
		fprintf(stderr, "mtrace-top: cannot create the event loop\n");
		return 1;
	}
	b.s = mtc_session_new_source(b.base, mtc_source_new(&o->src, err, sizeof(err)), &ops, &b);
	if (!b.s) {
		fprintf(stderr, "mtrace-top: %s\n", err);
		goto out;
	}
	b.stall = evtimer_new(b.base, on_stall, &b);
	sigint = evsignal_new(b.base, SIGINT, on_signal, &b);
	sigterm = evsignal_new(b.base, SIGTERM, on_signal, &b);
	if (!b.stall || !sigint || !sigterm || event_add(sigint, NULL) < 0 ||
	    event_add(sigterm, NULL) < 0) {
		fprintf(stderr, "mtrace-top: cannot set up events\n");
		goto out;
	}
	if (mtc_session_connect(b.s, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-top: %s\n", err);
		goto out;
	}
	b.status = 0;
	event_base_dispatch(b.base);
out:
	mtc_session_free(b.s);
	session_model_free(&b.m);
	if (b.stall)
		event_free(b.stall);
	if (sigint)
		event_free(sigint);
	if (sigterm)
		event_free(sigterm);
	event_base_free(b.base);
	return b.status;
}
