/*
 * access.c - who may read the traces.  Traces carry guest data, so mtrace-web listens
 * on loopback unless told otherwise, and then only with a token read from a file,
 * compared in constant time on every request (Authorization: Bearer, the cookie the
 * first page load sets, or ?token= on that first load).  On loopback the Host header
 * must name loopback, so that a web page elsewhere cannot read the feed through DNS
 * rebinding.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/queue.h>

#include <event2/keyvalq_struct.h>

#include "web.h"

/* after web.h: the request's HTTP version, which 2.1 has no accessor for */
#include <event2/http_struct.h>

#define TOKEN_MAX   256
#define COOKIE_NAME "mtrace_token"

static char token[TOKEN_MAX + 1];
static size_t token_len;

int access_parse_listen(const char *spec, struct listen_addr *a, char *err, size_t errlen)
{
	char host[128];
	const char *colon, *h = spec;
	size_t hl;
	char *end;
	unsigned long port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST };
	struct addrinfo *res = NULL;

	memset(a, 0, sizeof(*a));
	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');
		if (!rb || rb[1] != ':')
			goto bad;
		h = spec + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			goto bad;
		hl = (size_t)(colon - spec);
	}
	if (hl == 0 || hl >= sizeof(host))
		goto bad;
	memcpy(host, h, hl);
	host[hl] = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !colon[1] || port > 65535)
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
	snprintf(
	    err, errlen, "bad --listen '%s' (ADDR:PORT, e.g. 127.0.0.1:8470 or [::1]:8470)", spec);
	return -1;
}

int access_load_token(const char *path, char *err, size_t errlen)
{
	struct stat st;
	char buf[TOKEN_MAX + 2];
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
	if ((size_t)n > TOKEN_MAX || (size_t)n < WEB_TOKEN_MIN || strlen(buf) != (size_t)n) {
		snprintf(err, errlen,
		    "token file %s: the token must be %d to %d characters on one line", path,
		    WEB_TOKEN_MIN, TOKEN_MAX);
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
	memcpy(token, buf, (size_t)n + 1);
	token_len = (size_t)n;
	return 0;
}

bool access_has_token(void)
{
	return token_len > 0;
}

/* Constant time in the length of what is offered: no early exit on a mismatch. */
static bool token_ok(const char *s, size_t n)
{
	unsigned char diff = (unsigned char)(n != token_len);

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)s[i] ^ (unsigned char)token[i < token_len ? i : 0];
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

static bool host_is_loopback(const char *host)
{
	char h[128];
	size_t n;

	if (!host)
		return true; /* HTTP/1.0 without Host: nothing to rebind */
	if (host[0] == '[') {
		const char *rb = strchr(host, ']');
		if (!rb)
			return false;
		n = (size_t)(rb - host + 1);
	} else {
		const char *c = strchr(host, ':');
		n = c ? (size_t)(c - host) : strlen(host);
	}
	if (n >= sizeof(h))
		return false;
	memcpy(h, host, n);
	h[n] = 0;
	if (!strcasecmp(h, "localhost") || !strcmp(h, "[::1]"))
		return true;
	struct in_addr in;
	return inet_pton(AF_INET, h, &in) == 1 && (ntohl(in.s_addr) >> 24) == 127;
}

static void refuse(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	struct evbuffer *b = evbuffer_new();

	http_common_headers(req, "text/plain; charset=utf-8");
	if (code == 401)
		evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
		    "Bearer realm=\"mtrace-web\"");
	evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
	evbuffer_add_printf(b, "%d %s: %s\n", code, reason, text);
	evhttp_send_reply(req, code, reason, b);
	evbuffer_free(b);
}

static unsigned count_headers(struct evkeyvalq *in, const char *name)
{
	unsigned n = 0;
	struct evkeyval *kv;

	TAILQ_FOREACH(kv, in, next)
	n += !strcasecmp(kv->key, name);
	return n;
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
		size_t a = host_part(host ? host : ""), b = strlen(uhost);
		/* evhttp gives a bracketed IPv6 host without its brackets */
		const char *hh = host ? host : "";
		if (a >= 2 && hh[0] == '[') {
			hh++;
			a -= 2;
		}
		if (!host || a != b || strncasecmp(hh, uhost, a))
			return "the URL names another host than the Host header";
	}
	return NULL;
}

int access_check(struct evhttp_request *req, bool loopback)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *v = NULL, *h;
	size_t vl = 0;
	bool offered = false, from_query = false;
	const char *why = ambiguous(req);

	if (why) {
		refuse(req, 400, "Bad Request", why);
		return 400;
	}
	if (loopback && !access_has_token()) {
		if (!host_is_loopback(evhttp_find_header(in, "Host"))) {
			refuse(req, 421, "Misdirected Request",
			    "this server answers to localhost names only");
			return 421;
		}
		return 0;
	}
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
		    "a token is needed (open the URL mtrace-web printed, with ?token=...)");
		return 401;
	}
	if (!token_ok(v, vl)) {
		refuse(req, 403, "Forbidden", "wrong token");
		return 403;
	}
	if (from_query) {
		char c[TOKEN_MAX + 96];
		snprintf(c, sizeof(c), COOKIE_NAME "=%s; Path=/; HttpOnly; SameSite=Strict", token);
		evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie", c);
	}
	return 0;
}
