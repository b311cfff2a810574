/*
 * stream-client.c - one client of mtraced's socket: its bufferevent, the request side
 * of proto/mtrace.proto (Hello, Subscribe, Ping), its queue cap, statistics timer and
 * write coalescing.  stream.c accepts the connections; stream-batch.c builds the
 * event batches handed to stream_client_send_events.
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
/* Clients past client_coalesce_rate events a second get coalesced writes (client_coalesce_us),
 * measured over windows of COALESCE_WINDOW_NS: far above the rates where the latency
 * of single events matters, far below where wake-ups dominate. */
#define COALESCE_WINDOW_NS 10000000u
/*
 * Messages shorter than this are copied into the client's buffer, not queued by
 * reference: libevent gives every reference a chain of its own (>= 1 KiB with its
 * header), which for a Pong of a few bytes is 100 times the payload that the queue
 * cap counts.  Copies fill chains end to end, so what is counted is what is held:
 * at most twice the counted bytes with the chains of the longer messages
 * (docs/man/mtraced.8: MEMORY).
 */
#define COPY_MAX 2048u

/* The clients' state: one context.  set holds the settings as normalised by
 * stream_clients_reconfigure: the one copy. */
static struct {
	TAILQ_HEAD(, stream_client) clients;
	unsigned nclients;
	unsigned next_id;
	struct event_base *ev_base;
	void (*client_freed)(void);
	struct stream_client_settings set;
	size_t queued_total;       /* bytes in all clients' output buffers */
	struct event *coalesce_ev; /* one tick resumes every deferred client */
	struct event *write_ev;    /* the write pass, run in the turn that queued */
	bool write_scheduled;
	uint64_t writes_put_off; /* for the log at shutdown */
} cl = {
	.clients = TAILQ_HEAD_INITIALIZER(cl.clients),
	.set = {
		.queue_cap = 8u << 20,
		.queue_total_cap = SIZE_MAX, /* all clients' queues together */
		.max_clients = 64,
		.hello_ms = 5000,
		.coalesce_ns = 2000000u,
		.coalesce_rate = 1000000u,
		.max_top_n = 1000,
	},
};

static void client_free(struct stream_client *c);
static void write_resume(struct stream_client *c);
static void write_soon(struct stream_client *c);

static size_t out_len(const struct stream_client *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

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
	return out_len(c) + (size_t)inflight;
}

/* Queue one framed message: small ones copied, large ones by reference (COPY_MAX). */
static int queue_bytes(struct stream_client *c, struct stream_blob *b)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	write_soon(c);
	if (b->len < COPY_MAX)
		return evbuffer_add(out, b->data, b->len);
	return stream_blob_queue(out, b);
}

/* Keeps queued_total: libevent calls this for every change of an output buffer. */
static void out_changed(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	cl.queued_total += info->n_added;
	cl.queued_total -= info->n_deleted;
}

/* Events may be queued for c: below its own cap, and below the total cap or within
 * its fair share of it (so that clients that never read cannot starve a new one). */
static bool queue_room(const struct stream_client *c, size_t len)
{
	size_t mine = out_len(c) + len;

	if (mine > cl.set.queue_cap)
		return false;
	return cl.queued_total + len <= cl.set.queue_total_cap ||
	    mine <= cl.set.queue_total_cap / cl.set.max_clients;
}

static void queue_blob(struct stream_client *c, struct stream_blob *b)
{
	if (c->closing || !b)
		return;
	if (out_len(c) + b->len > cl.set.queue_cap + CONTROL_SLACK) {
		/* at debug: a client that does not read must not be able to fill the log */
		log_debug("client %u: not reading, replies past %zu bytes: closing", c->id,
		    cl.set.queue_cap + CONTROL_SLACK);
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

/*
 * Guests choose how large their tables are (labels, counters, threads, sites): a Stats
 * that would not fit the frame is cut, the table with the most entries first, and
 * says how much it left out (labels_omitted, threads_omitted, sites_omitted,
 * site_edges_omitted, counters_omitted) rather than not being sent.
 */
static void stats_fit(const Mtrace__ServerMsg *m, Mtrace__Stats *s)
{
	const size_t target = FRAME_MAX_TO_CLIENT - FRAME_MAX_TO_CLIENT / 16;
	size_t len;

	while ((len = mtrace__server_msg__get_packed_size(m)) > FRAME_MAX_TO_CLIENT) {
		/* keep the share of the largest table that would bring the whole under
		 * target (a site's edges name it by index: the edges go with their sites) */
		size_t *tabs[] = { &s->n_labels, &s->n_threads, &s->n_sites, &s->n_site_edges };
		uint32_t *omitted[] = { &s->labels_omitted, &s->threads_omitted, &s->sites_omitted,
			&s->site_edges_omitted };
		size_t *n = NULL, keep;
		unsigned t = 0;

		for (unsigned i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++)
			if (*tabs[i] && (!n || *tabs[i] > *n))
				n = tabs[i], t = i;
		if (n) {
			keep = (size_t)((double)*n * ((double)target / (double)len));
			if (keep >= *n)
				keep = *n - 1;
			*omitted[t] += (uint32_t)(*n - keep);
			*n = keep;
			continue;
		}
		/* then the counters of every domain, the longest lists first */
		size_t most = 0;
		for (size_t i = 0; i < s->n_domains; i++)
			if (s->domains[i]->n_counters > most)
				most = s->domains[i]->n_counters;
		if (most == 0)
			return; /* domains alone: cannot happen below max_guests */
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

static void send_stats(struct stream_client *c)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Subscribe sub = *c->sub;
	Mtrace__Stats *s;

	c->stats_pending = false;
	if (sub.top_n > cl.set.max_top_n)
		sub.top_n = cl.set.max_top_n;
	s = state_stats(&sub, c->dropped_total);
	if (!s) {
		log_warnx("client %u: no statistics (out of memory)", c->id);
		return;
	}
	s->dropped_for_client = c->dropped_total;
	s->clients = cl.nclients;
	stream_stats_fix_strings(s);
	m.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
	m.stats = s;
	stats_fit(&m, s);
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
	return c->dropped_unreported > 0 || out_len(c) > cl.set.queue_cap / 2;
}

/* Written to the socket (by write_now or the bufferevent): down to the low-water mark,
 * report what this client lost, then the newest statistics it missed. */
static void written(struct stream_client *c)
{
	c->write_due = false;
	c->last_write_ns = state_now_ns();
	if (out_len(c) > cl.set.queue_cap / 4)
		return;
	if (c->dropped_unreported > 0)
		send_loss_notice(c);
	if (c->stats_pending && c->sub)
		send_stats(c);
}

/*
 * Write what c has queued in the turn that queued it, as the bufferevent would on its
 * next turn.  Leaving it to the bufferevent costs, per write, EPOLLOUT turned on (an
 * epoll_ctl), a loop turn to learn that an empty socket is writable (epoll_wait and,
 * with precise timers, timerfd_settime) and EPOLLOUT off again: about 4 system calls
 * per event at low rates.  So the bufferevent's EV_WRITE is on only while the socket
 * is full (or a write failed: the bufferevent then reports the error to event_cb), and
 * while a client closes.
 */
static void write_now(struct stream_client *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	int n;

	if (c->closing || c->deferred || out_len(c) == 0 ||
	    (bufferevent_get_enabled(c->bev) & EV_WRITE))
		return;
	/* what the bufferevent's own write does: it keeps its output's start frozen */
	evbuffer_unfreeze(out, 1);
	n = evbuffer_write(out, bufferevent_getfd(c->bev));
	evbuffer_freeze(out, 1);
	if (out_len(c) > 0)
		bufferevent_enable(c->bev, EV_WRITE);
	if (n > 0)
		written(c);
}

/* One pass in this turn for every client that had something queued: activated, not
 * timed, it runs after the callbacks already active (the stream's flush among them),
 * so a turn's batches to a client go out in one writev. */
static void write_pass_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream_client *c;

	cl.write_scheduled = false;
	/* write_now never frees a client: a plain walk */
	TAILQ_FOREACH(c, &cl.clients, entry)
	{
		if (!c->to_write)
			continue;
		c->to_write = false;
		write_now(c);
	}
}

static void write_soon(struct stream_client *c)
{
	c->to_write = true;
	if (!cl.write_scheduled && cl.write_ev) {
		event_active(cl.write_ev, EV_TIMEOUT, 0);
		cl.write_scheduled = true;
	}
}

static void write_resume(struct stream_client *c)
{
	if (!c->deferred)
		return;
	c->deferred = false;
	c->write_due = true;
	write_now(c);
}

/* One tick for all: per-client timers would each cost a loop turn of their own. */
static void coalesce_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream_client *c;

	TAILQ_FOREACH(c, &cl.clients, entry)
	write_resume(c);
}

/*
 * Interrupt moderation for sockets: every write wakes the client, a context switch on
 * each side, which with many fast clients costs more than the events themselves.  A
 * client taking over client_coalesce_rate events a second gets one write per coalesce_ns at
 * most; the batches meanwhile wait in its queue (a few hundred KiB at these rates).
 */
static void coalesce(struct stream_client *c, size_t n)
{
	uint64_t now = state_now_ns();

	if (now - c->win_start_ns >= COALESCE_WINDOW_NS) {
		c->fast =
		    c->win_events * 1000000000u >= cl.set.coalesce_rate * (now - c->win_start_ns);
		c->win_start_ns = now;
		c->win_events = 0;
	}
	c->win_events += n;
	/* write_due: a write is on its way (written() clears it); turning writes off now
	 * would put it off again and again */
	if (!c->fast || !cl.set.coalesce_ns || c->deferred || c->write_due || c->closing)
		return;
	if (now - c->last_write_ns >= cl.set.coalesce_ns) {
		c->write_due = true;
		return;
	}
	if (!evtimer_pending(cl.coalesce_ev, NULL)) {
		uint64_t left = c->last_write_ns + cl.set.coalesce_ns - now;
		struct timeval tv = tv_from_ns(left);

		if (evtimer_add(cl.coalesce_ev, &tv) < 0)
			return;
	}
	c->deferred = true;
	cl.writes_put_off++;
	bufferevent_disable(c->bev, EV_WRITE);
}

void stream_client_send_events(struct stream_client *c, struct stream_blob *b, size_t n)
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

	if (c->hello)
		stream_client_error(c, MTRACE__ERROR__CODE__TIMEOUT,
		    "no Subscribe within %u ms of the Hello", cl.set.hello_ms);
	else
		stream_client_error(
		    c, MTRACE__ERROR__CODE__TIMEOUT, "no Hello within %u ms", cl.set.hello_ms);
}

void stream_client_hello_rearm(struct stream_client *c)
{
	struct timeval tv = { cl.set.hello_ms / 1000, (cl.set.hello_ms % 1000) * 1000 };

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
		if (out_len(c) == 0)
			client_free(c);
		return;
	}
	/* the socket took it all: the next writes are write_now's again */
	if (out_len(c) == 0)
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
	if (c->group)
		stream_group_leave(c->group, c);
	if (c->submsg)
		mtrace__client_msg__free_unpacked(c->submsg, NULL);
	event_free(c->stats_ev);
	event_free(c->partial_ev);
	event_free(c->close_ev);
	event_free(c->hello_ev);
	evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->out_cb);
	cl.queued_total -= out_len(c);
	bufferevent_free(c->bev);
	TAILQ_REMOVE(&cl.clients, c, entry);
	cl.nclients--;
	free(c);
	/* A descriptor was freed: accepting may work again. */
	if (cl.client_freed)
		cl.client_freed();
}

int stream_client_new(int fd, pid_t pid, uid_t uid, gid_t gid, const char *host,
    void (*read_cb)(struct bufferevent *bev, void *arg))
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Hello h = MTRACE__HELLO__INIT;
	struct stream_client *c;

	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -1;
	}
	c->id = ++cl.next_id;
	c->pid = pid;
	c->uid = uid;
	c->bev = bufferevent_socket_new(cl.ev_base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->stats_ev = evtimer_new(cl.ev_base, stats_cb, c);
	c->partial_ev = evtimer_new(cl.ev_base, partial_cb, c);
	c->close_ev = evtimer_new(cl.ev_base, close_cb, c);
	c->hello_ev = evtimer_new(cl.ev_base, hello_cb, c);
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
	event_assign(c->stats_ev, cl.ev_base, -1, EV_PERSIST, stats_cb, c);
	TAILQ_INSERT_TAIL(&cl.clients, c, entry);
	cl.nclients++;
	log_debug(
	    "client %u connected: pid %ld uid %ld gid %ld", c->id, (long)pid, (long)uid, (long)gid);
	stream_client_hello_rearm(c);
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	/* Never buffer more than one largest request. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, FRAME_MAX_TO_DAEMON + FRAME_VARINT_MAX);
	bufferevent_setwatermark(c->bev, EV_WRITE, cl.set.queue_cap / 4, 0);
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

void stream_clients_reconfigure(const struct stream_client_settings *s)
{
	struct stream_client *c;

	cl.set = *s;
	cl.set.queue_cap = s->queue_cap ? s->queue_cap : 1;
	/* 0 (a test double's zeroed config): the setting has no cap of its own */
	cl.set.queue_total_cap = s->queue_total_cap ? s->queue_total_cap : SIZE_MAX;
	cl.set.max_clients = s->max_clients ? s->max_clients : 1;
	cl.set.hello_ms = s->hello_ms ? s->hello_ms : 5000;
	cl.set.coalesce_rate = s->coalesce_rate ? s->coalesce_rate : 1000000u;
	TAILQ_FOREACH(c, &cl.clients, entry)
	if (!c->closing)
		bufferevent_setwatermark(c->bev, EV_WRITE, cl.set.queue_cap / 4, 0);
}

int stream_clients_init(struct event_base *base, void (*on_free)(void))
{
	cl.ev_base = base;
	cl.client_freed = on_free;
	cl.coalesce_ev = evtimer_new(base, coalesce_cb, NULL);
	cl.write_ev = event_new(base, -1, 0, write_pass_cb, NULL);
	return cl.coalesce_ev && cl.write_ev ? 0 : -1;
}

void stream_clients_broadcast(uint32_t domid, bool events_only, const Mtrace__ServerMsg *m)
{
	struct stream_client *c;
	struct stream_blob *b = stream_blob_pack(m);

	if (!b)
		return;
	/* shared-memory readers get it in their region, in order with their events */
	stream_batch_notice(domid, b);
	/* queue_blob never frees a client (it defers that to a timer), so a plain walk. */
	TAILQ_FOREACH(c, &cl.clients, entry)
	{
		if (c->closing || !c->sub || c->shm || (events_only && !c->sub->events) ||
		    !state_domain_matches(domid, c->sub))
			continue;
		queue_blob(c, b);
	}
	stream_blob_unref(b);
}

/*
 * m with fd attached (SCM_RIGHTS), behind everything queued before it: what is queued
 * is written first, and m is sent only once the buffer is empty.  -1 when the socket
 * cannot take it now (nothing sent; the caller decides).
 */
int stream_client_send_fd(struct stream_client *c, const Mtrace__ServerMsg *m, int fd)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct msghdr mh = { 0 };
	struct iovec iov;
	struct cmsghdr *cm;
	struct stream_blob *b;
	ssize_t n;

	if (c->closing || (bufferevent_get_enabled(c->bev) & EV_WRITE))
		return -1;
	evbuffer_unfreeze(out, 1);
	while (out_len(c) > 0 && evbuffer_write(out, bufferevent_getfd(c->bev)) > 0)
		;
	evbuffer_freeze(out, 1);
	if (out_len(c) > 0 || !(b = stream_blob_pack(m)))
		return -1;
	iov = (struct iovec){ b->data, b->len };
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl;
	mh.msg_controllen = sizeof(ctl);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do
		n = sendmsg(bufferevent_getfd(c->bev), &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* the fd went with the first byte: the rest (a full socket) is queued as usual */
	if (n >= 0 && (size_t)n < b->len && evbuffer_add(out, b->data + n, b->len - (size_t)n) == 0)
		write_soon(c);
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

unsigned stream_clients_count(void)
{
	return cl.nclients;
}

unsigned stream_clients_of_uid(uid_t uid)
{
	struct stream_client *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &cl.clients, entry)
	n += c->uid == uid;
	return n;
}

size_t stream_clients_pending_bytes(void)
{
	struct stream_client *c;
	size_t n = 0;

	TAILQ_FOREACH(c, &cl.clients, entry)
	n += out_len(c);
	return n;
}

void stream_clients_close_all(const char *reason)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Goodbye g = MTRACE__GOODBYE__INIT;
	struct stream_client *c;

	log_debug("%" PRIu64 " client writes put off (client_coalesce_us)", cl.writes_put_off);
	g.reason = (char *)(reason ? reason : "");
	m.msg_case = MTRACE__SERVER_MSG__MSG_GOODBYE;
	m.goodbye = &g;
	while ((c = TAILQ_FIRST(&cl.clients))) {
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

void stream_clients_fini(void)
{
	if (cl.coalesce_ev)
		event_free(cl.coalesce_ev);
	cl.coalesce_ev = NULL;
	if (cl.write_ev)
		event_free(cl.write_ev);
	cl.write_ev = NULL;
	cl.write_scheduled = false;
	cl.client_freed = NULL;
	cl.ev_base = NULL;
}

const struct stream_client_settings *stream_clients_settings(void)
{
	return &cl.set;
}
