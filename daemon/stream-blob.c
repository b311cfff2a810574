/* stream-blob.c - encoded messages shared by the clients that get them (stream-blob.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "copy.h"
#include "frame.h"
#include "stream-blob.h"

/*
 * Blobs given back, kept for the next ones: an event batch is a blob of a few KiB
 * every loop turn, and malloc found each one anew (about 250 instructions a batch of
 * ~100 events, bench/daemon/callgrind.sh e2e).  Only blobs of at most BLOB_KEEP_MAX
 * bytes, at most BLOB_KEEP of them: what the daemon holds unseen stays below
 * 256 KiB.  The daemon is one thread; its stream servers share the blobs kept.
 */
#define BLOB_KEEP     4
#define BLOB_KEEP_MAX (64u * 1024)
#define BLOB_ROUND    4096u

static struct {
	struct stream_blob *b[BLOB_KEEP];
	unsigned n;
} kept;

/* A framed blob of a len-byte message; *payload is where the message goes. */
static struct stream_blob *blob_new(size_t len, uint8_t **payload)
{
	uint8_t pfx[FRAME_VARINT_MAX];
	struct stream_blob *b = NULL;
	size_t hl, size;

	if (len > FRAME_MAX_TO_CLIENT)
		return NULL;
	hl = frame_put_len(pfx, len);
	size = hl + len;
	for (unsigned i = 0; i < kept.n; i++) {
		if (kept.b[i]->cap >= size) {
			b = kept.b[i];
			kept.b[i] = kept.b[--kept.n];
			break;
		}
	}
	if (!b) {
		/* rounded up, so that the next batch of about the same size fits it */
		size_t cap = size <= BLOB_KEEP_MAX
		    ? (size + BLOB_ROUND - 1) / BLOB_ROUND * BLOB_ROUND
		    : size;

		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->cap = cap;
	}
	b->refs = 1;
	b->len = size;
	b->data = b->buf;
	memcpy(b->data, pfx, hl);
	*payload = b->data + hl;
	return b;
}

void stream_blob_kept_free(void)
{
	while (kept.n)
		free(kept.b[--kept.n]);
}

struct stream_blob *stream_blob_pack(const Mtrace__ServerMsg *msg)
{
	uint8_t *p;
	struct stream_blob *b = blob_new(mtrace__server_msg__get_packed_size(msg), &p);

	if (b)
		mtrace__server_msg__pack(msg, p);
	return b;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* The wire format below copies int32/int64 columns as they lie in memory. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "sfixed columns copied as is");

/* Bytes of the packed varints of a byte column: one each, two from 128 on. */
static size_t bytes_varint_len(const uint8_t *v, size_t n)
{
	size_t hi = 0, i = 0;

	for (; i + 8 <= n; i += 8) { /* eight at a time: the top bits of a word */
		uint64_t w;

		memcpy(&w, v + i, sizeof(w));
		/* each byte's top bit as 0/1, summed by the multiply into the top byte
		 * (at most 8: no carry); a popcount without -mpopcnt is a libgcc call */
		hi += (((w & 0x8080808080808080u) >> 7) * 0x0101010101010101u) >> 56;
	}
	for (; i < n; i++)
		hi += v[i] >> 7;
	return n + hi;
}

/* Whether any op or type is 128 or more (their varints two bytes), 16 at a time: most
 * batches have none, and both columns' lengths are then n without a count. */
static bool bytes_any_high(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint64_t any = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, sizeof(x));
		memcpy(&y, b + i, sizeof(y));
		any |= x | y;
	}
	for (; i < n; i++)
		any |= (uint64_t)(a[i] | b[i]);
	return any & 0x8080808080808080u;
}

/* Bytes of the packed varints of the refs of a batch of nstr strings. */
static size_t ref_varint_len(const uint32_t *v, size_t n, size_t nstr)
{
	size_t len = 0;

	if (nstr <= 0x80) /* every ref below 128 */
		return n;

	for (size_t i = 0; i < n; i++)
		len += varint_size(v[i]);
	return len;
}

/* A varint field (proto3: left out when 0, as protobuf-c does). */
/* v as a varint (frame_put_len's bytes), in line: a batch writes a dozen of them. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint8_t *put_varint_field(uint8_t *p, uint8_t tag, uint64_t v)
{
	if (!v)
		return p;
	*p++ = tag;
	return put_varint(p, v);
}

/* A packed repeated field's tag and length (left out when empty, by the caller). */
static uint8_t *put_len_hdr(uint8_t *p, unsigned field, size_t len)
{
	*p++ = (uint8_t)(field << 3 | 2u);
	return put_varint(p, len);
}

static uint8_t *put_bytes_varints(uint8_t *p, const uint8_t *v, size_t n, size_t len)
{
	if (len == n) { /* every value below 128: its varint is the byte */
		copy_bytes(p, v, n);
		return p + n;
	}
	for (size_t i = 0; i < n; i++)
		p = put_varint(p, v[i]);
	return p;
}

/* The EventBatch's fields in field order, as protobuf-c writes them; returns the end. */
static uint8_t *put_batch(
    uint8_t *p, const struct stream_batch_cols *c, size_t op_len, size_t type_len, size_t ref_len)
{
	size_t n = c->n;

	p = put_varint_field(p, 1u << 3, c->domid);
	p = put_varint_field(p, 2u << 3, c->ring);
	p = put_varint_field(p, 3u << 3, c->base_ts);
	if (n) {
		p = put_len_hdr(p, 4, n * sizeof(int32_t));
		copy_bytes(p, c->dts, n * sizeof(int32_t));
		p += n * sizeof(int32_t);
		p = put_len_hdr(p, 5, op_len);
		p = put_bytes_varints(p, c->op, n, op_len);
		p = put_len_hdr(p, 6, n * sizeof(int64_t));
		copy_bytes(p, c->thread, n * sizeof(int64_t));
		p += n * sizeof(int64_t);
		p = put_len_hdr(p, 7, n * sizeof(int64_t));
		copy_bytes(p, c->arg, n * sizeof(int64_t));
		p += n * sizeof(int64_t);
		p = put_len_hdr(p, 8, type_len);
		p = put_bytes_varints(p, c->type, n, type_len);
	}
	for (size_t i = 0; i < c->nstr; i++) {
		size_t l = c->str_len ? c->str_len[i] : strlen(c->str[i]);

		p = put_len_hdr(p, 9, l);
		memcpy(p, c->str[i], l);
		p += l;
	}
	p = put_varint_field(p, 10u << 3, c->clock);
	p = put_varint_field(p, 11u << 3, c->first_seq);
	if (c->nref) {
		p = put_len_hdr(p, 12, ref_len);
		if (ref_len == c->nref) { /* every ref below 128: its varint is the byte */
			for (size_t i = 0; i < c->nref; i++)
				p[i] = (uint8_t)c->str_ref[i];
			p += c->nref;
		} else {
			for (size_t i = 0; i < c->nref; i++)
				p = put_varint(p, c->str_ref[i]);
		}
	}
	return p;
}

/* Bytes of a field's tag (one here: fields 1-15) and its length or value. */
static size_t len_field(size_t len)
{
	return 1 + varint_size(len) + len;
}

static size_t varint_field(uint64_t v)
{
	return v ? 1 + varint_size(v) : 0;
}

struct blob_get {
	struct stream_blob *b;
};

/* The framed message's buffer as a new blob (stream_blob_pack_cols). */
static uint8_t *get_blob(void *arg, size_t len, size_t *hl)
{
	struct blob_get *g = arg;
	uint8_t *p;

	if (!(g->b = blob_new(len, &p)))
		return NULL;
	*hl = (size_t)(p - g->b->data);
	return g->b->data;
}

struct stream_blob *stream_blob_pack_cols(const struct stream_batch_cols *c)
{
	struct blob_get g = { NULL };

	return stream_blob_pack_cols_to(c, get_blob, &g) < 0 ? NULL : g.b;
}

/* Where the framed message goes when the caller owns the buffer: the prefix, then
 * the message, at what get returns. */
struct buf_get {
	uint8_t *(*get)(void *arg, size_t framed);
	void *arg;
};

static uint8_t *get_buf(void *arg, size_t len, size_t *hl)
{
	struct buf_get *g = arg;
	uint8_t pfx[FRAME_VARINT_MAX], *buf;
	size_t n;

	if (len > FRAME_MAX_TO_CLIENT)
		return NULL;
	n = frame_put_len(pfx, len);
	if (!(buf = g->get(g->arg, n + len)))
		return NULL;
	memcpy(buf, pfx, n);
	*hl = n;
	return buf;
}

ssize_t stream_blob_pack_cols_into(
    const struct stream_batch_cols *c, uint8_t *(*get)(void *arg, size_t framed), void *arg)
{
	struct buf_get g = { get, arg };

	return stream_blob_pack_cols_to(c, get_buf, &g);
}

ssize_t stream_blob_pack_cols_to(const struct stream_batch_cols *c,
    uint8_t *(*get)(void *arg, size_t len, size_t *hl), void *arg)
{
	size_t n = c->n, op_len = 0, type_len = 0, ref_len = 0, eblen, len, hl;
	uint8_t *p, *end;

	eblen = varint_field(c->domid) + varint_field(c->ring) + varint_field(c->base_ts) +
	    varint_field(c->clock) + varint_field(c->first_seq);
	if (n) {
		op_len = type_len = n;
		if (bytes_any_high(c->op, c->type, n)) {
			op_len = bytes_varint_len(c->op, n);
			type_len = bytes_varint_len(c->type, n);
		}
		eblen += len_field(n * sizeof(int32_t)) + len_field(op_len) +
		    2 * len_field(n * sizeof(int64_t)) + len_field(type_len);
	}
	for (size_t i = 0; i < c->nstr; i++)
		eblen += len_field(c->str_len ? c->str_len[i] : strlen(c->str[i]));
	if (c->nref) {
		ref_len = ref_varint_len(c->str_ref, c->nref, c->nstr);
		eblen += len_field(ref_len);
	}
	len = len_field(eblen); /* ServerMsg.events */
	if (!(p = get(arg, len, &hl)))
		return -1;
	p = put_len_hdr(p + hl, 2, eblen);
	end = put_batch(p, c, op_len, type_len, ref_len);
	/* a size above that is not what was written: the heap is already broken */
	if ((size_t)(end - p) != eblen)
		abort();
	return (ssize_t)(hl + len);
}

void stream_blob_unref(struct stream_blob *b)
{
	if (!b || --b->refs != 0)
		return;
	if (b->cap <= BLOB_KEEP_MAX && kept.n < BLOB_KEEP)
		kept.b[kept.n++] = b;
	else
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
