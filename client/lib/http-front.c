/*
 * http-front.c - the HTTP front's set-up and its checks of each request: where to
 * listen, the listener (paused when out of descriptors), strict framing, the Host
 * check on loopback, the token, the methods.  The connections themselves (caps,
 * deadlines, output) are http-conns.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <stddef.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/keyvalq_struct.h>

#include <event2/listener.h>

#include "http-conns.h"
#include "http-front.h"

struct http_front {
	struct http_front *next_front;
	struct event_base *base;
	const char *prog;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	hf_handler handler;
	void *arg;
	bool loopback;
	unsigned port;
	struct hf_token token;
	char unix_path[128]; /* listening there: removed at the end */
	struct hf_conns cs;
	struct event *resume;
	int64_t accept_warned; /* ms: last "accept failed" said */
	unsigned long accept_failures_unsaid;
};

/* after the others: the request's HTTP version, which 2.1 has no accessor for */
#include <event2/http_struct.h>

#define COOKIE_NAME     "mtrace_token"
#define ACCEPT_PAUSE_MS 250
#define ACCEPT_SAY_MS   60000

int hf_parse_listen(const char *spec, struct hf_listen *a, char *err, size_t errlen)
{
	char host[128];
	const char *colon, *h = spec;
	size_t hl;
	char *end;
	unsigned long port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST };
	struct addrinfo *res = NULL;

	memset(a, 0, sizeof(*a));
	if (!strncmp(spec, "unix:", 5)) {
		struct sockaddr_un *un = (struct sockaddr_un *)&a->ss;
		const char *path = spec + 5;

		if (path[0] != '/' || strlen(path) >= sizeof(un->sun_path) ||
		    strlen(path) >= sizeof(a->host)) {
			snprintf(err, errlen,
			    "--listen %s: a Unix socket needs an absolute path of at most %zu bytes",
			    spec, sizeof(un->sun_path) - 1);
			return -1;
		}
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, path, strlen(path) + 1);
		a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
		a->unix_socket = true;
		snprintf(a->host, sizeof(a->host), "%s", path);
		return 0;
	}
	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');
		if (!rb || rb[1] != ':')
			goto bad;
		h = spec + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(spec, ':');
		/* an IPv6 address needs its brackets: "::1:80" is ambiguous */
		if (!colon || memchr(spec, ':', (size_t)(colon - spec)))
			goto bad;
		hl = (size_t)(colon - spec);
	}
	if (hl == 0 || hl >= sizeof(host))
		goto bad;
	memcpy(host, h, hl);
	host[hl] = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !colon[1] || colon[1] == '-' || colon[1] == '+' || port > 65535)
		goto bad;
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
		snprintf(err, errlen, "--listen %s: '%s' is not a numeric IPv4 or IPv6 address",
		    spec, host);
		return -1;
	}
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	freeaddrinfo(res);
	if (a->ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;
		in->sin_port = htons((uint16_t)port);
		a->loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;
		in6->sin6_port = htons((uint16_t)port);
		a->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	snprintf(a->host, sizeof(a->host), "%s", host);
	a->port = (unsigned)port;
	return 0;
bad:
	snprintf(err, errlen, "bad --listen '%s' (ADDR:PORT, e.g. 127.0.0.1:%s or [::1]:%s)", spec,
	    "8470", "8470");
	return -1;
}

int hf_token_load(struct hf_token *t, const char *path, char *err, size_t errlen)
{
	struct stat st;
	char buf[HF_TOKEN_MAX + 2];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		snprintf(err, errlen, "token file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "token file %s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_mode & S_IROTH) {
		snprintf(err, errlen, "token file %s is readable by everyone (chmod o-r)", path);
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "token file %s: %s", path, strerror(errno));
		return -1;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	if ((size_t)n > HF_TOKEN_MAX || (size_t)n < HF_TOKEN_MIN || strlen(buf) != (size_t)n) {
		snprintf(err, errlen,
		    "token file %s: the token must be %d to %d characters on one line", path,
		    HF_TOKEN_MIN, HF_TOKEN_MAX);
		return -1;
	}
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] <= ' ' || buf[i] > '~' || buf[i] == ';' || buf[i] == ',' ||
		    buf[i] == '"' || buf[i] == '\\') {
			snprintf(err, errlen,
			    "token file %s: the token must be printable ASCII "
			    "without spaces, quotes, ';' or ','",
			    path);
			return -1;
		}
	memcpy(t->s, buf, (size_t)n + 1);
	t->len = (size_t)n;
	return 0;
}

bool hf_has_token(const struct http_front *f)
{
	return f->token.len > 0;
}

/* Constant time in the length of what is offered: no early exit on a mismatch. */
static bool token_ok(const struct http_front *f, const char *s, size_t n)
{
	const struct hf_token *t = &f->token;
	unsigned char diff = (unsigned char)(n != t->len);

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)s[i] ^ (unsigned char)t->s[i < t->len ? i : 0];
	return diff == 0;
}

/* The value of name=value in a cookie header or a query string. */
static bool find_param(const char *s, const char *name, char sep, const char **v, size_t *vl)
{
	size_t nl = strlen(name);

	while (s && *s) {
		while (*s == ' ' || *s == sep)
			s++;
		if (!strncmp(s, name, nl) && s[nl] == '=') {
			const char *e = strchr(s + nl + 1, sep);
			*v = s + nl + 1;
			*vl = e ? (size_t)(e - *v) : strlen(*v);
			return true;
		}
		s = strchr(s, sep);
	}
	return false;
}

/* The host part of a Host value or an absolute URL's authority, without the port. */
static size_t host_part(const char *h)
{
	const char *e;

	if (h[0] == '[') {
		e = strchr(h, ']');
		return e ? (size_t)(e - h + 1) : strlen(h);
	}
	e = strchr(h, ':');
	return e ? (size_t)(e - h) : strlen(h);
}

static bool host_is_loopback(const char *host)
{
	char h[128];
	size_t n;
	struct in_addr in;

	if (!host)
		return true; /* HTTP/1.0 without Host: nothing to rebind */
	n = host_part(host);
	if (n >= sizeof(h))
		return false;
	memcpy(h, host, n);
	h[n] = 0;
	if (!strcasecmp(h, "localhost") || !strcmp(h, "[::1]"))
		return true;
	return inet_pton(AF_INET, h, &in) == 1 && (ntohl(in.s_addr) >> 24) == 127;
}

void hf_common_headers(struct evhttp_request *req, const char *type)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);

	if (type)
		evhttp_add_header(out, "Content-Type", type);
	evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(out, "Cache-Control", "no-store");
}

void hf_send_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	struct evbuffer *b = evbuffer_new();

	if (!evhttp_find_header(evhttp_request_get_output_headers(req), "X-Content-Type-Options"))
		hf_common_headers(req, "text/plain; charset=utf-8");
	if (b)
		evbuffer_add_printf(b, "%d %s: %s\n", code, reason, text);
	evhttp_send_reply(req, code, reason, b);
	if (b)
		evbuffer_free(b);
}

static void refuse(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);

	hf_common_headers(req, "text/plain; charset=utf-8");
	if (code == 401)
		evhttp_add_header(out, "WWW-Authenticate", "Bearer realm=\"mtrace\"");
	evhttp_add_header(out, "Connection", "close");
	hf_send_text(req, code, reason, text);
}

static unsigned count_headers(struct evkeyvalq *in, const char *name)
{
	unsigned n = 0;
	struct evkeyval *kv;

	TAILQ_FOREACH(kv, in, next)
	n += !strcasecmp(kv->key, name);
	return n;
}

/* Requests whose meaning a proxy or cache on the way could read otherwise than we
 * do (RFC 9112 3.2, 6.3): one Host, required in HTTP/1.1, agreeing with an absolute
 * URL; at most one Content-Length. */
static const char *ambiguous(struct evhttp_request *req)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *host = evhttp_find_header(in, "Host");
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *uhost = u ? evhttp_uri_get_host(u) : NULL;
	unsigned nhost = count_headers(in, "Host");

	if (nhost > 1)
		return "more than one Host header";
	if (!nhost && (req->major > 1 || (req->major == 1 && req->minor >= 1)))
		return "HTTP/1.1 needs a Host header";
	if (count_headers(in, "Content-Length") > 1)
		return "more than one Content-Length header";
	if (uhost && *uhost) {
		const char *hh = host ? host : "";
		size_t a = host_part(hh), b = strlen(uhost);
		/* evhttp gives a bracketed IPv6 host without its brackets */
		if (a >= 2 && hh[0] == '[') {
			hh++;
			a -= 2;
		}
		if (!host || a != b || strncasecmp(hh, uhost, a))
			return "the URL names another host than the Host header";
	}
	return NULL;
}

/* 0: go on; else the status already sent. */
static int access_check(struct http_front *f, struct evhttp_request *req)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *v = NULL, *h, *why = ambiguous(req);
	size_t vl = 0;
	bool offered = false, from_query = false;

	if (why) {
		refuse(req, 400, "Bad Request", why);
		return 400;
	}
	if (f->loopback && !hf_has_token(f)) {
		if (!host_is_loopback(evhttp_find_header(in, "Host"))) {
			refuse(req, 421, "Misdirected Request",
			    "this server answers to localhost names only");
			return 421;
		}
		return 0;
	}
	if (!hf_has_token(f))
		return 0;
	if ((h = evhttp_find_header(in, "Authorization")) && !strncasecmp(h, "Bearer ", 7)) {
		v = h + 7;
		vl = strlen(v);
		offered = true;
	} else if ((h = evhttp_find_header(in, "Cookie")) &&
	    find_param(h, COOKIE_NAME, ';', &v, &vl)) {
		offered = true;
	} else {
		const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
		const char *q = u ? evhttp_uri_get_query(u) : NULL;
		if (q && find_param(q, "token", '&', &v, &vl))
			offered = from_query = true;
	}
	if (!offered) {
		refuse(req, 401, "Unauthorized",
		    "a token is needed (Authorization: Bearer, or the URL with ?token=...)");
		return 401;
	}
	if (!token_ok(f, v, vl)) {
		refuse(req, 403, "Forbidden", "wrong token");
		return 403;
	}
	if (from_query) {
		char c[HF_TOKEN_MAX + 96];
		snprintf(
		    c, sizeof(c), COOKIE_NAME "=%s; Path=/; HttpOnly; SameSite=Strict", f->token.s);
		evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie", c);
	}
	return 0;
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct http_front *f = arg;
	struct hf_conn *c = hfc_of(&f->cs, req);
	enum evhttp_cmd_type m = evhttp_request_get_command(req);

	if (c)
		hfc_request(c);
	f->cs.st.requests++;
	if (access_check(f, req))
		return;
	if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD) {
		hf_common_headers(req, "text/plain; charset=utf-8");
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		hf_send_text(req, 405, "Method Not Allowed", "only GET and HEAD");
		return;
	}
	f->handler(req, f->arg);
}

void hf_reply(struct http_front *f, struct evhttp_request *req, int code, const char *reason,
    struct evbuffer *body)
{
	struct hf_conn *c = hfc_of(&f->cs, req);
	size_t len = body ? evbuffer_get_length(body) : 0;

	if (!hfc_room(&f->cs, c, len)) {
		f->cs.st.busy++;
		if (body)
			evbuffer_drain(body, len);
		evhttp_clear_headers(evhttp_request_get_output_headers(req));
		hf_common_headers(req, "text/plain; charset=utf-8");
		evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
		evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
		hf_send_text(req, 503, "Service Unavailable",
		    "answers not read by their clients fill the output cap");
		return;
	}
	evhttp_send_reply(req, code, reason, body);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct http_front *f = arg;

	evconnlistener_enable(evhttp_bound_socket_get_listener(f->bound));
}

/*
 * accept() failed, most likely out of descriptors: libevent would retry at once and
 * spin, logging each time.  Stop accepting for a moment, and say so at most once a
 * minute with the count of failures meanwhile.
 */
static struct http_front *fronts; /* the error callback's argument is evhttp's */

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct http_front *f = fronts;
	struct timeval pause = { 0, ACCEPT_PAUSE_MS * 1000 };
	int64_t now = hfc_now_ms();
	int err = errno;

	while (f && f->http != arg)
		f = f->next_front;
	if (!f)
		return;
	f->cs.st.accept_failures++;
	f->accept_failures_unsaid++;
	if (!f->accept_warned || now - f->accept_warned >= ACCEPT_SAY_MS) {
		fprintf(stderr,
		    "%s: accept: %s (%lu times); pausing new connections for %d ms each time\n",
		    f->prog, strerror(err), f->accept_failures_unsaid, ACCEPT_PAUSE_MS);
		f->accept_warned = now;
		f->accept_failures_unsaid = 0;
	}
	evconnlistener_disable(l);
	evtimer_add(f->resume, &pause);
}

/* Group mtrace when the process is in it (who may read the traces is who may reach
 * mtraced's socket), else the process's own; mode 0660 either way. */
static int unix_perms(const char *path)
{
	struct group *g = getgrnam("mtrace");
	gid_t groups[256];
	int n = getgroups(256, groups);
	bool member = g && g->gr_gid == getegid();

	for (int i = 0; g && i < n; i++)
		member |= groups[i] == g->gr_gid;
	if (member && chown(path, (uid_t)-1, g->gr_gid) < 0)
		return -1;
	return chmod(path, 0660);
}

/*
 * The accept queue holds a flood: with the queue full the kernel drops a newcomer's SYN,
 * and a legitimate client then waits for its 1 s retransmit however fast the caps below
 * turn the flood away.  The kernel takes at most net.core.somaxconn (4096 by default).
 */
#define LISTEN_BACKLOG 4096

static int listen_unix(const struct hf_listen *a, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	/* a socket left by a process that is gone; anything else is not ours to remove */
	if (lstat(a->host, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen,
			    "cannot listen on unix:%s: it exists and is no socket", a->host);
			return -1;
		}
		unlink(a->host);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0 ||
	    unix_perms(a->host) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		snprintf(err, errlen, "cannot listen on unix:%s: %s", a->host, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int listen_on(const struct hf_listen *a, char *err, size_t errlen)
{
	int one = 1, fd;

	if (a->unix_socket)
		return listen_unix(a, err, errlen);
	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (a->ss.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (fd < 0 || bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0 ||
	    listen(fd, LISTEN_BACKLOG) < 0) {
		snprintf(err, errlen, "cannot listen on %s%s%s:%u: %s",
		    a->ss.ss_family == AF_INET6 ? "[" : "", a->host,
		    a->ss.ss_family == AF_INET6 ? "]" : "", a->port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

struct http_front *hf_new(struct event_base *base, const char *prog, const struct hf_listen *a,
    const struct hf_limits *lim, const struct hf_token *tok, hf_handler handler, void *arg,
    char *err, size_t errlen)
{
	struct http_front *f = calloc(1, sizeof(*f));
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	int fd = -1;

	if (!f || !(f->http = evhttp_new(base)) || !(f->resume = evtimer_new(base, on_resume, f))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	f->base = base;
	f->prog = prog;
	f->handler = handler;
	f->arg = arg;
	f->loopback = a->loopback;
	if (tok)
		f->token = *tok;
	if (hfc_init(&f->cs, base, f->http, lim) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	evhttp_set_max_headers_size(f->http, (ev_ssize_t)lim->max_headers);
	evhttp_set_max_body_size(f->http, (ev_ssize_t)lim->max_body);
	/* evhttp's own timeout is per read or write; it stays as a backstop under the
	 * whole-request deadline of http-conns.c. */
	evhttp_set_timeout(f->http, (int)lim->request_timeout_s);
	/* Every method reaches on_request, which answers 405 with Allow: rather than
	 * evhttp's bare 501. */
	evhttp_set_allowed_methods(f->http,
	    EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
	        EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	        EVHTTP_REQ_PATCH);
	evhttp_set_gencb(f->http, on_request, f);
	if ((fd = listen_on(a, err, errlen)) < 0)
		goto fail;
	f->bound = evhttp_accept_socket_with_handle(f->http, fd);
	if (!f->bound) {
		snprintf(err, errlen, "evhttp cannot accept on %s:%u", a->host, a->port);
		close(fd);
		goto fail;
	}
	if (a->unix_socket)
		snprintf(f->unix_path, sizeof(f->unix_path), "%s", a->host);
	else if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
		f->port = ntohs(me.ss_family == AF_INET ? ((struct sockaddr_in *)&me)->sin_port
		                                        : ((struct sockaddr_in6 *)&me)->sin6_port);
	evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(f->bound), on_accept_error);
	f->next_front = fronts;
	fronts = f;
	return f;
fail:
	hf_free(f);
	return NULL;
}

void hf_free(struct http_front *f)
{
	struct http_front **p = &fronts;

	if (!f)
		return;
	while (*p && *p != f)
		p = &(*p)->next_front;
	if (*p)
		*p = f->next_front;
	if (f->unix_path[0])
		unlink(f->unix_path);
	if (f->cs.http)
		hfc_free(&f->cs);
	else if (f->http)
		evhttp_free(f->http);
	if (f->resume)
		event_free(f->resume);
	free(f);
}

unsigned hf_port(const struct http_front *f)
{
	return f->port;
}

void hf_stats(const struct http_front *f, struct hf_stats *st)
{
	*st = f->cs.st;
}

void hf_stream(struct http_front *f, struct evhttp_request *req, void (*closed)(void *), void *arg)
{
	hfc_stream(&f->cs, req, closed, arg);
}

size_t hf_queued(struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);

	return evcon
	    ? evbuffer_get_length(bufferevent_get_output(evhttp_connection_get_bufferevent(evcon)))
	    : 0;
}
