/*
 * unpack-arena.c - a bump allocator for protobuf-c's unpack, one arena a message.
 *
 * protobuf-c allocates the top-level message first, so it sits right after the
 * arena's header in the first block: that is how arena_msg_free finds the arena.
 * Frees during unpack (its temporary scan buffers) are ignored; they are small and
 * go with the arena.
 */
#include <stdalign.h>
#include <stdlib.h>

#include "unpack-arena.h"

#define BLOCK_MIN	(64u * 1024)

struct block {
	struct block *next;
	size_t cap, used;
	alignas(max_align_t) unsigned char data[];
};

struct arena {
	struct block *blocks;		/* newest first; the first one holds this header */
	unsigned long magic;
	alignas(max_align_t) unsigned char first[];
};

#define ARENA_MAGIC	0x6d747261636541UL	/* "mtraceA" */
#define ALIGN(n)	(((n) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))

static void *
arena_alloc(void *data, size_t size)
{
	struct arena *a = data;
	struct block *b = a->blocks;
	size_t need = ALIGN(size ? size : 1);

	if (b->cap - b->used < need) {
		size_t cap = need > BLOCK_MIN ? need : BLOCK_MIN;

		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = a->blocks;
		a->blocks = b;
	}
	b->used += need;
	return b->data + b->used - need;
}

static void
arena_ignore_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

static void
arena_destroy(struct arena *a)
{
	struct block *b = a->blocks, *next;

	/* the last block in the list is the first one, which holds *a itself */
	while (b) {
		next = b->next;
		free(b);
		b = next;
	}
}

Mtrace__ServerMsg *
arena_msg_unpack(const uint8_t *data, size_t len)
{
	/* Unpacked columns take at most about twice their wire size. */
	size_t cap = ALIGN(sizeof(struct arena)) + 2 * len + 4096;
	struct block *b = malloc(sizeof(*b) + cap);
	struct arena *a;
	ProtobufCAllocator alloc = { arena_alloc, arena_ignore_free, NULL };
	Mtrace__ServerMsg *m;

	if (!b)
		return NULL;
	b->next = NULL;
	b->cap = cap;
	b->used = ALIGN(sizeof(struct arena));
	a = (struct arena *)b->data;
	a->blocks = b;
	a->magic = ARENA_MAGIC;
	alloc.allocator_data = a;
	m = mtrace__server_msg__unpack(&alloc, len, data);
	if (!m || (unsigned char *)m != a->first) {
		/* not ours to free piecewise: everything it took is in the arena */
		arena_destroy(a);
		return NULL;
	}
	return m;
}

void
arena_msg_free(Mtrace__ServerMsg *m)
{
	struct arena *a;

	if (!m)
		return;
	a = (struct arena *)((unsigned char *)m - offsetof(struct arena, first));
	if (a->magic != ARENA_MAGIC)
		abort();	/* not from arena_msg_unpack: a caller's bug, caught early */
	a->magic = 0;
	arena_destroy(a);
}
