/*
 * arena.h - a bump allocator: many small allocations freed all at once.  The
 * daemon's Stats messages (daemon/state-stats.c) and the client library's unpacked
 * messages (client/unpack-arena.c) live in one each.  Out of memory aborts
 * (xalloc.h).
 */
#ifndef MTRACE_ARENA_H
#define MTRACE_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
	struct arena_block *blocks; /* newest first */
	size_t block_min;           /* size of a new block, unless one allocation needs more */
};

static inline void arena_init(struct arena *a, size_t block_min)
{
	a->blocks = NULL;
	a->block_min = block_min;
}

/* n bytes aligned for any type; the first allocation of an arena starts its first
 * block, and allocations follow each other within a block. */
void *arena_alloc(struct arena *a, size_t n);
void *arena_zalloc(struct arena *a, size_t n);
char *arena_strdup(struct arena *a, const char *s);
/* What its blocks take from malloc. */
size_t arena_bytes(const struct arena *a);
/* Free every block (a itself may live in the first one: it is not read after). */
void arena_free(struct arena *a);

#endif
