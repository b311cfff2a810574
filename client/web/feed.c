/*
 * feed.c - mtrace-web's link to mtraced: one subscription (all events, statistics
 * every stats_ms), read from the loop, turned into SSE messages in the history.
 * When mtraced goes away, refuses us or says Goodbye, the browsers are told and the
 * library's session tries again by its policy; the page keeps what it has.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "session.h"
#include "web.h"

/* Per loop turn, so that HTTP is served and the browsers' sockets are written between:
 * a turn must not produce more than a browser can be sent in one (sse.c). */
#define READ_BUDGET       256           /* messages */
#define READ_BUDGET_BYTES (192u * 1024) /* of SSE messages */

static struct {
	const struct web_opts *o;
	struct mtc_session *s;
	void (*on_history)(void); /* new messages in the history (the SSE pump) */
	struct evbuffer *b;       /* the message being made */
	unsigned turn_msgs;       /* read in this loop turn */
	uint64_t turn_bytes0;     /* of SSE messages before it */
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
	evbuffer_add_printf(b, "{\"v\":" JSON_V ",\"type\":\"daemon\",\"connected\":%s,\"daemon\":",
	    up ? "true" : "false");
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

/* MTC_MSG_KEPT when m is kept. */
static unsigned handle(Mtrace__ServerMsg *m, struct evbuffer *b)
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
		return MTC_MSG_KEPT;
	default:
		break;
	}
	return 0;
}

static int subscribe(struct mtc *c, void *arg)
{
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;

	(void)arg;
	sub.events = true;
	sub.stats_interval_ms = f.o->stats_ms;
	sub.top_n = f.o->top_n;
	sub.label_stats = true;
	return mtc_subscribe(c, &sub);
}

static unsigned on_msg(struct mtc_session *s, Mtrace__ServerMsg *m, void *arg)
{
	unsigned r;

	(void)s;
	(void)arg;
	if (f.turn_msgs++ == 0)
		f.turn_bytes0 = hist_bytes_total();
	r = handle(m, f.b);
	/* Per loop turn, so that HTTP is served and the browsers' sockets are written
	 * between. */
	if (f.turn_msgs >= READ_BUDGET || hist_bytes_total() - f.turn_bytes0 >= READ_BUDGET_BYTES)
		r |= MTC_MSG_YIELD;
	return r;
}

static void on_turn(struct mtc_session *s, unsigned n, void *arg)
{
	(void)s;
	(void)arg;
	(void)n;
	f.turn_msgs = 0;
	f.on_history();
}

static void on_up(struct mtc_session *s, const Mtrace__Hello *h, void *arg)
{
	(void)s;
	(void)arg;
	snprintf(f.daemon, sizeof(f.daemon), "%s on %s", h && h->software ? h->software : "mtraced",
	    h && h->host ? h->host : "?");
	push_daemon_state(f.b, true);
	f.on_history();
	if (f.warned)
		fprintf(stderr, "mtrace-web: connected to %s\n", f.daemon);
	f.warned = false;
}

/* mtraced went away, refused us (Error) or said Goodbye: the browsers are told, the page
 * keeps what it has, and the session tries again. */
static bool on_down(struct mtc_session *s, const struct mtc_down *d, void *arg)
{
	(void)s;
	(void)arg;
	f.turn_msgs = 0;
	if (d->kind == MTC_DOWN_CONNECT) {
		if (!f.warned)
			fprintf(stderr, "mtrace-web: %s; trying again\n", d->why);
		f.warned = true;
		return true;
	}
	fprintf(stderr, "mtrace-web: lost mtraced: %s\n", d->why);
	for (size_t i = 0; i < f.ndoms; i++)
		f.doms[i].alive = false;
	push_daemon_state(f.b, false);
	f.on_history();
	f.warned = true;
	return true;
}

void feed_retry_soon(void)
{
	f.warned = true;
	if (f.s)
		mtc_session_retry(f.s);
}

int feed_start(struct event_base *base, const struct web_opts *o, void (*on_history)(void),
    char *err, size_t errlen)
{
	static const struct mtc_session_ops ops = {
		.software = "mtrace-web " MTRACE_VERSION,
		.subscribe = subscribe,
		.on_msg = on_msg,
		.on_turn = on_turn,
		.on_up = on_up,
		.on_down = on_down,
	};

	f.o = o;
	f.on_history = on_history;
	if (!(f.b = evbuffer_new()) || !(f.s = mtc_session_new(base, o->socket, &ops, NULL))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return mtc_session_connect(f.s, err, errlen);
}

void feed_stop(void)
{
	mtc_session_free(f.s);
	if (f.b)
		evbuffer_free(f.b);
	if (f.stats)
		mtc_msg_free(f.stats);
	memset(&f, 0, sizeof(f));
}

bool feed_connected(void)
{
	return f.s && mtc_session_up(f.s);
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
