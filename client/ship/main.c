/*
 * mtrace-ship - the fleet's event stream: subscribe to mtraced and publish every message
 * it sends, as it sends it (the recording framing of docs/recording.md: one delimited
 * ServerMsg per NATS message), to NATS JetStream on mtrace.<host>.<domain>.events and
 * mtrace.<host>._.stats (docs/fleet.md).
 *
 * One libevent loop does it all: the session with mtraced (frames.c), the publish queue
 * with its acknowledgements and the spool behind it (queue.c), the /metrics endpoint,
 * the signals and the log.  libnats keeps threads of its own (its socket reader and
 * flusher, the deliveries of acknowledgements, its timers): it has no mode in which the
 * acknowledgements of asynchronous publishes reach the caller's loop but through one of
 * them, so they hand everything to the loop through jetstream.c's inbox and touch
 * nothing else.  The program's state is one struct ship (ship.h), passed down.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "frames.h"
#include "ship.h"

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The figures for a scrape of --metrics, as they are at this turn of the loop. */
static void fill_figures(void *arg, struct ship_figures *f)
{
	struct ship *s = arg;

	queue_figures(s->q, f);
	f->mtraced_up = s->mtraced_up;
}

static void on_log(evutil_socket_t fd, short what, void *arg)
{
	struct ship *s = arg;

	(void)fd;
	(void)what;
	queue_log(s->q, "figures");
}

static void on_flushed(void *arg)
{
	struct ship *s = arg;

	event_base_loopbreak(s->base);
}

/* The session is over (mtraced quiet, or 3 s): what waits is published, or spooled. */
static void on_tail_end(evutil_socket_t fd, short what, void *arg)
{
	struct ship *s = arg;

	(void)fd;
	(void)what;
	frames_stop(s);
	queue_flush(s->q, on_flushed, s);
}

/*
 * SIGTERM, SIGINT: what mtraced has already sent or queued for us is shipped, or spooled,
 * before the exit: read until nothing comes for 50 ms (it refills the socket from its
 * queue), for at most 3 s; what it sends afterwards is the gap of any client's restart.
 */
static void on_signal(evutil_socket_t fd, short what, void *arg)
{
	struct ship *s = arg;
	struct signalfd_siginfo si;
	struct timeval tv = { 0, s->mtraced_up ? 50000 : 0 };

	(void)what;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	if (s->stopping)
		return;
	s->stopping = true;
	s->tail_until = mono() + 3;
	evtimer_add(s->tail_ev, &tv);
}

/* SIGTERM and SIGINT blocked in every thread (libnats' inherit the mask: a signal in
 * one of them once took its connection down) and read from a signalfd by the loop. */
static int signals(struct ship *s)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
	    (s->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		return -1;
	s->sig_ev = event_new(s->base, s->sig_fd, EV_READ | EV_PERSIST, on_signal, s);
	return s->sig_ev && event_add(s->sig_ev, NULL) == 0 ? 0 : -1;
}

static int start(struct ship *s, char *err, size_t errlen)
{
	const struct jsl_config jc = {
		.url = s->o.nats,
		.creds = s->o.creds,
		.inbox_prefix = s->o.inbox_prefix,
		.ca = s->o.ca,
		.n_ca = s->o.n_ca,
		.replicas = s->o.replicas,
		.no_stream = s->o.no_stream,
		.ack_ms = s->o.ack_ms,
		.max_pending = s->o.max_pending,
	};
	const struct queue_config qc = {
		.max_pending = s->o.max_pending,
		.queue_max = s->o.queue_max,
		.retry_ms = s->o.retry_ms,
	};
	struct timeval every = { s->o.log_s, 0 };

	if (!(s->base = event_base_new()) || signals(s) < 0 ||
	    !(s->tail_ev = evtimer_new(s->base, on_tail_end, s)) ||
	    !(s->log_ev = event_new(s->base, -1, EV_PERSIST, on_log, s))) {
		snprintf(err, errlen, "%s", strerror(errno ? errno : ENOMEM));
		return -1;
	}
	if (s->o.log_s)
		evtimer_add(s->log_ev, &every);
	if (msgid_init() < 0) {
		snprintf(err, errlen, "no random source for message ids (getrandom: %s)",
		    strerror(errno));
		return -1;
	}
	if (s->o.spool_dir && !(s->spool = spool_open(s->o.spool_dir, s->o.spool_max, err, errlen)))
		return -1;
	if (!(s->js = jsl_open(&jc, err, errlen)))
		return -1;
	if (!(s->q = queue_new(s->base, s->js, s->spool, &qc))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (s->o.metrics &&
	    !(s->metrics = ship_metrics_start(s->base, s->o.metrics, fill_figures, s, err, errlen)))
		return -1;
	return frames_start(s, err, errlen);
}

static void finish(struct ship *s)
{
	if (s->q)
		queue_log(s->q, "exit");
	ship_metrics_stop(s->metrics);
	frames_stop(s);
	queue_free(s->q);
	jsl_close(s->js);
	spool_close(s->spool);
	if (s->sig_ev)
		event_free(s->sig_ev);
	if (s->tail_ev)
		event_free(s->tail_ev);
	if (s->log_ev)
		event_free(s->log_ev);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	if (s->base)
		event_base_free(s->base);
}

int main(int argc, char **argv)
{
	struct ship s = { .sig_fd = -1 };
	char err[512];
	int rc = 0;

	if (ship_parse_args(argc, argv, &s.o) < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	if (start(&s, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-ship: %s\n", err);
		rc = 1;
	} else {
		event_base_dispatch(s.base);
	}
	finish(&s);
	return rc;
}
