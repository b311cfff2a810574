/*
 * stream-request.c - the request side of a client connection: frames read off the
 * socket (at most FRAME_MAX_TO_DAEMON each), then Hello, Subscribe and Ping.  A
 * client that breaks the protocol gets an Error and is closed (stream_client_error).
 */
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "clock.h"
#include "clockmap.h"
#include "frame.h"
#include "log.h"
#include "mtrace-proto.h"
#include "shm-ring.h"
#include "state.h"
#include "stream-batch.h"
#include "stream-client.h"
#include "stream-msg.h"
#include "stream-shm.h"

#define PARTIAL_TIMEOUT_S 5 /* a request frame left half-sent this long is bad */

static void domain_up_one(
    uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy, void *arg)
{
	struct stream_client *c = arg;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainUp u = MTRACE__DOMAIN_UP__INIT;
	char nm[256];

	if (!state_domain_matches(domid, c->sub))
		return;
	stream_msg_domain_up(&m, &u, nm, domid, name, rings, clock, legacy);
	stream_client_send_msg(c, &m);
}

/* The maps in force and the links known, after the DomainUps: a client maps its first
 * events with them. */
static void clock_map_one(const struct clockmap_rec *r, void *arg)
{
	struct stream_client *c = arg;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__ClockMap cm;

	if (!state_domain_matches(r->domid, c->sub))
		return;
	stream_msg_clock_map(&m, &cm, r);
	stream_client_send_msg(c, &m);
}

static void evlink_one(const struct evlink *l, void *arg)
{
	struct stream_client *c = arg;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__EvtchnLink el;

	if (!state_domain_matches(l->domid, c->sub))
		return;
	stream_msg_evtchn_link(&m, &el, l);
	stream_client_send_msg(c, &m);
}

/*
 * The answer to shared_memory: the group's region with its memfd (and its eventfd,
 * when the client watches one), behind what the socket holds (the DomainUps just
 * queued), or why not; then the events stay on the socket as without shared_memory.
 */
static void shm_offer(struct stream_client *c, bool asked, bool efd, uint64_t previous_end)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__SharedRing r = MTRACE__SHARED_RING__INIT;
	const char *why = "no events subscribed";
	struct stream_shm *shm;
	int fds[2];

	m.msg_case = MTRACE__SERVER_MSG__MSG_SHARED_RING;
	m.shared_ring = &r;
	r.version = SHM_RING_VERSION;
	r.refused = (char *)"";
	r.previous_end = previous_end;
	if (!asked)
		why = "not asked";
	else if (c->group && (shm = stream_group_shm_attach(c->group, c, c->uid, efd, &why))) {
		r.size = stream_shm_map_size(shm);
		r.start = stream_shm_write_pos(shm);
		r.events_before = stream_shm_events(shm);
		r.wake_fd = efd;
		fds[0] = stream_shm_fd(shm);
		fds[1] = stream_shm_wake_fd(shm);
		c->shm = shm;
		if (stream_client_send_fds(c, &m, fds, efd ? 2 : 1) == 0) {
			log_debug("client %u: events through shared memory", c->id);
			return;
		}
		c->shm = NULL;
		stream_group_shm_detach(c->group, c);
		why = "the socket is full";
		r.size = r.start = r.events_before = 0;
		r.wake_fd = false;
	}
	r.refused = (char *)why;
	log_debug("client %u: no shared memory: %s", c->id, why);
	stream_client_send_msg(c, &m);
}

static void handle_subscribe(struct stream_client *c, Mtrace__ClientMsg *msg)
{
	const Mtrace__Subscribe *s = msg->subscribe;
	uint64_t previous_end = 0;
	bool had_shm;
	const char *why;

	if (!c->hello) {
		stream_client_error(c, MTRACE__ERROR__CODE__BAD_REQUEST, "Subscribe before Hello");
		goto drop;
	}
	if ((why = stream_subscribe_invalid(s))) {
		stream_client_error(c, MTRACE__ERROR__CODE__BAD_REQUEST, "bad Subscribe: %s", why);
		goto drop;
	}
	/* Whatever was accumulated under the old filter goes out first. */
	stream_batch_flush(c->cs->batch);
	had_shm = c->shm != NULL;
	if (c->shm)
		previous_end = stream_shm_write_pos(c->shm);
	if (c->group)
		stream_group_leave(c->group, c);
	c->group = NULL;
	c->shm = NULL;
	if (c->submsg)
		mtrace__client_msg__free_unpacked(c->submsg, NULL);
	c->submsg = msg;
	c->sub = s;
	event_del(c->hello_ev); /* subscribed: the handshake is over */
	if (s->events && !(c->group = stream_group_join(c->cs->batch, c, s))) {
		/* the client must know, not wait for events that will never come */
		stream_client_error(
		    c, MTRACE__ERROR__CODE__UNKNOWN, "cannot take this Subscribe (out of memory)");
		return;
	}
	event_del(c->stats_ev);
	if (s->stats_interval_ms) {
		struct timeval tv = tv_from_ms(s->stats_interval_ms);
		event_add(c->stats_ev, &tv);
	}
	log_debug("client %u: subscribed events=%d stats=%u ms top=%u", c->id, s->events,
	    s->stats_interval_ms, s->top_n);
	state_foreach_domain(domain_up_one, c);
	clockmap_foreach(clock_map_one, c);
	evlink_foreach(evlink_one, c);
	/* and one that read a region learns where its old subscription ends there */
	if (s->shared_memory || had_shm)
		shm_offer(c, s->shared_memory, s->shared_wake_fd, previous_end);
	return;
drop:
	mtrace__client_msg__free_unpacked(msg, NULL);
}

static void handle_msg(struct stream_client *c, Mtrace__ClientMsg *msg)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Pong p = MTRACE__PONG__INIT;

	switch (msg->msg_case) {
	case MTRACE__CLIENT_MSG__MSG_HELLO:
		if (c->hello) {
			stream_client_error(c, MTRACE__ERROR__CODE__BAD_REQUEST, "second Hello");
		} else if (msg->hello->version != MTRACE_PROTOCOL_VERSION) {
			stream_client_error(c, MTRACE__ERROR__CODE__VERSION,
			    "protocol version %u not supported (mtraced speaks %d)",
			    msg->hello->version, MTRACE_PROTOCOL_VERSION);
		} else {
			char sw[65];
			c->hello = true;
			stream_client_hello_rearm(c); /* now for its Subscribe */
			/* one line per client at info: who, with what */
			snprintf(sw, sizeof(sw), "%s",
			    msg->hello->software ? msg->hello->software : "?");
			for (char *q = sw; *q; q++)
				if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
					*q = '?';
			log_info("client %u: %s, pid %ld uid %ld", c->id, sw, (long)c->pid,
			    (long)c->uid);
		}
		break;
	case MTRACE__CLIENT_MSG__MSG_SUBSCRIBE:
		handle_subscribe(c, msg);
		return; /* it keeps or frees msg */
	case MTRACE__CLIENT_MSG__MSG_SHARED_READ:
		stream_shm_read(c->shm, c, msg->shared_read->pos, msg->shared_read->wait);
		break;
	case MTRACE__CLIENT_MSG__MSG_PING:
		p.cookie = msg->ping->cookie;
		m.msg_case = MTRACE__SERVER_MSG__MSG_PONG;
		m.pong = &p;
		stream_client_send_msg(c, &m);
		break;
	default:
		stream_client_error(
		    c, MTRACE__ERROR__CODE__BAD_REQUEST, "empty or unknown request");
		break;
	}
	mtrace__client_msg__free_unpacked(msg, NULL);
}

void stream_client_read_cb(struct bufferevent *bev, void *arg)
{
	struct stream_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	while (!c->closing) {
		size_t len = evbuffer_get_length(in), hdr, mlen;
		size_t pl = len < FRAME_VARINT_MAX ? len : FRAME_VARINT_MAX;
		const uint8_t *p;
		Mtrace__ClientMsg *msg;
		enum frame_status st;

		if (len == 0)
			break;
		/* Only the prefix is made contiguous: frame_parse reads no further than the
		 * varint, and compares the rest against the whole length. */
		p = evbuffer_pullup(in, (ev_ssize_t)pl);
		if (!p)
			break;
		st = frame_parse(p, len, FRAME_MAX_TO_DAEMON, &hdr, &mlen);
		if (st == FRAME_NEED_MORE)
			break;
		if (st == FRAME_BAD) {
			stream_client_error(
			    c, MTRACE__ERROR__CODE__BAD_FRAME, "malformed length prefix");
			break;
		}
		if (st == FRAME_TOO_LARGE) {
			stream_client_error(c, MTRACE__ERROR__CODE__TOO_LARGE,
			    "request of %zu bytes exceeds the %u byte limit", mlen,
			    FRAME_MAX_TO_DAEMON);
			break;
		}
		p = evbuffer_pullup(in, (ev_ssize_t)(hdr + mlen));
		msg = p ? mtrace__client_msg__unpack(NULL, mlen, p + hdr) : NULL;
		evbuffer_drain(in, hdr + mlen);
		if (!msg) {
			stream_client_error(c, MTRACE__ERROR__CODE__BAD_FRAME,
			    "request does not decode as a ClientMsg");
			break;
		}
		handle_msg(c, msg);
	}
	if (c->closing) {
		event_del(c->partial_ev);
	} else if (evbuffer_get_length(in) > 0) {
		struct timeval tv = { PARTIAL_TIMEOUT_S, 0 };
		if (!event_pending(c->partial_ev, EV_TIMEOUT, NULL))
			event_add(c->partial_ev, &tv);
	} else {
		event_del(c->partial_ev);
	}
}
