/*
 * recording.c - write and read mtrace recordings (docs/recording.md).
 *
 * A recording may come from anywhere (copied from another machine, cut short by a
 * full disk, damaged): every length is checked against what is left of the file,
 * and every error names the byte offset where it was found.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "recording.h"
#include "unpack-arena.h"

struct recording {
	FILE *f;
	const char *name;
	uint64_t off; /* offset of the next byte to read */
	uint8_t *buf;
	size_t cap;
};

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

int recording_write_header(FILE *f, const Mtrace__Hello *hello)
{
	uint8_t h[RECORDING_HDR_LEN] = { 0 };

	memcpy(h, RECORDING_MAGIC, RECORDING_MAGIC_LEN);
	put_le16(h + 8, RECORDING_VERSION);
	put_le16(h + 10, RECORDING_HDR_LEN);
	/* h[12..16): flags, none yet */
	if (fwrite(h, 1, sizeof(h), f) != sizeof(h))
		return -1;
	if (hello) {
		Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
		uint8_t *buf;
		size_t len, hl;
		int r;

		m.msg_case = MTRACE__SERVER_MSG__MSG_HELLO;
		m.hello = (Mtrace__Hello *)hello;
		len = mtrace__server_msg__get_packed_size(&m);
		buf = malloc(len + FRAME_VARINT_MAX);
		if (!buf)
			return -1;
		hl = frame_put_len(buf, len);
		mtrace__server_msg__pack(&m, buf + hl);
		r = recording_write_frame(f, buf, hl + len);
		free(buf);
		return r;
	}
	return 0;
}

int recording_write_frame(FILE *f, const uint8_t *raw, size_t len)
{
	return fwrite(raw, 1, len, f) == len ? 0 : -1;
}

struct recording *recording_open(FILE *f, const char *name, char *err, size_t errlen)
{
	uint8_t h[RECORDING_HDR_LEN];
	size_t n = fread(h, 1, sizeof(h), f), hlen, skip;
	unsigned version;
	struct recording *r;

	if (n < 10 || (n < RECORDING_HDR_LEN && ferror(f))) {
		if (ferror(f))
			snprintf(err, errlen, "%s: read error at offset %zu: %s", name, n,
			    strerror(errno));
		else if (n == 0)
			snprintf(err, errlen, "%s: empty file, not an mtrace recording", name);
		else if (memcmp(h, RECORDING_MAGIC, n < 8 ? n : 8) != 0)
			snprintf(err, errlen, "%s: not an mtrace recording (bad magic at offset 0)",
			    name);
		else
			snprintf(err, errlen,
			    "%s: truncated header at offset %zu (%d bytes needed)", name, n,
			    RECORDING_HDR_LEN);
		return NULL;
	}
	if (memcmp(h, RECORDING_MAGIC, RECORDING_MAGIC_LEN) != 0) {
		snprintf(err, errlen,
		    "%s: not an mtrace recording (bad magic at offset 0; raw frames "
		    "from an mtrace-cat before 0.2 have no header)",
		    name);
		return NULL;
	}
	version = h[8] | (unsigned)h[9] << 8;
	if (version != RECORDING_VERSION) {
		snprintf(err, errlen,
		    "%s: recording version %u (at offset 8) is not supported: this "
		    "mtrace-cat reads version %d",
		    name, version, RECORDING_VERSION);
		return NULL;
	}
	if (n < RECORDING_HDR_LEN) {
		snprintf(err, errlen, "%s: truncated header at offset %zu (%d bytes needed)", name,
		    n, RECORDING_HDR_LEN);
		return NULL;
	}
	hlen = h[10] | (size_t)h[11] << 8;
	if (hlen < RECORDING_HDR_LEN) {
		snprintf(err, errlen, "%s: header length %zu at offset 10 is below %d", name, hlen,
		    RECORDING_HDR_LEN);
		return NULL;
	}
	/* A later minor revision may append header fields: skip what we do not know. */
	for (skip = hlen - RECORDING_HDR_LEN; skip > 0; skip--)
		if (getc(f) == EOF) {
			snprintf(err, errlen,
			    "%s: truncated header at offset %zu (%zu bytes needed)", name,
			    hlen - skip, hlen);
			return NULL;
		}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->f = f;
	r->name = name;
	r->off = hlen;
	return r;
}

uint64_t recording_offset(const struct recording *r)
{
	return r->off;
}

int recording_next(struct recording *r, Mtrace__ServerMsg **out, const uint8_t **raw,
    size_t *raw_len, char *err, size_t errlen)
{
	uint8_t pre[FRAME_VARINT_MAX];
	uint64_t start = r->off;
	size_t hl = 0, mlen = 0, got;
	enum frame_status st = FRAME_NEED_MORE;
	int c;

	*out = NULL;
	/* The varint prefix, a byte at a time: frame_parse says when it is complete. */
	while (st == FRAME_NEED_MORE && hl < sizeof(pre)) {
		size_t h2;

		c = getc(r->f);
		if (c == EOF) {
			if (ferror(r->f)) {
				snprintf(err, errlen, "%s: read error at offset %" PRIu64 ": %s",
				    r->name, start + hl, strerror(errno));
				return -1;
			}
			if (hl == 0)
				return 0;
			snprintf(err, errlen,
			    "%s: truncated frame length at offset %" PRIu64
			    " (file ends after %zu bytes of it)",
			    r->name, start, hl);
			return -1;
		}
		pre[hl++] = (uint8_t)c;
		if (c & 0x80)
			continue;
		st = frame_parse(pre, hl, FRAME_MAX_TO_CLIENT, &h2, &mlen);
		/* the prefix is whole: "need more" only means the message, read below */
		if (st == FRAME_NEED_MORE)
			st = FRAME_OK;
	}
	if (st == FRAME_NEED_MORE || st == FRAME_BAD) {
		snprintf(err, errlen, "%s: bad frame length at offset %" PRIu64, r->name, start);
		return -1;
	}
	if (st == FRAME_TOO_LARGE || mlen > FRAME_MAX_TO_CLIENT) {
		snprintf(err, errlen,
		    "%s: frame at offset %" PRIu64 " announces %zu bytes, more than the "
		    "%u a frame may have",
		    r->name, start, mlen, FRAME_MAX_TO_CLIENT);
		return -1;
	}
	if (hl + mlen > r->cap) {
		size_t cap = r->cap ? r->cap : 64 * 1024;
		uint8_t *b;

		while (cap < hl + mlen)
			cap *= 2;
		b = realloc(r->buf, cap);
		if (!b) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf, pre, hl);
	got = fread(r->buf + hl, 1, mlen, r->f);
	if (got < mlen) {
		if (ferror(r->f))
			snprintf(err, errlen, "%s: read error at offset %" PRIu64 ": %s", r->name,
			    start + hl + got, strerror(errno));
		else
			snprintf(err, errlen,
			    "%s: truncated frame at offset %" PRIu64
			    " (%zu bytes announced, %zu left in the file)",
			    r->name, start, mlen, got);
		return -1;
	}
	r->off = start + hl + mlen;
	*out = arena_msg_unpack(r->buf + hl, mlen);
	if (!*out) {
		snprintf(err, errlen,
		    "%s: the %zu-byte frame at offset %" PRIu64 " does not decode", r->name, mlen,
		    start);
		return -1;
	}
	if (raw)
		*raw = r->buf;
	if (raw_len)
		*raw_len = hl + mlen;
	return 1;
}

void recording_msg_free(Mtrace__ServerMsg *m)
{
	arena_msg_free(m);
}

void recording_close(struct recording *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}
