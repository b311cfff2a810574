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
struct stream;
struct stream_batch_memory;

/* A server on the client socket (or the socket-activated fd from systemd), with its
 * clients, groups and shared-memory regions.  NULL with err on failure. */
struct stream *stream_new(
    struct event_base *base, const struct mtraced_config *cfg, char *err, size_t errlen);
/* Settings that SIGHUP may change (queue sizes, caps). */
void stream_reconfigure(struct stream *s, const struct mtraced_config *cfg);

void stream_domain_up(struct stream *s, uint32_t domid, const char *name, uint32_t rings,
    uint32_t clock, bool legacy);
void stream_domain_down(struct stream *s, uint32_t domid, const char *reason);
/* A run of events decoded from one ring, in ring order.  ev[i].str is only valid
 * during the call. */
void stream_events(struct stream *s, uint32_t domid, uint32_t ring, uint32_t clock,
    const struct mtrace_event *ev, size_t n);
/* A new clock map of a domain, an event-channel link (clockmap.h): after everything
 * queued before it, to every client whose filter passes the domain. */
struct clockmap_rec;
struct evlink;
void stream_clock_map(struct stream *s, const struct clockmap_rec *r);
void stream_evtchn_link(struct stream *s, const struct evlink *l);
void stream_ring_loss(struct stream *s, uint32_t domid, uint32_t ring, uint64_t lost);
/* A domain's vCPU runstate intervals (vcpu.h), as one VcpuIntervals to the clients whose
 * subscription takes events of that domain. */
struct vcpu_batch;
void stream_vcpu(struct stream *s, const struct vcpu_batch *b);

unsigned stream_client_count(const struct stream *s);
/* Of those, the ones whose Subscribe was taken: a harness that starts its events once
 * its clients are in waits for these, not for connections. */
unsigned stream_subscribed_count(const struct stream *s);
/* Bytes queued in the daemon for all clients (not yet taken by their sockets): lets a
 * caller that can afford to wait give clients time to drain before stream_shutdown. */
size_t stream_pending_bytes(const struct stream *s);
/* What the event batches of s hold and held against client_batch_total (a harness's
 * figures). */
const struct stream_batch_memory *stream_memory(const struct stream *s);
/* Send Goodbye to every client, flush what can be flushed without blocking, close them
 * and the socket (once).  The core may still hand s events until stream_free: they go
 * to nobody. */
void stream_shutdown(struct stream *s, const char *reason);
/* Shut down (if not yet) and free s (NULL: nothing). */
void stream_free(struct stream *s);

#endif
