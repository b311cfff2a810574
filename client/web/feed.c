/*
 * feed.c - mtrace-web's link to mtraced: one subscription (all events, statistics
 * every stats_ms), read from the loop, turned into SSE messages in the history.
 * When mtraced goes away the browsers are told and the link is tried again every
 * second; the page keeps what it has.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "web.h"

/* Per loop turn, so that HTTP is served and the browsers' sockets are written between:
 * a turn must not produce more than a browser can be sent in one (sse.c). */
#define READ_BUDGET       256           /* messages */
#define READ_BUDGET_BYTES (192u * 1024) /* of SSE messages */

static struct {
	struct event_base *base;
	const struct web_opts *o;
	struct mtc *c;
	struct event *rd, *retry;
	Mtrace__ServerMsg *stats; /* the last Stats, for /api/state */
	char daemon[256];
	bool warned;
	uint64_t events, malformed;
	/* Domains as DomainUp/Down said, for /api/state between statistics. */
	struct dom {
		uint32_t domid;
		bool alive;
		char name[64];
		char reason[64];
	} doms[256];
	size_t ndoms;
} f;

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void push(const char *event, struct evbuffer *b, uint32_t events)
{
	size_t len = evbuffer_get_length(b);

	hist_push(event, (const char *)evbuffer_pullup(b, -1), len, events);
	evbuffer_drain(b, len);
}

static void push_daemon_state(struct evbuffer *b, bool up)
{
	evbuffer_add_printf(b, "{\"connected\":%s,\"daemon\":", up ? "true" : "false");
	json_str(b, f.daemon);
	evbuffer_add(b, "}", 1);
	push("daemon", b, 0);
}

static struct dom *dom_get(uint32_t domid)
{
	for (size_t i = 0; i < f.ndoms; i++)
		if (f.doms[i].domid == domid)
			return &f.doms[i];
	if (f.ndoms == sizeof(f.doms) / sizeof(f.doms[0])) {
		/* Full: reuse the oldest dead one, else the oldest. */
		size_t k = 0;
		for (size_t i = 0; i < f.ndoms; i++)
			if (!f.doms[i].alive) {
				k = i;
				break;
			}
		memmove(&f.doms[k], &f.doms[k + 1], (f.ndoms - k - 1) * sizeof(f.doms[0]));
		f.ndoms--;
	}
	memset(&f.doms[f.ndoms], 0, sizeof(f.doms[0]));
	f.doms[f.ndoms].domid = domid;
	return &f.doms[f.ndoms++];
}

static void handle(Mtrace__ServerMsg *m, struct evbuffer *b)
{
	struct dom *d;

	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		if (json_batch(b, m->events, wall_ms()) < 0) {
			evbuffer_drain(b, evbuffer_get_length(b));
			f.malformed++;
			break;
		}
		f.events += m->events->n_op;
		push("b", b, (uint32_t)m->events->n_op);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		d = dom_get(m->domain_up->domid);
		d->alive = true;
		snprintf(
		    d->name, sizeof(d->name), "%s", m->domain_up->name ? m->domain_up->name : "");
		d->reason[0] = 0;
		json_domain_up(b, m->domain_up);
		push("up", b, 0);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		d = dom_get(m->domain_down->domid);
		d->alive = false;
		snprintf(d->reason, sizeof(d->reason), "%s",
		    m->domain_down->reason ? m->domain_down->reason : "");
		json_domain_down(b, m->domain_down);
		push("down", b, 0);
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		json_loss(b, m->loss);
		push("loss", b, 0);
		break;
	case MTRACE__SERVER_MSG__MSG_STATS:
		json_stats(b, m->stats, false);
		push("stats", b, 0);
		if (f.stats)
			mtc_msg_free(f.stats);
		f.stats = m;
		return; /* kept */
	default:
		break;
	}
	mtc_msg_free(m);
}

static void feed_lost(const char *why);

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct evbuffer *b = evbuffer_new();
	uint64_t bytes0 = hist_bytes_total();
	char err[256];
	int n = 0, r = 1;
	bool spent = false;

	while (!(spent = n >= READ_BUDGET || hist_bytes_total() - bytes0 >= READ_BUDGET_BYTES)) {
		Mtrace__ServerMsg *m;

		r = mtc_next(f.c, 0, &m, NULL, NULL, err, sizeof(err));
		if (r <= 0)
			break;
		n++;
		if (m->msg_case == MTRACE__SERVER_MSG__MSG_GOODBYE) {
			snprintf(err, sizeof(err), "mtraced said goodbye: %s",
			    m->goodbye->reason ? m->goodbye->reason : "");
			mtc_msg_free(m);
			r = -1;
			break;
		}
		handle(m, b);
	}
	evbuffer_free(b);
	if (n)
		sse_pump_all();
	if (r < 0 && errno != EINTR) {
		feed_lost(errno ? err : "mtraced closed the connection");
		return;
	}
	/* Budget spent: frames may wait in the client's buffer with nothing on the
	 * socket to wake us, so come back at the next turn. */
	if (spent)
		event_active(f.rd, EV_READ, 0);
}

static int connect_daemon(char *err, size_t errlen)
{
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	const Mtrace__Hello *h;
	struct evbuffer *b;

	f.c = mtc_connect(f.o->socket, "mtrace-web " MTRACE_VERSION, err, errlen);
	if (!f.c)
		return -1;
	sub.events = true;
	sub.stats_interval_ms = f.o->stats_ms;
	sub.top_n = f.o->top_n;
	sub.label_stats = true;
	if (mtc_subscribe(f.c, &sub) < 0) {
		snprintf(err, errlen, "subscribe: %s", strerror(errno));
		mtc_close(f.c);
		f.c = NULL;
		return -1;
	}
	h = mtc_server_hello(f.c);
	snprintf(f.daemon, sizeof(f.daemon), "%s on %s", h && h->software ? h->software : "mtraced",
	    h && h->host ? h->host : "?");
	f.rd = event_new(f.base, mtc_fd(f.c), EV_READ | EV_PERSIST, on_readable, NULL);
	event_add(f.rd, NULL);
	b = evbuffer_new();
	push_daemon_state(b, true);
	evbuffer_free(b);
	sse_pump_all();
	f.warned = false;
	return 0;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	char err[512];
	struct timeval tv = { 1, 0 };

	if (connect_daemon(err, sizeof(err)) == 0) {
		fprintf(stderr, "mtrace-web: connected to %s\n", f.daemon);
		return;
	}
	if (!f.warned)
		fprintf(stderr, "mtrace-web: %s; trying again every second\n", err);
	f.warned = true;
	evtimer_add(f.retry, &tv);
}

static void feed_lost(const char *why)
{
	struct evbuffer *b = evbuffer_new();
	struct timeval tv = { 1, 0 };

	fprintf(stderr, "mtrace-web: lost mtraced: %s\n", why);
	event_free(f.rd);
	f.rd = NULL;
	mtc_close(f.c);
	f.c = NULL;
	for (size_t i = 0; i < f.ndoms; i++)
		f.doms[i].alive = false;
	push_daemon_state(b, false);
	evbuffer_free(b);
	sse_pump_all();
	f.warned = true;
	evtimer_add(f.retry, &tv);
}

void feed_retry_soon(void)
{
	struct timeval tv = { 1, 0 };

	f.warned = true;
	evtimer_add(f.retry, &tv);
}

int feed_start(struct event_base *base, const struct web_opts *o, char *err, size_t errlen)
{
	f.base = base;
	f.o = o;
	f.retry = evtimer_new(base, on_retry, NULL);
	return connect_daemon(err, errlen);
}

void feed_stop(void)
{
	if (f.rd)
		event_free(f.rd);
	if (f.retry)
		event_free(f.retry);
	mtc_close(f.c);
	if (f.stats)
		mtc_msg_free(f.stats);
	memset(&f, 0, sizeof(f));
}

bool feed_connected(void)
{
	return f.c != NULL;
}
const char *feed_daemon(void)
{
	return f.daemon;
}
const Mtrace__Stats *feed_last_stats(void)
{
	return f.stats ? f.stats->stats : NULL;
}
uint64_t feed_events(void)
{
	return f.events;
}
uint64_t feed_malformed(void)
{
	return f.malformed;
}

void feed_state_json(struct evbuffer *b)
{
	evbuffer_add(b, "[", 1);
	for (size_t i = 0; i < f.ndoms; i++) {
		evbuffer_add_printf(b,
		    "%s{\"domid\":%" PRIu32 ",\"alive\":%s,\"name\":", i ? "," : "",
		    f.doms[i].domid, f.doms[i].alive ? "true" : "false");
		json_str(b, f.doms[i].name);
		evbuffer_add(b, ",\"reason\":", 10);
		json_str(b, f.doms[i].reason);
		evbuffer_add(b, "}", 1);
	}
	evbuffer_add(b, "]", 1);
}
