/*
 * stream-int.h - pieces shared by the stream server's files (not a contract):
 * stream.c (socket, clients, protocol) and stream-batch.c (filters, event batches).
 */
#ifndef MTRACED_STREAM_INT_H
#define MTRACED_STREAM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtrace.pb-c.h"

struct event_base;
struct evbuffer;
struct mtraced_config;

/* stream-socket.c: the listening fd (systemd's or our own, then *own is set and path
 * names it); -1 with a reason in err. */
int stream_socket_open(const struct mtraced_config *cfg, char *path, size_t pathlen, bool *own,
		       char *err, size_t errlen);

/*
 * One encoded, framed ServerMsg.  A batch is encoded once and the same bytes are
 * queued to every client that selected it (evbuffer_add_reference), so the blob is
 * refcounted and freed when the last client's buffer lets go of it.
 */
struct stream_blob {
	unsigned refs;
	size_t len;
	uint8_t data[];
};

/* Frame and pack msg; NULL when out of memory or above FRAME_MAX_TO_CLIENT. */
struct stream_blob *stream_blob_pack(const Mtrace__ServerMsg *msg);
void stream_blob_unref(struct stream_blob *b);
/* Queue a reference to b at the end of out (takes its own reference). */
int stream_blob_queue(struct evbuffer *out, struct stream_blob *b);

struct stream_client;

/* stream.c: hand one batch of n events to a client, subject to its queue cap. */
void stream_client_send_events(struct stream_client *c, struct stream_blob *b, size_t n);

/*
 * stream-batch.c: clients with the same event filter share a group; events are
 * appended to each matching group's per-ring columns and encoded once per group.
 */
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
/* Replace every byte that is not part of valid UTF-8 with '?', in place. */
void stream_utf8_fix(char *s);
/* stream-dict.c: the distinct strings of one batch (EventBatch.str), in order of
 * first use; the arena moves as it grows, so strings are found by offset. */
struct stream_dict {
	size_t n, cap;
	size_t *off, *len;
	char *arena;
	size_t arena_len, arena_cap;
	uint32_t *slots;	/* open addressing: index + 1, 0 free */
	size_t nslots;
};

/* Copy s (UTF-8 fixed) unless an equal string is there; *idx is its index. */
int stream_dict_add(struct stream_dict *d, const char *s, size_t len, uint32_t *idx);
void stream_dict_reset(struct stream_dict *d);
void stream_dict_free(struct stream_dict *d);
/* realloc *p to n elements of size; -1 (and *p untouched) when out of memory. */
int stream_grow(void **p, size_t size, size_t n);

/* stream-request.c: why a Subscribe cannot be taken (NULL: it can); the group's own
 * copy of one (unknown fields left out), NULL when out of memory. */
const char *stream_subscribe_invalid(const Mtrace__Subscribe *s);
Mtrace__Subscribe *stream_sub_copy(const Mtrace__Subscribe *sub);

/* Send and free a gone domain's columns. */
void stream_batch_domain_gone(uint32_t domid);

#endif
