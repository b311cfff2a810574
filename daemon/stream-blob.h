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
	uint8_t *data; /* the framed message: len bytes within buf */
	uint8_t buf[];
};

/* Frame and pack msg; NULL when out of memory or above FRAME_MAX_TO_CLIENT. */
struct stream_blob *stream_blob_pack(const Mtrace__ServerMsg *msg);
/*
 * The same for a ServerMsg holding only eb, byte for byte, without sizing it first
 * (protobuf-c's get_packed_size is a pass over every varint column, as long as the
 * pack itself): eb is packed into room for the most it can take, which needs every
 * op and type value <= col_max and every str_ref < n_str (the columns of
 * stream-columns.c are built that way).  The allocation is at most about 2 bytes an
 * event larger than the frame (op and type are bytes: col_max 255, 2 bytes each
 * counted, 1 each used).
 */
struct stream_blob *stream_blob_pack_events(const Mtrace__EventBatch *eb, uint32_t col_max);
void stream_blob_unref(struct stream_blob *b);
/* Queue a reference to b at the end of out (takes its own reference). */
int stream_blob_queue(struct evbuffer *out, struct stream_blob *b);

#endif
