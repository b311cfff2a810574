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
#include <sys/types.h>

#include "mtrace.pb-c.h"

struct evbuffer;

struct stream_blob {
	unsigned refs;
	size_t len, cap; /* cap: the bytes buf has room for */
	uint8_t *data;   /* the framed message: len bytes within buf */
	uint8_t buf[];
};

/* Frame and pack msg; NULL when out of memory or above FRAME_MAX_TO_CLIENT. */
struct stream_blob *stream_blob_pack(const Mtrace__ServerMsg *msg);
/*
 * One batch's columns as stream-columns.c holds them: op and type a byte an event.
 * str[i] is NUL-terminated, str_len[i] its length (str_len NULL: strlen); every
 * str_ref < nstr.
 */
struct stream_batch_cols {
	uint32_t domid, ring, clock;
	uint64_t base_ts, first_seq;
	size_t n;
	const int32_t *dts;
	const uint8_t *op, *type;
	const int64_t *thread, *arg;
	size_t nstr;
	char *const *str;
	const uint32_t *str_len;
	size_t nref;
	const uint32_t *str_ref;
};
/*
 * The ServerMsg holding c's EventBatch, framed, byte for byte what protobuf-c packs
 * for it (tests/unit/stream.c), written straight from the columns: the fixed-width
 * ones copied whole, the byte columns copied whole when no value needs a second
 * varint byte.  NULL when out of memory or above FRAME_MAX_TO_CLIENT.
 */
struct stream_blob *stream_blob_pack_cols(const struct stream_batch_cols *c);
/* The same bytes into a buffer of the caller's: get(arg, framed) gives room for the
 * framed message of that many bytes (NULL: none).  The framed length, or -1. */
ssize_t stream_blob_pack_cols_into(
    const struct stream_batch_cols *c, uint8_t *(*get)(void *arg, size_t framed), void *arg);
/* Both over this: get(arg, len, hl) gives a buffer whose first *hl bytes are the
 * length prefix of a len-byte message. */
ssize_t stream_blob_pack_cols_to(const struct stream_batch_cols *c,
    uint8_t *(*get)(void *arg, size_t len, size_t *hl), void *arg);
void stream_blob_unref(struct stream_blob *b);
/* Free the blobs kept for reuse (stream-blob.c; at a stream server's end). */
void stream_blob_kept_free(void);
/* Queue a reference to b at the end of out (takes its own reference). */
int stream_blob_queue(struct evbuffer *out, struct stream_blob *b);

#endif
