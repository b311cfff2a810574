/*
 * http.c - mtrace-web's HTTP side on evhttp: the page's files (read once at start,
 * from a fixed list: no path from a request ever reaches the file system), the state
 * endpoint, the SSE feed, and the limits that keep a hostile peer from costing more
 * than a bounded amount: header size, methods, connection count, and a deadline for
 * a request's headers (slowloris), enforced by a sweep over our sockets.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "web.h"

#define MAX_HEADERS  (8 * 1024)
#define MAX_BODY     1024
#define IO_TIMEOUT_S 10
#define ASSET_MAX    (4u << 20)

static const struct asset_def {
	const char *path, *file, *type;
} asset_defs[] = {
	{ "/", "index.html", "text/html; charset=utf-8" },
	{ "/app.js", "app.js", "text/javascript; charset=utf-8" },
	{ "/model.js", "model.js", "text/javascript; charset=utf-8" },
	{ "/render.js", "render.js", "text/javascript; charset=utf-8" },
	{ "/style.css", "style.css", "text/css; charset=utf-8" },
	{ "/favicon.svg", "favicon.svg", "image/svg+xml" },
};
#define N_ASSETS (sizeof(asset_defs) / sizeof(asset_defs[0]))

/* What we know of each socket, by descriptor: enough to tell a new connection on a
 * reused number and to time its headers. */
struct conn_slot {
	bool used, streaming;
	bool admitted; /* within --max-connections when first seen */
	struct sockaddr_storage peer;
	time_t since; /* accepted (first seen), or last request */
};

static struct {
	struct event_base *base;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	struct event *sweep, *resume;
	const struct web_opts *o;
	bool loopback;
	unsigned port;
	struct {
		char *data;
		size_t len;
	} asset[N_ASSETS];
	struct conn_slot *conns;
	int nconn_slots;
	unsigned live, admitted, refused, cut;
	uint64_t requests;
	bool emfile_warned;
} h;

void http_common_headers(struct evhttp_request *req, const char *type)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);

	evhttp_add_header(out, "Content-Type", type);
	/* Defence in depth for guest strings: no inline script, nothing from elsewhere. */
	evhttp_add_header(out, "Content-Security-Policy",
	    "default-src 'none'; script-src 'self'; style-src 'self'; "
	    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
	    "form-action 'none'; frame-ancestors 'none'");
	evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(out, "X-Frame-Options", "DENY");
	evhttp_add_header(out, "Referrer-Policy", "no-referrer");
	evhttp_add_header(out, "Cache-Control", "no-store");
}

static void send_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	struct evbuffer *b = evbuffer_new();

	http_common_headers(req, "text/plain; charset=utf-8");
	evbuffer_add_printf(b, "%d %s: %s\n", code, reason, text);
	evhttp_send_reply(req, code, reason, b);
	evbuffer_free(b);
}

static int load_assets(const char *dir, char *err, size_t errlen)
{
	for (size_t i = 0; i < N_ASSETS; i++) {
		char path[4096];
		struct stat st;
		int fd;
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%s", dir, asset_defs[i].file);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (size_t)st.st_size > ASSET_MAX) {
			snprintf(err, errlen,
			    "the page's file %s is missing or unreadable (--assets DIR)", path);
			if (fd >= 0)
				close(fd);
			return -1;
		}
		h.asset[i].data = malloc((size_t)st.st_size + 1);
		n = h.asset[i].data ? read(fd, h.asset[i].data, (size_t)st.st_size) : -1;
		close(fd);
		if (n != st.st_size) {
			snprintf(err, errlen, "%s: short read", path);
			return -1;
		}
		h.asset[i].len = (size_t)n;
	}
	return 0;
}

static void serve_state(struct evhttp_request *req)
{
	struct evbuffer *b = evbuffer_new();
	const Mtrace__Stats *st = feed_last_stats();

	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"state\",\"server\":\"mtrace-web " MTRACE_VERSION
	    "\",\"instance\":\"%" PRIx64 "\",\"connected\":%s,\"daemon\":",
	    hist_instance(), feed_connected() ? "true" : "false");
	json_str(b, feed_daemon());
	evbuffer_add(b, ",\"domains\":", 11);
	feed_state_json(b);
	evbuffer_add(b, ",\"stats\":", 9);
	if (st)
		json_stats(b, st, true);
	else
		evbuffer_add(b, "null", 4);
	evbuffer_add_printf(b,
	    ",\"web\":{\"events_in\":%" PRIu64 ",\"malformed_batches\":%" PRIu64
	    ",\"history\":{\"first_event\":%" PRIu64 ",\"events\":%" PRIu64
	    ",\"bytes\":%zu,\"max_bytes\":%zu},\"connections\":%u"
	    ",\"refused_connections\":%u,\"cut_connections\":%u"
	    ",\"requests\":%" PRIu64 ",\"browsers\":",
	    feed_events(), feed_malformed(), hist_events_before(hist_tail()), hist_events_total(),
	    hist_bytes_held(), h.o->history_bytes, h.live, h.refused, h.cut, h.requests);
	sse_state_json(b);
	evbuffer_add(b, "}}\n", 3);
	http_common_headers(req, "application/json");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static bool same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return !memcmp(a, b, sizeof(struct sockaddr_in));
	return !memcmp(a, b, sizeof(struct sockaddr_in6));
}

/* Is fd one of our HTTP connections?  Fills peer if so. */
static bool our_conn(int fd, struct sockaddr_storage *peer)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me), pl = sizeof(*peer);
	unsigned port;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0)
		return false;
	if (me.ss_family == AF_INET)
		port = ntohs(((struct sockaddr_in *)&me)->sin_port);
	else if (me.ss_family == AF_INET6)
		port = ntohs(((struct sockaddr_in6 *)&me)->sin6_port);
	else
		return false;
	memset(peer, 0, sizeof(*peer));
	return port == h.port && getpeername(fd, (struct sockaddr *)peer, &pl) == 0;
}

/* Connections are admitted in the order they come, up to --max-connections; the
 * others get 503 at their first request. */
static void slot_new(struct conn_slot *c, const struct sockaddr_storage *peer, time_t now)
{
	*c = (struct conn_slot){ .used = true, .peer = *peer, .since = now };
	c->admitted = h.admitted < h.o->max_conns;
	h.admitted += c->admitted;
	h.live++;
}

static struct conn_slot *slot_of(struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	int fd = evcon ? bufferevent_getfd(evhttp_connection_get_bufferevent(evcon)) : -1;
	struct sockaddr_storage peer;

	if (fd < 0 || fd >= h.nconn_slots || !our_conn(fd, &peer))
		return NULL;
	if (!h.conns[fd].used || !same_peer(&h.conns[fd].peer, &peer))
		slot_new(&h.conns[fd], &peer, time(NULL));
	return &h.conns[fd];
}

static void on_sweep(evutil_socket_t fd_, short what, void *arg)
{
	time_t now = time(NULL);
	unsigned live = 0, admitted = 0;

	for (int fd = 0; fd < h.nconn_slots; fd++) {
		struct conn_slot *c = &h.conns[fd];
		struct sockaddr_storage peer;

		if (!our_conn(fd, &peer)) {
			if (c->used)
				h.admitted -= c->admitted;
			c->used = false;
			continue;
		}
		if (c->used && !same_peer(&c->peer, &peer)) {
			h.admitted -= c->admitted;
			c->used = false;
		}
		if (!c->used)
			slot_new(c, &peer, now);
		live++;
		admitted += c->admitted;
		if (!c->streaming && now - c->since > (time_t)h.o->header_timeout_s) {
			/* evhttp reads EOF and frees the connection itself. */
			shutdown(fd, SHUT_RDWR);
			h.cut++;
		}
	}
	h.live = live;
	h.admitted = admitted;
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	evconnlistener_enable(evhttp_bound_socket_get_listener(h.bound));
}

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct timeval tv = { 0, 200000 };

	/* Out of descriptors: stop accepting for a moment rather than spin on accept. */
	if (!h.emfile_warned)
		fprintf(
		    stderr, "mtrace-web: accept: %s; pausing new connections\n", strerror(errno));
	h.emfile_warned = true;
	evconnlistener_disable(l);
	evtimer_add(h.resume, &tv);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	struct conn_slot *c = slot_of(req);

	h.requests++;
	if (c)
		c->since = time(NULL);
	if (c && !c->admitted) {
		h.refused++;
		evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
		evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "5");
		send_text(req, 503, "Service Unavailable", "too many connections");
		return;
	}
	if (access_check(req, h.loopback))
		return;
	if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		send_text(req, 405, "Method Not Allowed", "only GET and HEAD");
		return;
	}
	if (!path || !*path)
		path = "/";
	if (!strcmp(path, "/events")) {
		if (m == EVHTTP_REQ_HEAD) {
			http_common_headers(req, "text/event-stream");
			evhttp_send_reply(req, 200, "OK", NULL);
			return;
		}
		if (c)
			c->streaming = true;
		sse_open(req);
		return;
	}
	if (!strcmp(path, "/api/state")) {
		serve_state(req);
		return;
	}
	if (!strcmp(path, "/index.html"))
		path = "/";
	for (size_t i = 0; i < N_ASSETS; i++) {
		if (strcmp(path, asset_defs[i].path))
			continue;
		struct evbuffer *b = evbuffer_new();
		http_common_headers(req, asset_defs[i].type);
		if (m == EVHTTP_REQ_HEAD) {
			/* evhttp would send a body given one, even to HEAD. */
			char len[24];
			snprintf(len, sizeof(len), "%zu", h.asset[i].len);
			evhttp_add_header(
			    evhttp_request_get_output_headers(req), "Content-Length", len);
		} else {
			evbuffer_add_reference(b, h.asset[i].data, h.asset[i].len, NULL, NULL);
		}
		evhttp_send_reply(req, 200, "OK", b);
		evbuffer_free(b);
		return;
	}
	send_text(req, 404, "Not Found", "no such page");
}

static void raise_fd_limit(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	h.nconn_slots = rl.rlim_cur > 1 << 20 ? 1 << 20 : (int)rl.rlim_cur;
}

int http_start(struct event_base *base, const struct web_opts *o, const struct listen_addr *a,
    char *err, size_t errlen)
{
	struct timeval one = { 1, 0 };
	struct evconnlistener *l;
	int fd;

	h.base = base;
	h.o = o;
	h.loopback = a->loopback;
	if (load_assets(o->assets, err, errlen) < 0)
		return -1;
	raise_fd_limit(o->max_conns * 2 + 64);
	h.conns = calloc((size_t)h.nconn_slots, sizeof(*h.conns));
	h.http = evhttp_new(base);
	if (!h.conns || !h.http) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	evhttp_set_max_headers_size(h.http, MAX_HEADERS);
	evhttp_set_max_body_size(h.http, MAX_BODY);
	evhttp_set_timeout(h.http, IO_TIMEOUT_S);
	/* Every method reaches on_request, which answers 405 with Allow: rather than
	 * evhttp's bare 501. */
	evhttp_set_allowed_methods(h.http,
	    EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
	        EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	        EVHTTP_REQ_PATCH);
	evhttp_set_gencb(h.http, on_request, NULL);

	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		int one_i = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one_i, sizeof(one_i));
		if (a->ss.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one_i, sizeof(one_i));
	}
	if (fd < 0 || bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0 ||
	    listen(fd, 128) < 0) {
		snprintf(
		    err, errlen, "cannot listen on %s:%u: %s", a->host, a->port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	h.bound = evhttp_accept_socket_with_handle(h.http, fd);
	if (!h.bound) {
		snprintf(err, errlen, "evhttp cannot accept on %s:%u", a->host, a->port);
		close(fd);
		return -1;
	}
	{
		struct sockaddr_storage me;
		socklen_t ml = sizeof(me);
		getsockname(fd, (struct sockaddr *)&me, &ml);
		h.port = ntohs(me.ss_family == AF_INET ? ((struct sockaddr_in *)&me)->sin_port
		                                       : ((struct sockaddr_in6 *)&me)->sin6_port);
	}
	l = evhttp_bound_socket_get_listener(h.bound);
	evconnlistener_set_error_cb(l, on_accept_error);
	h.resume = evtimer_new(base, on_resume, NULL);
	h.sweep = event_new(base, -1, EV_PERSIST, on_sweep, NULL);
	event_add(h.sweep, &one);
	return 0;
}

unsigned http_bound_port(void)
{
	return h.port;
}

void http_stop(void)
{
	if (h.sweep)
		event_free(h.sweep);
	if (h.resume)
		event_free(h.resume);
	if (h.http)
		evhttp_free(h.http);
	for (size_t i = 0; i < N_ASSETS; i++)
		free(h.asset[i].data);
	free(h.conns);
	memset(&h, 0, sizeof(h));
}
