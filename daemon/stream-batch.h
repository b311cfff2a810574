/*
 * stream-batch.h - event filters and batches (stream-batch.c): clients with the same
 * event filter share a group; events are appended to each matching group's per-ring
 * columns and encoded once per group.
 */
#ifndef MTRACED_STREAM_BATCH_H
#define MTRACED_STREAM_BATCH_H

#include "mtrace.pb-c.h"

struct event_base;
struct stream_client;
struct stream_group;

void stream_batch_init(struct event_base *base);
void stream_batch_fini(void);
/* Join the group for sub's event filter (creating it); NULL when out of memory. */
struct stream_group *stream_group_join(struct stream_client *c, const Mtrace__Subscribe *sub);
void stream_group_leave(struct stream_group *g, struct stream_client *c);
unsigned stream_group_count(void);
/* Encode and send everything accumulated so far (before control messages, so the
 * order a client sees matches the order things happened). */
void stream_batch_flush(void);
/* Send and free a gone domain's columns. */
void stream_batch_domain_gone(uint32_t domid);

#endif
