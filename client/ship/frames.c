/*
 * frames.c - mtraced's messages into the publish queue (frames.h).
 *
 * The session gives each message decoded; it is packed again for NATS.  protobuf-c
 * packs a message the one way, the way mtraced packed it (daemon/stream-blob.c), so the
 * frame is the one mtraced sent.  Error and Goodbye, which end the link, reach on_msg
 * first (see_ends) and are shipped like the rest.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frame.h"
#include "frames.h"
#include "xalloc.h"

#define SUBJECT_MAX (16 + 2 * SUBJECT_TOKEN_MAX)

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The subject token of a domain: its escaped name, or _<domid> before we know it. */
static const char *domain_token(struct ship *s, uint32_t domid, char *tmp, size_t tmplen)
{
	if (domid < SHIP_MAX_DOMID && s->dom_tok[domid])
		return s->dom_tok[domid];
	snprintf(tmp, tmplen, "_%" PRIu32, domid);
	return tmp;
}

static void note_domain(struct ship *s, uint32_t domid, const char *name)
{
	char tok[SUBJECT_TOKEN_MAX];

	if (domid >= SHIP_MAX_DOMID)
		return;
	subject_token_escape(name ? name : "", tok, sizeof(tok));
	free(s->dom_tok[domid]);
	s->dom_tok[domid] = xstrdup(tok);
}

/* m as one frame of the recording format in s->frame: its length. */
static size_t pack(struct ship *s, const Mtrace__ServerMsg *m)
{
	size_t len = mtrace__server_msg__get_packed_size(m), hl;

	if (len + FRAME_VARINT_MAX > s->frame_cap) {
		s->frame_cap = len + FRAME_VARINT_MAX + (len >> 2);
		s->frame = xreallocarray(s->frame, s->frame_cap, 1);
	}
	hl = frame_put_len(s->frame, len);
	return hl + mtrace__server_msg__pack(m, s->frame + hl);
}

static void ship_msg(struct ship *s, const Mtrace__ServerMsg *m)
{
	char subject[SUBJECT_MAX], id[MSGID_MAX], tmp[24];
	const char *dom = "_", *kind = "events";
	uint32_t events = 0;
	bool spare = false; /* queue.h: what may be dropped when the queue is full */
	size_t len;

	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		dom = domain_token(s, m->events->domid, tmp, sizeof(tmp));
		events = (uint32_t)m->events->n_op;
		spare = true;
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		note_domain(s, m->domain_up->domid, m->domain_up->name);
		dom = domain_token(s, m->domain_up->domid, tmp, sizeof(tmp));
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		dom = domain_token(s, m->domain_down->domid, tmp, sizeof(tmp));
		break;
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP: /* the domain's, in order with its events */
		dom = domain_token(s, m->clock_map->domid, tmp, sizeof(tmp));
		break;
	case MTRACE__SERVER_MSG__MSG_EVTCHN_LINK:
		dom = domain_token(s, m->evtchn_link->domid, tmp, sizeof(tmp));
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		if (m->loss->domid || m->loss->ring)
			dom = domain_token(s, m->loss->domid, tmp, sizeof(tmp));
		break;
	case MTRACE__SERVER_MSG__MSG_STATS:
		kind = "stats";
		spare = true;
		break;
	default:
		break;
	}
	snprintf(subject, sizeof(subject), "mtrace.%s.%s.%s", s->host_tok, dom, kind);
	msgid_make(id, sizeof(id), s->id_base, "", ++s->seq);
	len = pack(s, m);
	queue_put(s->q, subject, id, s->frame, len, events, spare);
}

/* SIGTERM came: what mtraced sends until it is quiet for 50 ms (3 s at most) is still
 * shipped (main.c ends the session when the timer fires). */
static void tail_goes_on(struct ship *s)
{
	struct timeval tv = { 0, 50000 };

	if (s->stopping && mono() < s->tail_until)
		evtimer_add(s->tail_ev, &tv);
}

static int subscribe(struct mtc *c, void *arg)
{
	struct ship *s = arg;
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;

	sub.n_domids = s->o.n_domids;
	sub.domids = s->o.domids;
	sub.n_domain_names = s->o.n_names;
	sub.domain_names = s->o.names;
	sub.n_labels = s->o.n_labels;
	sub.labels = s->o.labels;
	sub.events = true;
	sub.stats_interval_ms = s->o.stats_ms;
	return mtc_subscribe(c, &sub);
}

/* Per connection to mtraced: a new id base (msgid.h), so ids never repeat across
 * connections; then the daemon's Hello, first on every connection (readers know where
 * frames come from). */
static void on_up(struct mtc_session *sess, const Mtrace__Hello *h, void *arg)
{
	struct ship *s = arg;

	(void)sess;
	subject_token_escape(s->o.host     ? s->o.host
	        : h && h->host && *h->host ? h->host
	                                   : "localhost",
	    s->host_tok, sizeof(s->host_tok));
	msgid_base(s->id_base, sizeof(s->id_base), s->host_tok);
	s->seq = 0;
	queue_set_host(s->q, s->host_tok, s->id_base);
	s->mtraced_up = true;
	fprintf(
	    stderr, "mtrace-ship: connected to mtraced; publishing as mtrace.%s.>\n", s->host_tok);
	if (h) {
		Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;

		m.msg_case = MTRACE__SERVER_MSG__MSG_HELLO;
		m.hello = (Mtrace__Hello *)h;
		ship_msg(s, &m);
	}
}

static unsigned on_msg(struct mtc_session *sess, Mtrace__ServerMsg *m, void *arg)
{
	struct ship *s = arg;

	(void)sess;
	ship_msg(s, m);
	tail_goes_on(s);
	return 0;
}

static bool on_down(struct mtc_session *sess, const struct mtc_down *d, void *arg)
{
	struct ship *s = arg;

	(void)sess;
	if (!s->mtraced_up)
		return !s->stopping; /* a try that failed: mtraced is not there yet */
	/* mtraced's Error or Goodbye, if it sent one, was shipped by on_msg (see_ends) */
	s->mtraced_up = false;
	if (s->stopping)
		return false;
	fprintf(stderr, "mtrace-ship: mtraced went away (%s); waiting for it\n", d->why);
	return true;
}

int frames_start(struct ship *s, char *err, size_t errlen)
{
	const struct mtc_session_ops ops = {
		.software = "mtrace-ship " MTRACE_VERSION,
		.subscribe = subscribe,
		.on_msg = on_msg,
		.on_up = on_up,
		.on_down = on_down,
		/* mtraced's Error and Goodbye are shipped like its other messages */
		.see_ends = true,
	};

	s->dom_tok = xcalloc(SHIP_MAX_DOMID, sizeof(*s->dom_tok));
	if (!(s->session = mtc_session_new(s->base, s->o.socket, &ops, s))) {
		snprintf(err, errlen, "session: out of memory");
		return -1;
	}
	mtc_session_start(s->session);
	return 0;
}

void frames_stop(struct ship *s)
{
	mtc_session_free(s->session);
	s->session = NULL;
	s->mtraced_up = false;
	if (s->dom_tok)
		for (size_t i = 0; i < SHIP_MAX_DOMID; i++)
			free(s->dom_tok[i]);
	free(s->dom_tok);
	s->dom_tok = NULL;
	free(s->frame);
	s->frame = NULL;
	s->frame_cap = 0;
}
