/*
 * stream-batch.h - the subscription groups and their batches (stream-batch.c):
 * clients with the same event filter share a group; events are appended to each
 * matching group's per-ring columns (stream-columns.h) and encoded once per group.
 */
#ifndef MTRACED_STREAM_BATCH_H
#define MTRACED_STREAM_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mtrace.pb-c.h"
#include "stream-columns.h"

struct event_base;
struct mtrace_event;
struct stream_batch;
struct stream_blob;
struct stream_client;
struct stream_group;
struct stream_shm;
struct stream_shms;

/* How a group's batch of n events (NULL: dropped for want of memory) reaches one of
 * its clients: stream-client.c's stream_client_send_events. */
typedef void (*stream_batch_send_fn)(struct stream_client *c, struct stream_blob *b, size_t n);

/* The groups of one stream server, their batches and the account of their columns;
 * shms: where a group's shared-memory region is made (NULL: none is).  NULL when out of
 * memory. */
struct stream_batch *stream_batch_new(
    struct event_base *base, stream_batch_send_fn send, struct stream_shms *shms);
/* After every client left its group: the last batches are dropped, the figures logged. */
void stream_batch_free(struct stream_batch *sb);
/* client_batch_total (0: no cap of its own); takes effect at the next event. */
void stream_batch_set_cap(struct stream_batch *sb, size_t total);
const struct stream_batch_memory *stream_batch_memory(const struct stream_batch *sb);
/* Join the group for sub's event filter (creating it); NULL when out of memory. */
struct stream_group *stream_group_join(
    struct stream_batch *sb, struct stream_client *c, const Mtrace__Subscribe *sub);
void stream_group_leave(struct stream_group *g, struct stream_client *c);
/* c's events through the group's shared-memory region from now on (taken for the first
 * such member): the region, or NULL with why (c stays on the socket); uid: c's, whose
 * share of the regions it counts against (client_shm_per_uid); efd: c is woken through
 * the region's eventfd, not by SharedWake messages. */
struct stream_shm *stream_group_shm_attach(
    struct stream_group *g, struct stream_client *c, uid_t uid, bool efd, const char **why);
/* Back on the socket (the region could not be handed over). */
void stream_group_shm_detach(struct stream_group *g, struct stream_client *c);
/* A notice (DomainUp, DomainDown, Loss) into the region of every group that selects
 * domid: its shared-memory members get it in order with their events. */
void stream_batch_notice(struct stream_batch *sb, uint32_t domid, const struct stream_blob *b);
/* Encode and send everything accumulated so far (before control messages, so the
 * order a client sees matches the order things happened). */
void stream_batch_flush(struct stream_batch *sb);
/* Append a run of one ring's events to every group that selects them (stream.h's
 * stream_events). */
void stream_batch_events(struct stream_batch *sb, uint32_t domid, uint32_t ring, uint32_t clock,
    const struct mtrace_event *ev, size_t n);
/* Send and free a gone domain's columns. */
void stream_batch_domain_gone(struct stream_batch *sb, uint32_t domid);

#endif
