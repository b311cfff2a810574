/*
 * mtrace-exporter - mtraced's statistics for Prometheus: /metrics over HTTP (evhttp)
 * and/or a file for node_exporter's textfile collector.  An unprivileged client of
 * mtraced's socket (group mtrace); it never needs root.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <netinet/in.h>

#include "exporter.h"
#include "malloc-tune.h"
#include "mtrace-client.h"

/*
 * 9100-9999, the range of Prometheus's default-port allocations for exporters, is
 * taken; allocations go on above 10000.  See docs/man/mtrace-exporter.1.
 */
#define DEFAULT_LISTEN "127.0.0.1:10139"
#define TEXTFILE_NAME  "mtrace.prom"

struct exporter {
	struct event_base *base;
	struct event *resume;          /* the listener again, after running out of descriptors */
	time_t accept_warned;          /* last "Too many open files" said */
	unsigned long accept_failures; /* since then */
	struct session *session;
	struct expo_caps caps;
	const char *textfile_dir;
	char *textfile_path, *textfile_tmp;
	int textfile_errno; /* last failure said, so it is said once */
};

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: mtrace-exporter [options]\n"
	    "Serve mtraced's statistics as Prometheus metrics.\n"
	    "\n"
	    "  -s, --socket PATH      mtraced socket (default $MTRACE_SOCKET or %s)\n"
	    "  -l, --listen ADDR:PORT serve /metrics there (default %s; [::1]:PORT for\n"
	    "                         IPv6; port 0 picks a free one)\n"
	    "      --textfile DIR     write DIR/%s atomically for node_exporter's textfile\n"
	    "                         collector at every update (no HTTP unless --listen)\n"
	    "      --interval MS      statistics from mtraced every MS ms (default 1000)\n"
	    "      --max-labels N     label series per domain, the rest in label=\"other\"\n"
	    "                         (default 64)\n"
	    "      --max-counters N   counter series per domain, likewise (default 64)\n"
	    "  -h, --help             this text\n"
	    "  -V, --version          version\n"
	    "\n"
	    "The old spellings -t (--textfile) and -i (--interval) still work, with a\n"
	    "warning: across mtrace -t is --tree and -i is --input (docs/HACKING.md).\n",
	    MTRACE_DEFAULT_SOCKET, DEFAULT_LISTEN, TEXTFILE_NAME);
}

static unsigned long parse_num(
    const char *s, const char *what, unsigned long min, unsigned long max)
{
	return mtc_parse_num("mtrace-exporter", s, what, min, max);
}

/* "ADDR:PORT" or "[V6ADDR]:PORT" into addr (no brackets) and port. */
static int parse_listen(const char *arg, char *addr, size_t addrlen, unsigned short *port)
{
	const char *colon;
	size_t n;

	if (arg[0] == '[') {
		const char *close = strchr(arg, ']');
		if (!close || close[1] != ':')
			return -1;
		n = (size_t)(close - arg - 1);
		colon = close + 1;
		arg++;
	} else {
		colon = strrchr(arg, ':');
		if (!colon || memchr(arg, ':', (size_t)(colon - arg)))
			return -1;
		n = (size_t)(colon - arg);
	}
	if (!n || n >= addrlen)
		return -1;
	memcpy(addr, arg, n);
	addr[n] = '\0';
	*port = (unsigned short)parse_num(colon + 1, "port", 0, 65535);
	return 0;
}

static void render(struct exporter *e, struct evbuffer *out, enum expo_format fmt)
{
	struct expo_self self;

	session_self(e->session, &self);
	expo_render(out, fmt, session_stats(e->session), &self, &e->caps);
}

/* Only GET and HEAD: true when the request was answered with 405. */
static bool refuse_method(struct evhttp_request *req)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

	if (cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD)
		return false;
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
	evhttp_send_error(req, 405, "Method Not Allowed");
	return true;
}

static void common_headers(struct evhttp_request *req)
{
	struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);

	evhttp_add_header(hdr, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(hdr, "Cache-Control", "no-store");
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	evconnlistener_enable(arg);
}

/*
 * accept() failed, most likely out of descriptors: libevent would retry at once and
 * spin, logging each time.  Stop accepting for a moment, and say so at most once a
 * minute with the count of failures meanwhile.
 */
static struct exporter *accepting; /* the error callback's argument is evhttp's */

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct exporter *e = accepting;
	struct timeval pause = { 0, 250000 };
	time_t now = time(NULL);
	int err = errno;

	e->accept_failures++;
	if (now - e->accept_warned >= 60) {
		fprintf(stderr,
		    "mtrace-exporter: accept: %s (%lu times); pausing new connections for "
		    "250 ms each time\n",
		    strerror(err), e->accept_failures);
		e->accept_warned = now;
		e->accept_failures = 0;
	}
	evconnlistener_disable(l);
	if (!e->resume)
		e->resume = evtimer_new(e->base, on_resume, l);
	if (e->resume)
		evtimer_add(e->resume, &pause);
}

static void on_metrics(struct evhttp_request *req, void *arg)
{
	struct exporter *e = arg;
	struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
	struct evbuffer *out;
	enum expo_format fmt;

	if (refuse_method(req))
		return;
	fmt = expo_negotiate(evhttp_find_header(evhttp_request_get_input_headers(req), "Accept"));
	out = evbuffer_new();
	if (!out) {
		evhttp_send_error(req, 500, "Out of memory");
		return;
	}
	render(e, out, fmt);
	if (expo_accepts_gzip(
	        evhttp_find_header(evhttp_request_get_input_headers(req), "Accept-Encoding"))) {
		struct evbuffer *gz = evbuffer_new();
		if (gz && gzip_evbuffer(out, gz) == 0) {
			evbuffer_free(out);
			out = gz;
			evhttp_add_header(hdr, "Content-Encoding", "gzip");
		} else if (gz) {
			evbuffer_free(gz);
		}
	}
	evhttp_add_header(hdr, "Vary", "Accept, Accept-Encoding");
	evhttp_add_header(
	    hdr, "Content-Type", fmt == EXPO_OPENMETRICS ? EXPO_OM_TYPE : EXPO_TEXT_TYPE);
	common_headers(req);
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

static void on_other(struct evhttp_request *req, void *arg)
{
	struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
	struct evbuffer *out;

	if (refuse_method(req))
		return;
	if (strcmp(evhttp_request_get_uri(req), "/")) {
		evhttp_send_error(req, 404, "Not Found");
		return;
	}
	out = evbuffer_new();
	if (!out) {
		evhttp_send_error(req, 500, "Out of memory");
		return;
	}
	evbuffer_add_printf(
	    out, "mtrace-exporter %s: the metrics are at /metrics\n", MTRACE_VERSION);
	evhttp_add_header(hdr, "Content-Type", "text/plain; charset=utf-8");
	common_headers(req);
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

/* Temp file and rename: node_exporter never reads half a file. */
static void write_textfile(void *arg)
{
	struct exporter *e = arg;
	struct evbuffer *out;
	int fd, err = 0;

	if (!e->textfile_dir)
		return;
	out = evbuffer_new();
	if (!out)
		return;
	render(e, out, EXPO_TEXT);
	fd = open(e->textfile_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		err = errno;
	while (!err && evbuffer_get_length(out) > 0)
		if (evbuffer_write(out, fd) < 0 && errno != EINTR)
			err = errno;
	if (fd >= 0 && close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(e->textfile_tmp, e->textfile_path) < 0)
		err = errno;
	if (err) {
		if (fd >= 0)
			unlink(e->textfile_tmp);
		if (err != e->textfile_errno)
			fprintf(stderr, "mtrace-exporter: writing %s: %s\n", e->textfile_path,
			    strerror(err));
	}
	e->textfile_errno = err;
	evbuffer_free(out);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopexit(arg, NULL);
}

static void say_bound(struct evhttp_bound_socket *h)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (getsockname(evhttp_bound_socket_get_fd(h), (struct sockaddr *)&ss, &len) < 0)
		return;
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
		fprintf(
		    stderr, "mtrace-exporter: listening on http://[%s]:%u/metrics\n", host, port);
		return;
	}
	inet_ntop(AF_INET, &((const struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	port = ntohs(((const struct sockaddr_in *)&ss)->sin_port);
	fprintf(stderr, "mtrace-exporter: listening on http://%s:%u/metrics\n", host, port);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'l' },
		{ "textfile", required_argument, NULL, 'T' + 256 },
		{ "interval", required_argument, NULL, 'I' + 256 },
		{ "max-labels", required_argument, NULL, 'L' },
		{ "max-counters", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct exporter e = { .caps = { .labels = 64, .counters = 64 } };
	const char *sock = NULL, *listen = NULL;
	unsigned interval = 1000;
	struct evhttp *http = NULL;
	struct event *sigs[2] = { NULL, NULL };
	char addr[INET6_ADDRSTRLEN + 1];
	unsigned short port = 0;
	int c, rc = 1;

	malloc_tune();
	while ((c = getopt_long(argc, argv, "s:l:t:i:hV", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		case 'l':
			listen = optarg;
			break;
		case 't':
			fprintf(stderr, "mtrace-exporter: -t is an old spelling; use --textfile\n");
			__attribute__((fallthrough));
		case 'T' + 256:
			e.textfile_dir = optarg;
			break;
		case 'i':
			fprintf(stderr, "mtrace-exporter: -i is an old spelling; use --interval\n");
			__attribute__((fallthrough));
		case 'I' + 256:
			interval = (unsigned)parse_num(optarg, "interval", 100, 3600000);
			break;
		case 'L':
			e.caps.labels = (unsigned)parse_num(optarg, "label cap", 0, 1000000);
			break;
		case 'C':
			e.caps.counters = (unsigned)parse_num(optarg, "counter cap", 0, 1000000);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mtrace-exporter %s\n", MTRACE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mtrace-exporter: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!listen && !e.textfile_dir)
		listen = DEFAULT_LISTEN;
	if (listen && parse_listen(listen, addr, sizeof(addr), &port) < 0) {
		fprintf(stderr, "mtrace-exporter: bad --listen '%s' (ADDR:PORT or [ADDR]:PORT)\n",
		    listen);
		return 2;
	}
	if (e.textfile_dir &&
	    (asprintf(&e.textfile_path, "%s/%s", e.textfile_dir, TEXTFILE_NAME) < 0 ||
	        asprintf(&e.textfile_tmp, "%s/.%s.%ld.tmp", e.textfile_dir, TEXTFILE_NAME,
	            (long)getpid()) < 0))
		goto out;
	signal(SIGPIPE, SIG_IGN);
	e.base = event_base_new();
	if (!e.base) {
		fprintf(stderr, "mtrace-exporter: cannot start the event loop\n");
		goto out;
	}
	if (listen) {
		struct evhttp_bound_socket *h;

		http = evhttp_new(e.base);
		if (!http)
			goto out;
		/* the others reach the callbacks, which answer 405 (evhttp would say 501) */
		evhttp_set_allowed_methods(http,
		    EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
		        EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
		evhttp_set_max_headers_size(http, 16384);
		evhttp_set_max_body_size(http, 0);
		evhttp_set_timeout(http, 30);
		evhttp_set_cb(http, "/metrics", on_metrics, &e);
		evhttp_set_gencb(http, on_other, &e);
		h = evhttp_bind_socket_with_handle(http, addr, port);
		if (!h) {
			fprintf(stderr, "mtrace-exporter: cannot listen on %s: %s\n", listen,
			    strerror(errno));
			goto out;
		}
		accepting = &e;
		evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(h), on_accept_error);
		say_bound(h);
	}
	e.session = session_new(e.base, sock, interval, write_textfile, &e);
	if (!e.session)
		goto out;
	write_textfile(&e); /* mtrace_up 0 until the first statistics */
	sigs[0] = evsignal_new(e.base, SIGTERM, on_signal, e.base);
	sigs[1] = evsignal_new(e.base, SIGINT, on_signal, e.base);
	for (int i = 0; i < 2; i++)
		if (!sigs[i] || evsignal_add(sigs[i], NULL) < 0)
			goto out;
	if (event_base_dispatch(e.base) == 0)
		rc = 0;
out:
	for (int i = 0; i < 2; i++)
		if (sigs[i])
			event_free(sigs[i]);
	session_free(e.session);
	if (e.resume)
		event_free(e.resume);
	if (http)
		evhttp_free(http);
	if (e.base)
		event_base_free(e.base);
	free(e.textfile_path);
	free(e.textfile_tmp);
	return rc;
}
