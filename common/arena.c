/* arena.c - the bump allocator (arena.h). */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "xalloc.h"

#define ALIGN(n) (((n) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))

struct arena_block {
	struct arena_block *next;
	size_t cap, used;
	alignas(max_align_t) unsigned char data[];
};

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->blocks;
	size_t need = ALIGN(n ? n : 1);

	if (!b || b->cap - b->used < need) {
		size_t cap = need > a->block_min ? need : a->block_min;

		b = xmalloc(sizeof(*b) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->blocks;
		a->blocks = b;
	}
	b->used += need;
	return b->data + b->used - need;
}

void *arena_zalloc(struct arena *a, size_t n)
{
	return memset(arena_alloc(a, n), 0, n);
}

char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(arena_alloc(a, n), s, n);
}

size_t arena_bytes(const struct arena *a)
{
	size_t n = 0;

	for (const struct arena_block *b = a->blocks; b; b = b->next)
		n += sizeof(*b) + b->cap;
	return n;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->blocks, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
}
