/*
 * feed.c - mtrace-web's session with its source (client/lib/source.h): one subscription
 * (all events, statistics every stats_ms), read from the loop, turned into SSE messages
 * in the history.  When mtraced goes away, refuses us or says Goodbye, the browsers are
 * told and the library's session tries again by its policy; the page keeps what it has.
 *
 * A recording (-i) is read through once and the page keeps it.  The fleet stream
 * (--nats) has many hosts: the same handling, with the host in every message and in
 * each domain's identity; NATS going away and coming back is told as mtraced's link.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "mtrace-ring.h"
#include "sat.h"
#include "session.h"
#include "timeline.h"
#include "web.h"

/* Per loop turn, so that HTTP is served and the browsers' sockets are written between:
 * a turn must not produce more than a browser can be sent in one (sse.c). */
#define READ_BUDGET       256           /* messages */
#define READ_BUDGET_BYTES (192u * 1024) /* of SSE messages */
/* The stats pushed to the browsers each second, one host's in about this many bytes. */
#define SSE_STATS_MAX (1u << 20)

static struct {
	const struct web_opts *o;
	struct mtc_session *s;
	void (*on_history)(void); /* new messages in the history (the SSE pump) */
	struct evbuffer *b;       /* the message being made */
	unsigned turn_msgs;       /* read in this loop turn */
	uint64_t turn_bytes0;     /* of SSE messages before it */
	char daemon[256];
	struct tl *tl; /* the host timeline: each batch's offset onto it */
	bool warned, fleet;
	uint64_t events, malformed; /* saturating */
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

/* In the fleet every message says its host, second after "v" (docs/json.md): the
 * host's name is hostile text like a guest's, escaped by json_str. */
static void add_host(struct evbuffer *b, unsigned host)
{
	if (f.fleet)
		json_put_host(b, tab_host_at(host)->name);
}

/* The link's state (without --nats: mtraced's; with it: NATS's, whose daemon is the
 * stream), or with host one host's daemon as its Hello and Goodbye say. */
static void push_daemon_state(struct evbuffer *b, bool up, const struct tab_host *h)
{
	json_daemon(b, h ? h->name : NULL, up, h ? h->daemon : f.daemon);
	push("daemon", b, 0);
}

/* A batch's event-channel sends and receives, paired across domains on the host
 * timeline by the one pairing every reader uses (timeline.h), so the page draws the
 * pairs mtrace-cat prints: each pair, once its later end comes, an SSE pair after the
 * batch that holds that end (the page has both ends' threads by then). */
static void pairs(unsigned host, const Mtrace__EventBatch *eb, struct evbuffer *b)
{
	const char *hn = tab_host_at(host)->name;
	const struct tl_clock *tc = tl_clock(f.tl, hn, eb->domid, eb->clock);
	uint64_t ts = eb->base_ts;
	struct tl_pair p;

	/* json_batch took it: its columns are n_op long */
	for (size_t i = 0; i < eb->n_op; i++) {
		ts += (uint64_t)eb->ts_delta[i];
		if (eb->op[i] != MTRACE_OP_EVTCHN_SEND && eb->op[i] != MTRACE_OP_EVTCHN_RECV)
			continue;
		struct tl_end e = { .domid = eb->domid,
			.port = (uint32_t)eb->arg[i],
			.ring = eb->ring,
			.guest_ns = ts,
			.thread = eb->thread[i] };
		tl_map(tc, ts, &e.at);
		if (!tl_evtchn(f.tl, hn, eb->op[i] == MTRACE_OP_EVTCHN_SEND, &e, &p))
			continue;
		json_evtchn_pair(b, &p);
		add_host(b, host);
		push("pair", b, 0);
	}
}

/* MTC_MSG_KEPT when m is kept (never one the session made: a Stats is its own). */
static unsigned handle(unsigned host, Mtrace__ServerMsg *m, struct evbuffer *b, uint64_t recv_ms)
{
	struct tab_host *h = tab_host_at(host);
	struct tab_dom *d;

	/* In the fleet a host is up from its first message (the stream may be read from
	 * after its Hello) until its Goodbye; the page is told. */
	if (f.fleet && !h->up && m->msg_case != MTRACE__SERVER_MSG__MSG_GOODBYE &&
	    m->msg_case != MTRACE__SERVER_MSG__MSG_HELLO) {
		h->up = true;
		push_daemon_state(b, true, h);
	}
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS: {
		struct tl_time at;
		tl_map(tl_clock(f.tl, h->name, m->events->domid, m->events->clock),
		    m->events->base_ts, &at);
		if (json_batch(b, m->events, recv_ms, &at) < 0) {
			evbuffer_drain(b, evbuffer_get_length(b));
			sat_inc(&f.malformed, 1);
			break;
		}
		add_host(b, host);
		sat_inc(&f.events, m->events->n_op);
		sat_inc(&h->events, m->events->n_op);
		/* a domain's batch: it is heard from (and alive, whatever a Down said) */
		if ((d = tab_dom(host, m->events->domid, false)))
			d->alive = true;
		push("b", b, (uint32_t)m->events->n_op);
		pairs(host, m->events, b);
		break;
	}
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP:
		json_clock_map(b, m->clock_map);
		add_host(b, host);
		push("clock", b, 0);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		d = tab_dom(host, m->domain_up->domid, true);
		d->alive = true;
		snprintf(
		    d->name, sizeof(d->name), "%s", m->domain_up->name ? m->domain_up->name : "");
		d->reason[0] = 0;
		json_domain_up(b, m->domain_up);
		add_host(b, host);
		push("up", b, 0);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		d = tab_dom(host, m->domain_down->domid, true);
		d->alive = false;
		snprintf(d->reason, sizeof(d->reason), "%s",
		    m->domain_down->reason ? m->domain_down->reason : "");
		json_domain_down(b, m->domain_down);
		add_host(b, host);
		push("down", b, 0);
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		json_loss(b, m->loss);
		add_host(b, host);
		push("loss", b, 0);
		break;
	case MTRACE__SERVER_MSG__MSG_VCPU:
		if (json_vcpu(b, m->vcpu) < 0) {
			evbuffer_drain(b, evbuffer_get_length(b));
			f.malformed++;
			break;
		}
		add_host(b, host);
		push("vcpu", b, 0);
		break;
	case MTRACE__SERVER_MSG__MSG_STATS:
		/* each part of a Stats mtrace-ship cut as it comes (the page takes each
		 * domain's figures from the one naming it); tables.c keeps the parts of one */
		json_stats_within(b, m->stats, false, SSE_STATS_MAX);
		add_host(b, host);
		push("stats", b, 0);
		return tab_stats(host, m) ? MTC_MSG_KEPT : 0;
	case MTRACE__SERVER_MSG__MSG_HELLO:
		/* Stored: in the fleet stream a host's mtrace-ship (re)connected to its
		 * mtraced; a recording's daemon.  (Live the session takes the Hello: on_up.) */
		if (!f.fleet) {
			snprintf(f.daemon, sizeof(f.daemon), "%s on %s (recorded)",
			    m->hello->software ? m->hello->software : "mtraced",
			    m->hello->host ? m->hello->host : "?");
			push_daemon_state(b, true, NULL);
			break;
		}
		snprintf(h->daemon, sizeof(h->daemon), "%s on %s",
		    m->hello->software ? m->hello->software : "mtraced",
		    m->hello->host ? m->hello->host : "?");
		h->up = true;
		push_daemon_state(b, true, h);
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		/* Stored: that daemon stopped then.  (Live the session ends the link.) */
		h->up = false;
		tab_host_gone(host);
		push_daemon_state(b, false, f.fleet ? h : NULL);
		break;
	default:
		break;
	}
	return 0;
}

/* A host's clock against the NATS server's, measured anew (its Stats): the page is told
 * when the estimate moved, and shifts the host's events by it onto the fleet's axis. */
static void host_skew(unsigned host, const struct fleet_skew_est *e)
{
	struct tab_host *h = tab_host_at(host);
	bool moved =
	    e->skew_ns != h->skew.skew_ns || e->spread_ns != h->skew.spread_ns || !h->skew.samples;

	h->skew = *e;
	if (!moved)
		return;
	json_host_skew(f.b, h->name, e->skew_ns, e->spread_ns, e->samples);
	push("skew", f.b, 0);
}

static void subscription(Mtrace__Subscribe *sub, void *arg)
{
	(void)arg;
	sub->events = true;
	sub->stats_interval_ms = f.o->stats_ms;
	sub->top_n = f.o->top_n;
	sub->label_stats = true;
}

static unsigned on_msg(struct mtc_session *s, Mtrace__ServerMsg *m, void *arg)
{
	const struct mtc_rec *rec = mtc_session_rec(s);
	int k = tab_host(rec->host);
	unsigned r;

	(void)arg;
	if (rec->stored_ms)
		tab_host_at((unsigned)k)->last_ms = rec->stored_ms;
	if (rec->skew)
		host_skew((unsigned)k, rec->skew);
	if (f.turn_msgs++ == 0)
		f.turn_bytes0 = hist_bytes_total();
	/* In the fleet, when the stream stored it, about when mtraced sent it: a history
	 * read from the stream lines up on the page as it happened, host beside host. */
	tl_msg(f.tl, rec->host, m);
	r = handle((unsigned)k, m, f.b, rec->stored_ms ? rec->stored_ms : wall_ms());
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
	(void)arg;
	if (mtc_session_stored(s)) {
		/* a recording is open, NATS (re)connected and subscribed: the hosts' own
		 * states stay as their messages said */
		if (f.fleet && f.warned)
			fprintf(stderr, "mtrace-web: connected to NATS\n");
		f.warned = false;
		if (f.fleet) {
			push_daemon_state(f.b, true, NULL);
			f.on_history();
		}
		return;
	}
	snprintf(f.daemon, sizeof(f.daemon), "%s on %s", h && h->software ? h->software : "mtraced",
	    h && h->host ? h->host : "?");
	push_daemon_state(f.b, true, NULL);
	f.on_history();
	if (f.warned)
		fprintf(stderr, "mtrace-web: connected to %s\n", f.daemon);
	f.warned = false;
}

/* mtraced went away, refused us (Error) or said Goodbye: the browsers are told, the page
 * keeps what it has, and the session tries again.  NATS went: libnats brings it back.
 * The recording ended: the page keeps it. */
static bool on_down(struct mtc_session *s, const struct mtc_down *d, void *arg)
{
	(void)arg;
	f.turn_msgs = 0;
	if (d->kind == MTC_DOWN_CONNECT) {
		if (!f.warned)
			fprintf(stderr, "mtrace-web: %s; trying again\n", d->why);
		f.warned = true;
		return true;
	}
	if (d->recovers)
		fprintf(stderr, "mtrace-web: %s\n", d->why);
	else if (mtc_session_stored(s))
		fprintf(stderr, "mtrace-web: %s; serving what came before\n", d->why);
	else
		fprintf(stderr, "mtrace-web: lost mtraced: %s\n", d->why);
	if (!mtc_session_stored(s))
		tab_host_gone(0);
	push_daemon_state(f.b, false, NULL);
	f.on_history();
	f.warned = !mtc_session_stored(s) || d->recovers;
	return !mtc_session_stored(s);
}

void feed_retry_soon(void)
{
	f.warned = true;
	if (f.s)
		mtc_session_retry(f.s);
}

bool feed_fleet(void)
{
	return f.fleet;
}

int feed_start(struct event_base *base, const struct web_opts *o, void (*on_history)(void),
    char *err, size_t errlen)
{
	static const struct mtc_session_ops ops = {
		.software = "mtrace-web " MTRACE_VERSION,
		.subscription = subscription,
		.on_msg = on_msg,
		.on_turn = on_turn,
		.on_up = on_up,
		.on_down = on_down,
	};
	struct mtc_source *src;

	f.o = o;
	f.on_history = on_history;
	/* The fleet's link is the stream; its hosts come as their messages do.  Without
	 * it, the one host: mtraced's, or the recording's. */
	f.fleet = o->src.nats != NULL;
	if (f.fleet)
		snprintf(f.daemon, sizeof(f.daemon), "the fleet stream MTRACE in NATS");
	else if (o->src.input)
		snprintf(f.daemon, sizeof(f.daemon), "the recording %s", o->src.input);
	if (!f.fleet)
		(void)tab_host("");
	if (!(f.b = evbuffer_new()) || !(f.tl = tl_new())) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	tl_forget_gone(f.tl); /* it runs as long as the host: domains come and go */
	if (!(src = mtc_source_new(&o->src, err, errlen)))
		return -1;
	if (!(f.s = mtc_session_new_source(base, src, &ops, NULL))) {
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
	tab_free();
	tl_free(f.tl);
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
/* Without --nats: mtraced's (the fleet's are per host: feed_hosts_json). */
const Mtrace__Stats *feed_last_stats(void)
{
	return f.fleet ? NULL : tab_stats_of(0);
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
	tab_domains_json(b, f.fleet);
}

void feed_hosts_json(struct evbuffer *b)
{
	tab_hosts_json(b);
}

int feed_bad_json(struct evbuffer *b)
{
	return f.s ? mtc_source_bad_json(mtc_session_source(f.s), b) : -1;
}
