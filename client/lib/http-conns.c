/*
 * http-conns.c - the HTTP front's own list of its connections, and what it bounds.
 *
 * libevent 2.1's evhttp has no callback between accept() and reading a request, so
 * the front learns of a connection through the bufferevent callback (evhttp_set_bevcb):
 * it makes the bufferevent, keeps a reference, and looks at it from an event made
 * active then, which runs in the same loop iteration, before the socket can be read.
 * By then evhttp has set the descriptor and its own callbacks (whose argument is the
 * evhttp_connection): the peer is known, and a connection over the per-source cap, or
 * over the total cap when no silent connection gives way to it (evict_silent), gets
 * a fixed 503 and is freed before any of its bytes are read or parsed.
 *
 * A sweep (every SWEEP_MS while there are connections) applies the deadlines, which a
 * trickle of bytes does not reset: a request must have arrived and its answer have
 * been written within request_timeout of the connection's start (its accept, or its
 * last answer written); a kept-alive connection sending nothing is closed after
 * idle_timeout.  Streams (SSE) have no request deadline, but their output must move.
 * Output is capped per connection and in total: when an answer would not fit, the
 * connections whose output has not moved for STALL_MS are closed (their memory freed
 * at once), oldest stall first, then those whose answers have waited longest unread;
 * only when streams fill the cap is the answer a short 503.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <time.h>

#include "http-conns.h"

#define SWEEP_MS 250
#define STALL_MS 500

/* One connection evhttp holds for us, from its accept to its close: ours alone (the
 * front sees a pointer, the programs nothing). */
struct hf_conn {
	struct hf_conn *prev, *next;
	struct hf_conns *set;
	struct bufferevent *bev; /* evhttp's, made by our bevcb */
	struct evhttp_connection *evcon;
	struct sockaddr_storage peer;
	int64_t t_start;     /* ms: accepted, or its last answer sent */
	int64_t t_request;   /* ms: the request now being answered arrived */
	int64_t stall_since; /* ms: output queued and none written since; 0: moving */
	bool moved;          /* output written since the last sweep */
	struct evbuffer_cb_entry *out_cb;
	uint64_t requests;
	bool answering, streaming;
	bool spoke; /* seen sending, since its last answer: not silent */
	void (*closed)(void *);
	void *closed_arg;
};

static const char busy_reply[] = "HTTP/1.1 503 Service Unavailable\r\n"
                                 "Connection: close\r\n"
                                 "Retry-After: 5\r\n"
                                 "Content-Type: text/plain; charset=utf-8\r\n"
                                 "X-Content-Type-Options: nosniff\r\n"
                                 "Cache-Control: no-store\r\n"
                                 "Content-Length: 25\r\n"
                                 "\r\n"
                                 "503: too many connections";

static size_t out_len(const struct hf_conn *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

static bool same_source(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	/* IPv6: the /64, which one host is commonly given whole */
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		    &((const struct sockaddr_in6 *)b)->sin6_addr, 8);
	/* Unix: the uid admit() put after the family */
	return !memcmp((const char *)a + sizeof(sa_family_t), (const char *)b + sizeof(sa_family_t),
	    sizeof(uid_t));
}

static void unlink_conn(struct hf_conns *f, struct hf_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		f->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	f->st.live--;
}

/* The program's part first (it may still look at the request), then evhttp's. */
static void on_closed(struct evhttp_connection *evcon, void *arg)
{
	struct hf_conn *c = arg;
	struct hf_conns *f = c->set;

	evhttp_connection_set_closecb(evcon, NULL, NULL);
	if (c->out_cb)
		evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->out_cb);
	unlink_conn(f, c);
	if (c->closed)
		c->closed(c->closed_arg);
	free(c);
}

/* Close c now and free what it holds; never from c's own callbacks. */
static void close_conn(struct hf_conn *c)
{
	struct evhttp_connection *evcon = c->evcon;

	on_closed(evcon, c);
	evhttp_connection_free(evcon);
}

static void start_sweep(struct hf_conns *f)
{
	struct timeval tv = { 0, SWEEP_MS * 1000 };

	if (!f->sweeping) {
		event_add(f->sweep, &tv);
		f->sweeping = true;
	}
}

/* Close the connection whose output has stood still longest (not keep), if any has
 * for STALL_MS.  The bytes it held, or 0. */
static size_t evict_one(struct hf_conns *f, const struct hf_conn *keep, int64_t now)
{
	struct hf_conn *worst = NULL;
	size_t n;

	for (struct hf_conn *c = f->conns; c; c = c->next)
		if (c != keep && c->stall_since && now - c->stall_since >= STALL_MS &&
		    (!worst || c->stall_since < worst->stall_since))
			worst = c;
	if (!worst)
		return 0;
	n = out_len(worst);
	f->st.cut_reader++;
	close_conn(worst);
	return n;
}

/* Close the connection (not keep) whose answer, still queued, was asked for first.
 * The bytes it held, or 0. */
static size_t evict_unread(struct hf_conns *f, const struct hf_conn *keep)
{
	struct hf_conn *oldest = NULL;
	size_t n;

	for (struct hf_conn *c = f->conns; c; c = c->next)
		if (c != keep && c->answering && !c->streaming && out_len(c) &&
		    (!oldest || c->t_request <= oldest->t_request))
			oldest = c;
	if (!oldest)
		return 0;
	n = out_len(oldest);
	f->st.cut_reader++;
	close_conn(oldest);
	return n;
}

static unsigned source_count(const struct hf_conns *f, const struct sockaddr_storage *peer)
{
	unsigned n = 0;

	for (const struct hf_conn *o = f->conns; o; o = o->next)
		n += same_source(&o->peer, peer);
	return n;
}

/*
 * The last resort at the cap: the newcomer's source holds `mine` connections; if some
 * source holds more, one of its connections (not a stream) gives way.  Sources share
 * the cap fairly, so a client from an address of its own is admitted however many
 * addresses an attacker spreads over, even in the moment when every connection has
 * just sent its request.  Looked for among the SAMPLE newest, to stay cheap per accept.
 */
#define SAMPLE 16
static bool evict_heaviest(struct hf_conns *f, unsigned mine)
{
	struct hf_conn *worst = NULL;
	unsigned most = mine, k = 0;

	for (struct hf_conn *c = f->conns; c && k < SAMPLE; c = c->next) {
		unsigned n;

		if (c->streaming)
			continue;
		k++;
		if ((n = source_count(f, &c->peer)) > most) {
			most = n;
			worst = c;
		}
	}
	if (!worst)
		return false;
	f->st.evicted++;
	close_conn(worst);
	return true;
}

/* Whether c has sent nothing at all: no request in hand, none being read, none in
 * the kernel's buffer. */
static bool silent(struct hf_conn *c)
{
	int fd = bufferevent_getfd(c->bev), n = 0;

	if (c->answering || c->streaming || evbuffer_get_length(bufferevent_get_input(c->bev)))
		return false;
	return fd >= 0 && ioctl(fd, FIONREAD, &n) == 0 && n == 0;
}

/*
 * At the total cap, a newcomer takes the place of the connection that has waited
 * longest without sending a byte (never sent a request, or idle between two): what
 * such a one has cost is a socket, while a client that means to ask has sent its
 * request by the time it is accepted.  So idle connections, however many sources open
 * them and however fast they reopen, cannot lock out a client that asks (issue 25
 * #5).  Failing that, one whose answer has not moved for STALL_MS (a client that does
 * not read) gives way, else the one whose answer has waited longest to be read
 * (evict_unread), else one of a source holding more connections than the newcomer's
 * (evict_heaviest); only when none is found is the newcomer refused.  A client that reads takes its answer within milliseconds, so it
 * is the newest of those when the next newcomers come.
 */
static bool evict_silent(struct hf_conns *f)
{
	for (;;) {
		struct hf_conn *oldest = NULL;

		/* the list is newest first: on a tie (the same ms), the one admitted first */
		for (struct hf_conn *c = f->conns; c; c = c->next)
			if (!c->spoke && !c->answering && !c->streaming &&
			    (!oldest || c->t_start <= oldest->t_start))
				oldest = c;
		if (!oldest)
			return false;
		if (silent(oldest)) {
			f->st.evicted++;
			close_conn(oldest);
			return true;
		}
		oldest->spoke = true; /* until its next answer is written */
	}
}

/* Bytes written from c's output: its reader is reading. */
static void on_out(struct evbuffer *b, const struct evbuffer_cb_info *info, void *arg)
{
	struct hf_conn *c = arg;

	if (info->n_deleted)
		c->moved = true;
}

static void admit(evutil_socket_t fd_, short what, void *arg)
{
	struct hf_conns *f = arg;
	struct hf_conn *c;

	while ((c = f->pending)) {
		void *evcon = NULL;
		socklen_t pl = sizeof(c->peer);
		unsigned same = 0;
		int fd;

		f->pending = c->next;
		c->next = NULL;
		/* NULL: evhttp freed it already (a failure after the bevcb) */
		bufferevent_getcb(c->bev, NULL, NULL, NULL, &evcon);
		fd = bufferevent_getfd(c->bev);
		bufferevent_decref(c->bev);
		if (!evcon) {
			free(c);
			continue;
		}
		c->evcon = evcon;
		if (fd < 0 || getpeername(fd, (struct sockaddr *)&c->peer, &pl) < 0)
			memset(&c->peer, 0, sizeof(c->peer));
		if (c->peer.ss_family == AF_UNIX) {
			/* on a Unix socket the source is the peer's uid */
			struct ucred cr = { .uid = (uid_t)-1 };
			socklen_t cl = sizeof(cr);

			getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl);
			memset(&c->peer, 0, sizeof(c->peer));
			c->peer.ss_family = AF_UNIX;
			memcpy((char *)&c->peer + sizeof(sa_family_t), &cr.uid, sizeof(cr.uid));
		}
		same = source_count(f, &c->peer);
		if (same < f->lim.max_per_source && f->st.live >= f->lim.max_conns &&
		    !evict_silent(f) && !evict_one(f, NULL, hfc_now_ms()) && !evict_unread(f, NULL))
			evict_heaviest(f, same);
		if (f->st.live >= f->lim.max_conns || same >= f->lim.max_per_source) {
			if (same >= f->lim.max_per_source)
				f->st.refused_source++;
			else
				f->st.refused++;
			if (fd >= 0)
				(void)!send(fd, busy_reply, sizeof(busy_reply) - 1,
				    MSG_DONTWAIT | MSG_NOSIGNAL);
			evhttp_connection_free(c->evcon);
			free(c);
			continue;
		}
		c->t_start = hfc_now_ms();
		c->next = f->conns;
		if (f->conns)
			f->conns->prev = c;
		f->conns = c;
		f->st.live++;
		evhttp_connection_set_closecb(c->evcon, on_closed, c);
		c->out_cb = evbuffer_add_cb(bufferevent_get_output(c->bev), on_out, c);
	}
	if (f->conns)
		start_sweep(f);
}

static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
	struct hf_conns *f = arg;
	struct bufferevent *bev = bufferevent_socket_new(base, -1, 0);
	struct hf_conn *c = bev ? calloc(1, sizeof(*c)) : NULL;

	if (!c) {
		if (bev)
			bufferevent_free(bev);
		return NULL; /* evhttp tries its own; failing that, it closes the socket */
	}
	c->set = f;
	c->bev = bev;
	bufferevent_incref(bev); /* so admit() can tell if evhttp let go of it first */
	c->next = f->pending;
	f->pending = c;
	event_active(f->admit, EV_TIMEOUT, 0);
	return bev;
}

static size_t total_queued(const struct hf_conns *f)
{
	size_t t = 0;

	for (const struct hf_conn *c = f->conns; c; c = c->next)
		t += out_len(c);
	return t;
}

bool hfc_room(struct hf_conns *f, struct hf_conn *c, size_t more)
{
	int64_t now = hfc_now_ms();
	size_t total, mine = c ? out_len(c) : 0, freed;

	/* one answer is always allowed on an empty queue: its size is the program's */
	if (mine && mine + more > f->lim.out_conn)
		return false;
	total = total_queued(f);
	while (total + more > f->lim.out_total &&
	    ((freed = evict_one(f, c, now)) || (freed = evict_unread(f, c))))
		total -= freed < total ? freed : total;
	return total + more <= f->lim.out_total;
}

static void on_sweep(evutil_socket_t fd_, short what, void *arg)
{
	struct hf_conns *f = arg;
	int64_t now = hfc_now_ms();
	int64_t req_ms = (int64_t)f->lim.request_timeout_s * 1000,
	        idle_ms = (int64_t)f->lim.idle_timeout_s * 1000;
	size_t total = 0, freed;
	struct hf_conn *next;

	f->sweeping = false;
	for (struct hf_conn *c = f->conns; c; c = next) {
		size_t out = out_len(c);
		size_t in = evbuffer_get_length(bufferevent_get_input(c->bev));

		next = c->next;
		if (out == 0 || c->moved)
			c->stall_since = 0;
		else if (!c->stall_since)
			c->stall_since = now;
		c->moved = false;
		if (c->streaming) {
			if (c->stall_since && now - c->stall_since > req_ms) {
				f->st.cut_reader++;
				close_conn(c);
				continue;
			}
		} else if (c->answering) {
			if (out == 0) {
				c->answering = false;
				c->spoke = false;
				c->t_start = now;
			} else if (now - c->t_request > req_ms) {
				f->st.cut_reader++;
				close_conn(c);
				continue;
			}
		} else if (now - c->t_start > (c->requests && !in ? idle_ms : req_ms)) {
			f->st.cut++;
			close_conn(c);
			continue;
		}
		total += out;
	}
	while (total > f->lim.out_total && (freed = evict_one(f, NULL, now)))
		total -= freed < total ? freed : total;
	f->st.queued = total;
	if (f->conns)
		start_sweep(f);
}

struct hf_conn *hfc_of(struct hf_conns *f, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);

	for (struct hf_conn *c = f->conns; evcon && c; c = c->next)
		if (c->evcon == evcon)
			return c;
	return NULL;
}

void hfc_request(struct hf_conn *c)
{
	c->requests++;
	c->answering = true;
	c->t_request = hfc_now_ms();
}

void hfc_stream(struct hf_conns *f, struct evhttp_request *req, void (*closed)(void *), void *arg)
{
	struct hf_conn *c = hfc_of(f, req);

	if (!c)
		return;
	c->streaming = closed != NULL;
	c->closed = closed;
	c->closed_arg = arg;
}

int64_t hfc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int hfc_init(
    struct hf_conns *f, struct event_base *base, struct evhttp *http, const struct hf_limits *lim)
{
	f->base = base;
	f->http = http;
	f->lim = *lim;
	f->admit = event_new(f->base, -1, 0, admit, f);
	f->sweep = evtimer_new(f->base, on_sweep, f);
	if (!f->admit || !f->sweep)
		return -1;
	evhttp_set_bevcb(f->http, make_bev, f);
	return 0;
}

void hfc_free(struct hf_conns *f)
{
	struct hf_conn *c;

	while ((c = f->pending)) {
		f->pending = c->next;
		bufferevent_decref(c->bev);
		free(c);
	}
	if (f->http)
		evhttp_free(f->http); /* each live connection's on_closed frees its hf_conn */
	f->http = NULL;
	if (f->admit)
		event_free(f->admit);
	if (f->sweep)
		event_free(f->sweep);
}
