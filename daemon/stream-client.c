/*
 * stream-client.c - the clients of mtraced's socket: each one's bufferevent, queue cap,
 * statistics timer and life cycle, and the set of them a stream server has.  stream.c
 * accepts the connections; stream-request.c reads their requests; stream-write.c
 * writes their queues; stream-batch.c builds the event batches handed to
 * stream_client_send_events.
 *
 * Nothing here may block the loop or let one client hurt another: a client's output
 * is capped at client_queue_bytes, past which its event batches are dropped and
 * counted (and it is told once it drains), its statistics coalesced, and a client
 * that breaks the protocol gets an Error and is closed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/sockios.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "clock.h"
#include "frame.h"
#include "log.h"
#include "mtrace-proto.h"
#include "state.h"
#include "stream-batch.h"
#include "stream-blob.h"
#include "stream-client.h"
#include "stream-msg.h"
#include "utf8.h"

/* Control messages (domain up/down, loss, errors) are small and few; a client that
 * lets even those pile up this far past its cap is not reading at all and is closed. */
#define CONTROL_SLACK     (1u << 20)
#define PARTIAL_TIMEOUT_S 5 /* a request frame left half-sent this long is bad */
/* An Error is queued behind what the client has not read yet: the client has
 * CLOSE_TIMEOUT_S to read on towards it, again each time it did, CLOSE_MAX_S in all
 * (a slow reader still gets told why; one that stopped reading is closed). */
#define CLOSE_TIMEOUT_S  2
#define CLOSE_MAX_S      30
#define MAX_SINGLE_WRITE (64u << 20) /* no cap of ours: the socket's is enough */
/*
 * Messages shorter than this are copied into the client's buffer, not queued by
 * reference: libevent gives every reference a chain of its own (>= 1 KiB with its
 * header), which for a Pong of a few bytes is 100 times the payload that the queue
 * cap counts.  Copies fill chains end to end, so what is counted is what is held:
 * at most twice the counted bytes with the chains of the longer messages
 * (docs/man/mtraced.8: MEMORY).
 */
#define COPY_MAX 2048u

static void client_free(struct stream_client *c);

/*
 * What the client has not read yet: our buffer, and the socket's (SO_SNDBUF is large,
 * and the kernel wakes a writer only once most of it is free, so a client reading on
 * can leave our buffer as it was for seconds).
 */
static size_t unread(const struct stream_client *c)
{
	int inflight = 0;

	if (ioctl(bufferevent_getfd(c->bev), SIOCOUTQ, &inflight) < 0 || inflight < 0)
		inflight = 0;
	return stream_client_queued(c) + (size_t)inflight;
}

/* Queue one framed message: small ones copied, large ones by reference (COPY_MAX). */
static int queue_bytes(struct stream_client *c, struct stream_blob *b)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	stream_client_write_soon(c);
	if (b->len < COPY_MAX)
		return evbuffer_add(out, b->data, b->len);
	return stream_blob_queue(out, b);
}

/* Keeps queued_total: libevent calls this for every change of an output buffer. */
static void out_changed(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct stream_client *c = arg;

	c->cs->queued_total += info->n_added;
	c->cs->queued_total -= info->n_deleted;
}

/* Events may be queued for c: below its own cap, and below the total cap or within
 * its fair share of it (so that clients that never read cannot starve a new one). */
static bool queue_room(const struct stream_client *c, size_t len)
{
	const struct stream_clients *cs = c->cs;
	size_t mine = stream_client_queued(c) + len;

	if (mine > cs->set.queue_cap)
		return false;
	return cs->queued_total + len <= cs->set.queue_total_cap ||
	    mine <= cs->set.queue_total_cap / cs->set.max_clients;
}

static void queue_blob(struct stream_client *c, struct stream_blob *b)
{
	if (c->closing || !b)
		return;
	if (stream_client_queued(c) + b->len > c->cs->set.queue_cap + CONTROL_SLACK) {
		/* at debug: a client that does not read must not be able to fill the log */
		log_debug("client %u: not reading, replies past %zu bytes: closing", c->id,
		    c->cs->set.queue_cap + CONTROL_SLACK);
		c->closing = true;
		bufferevent_disable(c->bev, EV_READ | EV_WRITE);
		/* Freed from its own close timer, never under a caller's feet. */
		event_active(c->close_ev, EV_TIMEOUT, 0);
		return;
	}
	if (queue_bytes(c, b) < 0)
		log_debug("client %u: out of memory queueing a message", c->id);
}

void stream_client_send_msg(struct stream_client *c, const Mtrace__ServerMsg *m)
{
	struct stream_blob *b = stream_blob_pack(m);

	if (!b) {
		log_warnx("client %u: cannot encode a message", c->id);
		return;
	}
	queue_blob(c, b);
	stream_blob_unref(b);
}

void stream_client_error(struct stream_client *c, Mtrace__Error__Code code, const char *fmt, ...)
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
	stream_client_send_msg(c, &m);
	if (c->closing)
		return;
	c->closing = true;
	c->close_left = unread(c);
	/* the last bytes go out through the bufferevent, which frees c in write_cb */
	c->deferred = false;
	bufferevent_enable(c->bev, EV_WRITE);
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
	event_add(c->close_ev, &tv);
}

static void send_stats(struct stream_client *c)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Subscribe sub = *c->sub;
	Mtrace__Stats *s;

	c->stats_pending = false;
	if (sub.top_n > c->cs->set.max_top_n)
		sub.top_n = c->cs->set.max_top_n;
	s = state_stats(&sub, c->dropped_total);
	if (!s) {
		log_warnx("client %u: no statistics (out of memory)", c->id);
		return;
	}
	s->dropped_for_client = c->dropped_total;
	s->clients = c->cs->nclients;
	stream_stats_fix_strings(s);
	m.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
	m.stats = s;
	stream_stats_fit(&m, s);
	stream_client_send_msg(c, &m);
	state_stats_free(s);
}

static void send_loss_notice(struct stream_client *c)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;

	l.dropped_for_client = c->dropped_unreported;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	c->dropped_unreported = 0;
	stream_client_send_msg(c, &m);
}

static bool congested(const struct stream_client *c)
{
	return c->dropped_unreported > 0 || stream_client_queued(c) > c->cs->set.queue_cap / 2;
}

/* Written to the socket (by stream-write.c or the bufferevent): down to the low-water
 * mark, report what this client lost, then the newest statistics it missed. */
static void written(struct stream_client *c)
{
	c->write_due = false;
	c->last_write_ns = state_now_ns();
	if (stream_client_queued(c) > c->cs->set.queue_cap / 4)
		return;
	if (c->dropped_unreported > 0)
		send_loss_notice(c);
	if (c->stats_pending && c->sub)
		send_stats(c);
}

void stream_client_send_events(struct stream_client *c, struct stream_blob *b, size_t n)
{
	if (c->closing)
		return;
	/* Once dropping, keep dropping until the queue has drained to the low-water mark
	 * and the client was told: a client must never see a gap it was not told of. */
	if (b && c->dropped_unreported == 0 && queue_room(c, b->len) && queue_bytes(c, b) == 0) {
		stream_client_coalesce(c, n);
		return;
	}
	c->dropped_total += n;
	c->dropped_unreported += n;
	/* Nothing queued (a batch larger than the whole cap, out of memory, or the total
	 * cap reached): no write will come to trigger the notice, so it goes now.  With
	 * anything queued, write_cb sends it once that is written: a notice per dropped
	 * batch would itself pile up in a client that does not read. */
	if (stream_client_queued(c) == 0)
		send_loss_notice(c);
}

static void stats_cb(evutil_socket_t fd, short what, void *arg)
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

static void close_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream_client *c = arg;
	size_t left = c->close_left ? unread(c) : 0;

	if (c->close_left && left && left < c->close_left &&
	    ++c->close_rounds < CLOSE_MAX_S / CLOSE_TIMEOUT_S) {
		struct timeval tv = { CLOSE_TIMEOUT_S, 0 };

		c->close_left = left;
		event_add(c->close_ev, &tv);
		return;
	}
	client_free(c);
}

/* The handshake deadline: Hello, then Subscribe, each within hello_ms, or the place is
 * given back (a connection that only says Hello must not keep one). */
static void hello_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream_client *c = arg;

	unsigned ms = c->cs->set.hello_ms;

	/* a request half-sent when the handshake ran out: its own deadline (at most
	 * PARTIAL_TIMEOUT_S on) ends the connection with the truer error, not whichever of
	 * two equal timers libevent pops first; the handshake's comes again as late, once
	 * (a frame finished in time that is no Subscribe, or a client that keeps one
	 * half-sent at every deadline, still goes) */
	if (!c->hello_deferred && evtimer_pending(c->partial_ev, NULL)) {
		struct timeval tv = { PARTIAL_TIMEOUT_S, 0 };
		c->hello_deferred = true;
		evtimer_add(c->hello_ev, &tv);
		return;
	}
	if (c->hello)
		stream_client_error(
		    c, MTRACE__ERROR__CODE__TIMEOUT, "no Subscribe within %u ms of the Hello", ms);
	else
		stream_client_error(c, MTRACE__ERROR__CODE__TIMEOUT, "no Hello within %u ms", ms);
}

void stream_client_hello_rearm(struct stream_client *c)
{
	unsigned ms = c->cs->set.hello_ms;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	c->hello_deferred = false;
	evtimer_del(c->hello_ev);
	evtimer_add(c->hello_ev, &tv);
}

static void partial_cb(evutil_socket_t fd, short what, void *arg)
{
	stream_client_error(arg, MTRACE__ERROR__CODE__BAD_FRAME,
	    "truncated frame: request incomplete after %d s", PARTIAL_TIMEOUT_S);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	struct stream_client *c = arg;

	if (c->closing) {
		if (stream_client_queued(c) == 0)
			client_free(c);
		return;
	}
	/* the socket took it all: the next writes are write_now's again */
	if (stream_client_queued(c) == 0)
		bufferevent_disable(c->bev, EV_WRITE);
	written(c);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct stream_client *c = arg;

	if (what & BEV_EVENT_EOF)
		log_debug("client %u: disconnected", c->id);
	else if (what & BEV_EVENT_ERROR)
		log_debug("client %u: %s", c->id, strerror(EVUTIL_SOCKET_ERROR()));
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		client_free(c);
}

static void client_free(struct stream_client *c)
{
	struct stream_clients *cs = c->cs;

	if (c->group)
		stream_group_leave(c->group, c);
	if (c->submsg)
		mtrace__client_msg__free_unpacked(c->submsg, NULL);
	event_free(c->stats_ev);
	event_free(c->partial_ev);
	event_free(c->close_ev);
	event_free(c->hello_ev);
	evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->out_cb);
	cs->queued_total -= stream_client_queued(c);
	bufferevent_free(c->bev);
	TAILQ_REMOVE(&cs->clients, c, entry);
	cs->nclients--;
	free(c);
	/* A descriptor was freed: accepting may work again. */
	if (cs->client_freed)
		cs->client_freed(cs->freed_arg);
}

int stream_client_new(struct stream_clients *cs, int fd, pid_t pid, uid_t uid, gid_t gid,
    const char *host, void (*read_cb)(struct bufferevent *bev, void *arg))
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Hello h = MTRACE__HELLO__INIT;
	struct stream_client *c;

	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -1;
	}
	c->cs = cs;
	c->id = ++cs->next_id;
	c->pid = pid;
	c->uid = uid;
	c->bev = bufferevent_socket_new(cs->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->stats_ev = evtimer_new(cs->base, stats_cb, c);
	c->partial_ev = evtimer_new(cs->base, partial_cb, c);
	c->close_ev = evtimer_new(cs->base, close_cb, c);
	c->hello_ev = evtimer_new(cs->base, hello_cb, c);
	c->out_cb = c->bev ? evbuffer_add_cb(bufferevent_get_output(c->bev), out_changed, c) : NULL;
	if (!c->bev || !c->stats_ev || !c->partial_ev || !c->close_ev || !c->hello_ev ||
	    !c->out_cb) {
		log_warnx("client pid %ld: out of memory", (long)pid);
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
		return -1;
	}
	/* Stats timers repeat; the others are one-shot. */
	event_assign(c->stats_ev, cs->base, -1, EV_PERSIST, stats_cb, c);
	TAILQ_INSERT_TAIL(&cs->clients, c, entry);
	cs->nclients++;
	log_debug(
	    "client %u connected: pid %ld uid %ld gid %ld", c->id, (long)pid, (long)uid, (long)gid);
	stream_client_hello_rearm(c);
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	/* Never buffer more than one largest request. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, FRAME_MAX_TO_DAEMON + FRAME_VARINT_MAX);
	bufferevent_setwatermark(c->bev, EV_WRITE, cs->set.queue_cap / 4, 0);
	/* libevent writes 16 KiB per wake-up by default: far too little for millions of
	 * events a second.  Clients are written to once per loop turn, so each write
	 * must take all the socket will. */
	bufferevent_set_max_single_write(c->bev, MAX_SINGLE_WRITE);
	bufferevent_enable(c->bev, EV_READ); /* EV_WRITE: see write_now */

	h.version = MTRACE_PROTOCOL_VERSION;
	h.software = (char *)"mtraced " MTRACE_VERSION;
	h.host = (char *)host;
	m.msg_case = MTRACE__SERVER_MSG__MSG_HELLO;
	m.hello = &h;
	stream_client_send_msg(c, &m);
	return 0;
}

void stream_clients_reconfigure(struct stream_clients *cs, const struct stream_client_settings *s)
{
	struct stream_client *c;

	cs->set = *s;
	cs->set.queue_cap = s->queue_cap ? s->queue_cap : 1;
	/* 0 (a test double's zeroed config): the setting has no cap of its own */
	cs->set.queue_total_cap = s->queue_total_cap ? s->queue_total_cap : SIZE_MAX;
	cs->set.max_clients = s->max_clients ? s->max_clients : 1;
	cs->set.hello_ms = s->hello_ms ? s->hello_ms : 5000;
	cs->set.coalesce_rate = s->coalesce_rate ? s->coalesce_rate : 1000000u;
	TAILQ_FOREACH(c, &cs->clients, entry)
	if (!c->closing)
		bufferevent_setwatermark(c->bev, EV_WRITE, cs->set.queue_cap / 4, 0);
}

int stream_clients_init(struct stream_clients *cs, struct event_base *base,
    struct stream_batch *batch, void (*on_free)(void *arg), void *arg)
{
	static const struct stream_client_settings defaults = {
		.queue_cap = 8u << 20,
		.queue_total_cap = SIZE_MAX, /* all clients' queues together */
		.max_clients = 64,
		.hello_ms = 5000,
		.coalesce_ns = 2000000u,
		.coalesce_rate = 1000000u,
		.max_top_n = 1000,
	};

	memset(cs, 0, sizeof(*cs));
	TAILQ_INIT(&cs->clients);
	cs->set = defaults;
	cs->base = base;
	cs->batch = batch;
	cs->client_freed = on_free;
	cs->freed_arg = arg;
	cs->written = written;
	return stream_clients_write_init(cs);
}

void stream_clients_broadcast(
    struct stream_clients *cs, uint32_t domid, bool events_only, const Mtrace__ServerMsg *m)
{
	struct stream_client *c;
	struct stream_blob *b = stream_blob_pack(m);

	if (!b)
		return;
	/* shared-memory readers get it in their region, in order with their events */
	stream_batch_notice(cs->batch, domid, b);
	/* queue_blob never frees a client (it defers that to a timer), so a plain walk. */
	TAILQ_FOREACH(c, &cs->clients, entry)
	{
		if (c->closing || !c->sub || c->shm || (events_only && !c->sub->events) ||
		    !state_domain_matches(domid, c->sub))
			continue;
		queue_blob(c, b);
	}
	stream_blob_unref(b);
}

/*
 * m with fds attached (SCM_RIGHTS), behind everything queued before it: what is queued
 * is written first, and m is sent only once the buffer is empty.  -1 when the socket
 * cannot take it now (nothing sent; the caller decides).
 */
int stream_client_send_fds(
    struct stream_client *c, const Mtrace__ServerMsg *m, const int *fds, size_t nfd)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	char ctl[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct msghdr mh = { 0 };
	struct iovec iov;
	struct cmsghdr *cm;
	struct stream_blob *b;
	ssize_t n;

	if (c->closing || (bufferevent_get_enabled(c->bev) & EV_WRITE) || nfd < 1 || nfd > 2)
		return -1;
	evbuffer_unfreeze(out, 1);
	while (stream_client_queued(c) > 0 && evbuffer_write(out, bufferevent_getfd(c->bev)) > 0)
		;
	evbuffer_freeze(out, 1);
	if (stream_client_queued(c) > 0 || !(b = stream_blob_pack(m)))
		return -1;
	iov = (struct iovec){ b->data, b->len };
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl;
	mh.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfd * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, nfd * sizeof(int));
	do
		n = sendmsg(bufferevent_getfd(c->bev), &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* the fd went with the first byte: the rest (a full socket) is queued as usual */
	if (n >= 0 && (size_t)n < b->len && evbuffer_add(out, b->data + n, b->len - (size_t)n) == 0)
		stream_client_write_soon(c);
	stream_blob_unref(b);
	return n < 0 ? -1 : 0;
}

void stream_client_shm_wake(struct stream_client *c, uint64_t write)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__SharedWake w = MTRACE__SHARED_WAKE__INIT;

	w.write = write;
	m.msg_case = MTRACE__SERVER_MSG__MSG_SHARED_WAKE;
	m.shared_wake = &w;
	stream_client_send_msg(c, &m);
}

unsigned stream_clients_of_uid(const struct stream_clients *cs, uid_t uid)
{
	struct stream_client *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &cs->clients, entry)
	n += c->uid == uid;
	return n;
}

size_t stream_clients_pending_bytes(const struct stream_clients *cs)
{
	struct stream_client *c;
	size_t n = 0;

	TAILQ_FOREACH(c, &cs->clients, entry)
	n += stream_client_queued(c);
	return n;
}

void stream_clients_close_all(struct stream_clients *cs, const char *reason)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Goodbye g = MTRACE__GOODBYE__INIT;
	struct stream_client *c;

	log_debug("%" PRIu64 " client writes put off (client_coalesce_us)", cs->writes_put_off);
	g.reason = (char *)(reason ? reason : "");
	m.msg_case = MTRACE__SERVER_MSG__MSG_GOODBYE;
	m.goodbye = &g;
	while ((c = TAILQ_FIRST(&cs->clients))) {
		struct evbuffer *out = bufferevent_get_output(c->bev);
		evutil_socket_t fd = bufferevent_getfd(c->bev);

		c->closing = false; /* the goodbye goes even to a client being closed */
		if (c->dropped_unreported > 0)
			send_loss_notice(c); /* a gap is always told, even at the end */
		stream_client_send_msg(c, &m);
		/* One pass of non-blocking writes: what the socket takes now, it gets.  The
		 * bufferevent keeps the start of its output frozen to everyone but itself;
		 * it is being torn down, so thaw it. */
		evbuffer_unfreeze(out, 1);
		while (evbuffer_get_length(out) > 0 && evbuffer_write(out, fd) > 0)
			;
		client_free(c);
	}
}

void stream_clients_fini(struct stream_clients *cs)
{
	stream_clients_write_fini(cs);
	cs->client_freed = NULL;
	cs->base = NULL;
}
