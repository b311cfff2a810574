/*
 * http-conns.h - the HTTP front's set of connections (http-conns.c): the caps, the
 * deadlines and the output bounds of http-front.h, over evhttp.  Used by the front;
 * the programs see only its limits and counts, through http-front.h.
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

struct hf_limits {
	unsigned max_conns;         /* HTTP connections at once */
	unsigned max_per_source;    /* of them from one address */
	unsigned request_timeout_s; /* a request, from its first byte to its answer sent */
	unsigned idle_timeout_s;    /* a kept-alive connection between requests */
	size_t max_headers, max_body;
	size_t out_conn;  /* response bytes queued for one connection */
	size_t out_total; /* ... for all of them */
};

struct hf_stats {
	unsigned live;            /* connections now */
	uint64_t requests;        /* answered by the program */
	uint64_t refused;         /* over the total cap: 503 and closed before a read */
	uint64_t refused_source;  /* over the per-source cap, likewise */
	uint64_t evicted;         /* silent, closed for a newcomer at the total cap */
	uint64_t cut;             /* past the request or idle deadline */
	uint64_t cut_reader;      /* not reading their answers, past the output caps */
	uint64_t busy;            /* 503: the answer would not fit the output caps */
	uint64_t accept_failures; /* accept() failed (out of descriptors) */
	size_t queued;            /* response bytes queued, all connections */
};

/* One connection evhttp holds for us, from its accept to its close. */
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
