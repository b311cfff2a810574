/*
 * copy.h - memcpy in pieces of at most 8 KiB (copy.c), for the per-event paths that
 * copy a window or a column (the ring reader's private copy, an event batch's
 * columns).
 *
 * glibc's memcpy moves up to 8 KiB in vector steps and more with rep movsb, which
 * valgrind counts as one instruction a byte (ten times the vector steps' count):
 * bench/daemon/callgrind.sh's counts of the same work went up and down by tens of
 * instructions an event with whether a drain's window passed 8 KiB, which the
 * machine's load decides.  In pieces, every copy takes the vector steps, and the
 * counts are of the work.
 */
#ifndef MTRACE_COPY_H
#define MTRACE_COPY_H

#include <stddef.h>

void copy_bytes(void *dst, const void *src, size_t n);

#endif
