/* stream-blob.c - encoded messages shared by the clients that get them (stream-blob.h). */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"
#include "stream-blob.h"

/* A framed blob of a len-byte message; *payload is where the message goes. */
static struct stream_blob *blob_new(size_t len, uint8_t **payload)
{
	uint8_t pfx[FRAME_VARINT_MAX];
	struct stream_blob *b;
	size_t hl;

	if (len > FRAME_MAX_TO_CLIENT)
		return NULL;
	hl = frame_put_len(pfx, len);
	b = malloc(sizeof(*b) + hl + len);
	if (!b)
		return NULL;
	b->refs = 1;
	b->len = hl + len;
	b->data = b->buf;
	memcpy(b->data, pfx, hl);
	*payload = b->data + hl;
	return b;
}

struct stream_blob *stream_blob_pack(const Mtrace__ServerMsg *msg)
{
	uint8_t *p;
	struct stream_blob *b = blob_new(mtrace__server_msg__get_packed_size(msg), &p);

	if (b)
		mtrace__server_msg__pack(msg, p);
	return b;
}

/* ServerMsg.events: field 2, length-delimited (proto/mtrace.proto). */
#define EVENTS_TAG ((2u << 3) | 2u)
/* Room before the batch for the frame's length, the tag and the batch's length. */
#define EVENTS_HDR_MAX (FRAME_VARINT_MAX + 1 + FRAME_VARINT_MAX)

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * The most protobuf-c can write for eb: every field's tag and a length or value of
 * the widest varint, the fixed-width columns exactly, the varint columns at the width
 * of their largest value, each string with its length.
 */
static size_t events_bound(const Mtrace__EventBatch *eb, uint32_t col_max)
{
	size_t b = 5 * (1 + 10) + 6 * (1 + 5);

	b += eb->n_ts_delta * sizeof(int32_t) + (eb->n_thread + eb->n_arg) * sizeof(int64_t);
	b += (eb->n_op + eb->n_type) * varint_size(col_max);
	b += eb->n_str_ref * varint_size(eb->n_str);
	for (size_t i = 0; i < eb->n_str; i++)
		b += 1 + 5 + strlen(eb->str[i]);
	return b;
}

struct stream_blob *stream_blob_pack_events(const Mtrace__EventBatch *eb, uint32_t col_max)
{
	size_t bound = events_bound(eb, col_max), eblen, el, hl, len;
	uint8_t env[1 + FRAME_VARINT_MAX], pfx[FRAME_VARINT_MAX];
	struct stream_blob *b = malloc(sizeof(*b) + EVENTS_HDR_MAX + bound);

	if (!b)
		return NULL;
	eblen = mtrace__event_batch__pack(eb, b->buf + EVENTS_HDR_MAX);
	/* past the bound the heap is already broken: a caller broke the rule above */
	if (eblen > bound)
		abort();
	/* the envelope protobuf-c would write around the batch: the tag, then the
	 * batch's length; and before that the frame's length */
	env[0] = EVENTS_TAG;
	el = 1 + frame_put_len(env + 1, eblen);
	len = el + eblen;
	if (len > FRAME_MAX_TO_CLIENT) {
		free(b);
		return NULL;
	}
	hl = frame_put_len(pfx, len);
	b->refs = 1;
	b->len = hl + len;
	b->data = b->buf + EVENTS_HDR_MAX - el - hl;
	memcpy(b->data, pfx, hl);
	memcpy(b->data + hl, env, el);
	return b;
}

void stream_blob_unref(struct stream_blob *b)
{
	if (b && --b->refs == 0)
		free(b);
}

static void blob_cleanup(const void *data, size_t len, void *arg)
{
	stream_blob_unref(arg);
}

int stream_blob_queue(struct evbuffer *out, struct stream_blob *b)
{
	b->refs++;
	if (evbuffer_add_reference(out, b->data, b->len, blob_cleanup, b) < 0) {
		b->refs--;
		return -1;
	}
	return 0;
}
