#include "frame.h"

size_t frame_put_len(uint8_t *out, uint64_t len)
{
	size_t n = 0;

	while (len >= 0x80) {
		out[n++] = (uint8_t)(len | 0x80);
		len >>= 7;
	}
	out[n++] = (uint8_t)len;
	return n;
}

enum frame_status frame_parse(
    const uint8_t *buf, size_t avail, size_t max, size_t *hdr, size_t *msg)
{
	uint64_t len = 0;
	size_t i;

	for (i = 0; i < FRAME_VARINT_MAX; i++) {
		if (i == avail)
			return FRAME_NEED_MORE;
		/* A 10th byte may only carry the top bit of a u64. */
		if (i == FRAME_VARINT_MAX - 1 && buf[i] > 1)
			return FRAME_BAD;
		len |= (uint64_t)(buf[i] & 0x7f) << (7 * i);
		if (!(buf[i] & 0x80))
			break;
	}
	if (i == FRAME_VARINT_MAX)
		return FRAME_BAD;
	*hdr = i + 1;
	*msg = len > SIZE_MAX ? SIZE_MAX : (size_t)len;
	if (len > max)
		return FRAME_TOO_LARGE;
	if (avail - *hdr < len)
		return FRAME_NEED_MORE;
	return FRAME_OK;
}
