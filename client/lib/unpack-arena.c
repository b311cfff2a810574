/*
 * unpack-arena.c - protobuf-c's unpack into a bump allocator (common/arena.h), one
 * arena a message.
 *
 * protobuf-c allocates the top-level message first, so it sits right after the
 * arena's own header in the first block: that is how arena_msg_free finds the arena.
 * Frees during unpack (its temporary scan buffers) are ignored; they are small and
 * go with the arena.
 */
#include <stdalign.h>
#include <stdlib.h>

#include "arena.h"
#include "unpack-arena.h"

#define BLOCK_MIN   (64u * 1024)
#define ARENA_MAGIC 0x6d747261636541UL /* "mtraceA" */
#define ALIGN(n)    (((n) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))

/* The first allocation of the arena: the message follows it in the same block. */
struct unpack {
	struct arena a;
	unsigned long magic;
	size_t max, taken; /* max 0: no bound */
};

/* Past the bound NULL, which protobuf-c's unpack takes as a failure. */
static void *unpack_alloc(void *data, size_t size)
{
	struct unpack *u = data;

	if (u->max && size > u->max - u->taken)
		return NULL;
	u->taken += size;
	return arena_alloc(&u->a, size);
}

static void unpack_ignore_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

Mtrace__ServerMsg *arena_msg_unpack_max(const uint8_t *data, size_t len, size_t max)
{
	struct arena first;
	struct unpack *u;
	ProtobufCAllocator alloc = { unpack_alloc, unpack_ignore_free, NULL };
	Mtrace__ServerMsg *m;

	/* Unpacked columns take at most about twice their wire size: one block. */
	arena_init(&first, ALIGN(sizeof(*u)) + 2 * len + 4096);
	u = arena_alloc(&first, sizeof(*u));
	u->a = first;
	u->a.block_min = BLOCK_MIN;
	u->magic = ARENA_MAGIC;
	u->max = max;
	u->taken = 0;
	alloc.allocator_data = u;
	m = mtrace__server_msg__unpack(&alloc, len, data);
	if (!m || (unsigned char *)m != (unsigned char *)u + ALIGN(sizeof(*u))) {
		/* not ours to free piecewise: everything it took is in the arena */
		arena_free(&u->a);
		return NULL;
	}
	return m;
}

Mtrace__ServerMsg *arena_msg_unpack(const uint8_t *data, size_t len)
{
	return arena_msg_unpack_max(data, len, 0);
}

static struct unpack *of(const Mtrace__ServerMsg *m)
{
	struct unpack *u = (struct unpack *)((unsigned char *)m - ALIGN(sizeof(*u)));

	if (u->magic != ARENA_MAGIC)
		abort(); /* not from arena_msg_unpack: a caller's bug, caught early */
	return u;
}

size_t arena_msg_bytes(const Mtrace__ServerMsg *m)
{
	return arena_bytes(&of(m)->a);
}

void arena_msg_free(Mtrace__ServerMsg *m)
{
	struct unpack *u;

	if (!m)
		return;
	u = of(m);
	u->magic = 0;
	arena_free(&u->a);
}
