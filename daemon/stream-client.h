/*
 * stream-client.h - the client connections of a stream server: each one's bufferevent,
 * queue cap, statistics timer and life cycle, and the set of them (stream-client.c),
 * their requests (stream-request.c), and when their queues are written
 * (stream-write.c).  stream.c (the listener) creates them; stream-batch.c hands them
 * event batches.
 */
#ifndef MTRACED_STREAM_CLIENT_H
#define MTRACED_STREAM_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "mtrace.pb-c.h"

struct bufferevent;
struct evbuffer_cb_entry;
struct event;
struct event_base;
struct stream_batch;
struct stream_blob;
struct stream_clients;
struct stream_group;
struct stream_shm;

/* A client, as the connection (stream-client.c) and its requests (stream-request.c)
 * see it; the rest of the stream server only passes pointers around. */
struct stream_client {
	TAILQ_ENTRY(stream_client) entry;
	struct stream_clients *cs; /* the set it is in */
	struct bufferevent *bev;
	unsigned id;
	pid_t pid;
	uid_t uid;
	bool hello;                /* the client's Hello was accepted */
	bool closing;              /* flushing a last message, then close */
	size_t close_left;         /* bytes queued at the last close check (0: none) */
	unsigned close_rounds;     /* close checks that found the client reading on */
	bool stats_pending;        /* a Stats came due while congested */
	Mtrace__ClientMsg *submsg; /* owns *sub */
	const Mtrace__Subscribe *sub;
	struct stream_group *group;
	struct stream_shm *shm; /* events through the group's region, not the socket */
	struct event *stats_ev;
	struct event *partial_ev;
	struct event *close_ev;
	struct event *hello_ev;           /* handshake deadline */
	bool hello_deferred;              /* once, for a request half-sent at it */
	struct evbuffer_cb_entry *out_cb; /* keeps the total of queued bytes */
	uint64_t dropped_total;
	uint64_t dropped_unreported;
	/* write coalescing for fast clients: events in the current rate window */
	uint64_t win_start_ns, win_events, last_write_ns;
	bool fast;      /* past COALESCE_RATE in the last window */
	bool deferred;  /* writes off until the coalescing tick */
	bool write_due; /* writes on, data queued: this turn writes it */
	bool to_write;  /* queued in this turn: the write pass writes it (write_now) */
};

/* What SIGHUP may change. */
struct stream_client_settings {
	size_t queue_cap;       /* client_queue_bytes */
	size_t queue_total_cap; /* client_queue_total (0: no cap of its own) */
	unsigned max_clients;   /* for the fair share of queue_total_cap */
	unsigned hello_ms;      /* client_hello_ms (0: 5000) */
	uint64_t coalesce_ns;   /* client_coalesce_us */
	uint64_t coalesce_rate; /* client_coalesce_rate (0: 1000000) */
	unsigned max_top_n;
};

/* The clients of one stream server.  set holds the settings as normalised by
 * stream_clients_reconfigure: the one copy. */
struct stream_clients {
	TAILQ_HEAD(, stream_client) clients;
	unsigned nclients;
	unsigned next_id;
	struct event_base *base;
	struct stream_batch *batch; /* the groups they join (stream-batch.c) */
	void (*client_freed)(void *arg);
	void *freed_arg;
	/* stream-client.c's, for stream-write.c: c's socket took bytes (the loss notice,
	 * then the statistics, it owes) */
	void (*written)(struct stream_client *c);
	struct stream_client_settings set;
	size_t queued_total;       /* bytes in all clients' output buffers */
	struct event *coalesce_ev; /* one tick resumes every deferred client (stream-write.c) */
	struct event *write_ev;    /* the write pass, run in the turn that queued */
	bool write_scheduled;
	uint64_t writes_put_off; /* for the log at shutdown */
};

/* No client yet, the default settings; on_free(arg) runs after every client is freed
 * (a descriptor is free again).  -1 when out of memory. */
int stream_clients_init(struct stream_clients *cs, struct event_base *base,
    struct stream_batch *batch, void (*on_free)(void *arg), void *arg);
void stream_clients_reconfigure(struct stream_clients *cs, const struct stream_client_settings *s);
/* A connected socket fd (taken over; closed on failure), peer credentials, and what
 * reads its requests (stream-request.c); sends the server's Hello.  -1 when out of
 * memory. */
int stream_client_new(struct stream_clients *cs, int fd, pid_t pid, uid_t uid, gid_t gid,
    const char *host, void (*read_cb)(struct bufferevent *bev, void *arg));
/* Queue one message to c (control messages: past the cap by CONTROL_SLACK at most). */
void stream_client_send_msg(struct stream_client *c, const Mtrace__ServerMsg *m);
/* Tell the client why, flush what can be flushed, then close. */
void stream_client_error(struct stream_client *c, Mtrace__Error__Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* m with fds[0..nfd) attached (SCM_RIGHTS, nfd 1 or 2), once everything queued before
 * it is written: 0, or -1 when the socket cannot take it now (nothing sent). */
int stream_client_send_fds(
    struct stream_client *c, const Mtrace__ServerMsg *m, const int *fds, size_t nfd);
/* The SharedWake of a waiting shared-memory reader (stream-shm.c's wake). */
void stream_client_shm_wake(struct stream_client *c, uint64_t write);
/* stream-request.c: the bufferevent read callback of every client. */
void stream_client_read_cb(struct bufferevent *bev, void *arg);
/* Hand one batch of n events to a client, subject to its queue cap. */
void stream_client_send_events(struct stream_client *c, struct stream_blob *b, size_t n);
/* One notice to every subscribed client whose domain filter matches domid. */
void stream_clients_broadcast(
    struct stream_clients *cs, uint32_t domid, bool events_only, const Mtrace__ServerMsg *m);
/* The handshake deadline starts again (at the Hello: for the Subscribe). */
void stream_client_hello_rearm(struct stream_client *c);
/* Clients connected with this uid (for max_clients_per_uid). */
unsigned stream_clients_of_uid(const struct stream_clients *cs, uid_t uid);
size_t stream_clients_pending_bytes(const struct stream_clients *cs);
/* Goodbye with reason to every client, one pass of non-blocking writes, free them. */
void stream_clients_close_all(struct stream_clients *cs, const char *reason);
void stream_clients_fini(struct stream_clients *cs);

/* ---- stream-write.c: when queued bytes reach the socket ---- */

/* Bytes c's bufferevent holds for it. */
size_t stream_client_queued(const struct stream_client *c);
int stream_clients_write_init(struct stream_clients *cs);
void stream_clients_write_fini(struct stream_clients *cs);
/* c has bytes queued in this turn: the turn's write pass writes them. */
void stream_client_write_soon(struct stream_client *c);
/* n events were queued to c: its rate decides whether its writes are coalesced. */
void stream_client_coalesce(struct stream_client *c, size_t n);

#endif
