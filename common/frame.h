/*
 * frame.h - protobuf "delimited" framing: a varint length, then the message.
 * Shared by mtraced and the client library; the limits are in proto/mtrace-proto.h.
 */
#ifndef MTRACE_FRAME_H
#define MTRACE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "mtrace-proto.h"	/* the limits */

enum frame_status {
	FRAME_OK = 1,		/* a whole frame is there */
	FRAME_NEED_MORE = 0,	/* not yet */
	FRAME_BAD = -1,		/* malformed length prefix */
	FRAME_TOO_LARGE = -2,	/* length above the limit */
};

/* Write len as a varint into out (>= FRAME_VARINT_MAX bytes); returns bytes written. */
size_t frame_put_len(uint8_t *out, uint64_t len);

/*
 * Look at the start of buf (avail bytes).  On FRAME_OK, *hdr is the prefix size and
 * *msg the message size (buf[*hdr .. *hdr + *msg) is the message).  On FRAME_TOO_LARGE
 * *msg holds the announced size.
 */
enum frame_status frame_parse(const uint8_t *buf, size_t avail, size_t max, size_t *hdr,
			      size_t *msg);

#endif
