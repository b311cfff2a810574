/*
 * web.h - mtrace-web: a thin client of mtraced that serves the live timeline page,
 * a JSON state endpoint and the event feed (Server-Sent Events) over evhttp.
 *
 * One libevent loop, one context.  The feed from mtraced (or a recording with -i, or
 * with --nats the fleet stream in NATS JetStream: many hosts, each with its domains;
 * one session over any source, client/lib/source.h) becomes SSE messages in one
 * shared, bounded history (hist.c); every browser is a cursor into it (sse.c), so a
 * slow browser costs memory only in its own bounded socket buffer and is told how
 * many events it skipped, while mtraced, other clients and other browsers go on.
 */
#ifndef MTRACE_WEB_H
#define MTRACE_WEB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "fleet-skew.h"
#include "http-front.h"
#include "json.h"
#include "mtrace-client.h"
#include "source.h"

#define WEB_DEFAULT_LISTEN "127.0.0.1:8470"

struct web_opts {
	/* mtraced (-s, the default), a recording (-i) or the fleet stream (--nats: its
	 * hosts, --since, --from-start, --creds; always followed) */
	struct mtc_source_spec src;
	const char *listen;     /* ADDR:PORT */
	const char *token_file; /* needed unless listening on loopback */
	const char *assets;     /* NULL: installed, or the source tree when uninstalled */
	size_t history_bytes;   /* shared history of SSE messages */
	size_t queue_bytes;     /* how far one browser may lag before it skips */
	unsigned max_conns, max_per_source;
	unsigned request_timeout_s; /* a request, and an idle kept-alive connection */
	unsigned stats_ms;
	unsigned top_n;
};

/* A host's name, as the subjects carry it (subject.h: at most 255 bytes). */
#define WEB_HOST_MAX 256

/* hist.c: the shared history of formatted SSE messages, oldest evicted first. */
struct hmsg {
	uint64_t id;
	uint64_t ev_before; /* events in all messages before this one */
	uint64_t bytes_before;
	uint32_t events;
	uint32_t len;
	char data[]; /* "id: ...\nevent: ...\ndata: ...\n\n" */
};
void hist_init(size_t max_bytes, uint64_t instance);
void hist_free(void);
/* Append one message; data is the JSON payload (one line).  Returns its id. */
uint64_t hist_push(const char *event, const char *data, size_t len, uint32_t events);
const struct hmsg *hist_get(uint64_t id); /* NULL: evicted or not yet */
uint64_t hist_tail(void);                 /* oldest id held */
uint64_t hist_head(void);                 /* next id to be given */
uint64_t hist_events_total(void);         /* events in every message ever pushed */
uint64_t hist_bytes_total(void);
uint64_t hist_events_before(uint64_t id); /* id in [tail, head] */
uint64_t hist_bytes_before(uint64_t id);
size_t hist_bytes_held(void);
uint64_t hist_instance(void);

/* feed.c: the session with the source, and what the feed said (domains, per host):
 * the same for every source.  Without --nats there is one host, "" (the local one, or
 * the recording's), and no message names it; with --nats every message and domain says
 * its host, as domains of two hosts may have the same domid. */
/* on_history is called when new messages are in the history (main passes the SSE
 * pump: the feed knows nothing of its readers). */
int feed_start(struct event_base *base, const struct web_opts *o, void (*on_history)(void),
    char *err, size_t errlen);
void feed_stop(void);
void feed_retry_soon(void); /* after a failed feed_start */
bool feed_connected(void);
const char *feed_daemon(void); /* "mtraced 0.1.0 on HOST" */
const Mtrace__Stats *feed_last_stats(void);
void feed_state_json(struct evbuffer *b); /* domains as last seen */
uint64_t feed_events(void);
uint64_t feed_malformed(void);
bool feed_fleet(void);                    /* --nats */
void feed_hosts_json(struct evbuffer *b); /* --nats: the hosts as last seen */
/* --nats: the messages skipped as not ours, per host (fleet-hosts.h); -1 without */
int feed_bad_json(struct evbuffer *b);

/* tables.c: the hosts and domains the feed keeps, and each host's last Stats, within
 * fixed bounds (mtrace-web(1), LIMITS): the least recently heard from let go first. */
#define TAB_HOSTS      256
#define TAB_DOMS       1024
#define TAB_PARTS      16          /* of one Stats (mtrace-ship cuts them) */
#define TAB_HOST_STATS (8u << 20)  /* one host's Stats, unpacked */
#define TAB_STATS      (32u << 20) /* all hosts' */
#define TAB_HOST_JSON  (4u << 20)  /* one host's Stats in /api/state */
#define TAB_JSON       (24u << 20) /* all hosts' */
struct tab_dom {
	uint32_t domid;
	bool alive;
	unsigned host; /* its slot in the hosts */
	uint64_t seen; /* the tick of its last message */
	char name[64];
	char reason[64];
};
struct tab_host {
	bool used, up;
	char name[WEB_HOST_MAX];
	char daemon[256];
	uint64_t events;            /* saturating */
	uint64_t seen;              /* the tick of its last message */
	uint64_t last_ms;           /* when the stream stored its last message */
	struct fleet_skew_est skew; /* its clock against NATS's (fleet-skew.h; 0 samples: none) */
	Mtrace__ServerMsg *parts[TAB_PARTS];
	unsigned nparts;
	size_t stats_bytes;
	Mtrace__Stats merged; /* the parts as one */
	Mtrace__DomainStats **doms;
	bool stats_cut;
};
/* The host's slot (made, another let go if need be). */
int tab_host(const char *name);
struct tab_host *tab_host_at(unsigned i);
/* The domain (host, domid); made when make (another let go if need be), else NULL. */
struct tab_dom *tab_dom(unsigned host, uint32_t domid, bool make);
void tab_host_gone(unsigned host); /* its domains are not alive any more */
/* m (a Stats) kept as the host's, or a part of it: true when kept (tables.c frees it). */
bool tab_stats(unsigned host, Mtrace__ServerMsg *m);
const Mtrace__Stats *tab_stats_of(unsigned host);
void tab_domains_json(struct evbuffer *b, bool fleet);
void tab_hosts_json(struct evbuffer *b);
void tab_counts(uint64_t *hosts_evicted, uint64_t *doms_evicted, uint64_t *stats_dropped);
void tab_free(void);

/* sse.c: browsers on /events. */
void sse_init(struct event_base *base, size_t queue_bytes);
void sse_open(struct evhttp_request *req, struct http_front *front);
void sse_pump_all(void); /* new messages in the history */
void sse_close_all(void);
unsigned sse_count(void);
void sse_state_json(struct evbuffer *b);

/* state.c: /api/state, its large part built once per change of the feed and shared by
 * the answers, all answers' bytes held to cap until their connections let go. */
int state_init(struct http_front *front, const struct web_opts *o, size_t cap);
void state_fini(void);
/* The answer to req, its headers set (a 503 puts its own). */
void state_serve(struct evhttp_request *req);

/* http.c: the server. */
int http_start(struct event_base *base, const struct web_opts *o, const struct hf_listen *a,
    const struct hf_token *tok, char *err, size_t errlen);
void http_stop(void);
unsigned http_bound_port(void);
void http_common_headers(struct evhttp_request *req, const char *type);

#endif
