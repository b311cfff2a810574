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
#include "http-front.h"
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
	struct http_front *front;
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
	    "                         IPv6; port 0 picks a free one; unix:/PATH for a\n"
	    "                         Unix socket of mode 0660, group mtrace)\n"
	    "      --textfile DIR     write DIR/%s atomically for node_exporter's textfile\n"
	    "                         collector at every update (no HTTP unless --listen)\n"
	    "      --interval MS      statistics from mtraced every MS ms (default 1000)\n"
	    "      --max-labels N     label series per domain, the rest in label=\"other\"\n"
	    "                         (default 64)\n"
	    "      --max-counters N   counter series per domain, likewise (default 64)\n"
	    "      --token-file FILE  every scrape must carry the token in FILE\n"
	    "                         (Authorization: Bearer)\n"
	    "      --max-connections N HTTP connections at once (default 64)\n"
	    "      --max-per-source N of them from one address or IPv6 /64 (default 16)\n"
	    "      --request-timeout S a request must arrive and its answer be sent\n"
	    "                         within S seconds; a kept-alive connection idle\n"
	    "                         for S is closed (default 10)\n"
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

static void render(struct exporter *e, struct evbuffer *out, enum expo_format fmt)
{
	struct expo_self self;

	session_self(e->session, &self);
	expo_render(out, fmt, session_stats(e->session), &self, &e->caps);
}

/* /metrics, and a line at / saying where they are; the front has checked the rest. */
static void on_request(struct evhttp_request *req, void *arg)
{
	struct exporter *e = arg;
	struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;
	struct evbuffer *out;
	enum expo_format fmt = EXPO_TEXT;
	bool metrics = path && !strcmp(path, "/metrics");

	if (!metrics && (!path || (strcmp(path, "/") && *path))) {
		hf_send_text(req, 404, "Not Found", "the metrics are at /metrics");
		return;
	}
	out = evbuffer_new();
	if (!out) {
		hf_send_text(req, 500, "Internal Server Error", "out of memory");
		return;
	}
	if (!metrics) {
		evbuffer_add_printf(
		    out, "mtrace-exporter %s: the metrics are at /metrics\n", MTRACE_VERSION);
		hf_common_headers(req, "text/plain; charset=utf-8");
		hf_reply(e->front, req, 200, "OK", out);
		evbuffer_free(out);
		return;
	}
	fmt = expo_negotiate(evhttp_find_header(evhttp_request_get_input_headers(req), "Accept"));
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
	hf_common_headers(req, fmt == EXPO_OPENMETRICS ? EXPO_OM_TYPE : EXPO_TEXT_TYPE);
	hf_reply(e->front, req, 200, "OK", out);
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

static void say_bound(const struct hf_listen *a, unsigned port)
{
	if (a->unix_socket)
		fprintf(stderr, "mtrace-exporter: listening on unix:%s (/metrics)\n", a->host);
	else if (a->ss.ss_family == AF_INET6)
		fprintf(stderr, "mtrace-exporter: listening on http://[%s]:%u/metrics\n", a->host,
		    port);
	else
		fprintf(
		    stderr, "mtrace-exporter: listening on http://%s:%u/metrics\n", a->host, port);
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
		{ "token-file", required_argument, NULL, 'T' },
		{ "max-connections", required_argument, NULL, 'M' },
		{ "max-per-source", required_argument, NULL, 'P' },
		{ "request-timeout", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct exporter e = { .caps = { .labels = 64, .counters = 64 } };
	const char *sock = NULL, *listen = NULL;
	const char *token_file = NULL;
	unsigned interval = 1000;
	struct hf_limits lim = {
		.max_conns = 64,
		.max_per_source = 16,
		.request_timeout_s = 10,
		.max_headers = 16384,
		.max_body = 0,
		.out_conn = 8u << 20,
		.out_total = 32u << 20,
	};
	struct hf_listen la;
	struct hf_token tok = { .len = 0 };
	struct event *sigs[2] = { NULL, NULL };
	char err[512];
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
		case 'T':
			token_file = optarg;
			break;
		case 'M':
			lim.max_conns = (unsigned)parse_num(optarg, "--max-connections", 1, 100000);
			break;
		case 'P':
			lim.max_per_source =
			    (unsigned)parse_num(optarg, "--max-per-source", 1, 100000);
			break;
		case 'R':
			lim.request_timeout_s =
			    (unsigned)parse_num(optarg, "--request-timeout", 1, 3600);
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
	lim.idle_timeout_s = lim.request_timeout_s;
	if (listen && hf_parse_listen(listen, &la, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-exporter: %s\n", err);
		return 2;
	}
	if (token_file && hf_token_load(&tok, token_file, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-exporter: %s\n", err);
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
		e.front = hf_new(
		    e.base, "mtrace-exporter", &la, &lim, &tok, on_request, &e, err, sizeof(err));
		if (!e.front) {
			fprintf(stderr, "mtrace-exporter: %s\n", err);
			goto out;
		}
		say_bound(&la, hf_port(e.front));
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
	hf_free(e.front);
	if (e.base)
		event_base_free(e.base);
	free(e.textfile_path);
	free(e.textfile_tmp);
	return rc;
}
