/* copy.c - memcpy in pieces of at most 8 KiB (copy.h). */
#include <stdint.h>
#include <string.h>

#include "copy.h"

#define COPY_PIECE 8192u

/* A call the compiler knows nothing of n in: it would otherwise expand memcpy inline
 * as rep movsq or a loop of words for a size it can bound, slower than glibc's.  (clang
 * has no noipa: noinline keeps the call there.) */
#if defined(__clang__)
#define PIECE_OPAQUE __attribute__((noinline))
#else
#define PIECE_OPAQUE __attribute__((noipa))
#endif

PIECE_OPAQUE static void piece(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

void copy_bytes(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	for (; n > COPY_PIECE; n -= COPY_PIECE, d += COPY_PIECE, s += COPY_PIECE)
		piece(d, s, COPY_PIECE);
	piece(d, s, n);
}
