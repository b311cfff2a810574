/*
 * copy.c - unit tests of common/copy.c: copy_bytes copies every byte of every size,
 * below, at and past its 8 KiB pieces, at any alignment, and nothing past the end.
 */
#include <stdint.h>
#include <string.h>

#include "copy.h"
#include "unit.h"

#define COPY_MAX (3 * 8192 + 100)

static void sizes(void)
{
	static uint8_t src[COPY_MAX + 8], dst[COPY_MAX + 8 + 16];
	size_t ns[] = { 0, 1, 7, 8, 63, 64, 65, 4095, 8191, 8192, 8193, 16383, 16384, 16385,
		3 * 8192, COPY_MAX };

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 131u + 7u);
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		for (size_t off = 0; off < 8; off += 3) {
			size_t n = ns[k];

			memset(dst, 0xa5, sizeof(dst));
			copy_bytes(dst + off, src + (7 - off), n);
			CHECK(
			    memcmp(dst + off, src + (7 - off), n) == 0, "%zu bytes at %zu", n, off);
			/* nothing before or after the copy touched */
			CHECK(off == 0 || dst[off - 1] == 0xa5, "%zu bytes: before", n);
			CHECK(dst[off + n] == 0xa5 && dst[off + n + 15] == 0xa5, "%zu bytes: after",
			    n);
		}
	}
}

const struct unit_test unit_copy[] = {
	{ "copy", "sizes", sizes },
	{ "copy", NULL, NULL },
};
