/*
 * http-front.h - the one HTTP front of mtrace-web and mtrace-exporter, on evhttp.
 *
 * What a hostile peer may cost is bounded here, once, for both programs: where to
 * listen (IPv4, [IPv6]:port, localhost), strict request framing (one Host, required
 * in HTTP/1.1 and agreeing with an absolute URL; one Content-Length), the Host check
 * on loopback (DNS rebinding), the token (constant time), GET and HEAD only, header
 * size, a connection cap in total and per source address checked before evhttp reads
 * a byte, a deadline for the whole request and one for an idle kept-alive connection
 * (neither reset by a trickle of bytes), caps on the response bytes queued per
 * connection and in total (a client that does not read is closed and its memory
 * freed), and a pause of the listener when out of descriptors.
 */
#ifndef MTRACE_HTTP_FRONT_H
#define MTRACE_HTTP_FRONT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "http-limits.h"

#define HF_TOKEN_MIN 16
#define HF_TOKEN_MAX 256

struct hf_listen {
	struct sockaddr_storage ss;
	socklen_t len;
	bool loopback;
	bool unix_socket; /* host is its path */
	char host[128];   /* numeric, as it is printed ("localhost" is 127.0.0.1) */
	unsigned port;
};

/* "ADDR:PORT", "[V6ADDR]:PORT", "localhost:PORT" (port 0 picks a free one), or
 * "unix:/PATH": a Unix socket of mode 0660, its group mtrace when the process is a
 * member (the group that may connect to mtraced), else the process's own.
 * 0, or -1 with err set (naming the option). */
int hf_parse_listen(const char *spec, struct hf_listen *a, char *err, size_t errlen);

struct http_front;

/* Called for a request that passed every check (framing, Host, token, method). */
typedef void (*hf_handler)(struct evhttp_request *req, void *arg);

/* The token every request must then carry (Authorization: Bearer, the cookie set on a
 * ?token= load, or ?token=), read from a file others may not read. */
struct hf_token {
	char s[HF_TOKEN_MAX + 1];
	size_t len;
};
int hf_token_load(struct hf_token *t, const char *path, char *err, size_t errlen);

/* tok NULL or empty: no token (then, on loopback, the Host check). */
struct http_front *hf_new(struct event_base *base, const char *prog, const struct hf_listen *a,
    const struct hf_limits *lim, const struct hf_token *tok, hf_handler handler, void *arg,
    char *err, size_t errlen);
void hf_free(struct http_front *f);
unsigned hf_port(const struct http_front *f);
void hf_stats(const struct http_front *f, struct hf_stats *st);

bool hf_has_token(const struct http_front *f);

/* X-Content-Type-Options: nosniff, Cache-Control: no-store and the type. */
void hf_common_headers(struct evhttp_request *req, const char *type);
/* A short text/plain answer ("CODE REASON: text"). */
void hf_send_text(struct evhttp_request *req, int code, const char *reason, const char *text);
/* Send body (NULL: none) if it fits the output caps, else 503; body is left empty. */
void hf_reply(struct http_front *f, struct evhttp_request *req, int code, const char *reason,
    struct evbuffer *body);

/* req's connection is a stream from now on: no request deadline (the program keeps its
 * output small: hf_queued), and closed() when it goes, however it goes. */
void hf_stream(struct http_front *f, struct evhttp_request *req, void (*closed)(void *), void *arg);
/* Bytes queued on req's connection (its bufferevent's output). */
size_t hf_queued(struct evhttp_request *req);

#endif
