/*
 * http.c - mtrace-web's HTTP side, on the one front (client/lib/http-front.h, which
 * bounds what a hostile peer may cost and checks Host and the token): the page's
 * files (read once at start, from a fixed list: no path from a request ever reaches
 * the file system), the state endpoint (state.c) and the SSE feed (sse.c).
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

#define MAX_HEADERS (8 * 1024)
#define MAX_BODY    1024
/* Answers queued and not yet read by their clients: one connection (the largest
 * answer, /api/state, always goes out on an empty queue), all of them; /api/state's
 * answers are held to OUT_TOTAL once more, as state.c counts them (until freed). */
#define OUT_CONN  (16u << 20)
#define OUT_TOTAL (64u << 20)
#define ASSET_MAX (4u << 20)

static const struct asset_def {
	const char *path, *file, *type;
} asset_defs[] = {
	{ "/", "index.html", "text/html; charset=utf-8" },
	{ "/app.js", "app.js", "text/javascript; charset=utf-8" },
	{ "/model.js", "model.js", "text/javascript; charset=utf-8" },
	{ "/render.js", "render.js", "text/javascript; charset=utf-8" },
	{ "/pairs.js", "pairs.js", "text/javascript; charset=utf-8" },
	{ "/style.css", "style.css", "text/css; charset=utf-8" },
	{ "/favicon.svg", "favicon.svg", "image/svg+xml" },
};
#define N_ASSETS (sizeof(asset_defs) / sizeof(asset_defs[0]))

static struct {
	struct http_front *front;
	const struct web_opts *o;
	struct {
		char *data;
		size_t len;
	} asset[N_ASSETS];
} h;

/* The front's two headers, and those that keep guest strings inert in the page. */
void http_common_headers(struct evhttp_request *req, const char *type)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);

	hf_common_headers(req, type);
	/* Defence in depth for guest strings: no inline script, nothing from elsewhere. */
	evhttp_add_header(out, "Content-Security-Policy",
	    "default-src 'none'; script-src 'self'; style-src 'self'; "
	    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
	    "form-action 'none'; frame-ancestors 'none'");
	evhttp_add_header(out, "X-Frame-Options", "DENY");
	evhttp_add_header(out, "Referrer-Policy", "no-referrer");
}

static void send_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	http_common_headers(req, "text/plain; charset=utf-8");
	hf_send_text(req, code, reason, text);
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

static void on_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;
	enum evhttp_cmd_type m = evhttp_request_get_command(req);

	if (!path || !*path)
		path = "/";
	if (!strcmp(path, "/events")) {
		if (m == EVHTTP_REQ_HEAD) {
			http_common_headers(req, "text/event-stream");
			evhttp_send_reply(req, 200, "OK", NULL);
			return;
		}
		sse_open(req, h.front);
		return;
	}
	if (!strcmp(path, "/api/state")) {
		http_common_headers(req, "application/json");
		state_serve(req);
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
		hf_reply(h.front, req, 200, "OK", b);
		evbuffer_free(b);
		return;
	}
	send_text(req, 404, "Not Found", "no such page");
}

/* Room for the connection cap, and for what is refused at it. */
static void raise_fd_limit(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int http_start(struct event_base *base, const struct web_opts *o, const struct hf_listen *a,
    const struct hf_token *tok, char *err, size_t errlen)
{
	struct hf_limits lim = {
		.max_conns = o->max_conns,
		.max_per_source = o->max_per_source,
		.request_timeout_s = o->request_timeout_s,
		.idle_timeout_s = o->request_timeout_s,
		.max_headers = MAX_HEADERS,
		.max_body = MAX_BODY,
		.out_conn = OUT_CONN,
		.out_total = OUT_TOTAL,
	};

	h.o = o;
	if (load_assets(o->assets, err, errlen) < 0)
		return -1;
	raise_fd_limit(o->max_conns * 2 + 64);
	h.front = hf_new(base, "mtrace-web", a, &lim, tok, on_request, NULL, err, errlen);
	if (h.front && state_init(h.front, o, OUT_TOTAL) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return h.front ? 0 : -1;
}

unsigned http_bound_port(void)
{
	return hf_port(h.front);
}

void http_stop(void)
{
	hf_free(h.front); /* its connections let go of their answers first */
	state_fini();
	for (size_t i = 0; i < N_ASSETS; i++)
		free(h.asset[i].data);
	memset(&h, 0, sizeof(h));
}
