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

struct stream_blob *stream_blob_pack_events(const Mtrace__EventBatch *eb)
{
	size_t eblen = mtrace__event_batch__get_packed_size(eb);
	uint8_t sub[1 + FRAME_VARINT_MAX], *p;
	struct stream_blob *b;
	size_t sl;

	/* the envelope protobuf-c would write: the tag, then the batch's length */
	sub[0] = EVENTS_TAG;
	sl = 1 + frame_put_len(sub + 1, eblen);
	b = blob_new(sl + eblen, &p);
	if (b) {
		memcpy(p, sub, sl);
		mtrace__event_batch__pack(eb, p + sl);
	}
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
