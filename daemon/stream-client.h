/*
 * stream-client.h - one client connection of the stream server (stream-client.c):
 * its bufferevent, the request side of the protocol, its queue cap, statistics timer
 * and write coalescing.  stream.c (the listener) creates them; stream-batch.c hands
 * them event batches.
 */
#ifndef MTRACED_STREAM_CLIENT_H
#define MTRACED_STREAM_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mtrace.pb-c.h"

struct event_base;
struct stream_blob;
struct stream_client;

/* What SIGHUP may change. */
struct stream_client_settings {
	size_t queue_cap;     /* client_queue_bytes */
	uint64_t coalesce_ns; /* client_coalesce_us */
	unsigned max_top_n;
};

/* on_free runs after every client is freed (a descriptor is free again). */
int stream_clients_init(struct event_base *base, void (*on_free)(void));
void stream_clients_reconfigure(const struct stream_client_settings *s);
/* A connected socket fd (taken over; closed on failure), peer credentials; sends
 * the server's Hello.  -1 when out of memory. */
int stream_client_new(int fd, pid_t pid, uid_t uid, gid_t gid, const char *host);
/* Hand one batch of n events to a client, subject to its queue cap. */
void stream_client_send_events(struct stream_client *c, struct stream_blob *b, size_t n);
/* One notice to every subscribed client whose domain filter matches domid. */
void stream_clients_broadcast(uint32_t domid, bool events_only, const Mtrace__ServerMsg *m);
/* A DomainUp in m/u; the name (guest-written in xenstore) is made valid UTF-8 in nm. */
void stream_msg_domain_up(Mtrace__ServerMsg *m, Mtrace__DomainUp *u, char nm[static 256],
			  uint32_t domid, const char *name, uint32_t rings, uint32_t clock,
			  bool legacy);
unsigned stream_clients_count(void);
size_t stream_clients_pending_bytes(void);
/* Goodbye with reason to every client, one pass of non-blocking writes, free them. */
void stream_clients_close_all(const char *reason);
void stream_clients_fini(void);

#endif
