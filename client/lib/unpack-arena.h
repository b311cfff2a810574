/* unpack-arena.h - where the client library unpacks each message from mtraced. */
#ifndef MTRACE_UNPACK_ARENA_H
#define MTRACE_UNPACK_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "mtrace.pb-c.h"

/*
 * Unpack one ServerMsg into an arena of its own: protobuf-c's allocator hook serves
 * every array and string of it from a few large blocks, and the whole message goes
 * back with one arena_msg_free.  With malloc, an event batch is one allocation per
 * column and per string: a third of a client's time at millions of events a second.
 * NULL if the bytes do not decode (or no memory).
 */
Mtrace__ServerMsg *arena_msg_unpack(const uint8_t *data, size_t len);
/* The same, NULL when its unpacked form would take more than max bytes (0: no bound):
 * protobuf-c makes a struct of each entry, so hostile bytes (a message of empty
 * entries, two bytes each) can unpack to a hundred times their size. */
Mtrace__ServerMsg *arena_msg_unpack_max(const uint8_t *data, size_t len, size_t max);
/* What m's arena takes from malloc. */
size_t arena_msg_bytes(const Mtrace__ServerMsg *m);
void arena_msg_free(Mtrace__ServerMsg *m);

#endif
