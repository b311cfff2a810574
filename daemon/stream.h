/*
 * stream.h - the client socket server (stream*.c, server side of proto/mtrace.proto).
 * The core calls these; they never block and never fail the caller: a slow client
 * loses its own events (counted, told), nobody else's.
 */
#ifndef MTRACED_STREAM_H
#define MTRACED_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring-reader.h"

struct event_base;
struct mtraced_config;

/* Listen (or take the socket-activated fd from systemd).  -1 with err on failure. */
int stream_init(struct event_base *base, const struct mtraced_config *cfg, char *err,
		size_t errlen);
/* Settings that SIGHUP may change (queue sizes, caps). */
void stream_reconfigure(const struct mtraced_config *cfg);

void stream_domain_up(uint32_t domid, const char *name, uint32_t rings, uint32_t clock,
		      bool legacy);
void stream_domain_down(uint32_t domid, const char *reason);
/* A run of events decoded from one ring, in ring order.  ev[i].str is only valid
 * during the call. */
void stream_events(uint32_t domid, uint32_t ring, uint32_t clock, const struct mtrace_event *ev,
		   size_t n);
void stream_ring_loss(uint32_t domid, uint32_t ring, uint64_t lost);

unsigned stream_client_count(void);
/* Bytes queued in the daemon for all clients (not yet taken by their sockets): lets a
 * caller that can afford to wait give clients time to drain before stream_shutdown. */
size_t stream_pending_bytes(void);
/* Send Goodbye to every client, flush what can be flushed without blocking, close. */
void stream_shutdown(const char *reason);

#endif
