/*
 * stream.c - mtraced's client socket: listening, one bufferevent per client, the
 * request side of proto/mtrace.proto, per-client queues, statistics timers and the
 * broadcast of domain and loss notices.  Event batches are built in stream-batch.c.
 *
 * Nothing here may block the loop or let one client hurt another: a client's output
 * is capped at client_queue_bytes, past which its event batches are dropped and
 * counted (and it is told once it drains), its statistics coalesced, and a client
 * that breaks the protocol gets an Error and is closed.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "config.h"
#include "frame.h"
#include "log.h"
#include "state.h"
#include "stream-int.h"
#include "stream.h"

#define PROTOCOL_VERSION	1
/* Control messages (domain up/down, loss, errors) are small and few; a client that
 * lets even those pile up this far past its cap is not reading at all and is closed. */
#define CONTROL_SLACK		(1u << 20)
#define PARTIAL_TIMEOUT_S	5	/* a request frame left half-sent this long is bad */
#define CLOSE_TIMEOUT_S		2	/* time to flush an Error before closing anyway */
#define ACCEPT_PAUSE_MS		1000
#define MAX_SINGLE_WRITE	(64u << 20)	/* no cap of ours: the socket's is enough */
#define SOCKET_SNDBUF		(2 << 20)
/* Clients past this many events a second get coalesced writes (client_coalesce_us),
 * measured over windows of COALESCE_WINDOW_NS: far above the rates where the latency
 * of single events matters, far below where wake-ups dominate. */
#define COALESCE_WINDOW_NS	10000000u
/*
 * Messages shorter than this are copied into the client's buffer, not queued by
 * reference: libevent gives every reference a chain of its own (>= 1 KiB with its
 * header), which for a Pong of a few bytes is 100 times the payload that the queue
 * cap counts.  Copies fill chains end to end, so what is counted is what is held:
 * at most twice the counted bytes with the chains of the longer messages
 * (docs/man/mtraced.8: memory).
 */
#define COPY_MAX		2048u

struct stream_client {
	TAILQ_ENTRY(stream_client) entry;
	struct bufferevent *bev;
	unsigned id;
	pid_t pid;
	uid_t uid;
	bool hello;		/* the client's Hello was accepted */
	bool closing;		/* flushing a last message, then close */
	bool stats_pending;	/* a Stats came due while congested */
	Mtrace__ClientMsg *submsg;	/* owns *sub */
	const Mtrace__Subscribe *sub;
	struct stream_group *group;
	struct event *stats_ev;
	struct event *partial_ev;
	struct event *close_ev;
	struct event *hello_ev;	/* handshake deadline */
	struct evbuffer_cb_entry *out_cb;	/* keeps queued_total */
	uint64_t dropped_total;
	uint64_t dropped_unreported;
	/* write coalescing for fast clients: events in the current rate window */
	uint64_t win_start_ns, win_events, last_write_ns;
	bool fast;		/* past COALESCE_RATE in the last window */
	bool deferred;		/* writes off until the coalescing tick */
	bool write_due;		/* writes on, data queued: the next turn writes it */
};

static TAILQ_HEAD(, stream_client) clients = TAILQ_HEAD_INITIALIZER(clients);
static unsigned nclients;
static unsigned next_id;
static struct event_base *ev_base;
static struct evconnlistener *listener;
static struct event *accept_pause_ev;
static bool accept_paused;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static bool own_socket;		/* we created it (not systemd): remove at shutdown */
static char host[256];

static unsigned max_clients = 64;
static unsigned max_per_uid = 64;
static unsigned hello_ms = 5000;
static size_t queue_cap = 8u << 20;
static size_t queue_total_cap = SIZE_MAX;	/* all clients' queues together */
static size_t queued_total;			/* bytes in all clients' output buffers */
static uint64_t coalesce_rate = 1000000u;
static uint64_t coalesce_ns = 2000000u;
static struct event *coalesce_ev;	/* one tick resumes every deferred client */
static uint64_t writes_put_off;		/* for the log at shutdown */
static unsigned max_top_n = 1000;

static void client_free(struct stream_client *c);
static void write_resume(struct stream_client *c);

static size_t
out_len(const struct stream_client *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/* Queue one framed message: small ones copied, large ones by reference (COPY_MAX). */
static int
queue_bytes(struct stream_client *c, struct stream_blob *b)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	if (b->len < COPY_MAX)
		return evbuffer_add(out, b->data, b->len);
	return stream_blob_queue(out, b);
}

static void
queue_blob(struct stream_client *c, struct stream_blob *b)
{
	if (c->closing || !b)
		return;
	if (out_len(c) + b->len > queue_cap + CONTROL_SLACK) {
		/* at debug: a client that does not read must not be able to fill the log */
		log_debug("client %u: not reading, replies past %zu bytes: closing", c->id,
			  queue_cap + CONTROL_SLACK);
		c->closing = true;
		bufferevent_disable(c->bev, EV_READ | EV_WRITE);
		/* Freed from its own close timer, never under a caller's feet. */
		event_active(c->close_ev, EV_TIMEOUT, 0);
		return;
	}
	if (queue_bytes(c, b) < 0)
		log_debug("client %u: out of memory queueing a message", c->id);
}

/* Keeps queued_total: libevent calls this for every change of an output buffer. */
static void
out_changed(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	queued_total += info->n_added;
	queued_total -= info->n_deleted;
}

/* Events may be queued for c: below its own cap, and below the total cap or within
 * its fair share of it (so that clients that never read cannot starve a new one). */
static bool
queue_room(const struct stream_client *c, size_t len)
{
	size_t mine = out_len(c) + len;

	if (mine > queue_cap)
		return false;
	return queued_total + len <= queue_total_cap || mine <= queue_total_cap / max_clients;
}

static void
send_msg(struct stream_client *c, const Mtrace__ServerMsg *m)
{
	struct stream_blob *b = stream_blob_pack(m);

	if (!b) {
		log_warn("client %u: cannot encode a message", c->id);
		return;
	}
	queue_blob(c, b);
	stream_blob_unref(b);
}

/* Tell the client why, flush what can be flushed, then close. */
static void
send_error(struct stream_client *c, Mtrace__Error__Code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void
send_error(struct stream_client *c, Mtrace__Error__Code code, const char *fmt, ...)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Error e = MTRACE__ERROR__INIT;
	struct timeval tv = { CLOSE_TIMEOUT_S, 0 };
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_debug("client %u (pid %ld): %s; closing", c->id, (long)c->pid, text);
	e.code = code;
	e.message = text;
	m.msg_case = MTRACE__SERVER_MSG__MSG_ERROR;
	m.error = &e;
	send_msg(c, &m);
	if (c->closing)
		return;
	c->closing = true;
	write_resume(c);
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
	event_add(c->close_ev, &tv);
}

/* Names and labels come from guests (xenstore, rings): keep the message valid proto3. */
static void
stats_fix_strings(Mtrace__Stats *s)
{
	size_t i, k;

	for (i = 0; i < s->n_domains; i++) {
		stream_utf8_fix(s->domains[i]->name);
		stream_utf8_fix(s->domains[i]->state);
		for (k = 0; k < s->domains[i]->n_counters; k++)
			stream_utf8_fix(s->domains[i]->counters[k]->name);
	}
	for (i = 0; i < s->n_threads; i++) {
		stream_utf8_fix(s->threads[i]->label);
		stream_utf8_fix(s->threads[i]->failure);
	}
	for (i = 0; i < s->n_labels; i++)
		stream_utf8_fix(s->labels[i]->label);
}

/*
 * Guests choose how large their tables are (labels, counters, threads): a Stats that
 * would not fit the frame is cut, largest table first, and says how much it left out
 * (labels_omitted, threads_omitted, counters_omitted) rather than not being sent.
 */
static void
stats_fit(const Mtrace__ServerMsg *m, Mtrace__Stats *s)
{
	const size_t target = FRAME_MAX_TO_CLIENT - FRAME_MAX_TO_CLIENT / 16;
	size_t len;

	while ((len = mtrace__server_msg__get_packed_size(m)) > FRAME_MAX_TO_CLIENT) {
		/* keep the share of the table that would bring the whole under target */
		size_t *n = s->n_labels ? &s->n_labels : s->n_threads ? &s->n_threads : NULL;
		size_t keep;

		if (n) {
			keep = (size_t)((double)*n * ((double)target / (double)len));
			if (keep >= *n)
				keep = *n - 1;
			if (n == &s->n_labels)
				s->labels_omitted += (uint32_t)(*n - keep);
			else
				s->threads_omitted += (uint32_t)(*n - keep);
			*n = keep;
			continue;
		}
		/* then the counters of every domain, the longest lists first */
		size_t most = 0;
		for (size_t i = 0; i < s->n_domains; i++)
			if (s->domains[i]->n_counters > most)
				most = s->domains[i]->n_counters;
		if (most == 0)
			return;		/* domains alone: cannot happen below max_guests */
		most = (size_t)((double)most * ((double)target / (double)len));
		for (size_t i = 0; i < s->n_domains; i++) {
			Mtrace__DomainStats *d = s->domains[i];
			if (d->n_counters > most) {
				d->counters_omitted += (uint32_t)(d->n_counters - most);
				d->n_counters = most;
			}
		}
	}
}

static void
send_stats(struct stream_client *c)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Subscribe sub = *c->sub;
	Mtrace__Stats *s;

	c->stats_pending = false;
	if (sub.top_n > max_top_n)
		sub.top_n = max_top_n;
	s = state_stats(&sub, c->dropped_total);
	if (!s) {
		log_warn("client %u: no statistics (out of memory)", c->id);
		return;
	}
	s->dropped_for_client = c->dropped_total;
	s->clients = nclients;
	stats_fix_strings(s);
	m.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
	m.stats = s;
	stats_fit(&m, s);
	send_msg(c, &m);
	state_stats_free(s);
}

static void
send_loss_notice(struct stream_client *c)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;

	l.dropped_for_client = c->dropped_unreported;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	c->dropped_unreported = 0;
	send_msg(c, &m);
}

static bool
congested(const struct stream_client *c)
{
	return c->dropped_unreported > 0 || out_len(c) > queue_cap / 2;
}

static void
write_resume(struct stream_client *c)
{
	if (!c->deferred)
		return;
	c->deferred = false;
	c->write_due = true;
	if (!c->closing)
		bufferevent_enable(c->bev, EV_WRITE);
}

/* One tick for all: per-client timers would each cost a loop turn of their own. */
static void
coalesce_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream_client *c;

	TAILQ_FOREACH(c, &clients, entry)
		write_resume(c);
}

/*
 * Interrupt moderation for sockets: every write wakes the client, a context switch on
 * each side, which with many fast clients costs more than the events themselves.  A
 * client taking over COALESCE_RATE events a second gets one write per coalesce_ns at
 * most; the batches meanwhile wait in its queue (a few hundred KiB at these rates).
 */
static void
coalesce(struct stream_client *c, size_t n)
{
	uint64_t now = state_now_ns();

	if (now - c->win_start_ns >= COALESCE_WINDOW_NS) {
		c->fast = c->win_events * 1000000000u >= coalesce_rate * (now - c->win_start_ns);
		c->win_start_ns = now;
		c->win_events = 0;
	}
	c->win_events += n;
	/* write_due: a write is on its way (write_cb clears it); turning writes off now
	 * would put it off again and again */
	if (!c->fast || !coalesce_ns || c->deferred || c->write_due || c->closing)
		return;
	if (now - c->last_write_ns >= coalesce_ns) {
		c->write_due = true;
		return;
	}
	if (!evtimer_pending(coalesce_ev, NULL)) {
		uint64_t left = c->last_write_ns + coalesce_ns - now;
		struct timeval tv = { (time_t)(left / 1000000000u),
				      (suseconds_t)(left % 1000000000u / 1000u) };

		if (evtimer_add(coalesce_ev, &tv) < 0)
			return;
	}
	c->deferred = true;
	writes_put_off++;
	bufferevent_disable(c->bev, EV_WRITE);
}

void
stream_client_send_events(struct stream_client *c, struct stream_blob *b, size_t n)
{
	if (c->closing)
		return;
	/* Once dropping, keep dropping until the queue has drained to the low-water mark
	 * and the client was told: a client must never see a gap it was not told of. */
	if (b && c->dropped_unreported == 0 && queue_room(c, b->len) && queue_bytes(c, b) == 0) {
		coalesce(c, n);
		return;
	}
	c->dropped_total += n;
	c->dropped_unreported += n;
	/* Nothing queued (a batch larger than the whole cap, out of memory, or the total
	 * cap reached): no write will come to trigger the notice, so it goes now.  With
	 * anything queued, write_cb sends it once that is written: a notice per dropped
	 * batch would itself pile up in a client that does not read. */
	if (out_len(c) == 0)
		send_loss_notice(c);
}

static void
stats_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream_client *c = arg;

	if (c->closing || !c->sub)
		return;
	/* Only the newest snapshot matters: a congested client gets one when it drains. */
	if (congested(c))
		c->stats_pending = true;
	else
		send_stats(c);
}

static void
close_cb(evutil_socket_t fd, short what, void *arg)
{
	client_free(arg);
}

static void
hello_cb(evutil_socket_t fd, short what, void *arg)
{
	send_error(arg, MTRACE__ERROR__CODE__TIMEOUT, "no Hello within %u ms", hello_ms);
}

static void
partial_cb(evutil_socket_t fd, short what, void *arg)
{
	send_error(arg, MTRACE__ERROR__CODE__BAD_FRAME,
		   "truncated frame: request incomplete after %d s", PARTIAL_TIMEOUT_S);
}

/* A DomainUp in m/u; the name (guest-written in xenstore) is made valid UTF-8 in nm. */
static void
domain_up_msg(Mtrace__ServerMsg *m, Mtrace__DomainUp *u, char nm[static 256], uint32_t domid,
	      const char *name, uint32_t rings, uint32_t clock, bool legacy)
{
	snprintf(nm, 256, "%s", name ? name : "");
	stream_utf8_fix(nm);
	u->domid = domid;
	u->name = nm;
	u->rings = rings;
	u->clock = clock;
	u->legacy = legacy;
	m->msg_case = MTRACE__SERVER_MSG__MSG_DOMAIN_UP;
	m->domain_up = u;
}

static void
domain_up_one(uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy,
	      void *arg)
{
	struct stream_client *c = arg;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainUp u = MTRACE__DOMAIN_UP__INIT;
	char nm[256];

	if (!state_domain_matches(domid, c->sub))
		return;
	domain_up_msg(&m, &u, nm, domid, name, rings, clock, legacy);
	send_msg(c, &m);
}

static void
handle_subscribe(struct stream_client *c, Mtrace__ClientMsg *msg)
{
	const Mtrace__Subscribe *s = msg->subscribe;
	const char *why;

	if (!c->hello) {
		send_error(c, MTRACE__ERROR__CODE__BAD_REQUEST, "Subscribe before Hello");
		goto drop;
	}
	if ((why = stream_subscribe_invalid(s))) {
		send_error(c, MTRACE__ERROR__CODE__BAD_REQUEST, "bad Subscribe: %s", why);
		goto drop;
	}
	/* Whatever was accumulated under the old filter goes out first. */
	stream_batch_flush();
	if (c->group)
		stream_group_leave(c->group, c);
	c->group = NULL;
	if (c->submsg)
		mtrace__client_msg__free_unpacked(c->submsg, NULL);
	c->submsg = msg;
	c->sub = s;
	if (s->events && !(c->group = stream_group_join(c, s))) {
		/* the client must know, not wait for events that will never come */
		send_error(c, MTRACE__ERROR__CODE__UNKNOWN, "cannot take this Subscribe (out of memory)");
		return;
	}
	event_del(c->stats_ev);
	if (s->stats_interval_ms) {
		struct timeval tv = { s->stats_interval_ms / 1000,
				      (s->stats_interval_ms % 1000) * 1000 };
		event_add(c->stats_ev, &tv);
	}
	log_debug("client %u: subscribed events=%d stats=%u ms top=%u", c->id, s->events,
		  s->stats_interval_ms, s->top_n);
	state_foreach_domain(domain_up_one, c);
	return;
drop:
	mtrace__client_msg__free_unpacked(msg, NULL);
}

static void
handle_msg(struct stream_client *c, Mtrace__ClientMsg *msg)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Pong p = MTRACE__PONG__INIT;

	switch (msg->msg_case) {
	case MTRACE__CLIENT_MSG__MSG_HELLO:
		if (c->hello) {
			send_error(c, MTRACE__ERROR__CODE__BAD_REQUEST, "second Hello");
		} else if (msg->hello->version != PROTOCOL_VERSION) {
			send_error(c, MTRACE__ERROR__CODE__VERSION,
				   "protocol version %u not supported (mtraced speaks %d)",
				   msg->hello->version, PROTOCOL_VERSION);
		} else {
			char sw[65];
			c->hello = true;
			event_del(c->hello_ev);
			/* one line per client at info: who, with what */
			snprintf(sw, sizeof(sw), "%s", msg->hello->software ? msg->hello->software : "?");
			for (char *q = sw; *q; q++)
				if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
					*q = '?';
			log_info("client %u: %s, pid %ld uid %ld", c->id, sw, (long)c->pid,
				 (long)c->uid);
		}
		break;
	case MTRACE__CLIENT_MSG__MSG_SUBSCRIBE:
		handle_subscribe(c, msg);
		return;		/* it keeps or frees msg */
	case MTRACE__CLIENT_MSG__MSG_PING:
		p.cookie = msg->ping->cookie;
		m.msg_case = MTRACE__SERVER_MSG__MSG_PONG;
		m.pong = &p;
		send_msg(c, &m);
		break;
	default:
		send_error(c, MTRACE__ERROR__CODE__BAD_REQUEST, "empty or unknown request");
		break;
	}
	mtrace__client_msg__free_unpacked(msg, NULL);
}

static void
read_cb(struct bufferevent *bev, void *arg)
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
			send_error(c, MTRACE__ERROR__CODE__BAD_FRAME, "malformed length prefix");
			break;
		}
		if (st == FRAME_TOO_LARGE) {
			send_error(c, MTRACE__ERROR__CODE__TOO_LARGE,
				   "request of %zu bytes exceeds the %u byte limit", mlen,
				   FRAME_MAX_TO_DAEMON);
			break;
		}
		p = evbuffer_pullup(in, (ev_ssize_t)(hdr + mlen));
		msg = p ? mtrace__client_msg__unpack(NULL, mlen, p + hdr) : NULL;
		evbuffer_drain(in, hdr + mlen);
		if (!msg) {
			send_error(c, MTRACE__ERROR__CODE__BAD_FRAME,
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

static void
write_cb(struct bufferevent *bev, void *arg)
{
	struct stream_client *c = arg;

	c->write_due = false;
	c->last_write_ns = state_now_ns();
	if (c->closing) {
		if (out_len(c) == 0)
			client_free(c);
		return;
	}
	/* Drained to the low-water mark: report what this client lost, then the newest
	 * statistics it missed. */
	if (c->dropped_unreported > 0)
		send_loss_notice(c);
	if (c->stats_pending && c->sub)
		send_stats(c);
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct stream_client *c = arg;

	if (what & BEV_EVENT_EOF)
		log_debug("client %u: disconnected", c->id);
	else if (what & BEV_EVENT_ERROR)
		log_debug("client %u: %s", c->id, strerror(EVUTIL_SOCKET_ERROR()));
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		client_free(c);
}

static void
client_free(struct stream_client *c)
{
	if (c->group)
		stream_group_leave(c->group, c);
	if (c->submsg)
		mtrace__client_msg__free_unpacked(c->submsg, NULL);
	event_free(c->stats_ev);
	event_free(c->partial_ev);
	event_free(c->close_ev);
	event_free(c->hello_ev);
	evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->out_cb);
	queued_total -= out_len(c);
	bufferevent_free(c->bev);
	TAILQ_REMOVE(&clients, c, entry);
	nclients--;
	free(c);
	/* A descriptor was freed: accepting may work again. */
	if (accept_paused && listener) {
		event_del(accept_pause_ev);
		accept_paused = false;
		evconnlistener_enable(listener);
	}
}

static int
pack_frame(const Mtrace__ServerMsg *m, uint8_t *buf, size_t size)
{
	size_t len = mtrace__server_msg__get_packed_size(m);
	size_t hl;

	if (len + FRAME_VARINT_MAX > size)
		return -1;
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(m, buf + hl);
	return (int)(hl + len);
}

static void
refuse(int fd, const char *why)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Error e = MTRACE__ERROR__INIT;
	uint8_t buf[512];
	int n;

	e.code = MTRACE__ERROR__CODE__TOO_MANY_CLIENTS;
	e.message = (char *)why;
	m.msg_case = MTRACE__SERVER_MSG__MSG_ERROR;
	m.error = &e;
	/* A fresh socket's buffer always takes a few hundred bytes: never blocks. */
	n = pack_frame(&m, buf, sizeof(buf));
	if (n > 0 && send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_debug("refused client: %s", strerror(errno));
	close(fd);
}

/* Refusals are logged at most every 10 s with a count: a client that keeps
 * reconnecting must not fill the host's journal. */
static void
refused_log(const struct ucred *cred, unsigned same_uid)
{
	static uint64_t last_ns;
	static unsigned since;
	uint64_t now = state_now_ns();

	since++;
	if (last_ns && now - last_ns < 10000000000u)
		return;
	log_warn("client pid %ld uid %ld refused: %u clients, %u of this uid (max_clients %u, "
		 "max_clients_per_uid %u); %u refused since the last such line",
		 (long)cred->pid, (long)cred->uid, nclients, same_uid, max_clients, max_per_uid,
		 since);
	last_ns = now;
	since = 0;
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
	  void *arg)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Hello h = MTRACE__HELLO__INIT;
	struct stream_client *c;
	struct ucred cred = { 0, (uid_t)-1, (gid_t)-1 };
	socklen_t clen = sizeof(cred);

	unsigned same_uid = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		log_warn("SO_PEERCRED: %s", strerror(errno));
	TAILQ_FOREACH(c, &clients, entry)
		same_uid += c->uid == cred.uid;
	if (nclients >= max_clients || same_uid >= max_per_uid) {
		refused_log(&cred, same_uid);
		refuse(fd, nclients >= max_clients ? "too many clients"
						   : "too many clients of this uid");
		return;
	}
	/* The socket buffer is what a client can take while the loop is busy draining
	 * rings: the default (208 KiB) is ~10k events.  The kernel caps this at
	 * net.core.wmem_max, which is fine: the client queue above it is ours. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ SOCKET_SNDBUF }, sizeof(int)) < 0)
		log_debug("SO_SNDBUF: %s", strerror(errno));
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->id = ++next_id;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->bev = bufferevent_socket_new(ev_base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->stats_ev = evtimer_new(ev_base, stats_cb, c);
	c->partial_ev = evtimer_new(ev_base, partial_cb, c);
	c->close_ev = evtimer_new(ev_base, close_cb, c);
	c->hello_ev = evtimer_new(ev_base, hello_cb, c);
	c->out_cb = c->bev ? evbuffer_add_cb(bufferevent_get_output(c->bev), out_changed, c)
			   : NULL;
	if (!c->bev || !c->stats_ev || !c->partial_ev || !c->close_ev || !c->hello_ev ||
	    !c->out_cb) {
		log_warn("client pid %ld: out of memory", (long)cred.pid);
		if (c->bev)
			bufferevent_free(c->bev);
		else
			close(fd);
		if (c->stats_ev)
			event_free(c->stats_ev);
		if (c->partial_ev)
			event_free(c->partial_ev);
		if (c->close_ev)
			event_free(c->close_ev);
		if (c->hello_ev)
			event_free(c->hello_ev);
		free(c);
		return;
	}
	/* Stats timers repeat; the others are one-shot. */
	event_assign(c->stats_ev, ev_base, -1, EV_PERSIST, stats_cb, c);
	TAILQ_INSERT_TAIL(&clients, c, entry);
	nclients++;
	log_debug("client %u connected: pid %ld uid %ld gid %ld", c->id, (long)cred.pid,
		  (long)cred.uid, (long)cred.gid);
	struct timeval htv = { hello_ms / 1000, (hello_ms % 1000) * 1000 };
	evtimer_add(c->hello_ev, &htv);
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	/* Never buffer more than one largest request. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, FRAME_MAX_TO_DAEMON + FRAME_VARINT_MAX);
	bufferevent_setwatermark(c->bev, EV_WRITE, queue_cap / 4, 0);
	/* libevent writes 16 KiB per wake-up by default: far too little for millions of
	 * events a second.  Clients are written to once per loop turn, so each write
	 * must take all the socket will. */
	bufferevent_set_max_single_write(c->bev, MAX_SINGLE_WRITE);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);

	h.version = PROTOCOL_VERSION;
	h.software = (char *)"mtraced " MTRACE_VERSION;
	h.host = host;
	m.msg_case = MTRACE__SERVER_MSG__MSG_HELLO;
	m.hello = &h;
	send_msg(c, &m);
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	accept_paused = false;
	if (listener)
		evconnlistener_enable(listener);
}

static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv = { ACCEPT_PAUSE_MS / 1000, (ACCEPT_PAUSE_MS % 1000) * 1000 };

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		/* Pause, or the level-triggered listener fires again at once and spins. */
		log_warn("accept: %s: pausing for %d ms", strerror(err), ACCEPT_PAUSE_MS);
		evconnlistener_disable(l);
		accept_paused = true;
		event_add(accept_pause_ev, &tv);
	} else {
		log_warn("accept: %s", strerror(err));
	}
}

void
stream_reconfigure(const struct mtraced_config *cfg)
{
	struct stream_client *c;

	max_clients = cfg->max_clients ? cfg->max_clients : 1;
	/* 0 (a test double's zeroed config): the setting has no cap of its own */
	max_per_uid = cfg->max_clients_per_uid ? cfg->max_clients_per_uid : max_clients;
	hello_ms = cfg->client_hello_ms ? cfg->client_hello_ms : 5000;
	queue_cap = cfg->client_queue_bytes ? cfg->client_queue_bytes : 1;
	queue_total_cap = cfg->client_queue_total ? cfg->client_queue_total : SIZE_MAX;
	coalesce_rate = cfg->client_coalesce_rate ? cfg->client_coalesce_rate : 1000000u;
	coalesce_ns = (uint64_t)cfg->client_coalesce_us * 1000u;
	max_top_n = cfg->max_top_n;
	TAILQ_FOREACH(c, &clients, entry)
		if (!c->closing)
			bufferevent_setwatermark(c->bev, EV_WRITE, queue_cap / 4, 0);
}

int
stream_init(struct event_base *base, const struct mtraced_config *cfg, char *err,
	    size_t errlen)
{
	int fd;

	ev_base = base;
	stream_reconfigure(cfg);
	/* A client that vanishes must cost a write error, not the daemon. */
	signal(SIGPIPE, SIG_IGN);
	if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "unknown");
	fd = stream_socket_open(cfg, sock_path, sizeof(sock_path), &own_socket, err, errlen);
	if (fd < 0)
		return -1;
	listener = evconnlistener_new(base, accept_cb, NULL,
				      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	accept_pause_ev = evtimer_new(base, accept_resume_cb, NULL);
	coalesce_ev = evtimer_new(base, coalesce_cb, NULL);
	if (!listener || !accept_pause_ev || !coalesce_ev) {
		snprintf(err, errlen, "out of memory setting up the socket");
		if (!listener)
			close(fd);
		return -1;
	}
	evconnlistener_set_error_cb(listener, accept_error_cb);
	stream_batch_init(base);
	return 0;
}

/* Send one notice to every client whose subscription matches the domain. */
static void
broadcast(uint32_t domid, bool events_only, const Mtrace__ServerMsg *m)
{
	struct stream_client *c;
	struct stream_blob *b = NULL;

	/* queue_blob never frees a client (it defers that to a timer), so a plain walk. */
	TAILQ_FOREACH(c, &clients, entry) {
		if (c->closing || !c->sub || (events_only && !c->sub->events) ||
		    !state_domain_matches(domid, c->sub))
			continue;
		if (!b && !(b = stream_blob_pack(m)))
			return;
		queue_blob(c, b);
	}
	stream_blob_unref(b);
}

void
stream_domain_up(uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainUp u = MTRACE__DOMAIN_UP__INIT;

	char nm[256];

	stream_batch_flush();
	domain_up_msg(&m, &u, nm, domid, name, rings, clock, legacy);
	broadcast(domid, false, &m);
}

void
stream_domain_down(uint32_t domid, const char *reason)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainDown d = MTRACE__DOMAIN_DOWN__INIT;
	char why[256];

	/* Its last events go out before the notice. */
	stream_batch_flush();
	stream_batch_domain_gone(domid);
	snprintf(why, sizeof(why), "%s", reason ? reason : "");
	stream_utf8_fix(why);
	d.domid = domid;
	d.reason = why;
	m.msg_case = MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN;
	m.domain_down = &d;
	broadcast(domid, false, &m);
}

void
stream_ring_loss(uint32_t domid, uint32_t ring, uint64_t lost)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;

	if (lost == 0)
		return;
	stream_batch_flush();
	l.domid = domid;
	l.ring = ring;
	l.lost_in_ring = lost;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	broadcast(domid, true, &m);
}

unsigned
stream_client_count(void)
{
	return nclients;
}

size_t
stream_pending_bytes(void)
{
	struct stream_client *c;
	size_t n = 0;

	TAILQ_FOREACH(c, &clients, entry)
		n += out_len(c);
	return n;
}

void
stream_shutdown(const char *reason)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Goodbye g = MTRACE__GOODBYE__INIT;
	struct stream_client *c;

	if (!ev_base)
		return;
	stream_batch_flush();
	log_debug("%" PRIu64 " client writes put off (client_coalesce_us)", writes_put_off);
	g.reason = (char *)(reason ? reason : "");
	m.msg_case = MTRACE__SERVER_MSG__MSG_GOODBYE;
	m.goodbye = &g;
	while ((c = TAILQ_FIRST(&clients))) {
		struct evbuffer *out = bufferevent_get_output(c->bev);
		evutil_socket_t fd = bufferevent_getfd(c->bev);

		c->closing = false;	/* the goodbye goes even to a client being closed */
		if (c->dropped_unreported > 0)
			send_loss_notice(c);	/* a gap is always told, even at the end */
		send_msg(c, &m);
		/* One pass of non-blocking writes: what the socket takes now, it gets.  The
		 * bufferevent keeps the start of its output frozen to everyone but itself;
		 * it is being torn down, so thaw it. */
		evbuffer_unfreeze(out, 1);
		while (evbuffer_get_length(out) > 0 && evbuffer_write(out, fd) > 0)
			;
		client_free(c);
	}
	if (listener)
		evconnlistener_free(listener);
	listener = NULL;
	if (accept_pause_ev)
		event_free(accept_pause_ev);
	accept_pause_ev = NULL;
	if (coalesce_ev)
		event_free(coalesce_ev);
	coalesce_ev = NULL;
	stream_batch_fini();
	if (own_socket && unlink(sock_path) < 0 && errno != ENOENT)
		log_warn("unlink %s: %s", sock_path, strerror(errno));
	own_socket = false;
	ev_base = NULL;
}
