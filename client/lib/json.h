/*
 * json.h - the one JSON encoding of ServerMsg, schema in docs/json.md.  Every
 * top-level object has "v" (JSON_V) and "type".  Guest strings are escaped so the
 * output is valid JSON and safe JavaScript for any bytes.
 */
#ifndef MTRACE_CLIENT_JSON_H
#define MTRACE_CLIENT_JSON_H

#include <event2/buffer.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mtrace.pb-c.h"

/* The schema's version, in every object; bumped when a field changes meaning. */
#define JSON_V "1"

/* A JSON string: ", \ and control bytes escaped, valid UTF-8 kept (U+2028/2029 as
 * \u escapes), every byte that is not UTF-8 as \u00XX (read as Latin-1). */
void json_str(struct evbuffer *b, const char *s);
/* Write b to f and drain it. */
void json_write(FILE *f, struct evbuffer *b);

/* Event i of a batch as one object (ts already summed; str the event's string or NULL;
 * host_ns its time on the host timeline, NULL when its clock is not on it). */
void json_event(struct evbuffer *b, const Mtrace__EventBatch *eb, size_t i, uint64_t ts,
    const int64_t *host_ns, const char *str);
/* A send paired with its receive (timeline.h), {"type":"evtchn_pair",...}. */
struct tl_pair;
void json_evtchn_pair(struct evbuffer *b, const struct tl_pair *p);
/* A whole EventBatch as one column object; -1 if its columns disagree.  base: where its
 * base_ts lies on the host timeline (timeline.h), its offset given to the page when
 * known; NULL when not. */
struct tl_time;
int json_batch(
    struct evbuffer *b, const Mtrace__EventBatch *eb, uint64_t recv_ms, const struct tl_time *base);
void json_domain_up(struct evbuffer *b, const Mtrace__DomainUp *u);
void json_domain_down(struct evbuffer *b, const Mtrace__DomainDown *d);
void json_loss(struct evbuffer *b, const Mtrace__Loss *l);
/* A ClockMap (docs/json.md); its source's name ("same-kernel", ...). */
void json_clock_map(struct evbuffer *b, const Mtrace__ClockMap *c);
const char *json_clock_source(int source);
/* full: threads, labels and sites too (the per-second SSE stats leave them out). */
void json_stats(struct evbuffer *b, const Mtrace__Stats *s, bool full);
/* The same in about max bytes (hostile Stats, stored, can unpack to gigabytes of JSON):
 * once past max, the entries of the tables still to come are left out.  Returns how
 * many were (0: complete). */
uint64_t json_stats_within(struct evbuffer *b, const Mtrace__Stats *s, bool full, size_t max);
/* Any message but Events; -1 (nothing written) for a kind without an encoding. */
int json_other(struct evbuffer *b, const Mtrace__ServerMsg *m);

/* json-vcpu.c: issue 38's records.  A VcpuIntervals as a "vcpu" object (-1, nothing
 * written, when its columns disagree); the parts of the stats objects. */
int json_vcpu(struct evbuffer *b, const Mtrace__VcpuIntervals *v);
void json_domain_vcpu(struct evbuffer *b, const Mtrace__DomainStats *d);
void json_waits(struct evbuffer *b, uint64_t waits, uint64_t ns, uint64_t steal, uint64_t blocked);
void json_stats_vcpu(struct evbuffer *b, const Mtrace__Stats *s);
const char *json_vcpu_state_name(unsigned s);  /* "running" ... "mixed" */
const char *json_vcpu_source_name(unsigned s); /* "none", "xen", "sim" */

/*
 * mtrace-web's own objects (docs/json.md).  A list is written as json_list_begin, each
 * item's encoder given its index i in the list (a comma before all but the first),
 * json_list_end.  host: with --nats the host a message or domain is of (hostile text,
 * escaped), NULL without.
 */
void json_list_begin(struct evbuffer *b);
void json_list_end(struct evbuffer *b);
/* b holds one object a json_* function wrote ({"v":N,...): host goes in second.  -1
 * (b as it was) when b does not start so. */
int json_put_host(struct evbuffer *b, const char *host);
struct json_hello {
	uint64_t instance;
	const char *server; /* program and version */
	const char *daemon;
	bool connected, resumed, fleet;
	uint64_t history_first_event;
	unsigned browser;
};
void json_hello(struct evbuffer *b, const struct json_hello *h);
void json_daemon(struct evbuffer *b, const char *host, bool connected, const char *daemon);
void json_dropped(struct evbuffer *b, uint64_t dropped, uint64_t total);
void json_web_domain(struct evbuffer *b, size_t i, const char *host, uint32_t domid, bool alive,
    const char *name, const char *reason);
struct json_web_host {
	const char *host;
	bool connected;
	uint64_t events;
	const char *daemon;
	uint64_t last_seen_ms;      /* when its last message was stored (Unix ms) */
	const Mtrace__Stats *stats; /* NULL: none (yet) */
	size_t stats_max;           /* its JSON in about this many bytes (json_stats_within) */
	bool stats_cut;             /* entries or parts were left out before */
	/* its clock against the NATS server's (fleet-skew.h): none measured yet when
	 * skew_samples is 0 */
	int64_t skew_ns;
	uint64_t skew_spread_ns;
	uint32_t skew_samples;
};
void json_web_host(struct evbuffer *b, size_t i, const struct json_web_host *h);
/* host_skew: a fleet host's clock against the NATS server's (fleet-skew.h) */
void json_host_skew(
    struct evbuffer *b, const char *host, int64_t skew_ns, uint64_t spread_ns, uint32_t samples);
/* {"count":..,"dropped_total":..,"list":[ ... json_browser each ... ]} */
void json_browsers_begin(struct evbuffer *b, unsigned count, uint64_t dropped_total);
void json_browser(struct evbuffer *b, size_t i, unsigned browser, const char *peer,
    uint64_t sent_events, uint64_t dropped, uint64_t lag_bytes, uint64_t queued_bytes);
void json_browsers_end(struct evbuffer *b);

#endif
