/*
 * sse.c - browsers on /events.  Each is a cursor into the shared history: it is
 * written to only while its socket buffer is nearly empty (evhttp calls back when a
 * chunk has gone out), so a browser that stops reading holds at most 96 KiB (or one
 * message, when larger) and never slows the loop.  When its cursor falls more than queue_bytes behind, or off
 * the end of the history, it skips ahead; the skipped events are counted and it is
 * told ("dropped").  Ids carry the event count, so a browser that reconnects with
 * Last-Event-ID resumes exactly, or is told exactly what it missed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>

#include "web.h"

/* A browser that stops reading holds at most LOW_WATER + CHUNK_MAX (or one message,
 * when larger) here: 500 of them, 48 MiB. */
#define LOW_WATER        (32u * 1024) /* write more once the socket buffer is below this */
#define CHUNK_MAX        (64u * 1024) /* one write at most */
#define KEEPALIVE_S      15
#define STREAM_TIMEOUT_S 60           /* no progress at all for this long: give up */
#define SNDBUF           (256 * 1024) /* the kernel's share of one browser's queue */

struct browser {
	struct browser *prev, *next;
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	uint64_t next_id;               /* next history message to send */
	uint64_t cum_events, cum_bytes; /* events/bytes in the history before next_id */
	uint64_t sent_events, dropped, dropped_untold;
	unsigned serial;
	char peer[64];
};

static struct {
	struct event_base *base;
	struct http_front *front;
	struct browser *list;
	struct event *keepalive;
	size_t queue_bytes;
	unsigned n, serial;
	uint64_t dropped_total;
} s;

static void pump(struct browser *b);

static size_t out_len(const struct browser *b)
{
	return evbuffer_get_length(
	    bufferevent_get_output(evhttp_connection_get_bufferevent(b->evcon)));
}

static void on_written(struct evhttp_connection *evcon, void *arg)
{
	pump(arg);
}

static void skip_to(struct browser *b, uint64_t id)
{
	uint64_t ev = hist_events_before(id);

	if (ev > b->cum_events) {
		b->dropped += ev - b->cum_events;
		b->dropped_untold += ev - b->cum_events;
		s.dropped_total += ev - b->cum_events;
	}
	b->next_id = id;
	b->cum_events = ev;
	b->cum_bytes = hist_bytes_before(id);
}

static void set_cursor(struct browser *b, uint64_t id)
{
	b->next_id = id;
	b->cum_events = hist_events_before(id);
	b->cum_bytes = hist_bytes_before(id);
}

static void pump(struct browser *b)
{
	struct evbuffer *chunk;
	uint64_t head = hist_head();

	if (out_len(b) >= LOW_WATER)
		return;
	if (b->next_id < hist_tail())
		skip_to(b, hist_tail());
	if (hist_bytes_total() - b->cum_bytes > s.queue_bytes) {
		/* Too far behind: keep the newest half of its queue. */
		uint64_t id = b->next_id;
		while (id < head && hist_bytes_total() - hist_bytes_before(id) > s.queue_bytes / 2)
			id++;
		skip_to(b, id);
	}
	if (!b->dropped_untold && b->next_id >= head)
		return;
	chunk = evbuffer_new();
	if (b->dropped_untold) {
		evbuffer_add(chunk, "event: dropped\ndata: ", 21);
		json_dropped(chunk, b->dropped_untold, b->dropped);
		evbuffer_add(chunk, "\n\n", 2);
		b->dropped_untold = 0;
	}
	while (b->next_id < head && evbuffer_get_length(chunk) < CHUNK_MAX) {
		const struct hmsg *m = hist_get(b->next_id);

		evbuffer_add(chunk, m->data, m->len);
		b->sent_events += m->events;
		b->cum_events += m->events;
		b->cum_bytes += m->len;
		b->next_id++;
	}
	evhttp_send_reply_chunk_with_cb(b->req, chunk, on_written, b);
	evbuffer_free(chunk);
}

void sse_pump_all(void)
{
	for (struct browser *b = s.list; b; b = b->next)
		pump(b);
}

static void unlink_browser(struct browser *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		s.list = b->next;
	if (b->next)
		b->next->prev = b->prev;
	s.n--;
}

/* From the front, however the connection went (closed by the browser, cut). */
static void on_close(void *arg)
{
	struct browser *b = arg;

	unlink_browser(b);
	/* evhttp has let go of a request it was still streaming: ours to free. */
	if (!evhttp_request_get_connection(b->req))
		evhttp_send_reply_end(b->req);
	free(b);
}

/* One number of a Last-Event-ID, base 10 or 16, up to sep; NULL if it is not one
 * (empty, a sign, other characters, or more than 64 bits). */
static const char *id_part(const char *str, int base, char sep, uint64_t *v)
{
	uint64_t x = 0;
	const char *p = str;

	for (; *p && *p != sep; p++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			return NULL;
		if (x > (UINT64_MAX - d) / (unsigned)base)
			return NULL;
		x = x * (unsigned)base + d;
	}
	if (p == str || p - str > 20)
		return NULL;
	*v = x;
	return p;
}

/* Last-Event-ID: "INSTANCE.ID.EVENTS" (hex, decimal, decimal).  Anything else, and
 * ids this instance never gave (a browser's word is not to be trusted), is a new
 * browser. */
static bool parse_last(const char *last, uint64_t *inst, uint64_t *id, uint64_t *events)
{
	const char *p = last;

	if (!p || !(p = id_part(p, 16, '.', inst)) || *p++ != '.' ||
	    !(p = id_part(p, 10, '.', id)) || *p++ != '.' || !(p = id_part(p, 10, 0, events)) || *p)
		return false;
	return *id < hist_head(); /* so id + 1 cannot wrap */
}

static void resume(struct browser *b, const char *last)
{
	uint64_t inst, id, events;

	if (parse_last(last, &inst, &id, &events) && inst == hist_instance() &&
	    events <= hist_events_total()) {
		if (id + 1 >= hist_tail()) {
			set_cursor(b, id + 1);
			return;
		}
		/* Its place is gone from the history: what lies between is lost to it. */
		b->next_id = id + 1;
		b->cum_events = events;
		skip_to(b, hist_tail());
		return;
	}
	/* A new browser (or one of another instance): the newest half queue of history,
	 * so that it starts with a picture and is not at once behind. */
	id = hist_tail();
	while (id < hist_head() && hist_bytes_total() - hist_bytes_before(id) > s.queue_bytes / 2)
		id++;
	set_cursor(b, id);
}

void sse_open(struct evhttp_request *req, struct http_front *front)
{
	struct browser *b = calloc(1, sizeof(*b));
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	struct evbuffer *hello;
	const char *last;
	char *addr = NULL;
	ev_uint16_t port = 0;

	if (!b) {
		evhttp_send_error(req, 503, "out of memory");
		return;
	}
	b->req = req;
	b->evcon = evhttp_request_get_connection(req);
	b->serial = ++s.serial;
	evhttp_connection_get_peer(b->evcon, &addr, &port);
	snprintf(b->peer, sizeof(b->peer), "%s:%u", addr ? addr : "?", port);
	last = evhttp_find_header(evhttp_request_get_input_headers(req), "Last-Event-ID");
	resume(b, last);

	hf_common_headers(req, "text/event-stream");
	evhttp_add_header(out, "X-Accel-Buffering", "no");
	evhttp_connection_set_timeout(b->evcon, STREAM_TIMEOUT_S);
	{
		/* What a stalled browser holds in the kernel stays bounded too (Linux
		 * doubles it for its own bookkeeping). */
		int fd = bufferevent_getfd(evhttp_connection_get_bufferevent(b->evcon)),
		    sz = SNDBUF;
		if (fd >= 0)
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	}
	s.front = front;
	hf_stream(front, req, on_close, b);
	evhttp_send_reply_start(req, 200, "OK");

	hello = evbuffer_new();
	evbuffer_add(hello, "retry: 2000\nevent: hello\ndata: ", 31);
	json_hello(hello,
	    &(struct json_hello){ .instance = hist_instance(),
	        .server = "mtrace-web " MTRACE_VERSION,
	        .daemon = feed_daemon(),
	        .connected = feed_connected(),
	        .resumed = last != NULL,
	        .fleet = feed_fleet(),
	        .history_first_event = b->cum_events,
	        .browser = b->serial });
	evbuffer_add(hello, "\n\n", 2);
	evhttp_send_reply_chunk(req, hello);
	evbuffer_free(hello);

	b->next = s.list;
	if (s.list)
		s.list->prev = b;
	s.list = b;
	s.n++;
	pump(b);
}

static void on_keepalive(evutil_socket_t fd, short what, void *arg)
{
	/* A comment line: keeps proxies from timing out an idle stream and finds the
	 * browsers that went away without a word. */
	for (struct browser *b = s.list; b; b = b->next) {
		if (out_len(b) == 0) {
			struct evbuffer *c = evbuffer_new();
			evbuffer_add(c, ":\n\n", 3);
			evhttp_send_reply_chunk_with_cb(b->req, c, on_written, b);
			evbuffer_free(c);
		}
	}
}

void sse_init(struct event_base *base, size_t queue_bytes)
{
	struct timeval tv = { KEEPALIVE_S, 0 };

	s.base = base;
	s.queue_bytes = queue_bytes;
	s.keepalive = event_new(base, -1, EV_PERSIST, on_keepalive, NULL);
	event_add(s.keepalive, &tv);
}

void sse_close_all(void)
{
	while (s.list) {
		struct browser *b = s.list;

		unlink_browser(b);
		hf_stream(s.front, b->req, NULL, NULL);
		evhttp_send_reply_end(b->req);
		free(b);
	}
	if (s.keepalive)
		event_free(s.keepalive);
	s.keepalive = NULL;
}

unsigned sse_count(void)
{
	return s.n;
}

void sse_state_json(struct evbuffer *buf)
{
	size_t i = 0;

	json_browsers_begin(buf, s.n, s.dropped_total);
	for (struct browser *b = s.list; b; b = b->next)
		json_browser(buf, i++, b->serial, b->peer, b->sent_events, b->dropped,
		    hist_bytes_total() - b->cum_bytes, out_len(b));
	json_browsers_end(buf);
}
