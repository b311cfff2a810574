/*
 * stream-blob.h - one encoded, framed ServerMsg (stream-blob.c).  A batch is encoded
 * once and the same bytes are queued to every client that selected it
 * (evbuffer_add_reference), so the blob is refcounted and freed when the last
 * client's buffer lets go of it.
 */
#ifndef MTRACED_STREAM_BLOB_H
#define MTRACED_STREAM_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "mtrace.pb-c.h"

struct evbuffer;

struct stream_blob {
	unsigned refs;
	size_t len;
	uint8_t data[];
};

/* Frame and pack msg; NULL when out of memory or above FRAME_MAX_TO_CLIENT. */
struct stream_blob *stream_blob_pack(const Mtrace__ServerMsg *msg);
/* The same for a ServerMsg holding only eb, byte for byte, sizing eb once where
 * protobuf-c sizes a sub-message twice (each a pass over every varint column). */
struct stream_blob *stream_blob_pack_events(const Mtrace__EventBatch *eb);
void stream_blob_unref(struct stream_blob *b);
/* Queue a reference to b at the end of out (takes its own reference). */
int stream_blob_queue(struct evbuffer *out, struct stream_blob *b);

#endif
