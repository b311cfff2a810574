/*
 * stream-dict.h - the distinct strings of one event batch (EventBatch.str), in order
 * of first use, over a table of the strings the columns met in earlier batches too
 * (stream-dict.c, over common/strtab).
 */
#ifndef MTRACED_STREAM_DICT_H
#define MTRACED_STREAM_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "strtab.h"

#define STREAM_DICT_CACHE 32u

/* A recent string by its length and first and last 8 bytes (which are all of it up
 * to 16 bytes): most events repeat one of a handful of strings, found here with a
 * compare or two instead of hashing every byte. */
struct stream_dict_hit {
	uint64_t head, tail;
	uint32_t len, idx1; /* index in the table + 1, 0: empty */
};

/*
 * The table (t) keeps its strings from batch to batch, fixed UTF-8 and interned once,
 * while it stays small (stream_dict_reset); the batch is a list of its indexes
 * (order), and batch_of[i] is string i's index in the batch + 1 (0: not in it).  A
 * string the batch meets anew then costs a cache hit and a store, not a hash, a copy
 * and a UTF-8 check, batch after batch.
 */
struct stream_dict {
	struct strtab t;
	struct stream_dict_hit cache[STREAM_DICT_CACHE];
	uint32_t *batch_of; /* t.cap entries */
	uint32_t *order;    /* the batch's strings: indexes in t, in order of first use */
	uint32_t n, cap;    /* strings in the batch; entries of batch_of and order */
	size_t bytes;       /* the batch's strings' bytes, their NULs included */
	bool grew;          /* the heap it holds may have grown (the caller clears it) */
};

/* A string the cache does not have (stream-dict.c): its index in the table. */
int stream_dict_find_slow(struct stream_dict *d, struct stream_dict_hit *hit,
    struct stream_dict_hit key, const char *s, uint32_t *ti);
/* Table string ti into the batch (stream-dict.c). */
uint32_t stream_dict_batch_add(struct stream_dict *d, uint32_t ti);

/* The table's index of a string the cache has.  Inline: called for every event with a
 * string. */
static inline __attribute__((always_inline)) bool stream_dict_cached(const struct stream_dict *d,
    const char *s, size_t len, struct stream_dict_hit *key, uint32_t *slot, uint32_t *ti)
{
	uint64_t h;
	const struct stream_dict_hit *hit;

	key->head = strtab_load8(s, len);
	key->tail = len > 8 ? strtab_load8(s + len - 8, 8) : 0;
	key->len = (uint32_t)len;
	key->idx1 = 0;
	h = ((key->head * 0x9e3779b97f4a7c15u) ^ (key->tail + len)) * 0xc2b2ae3d27d4eb4fu;
	*slot = (uint32_t)((h >> 59) % STREAM_DICT_CACHE);
	hit = &d->cache[*slot];
	if (!hit->idx1 || hit->len != len || hit->head != key->head || hit->tail != key->tail)
		return false;
	*ti = hit->idx1 - 1;
	if (len > 16) {
		/* the middle, 8 bytes at a time (the key has the first and last 8): a call
		 * to memcmp cost more than most strings' compare */
		const char *o = strtab_str(&d->t, *ti);

		for (size_t i = 8; i + 8 < len; i += 8)
			if (strtab_load8(o + i, 8) != strtab_load8(s + i, 8))
				return false;
	}
	return true;
}

/* s (UTF-8 fixed) in the batch: *idx its index there.  1: new to the batch, 0: the
 * batch had it, -1: the table is full.  Only a string new to the table may grow the
 * heap held (d->grew). */
static inline __attribute__((always_inline)) int stream_dict_add(
    struct stream_dict *d, const char *s, size_t len, uint32_t *idx)
{
	struct stream_dict_hit key;
	uint32_t slot, ti, b;

	if (!stream_dict_cached(d, s, len, &key, &slot, &ti) &&
	    stream_dict_find_slow(d, &d->cache[slot], key, s, &ti) < 0)
		return -1;
	if ((b = d->batch_of[ti]) != 0) {
		*idx = b - 1;
		return 0;
	}
	*idx = stream_dict_batch_add(d, ti);
	return 1;
}

/* Bytes of the batch's strings with s (len bytes) added as new: what bounds a batch. */
static inline size_t stream_dict_bytes_with(const struct stream_dict *d, size_t len)
{
	return d->bytes + len + 1;
}

/* The heap it holds. */
size_t stream_dict_bytes(const struct stream_dict *d);
static inline size_t stream_dict_count(const struct stream_dict *d)
{
	return d->n;
}
/* The batch's i-th string, NUL-terminated, and its length; valid until the next add
 * or reset. */
static inline const char *stream_dict_str(const struct stream_dict *d, size_t i)
{
	return strtab_str(&d->t, d->order[i]);
}
static inline uint32_t stream_dict_len(const struct stream_dict *d, size_t i)
{
	return strtab_len(&d->t, d->order[i]);
}
/* The batch is sent: empty it (the table keeps its strings while it is small). */
void stream_dict_reset(struct stream_dict *d);
void stream_dict_free(struct stream_dict *d);

#endif
