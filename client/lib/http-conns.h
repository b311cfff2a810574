/*
 * http-conns.h - the HTTP front's set of connections (http-conns.c): the caps, the
 * deadlines and the output bounds of http-front.h, over evhttp.  Used by the front
 * (http-front.c) only: the programs see the limits and counts (http-limits.h) through
 * http-front.h, never this header.
 */
#ifndef MTRACE_HTTP_CONNS_H
#define MTRACE_HTTP_CONNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "http-limits.h"

/* One connection evhttp holds for us (http-conns.c). */
struct hf_conn;

struct hf_conns {
	struct event_base *base;
	struct evhttp *http; /* freed by hfc_free */
	struct hf_limits lim;
	struct hf_conn *conns;   /* admitted, live */
	struct hf_conn *pending; /* made by evhttp, not yet looked at */
	struct event *admit, *sweep;
	bool sweeping;
	struct hf_stats st;
};

int64_t hfc_now_ms(void);
/* Watch every connection http makes from now on. */
int hfc_init(
    struct hf_conns *cs, struct event_base *base, struct evhttp *http, const struct hf_limits *lim);
void hfc_free(struct hf_conns *cs); /* with the evhttp */
struct hf_conn *hfc_of(struct hf_conns *cs, struct evhttp_request *req);
/* A request arrived on c: the request deadline now covers its answer. */
void hfc_request(struct hf_conn *c);
/* Whether more bytes of answer fit the caps (closing stalled readers to make room). */
bool hfc_room(struct hf_conns *cs, struct hf_conn *c, size_t more);
void hfc_stream(struct hf_conns *cs, struct evhttp_request *req, void (*closed)(void *), void *arg);

#endif
