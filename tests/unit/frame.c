/*
 * frame.c - unit tests of common/frame.c: the varint length prefix both ends of the
 * socket use, at its limits and on hostile bytes.
 */
#include <stdint.h>
#include <string.h>

#include "frame.h"
#include "unit.h"

static void roundtrip(void)
{
	static const uint64_t lens[] = { 0, 1, 127, 128, 300, 16383, 16384, FRAME_MAX_TO_DAEMON,
		FRAME_MAX_TO_CLIENT, UINT32_MAX, UINT64_MAX };
	uint8_t buf[FRAME_VARINT_MAX + 1];

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t n = frame_put_len(buf, lens[i]), hdr = 0, msg = 0;

		CHECK(n >= 1 && n <= FRAME_VARINT_MAX, "length %zu", n);
		/* A large enough limit, and no message bytes: whole prefix, then NEED_MORE. */
		enum frame_status st = frame_parse(buf, n, SIZE_MAX, &hdr, &msg);
		CHECK(hdr == n && msg == lens[i], "%llu: hdr %zu msg %zu",
		    (unsigned long long)lens[i], hdr, msg);
		CHECK(st == (lens[i] == 0 ? FRAME_OK : FRAME_NEED_MORE), "%llu: status %d",
		    (unsigned long long)lens[i], st);
	}
	CHECK(frame_put_len(buf, 127) == 1 && buf[0] == 127);
	CHECK(frame_put_len(buf, 128) == 2 && buf[0] == 0x80 && buf[1] == 1);
	CHECK(frame_put_len(buf, UINT64_MAX) == FRAME_VARINT_MAX);
}

static void whole_frame(void)
{
	uint8_t buf[16] = { 3, 'a', 'b', 'c', 9 };
	size_t hdr, msg;

	CHECK(frame_parse(buf, 4, 64, &hdr, &msg) == FRAME_OK && hdr == 1 && msg == 3);
	/* bytes after the frame belong to the next one */
	CHECK(frame_parse(buf, 5, 64, &hdr, &msg) == FRAME_OK && msg == 3);
	CHECK(frame_parse(buf, 3, 64, &hdr, &msg) == FRAME_NEED_MORE);
	CHECK(frame_parse(buf, 0, 64, &hdr, &msg) == FRAME_NEED_MORE);
	/* an empty message is a whole frame */
	buf[0] = 0;
	CHECK(frame_parse(buf, 1, 64, &hdr, &msg) == FRAME_OK && hdr == 1 && msg == 0);
}

static void limits(void)
{
	uint8_t buf[FRAME_VARINT_MAX];
	size_t n, hdr, msg;

	n = frame_put_len(buf, FRAME_MAX_TO_DAEMON);
	CHECK(frame_parse(buf, n, FRAME_MAX_TO_DAEMON, &hdr, &msg) == FRAME_NEED_MORE);
	n = frame_put_len(buf, FRAME_MAX_TO_DAEMON + 1);
	CHECK(frame_parse(buf, n, FRAME_MAX_TO_DAEMON, &hdr, &msg) == FRAME_TOO_LARGE);
	CHECK(msg == FRAME_MAX_TO_DAEMON + 1, "announced %zu", msg);
	/* too large is said as soon as the prefix is there, before the message */
	n = frame_put_len(buf, UINT64_MAX);
	CHECK(frame_parse(buf, n, FRAME_MAX_TO_CLIENT, &hdr, &msg) == FRAME_TOO_LARGE);
}

static void hostile_prefix(void)
{
	uint8_t buf[FRAME_VARINT_MAX + 2];
	size_t hdr, msg;

	/* eleven continuation bytes: never a length */
	memset(buf, 0xff, sizeof(buf));
	CHECK(frame_parse(buf, sizeof(buf), SIZE_MAX, &hdr, &msg) == FRAME_BAD);
	/* a 10th byte carrying more than the top bit of a u64 */
	memset(buf, 0x80, FRAME_VARINT_MAX - 1);
	buf[FRAME_VARINT_MAX - 1] = 2;
	CHECK(frame_parse(buf, FRAME_VARINT_MAX, SIZE_MAX, &hdr, &msg) == FRAME_BAD);
	buf[FRAME_VARINT_MAX - 1] = 1;
	CHECK(frame_parse(buf, FRAME_VARINT_MAX, SIZE_MAX, &hdr, &msg) != FRAME_BAD);
	/* a prefix cut short is not yet an error */
	memset(buf, 0x80, 4);
	CHECK(frame_parse(buf, 4, SIZE_MAX, &hdr, &msg) == FRAME_NEED_MORE);
}

const struct unit_test unit_frame[] = {
	{ "frame", "roundtrip", roundtrip },
	{ "frame", "whole-frame", whole_frame },
	{ "frame", "limits", limits },
	{ "frame", "hostile-prefix", hostile_prefix },
	{ "frame", NULL, NULL },
};
