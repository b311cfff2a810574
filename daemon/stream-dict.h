/*
 * stream-dict.h - the distinct strings of one event batch (EventBatch.str), in order
 * of first use (stream-dict.c, over common/strtab).
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
	uint32_t len, idx1; /* index + 1, 0: empty */
};

struct stream_dict {
	struct strtab t;
	struct stream_dict_hit cache[STREAM_DICT_CACHE];
};

/* A string the cache does not have (stream-dict.c). */
int stream_dict_add_slow(struct stream_dict *d, struct stream_dict_hit *hit,
    struct stream_dict_hit key, const char *s, uint32_t *idx);

/* A string the cache has: *idx its index.  Inline: called for every event with a
 * string. */
static inline bool stream_dict_cached(struct stream_dict *d, const char *s, size_t len,
    struct stream_dict_hit *key, struct stream_dict_hit **slot, uint32_t *idx)
{
	uint64_t h;
	struct stream_dict_hit *hit;

	key->head = strtab_load8(s, len);
	key->tail = len > 8 ? strtab_load8(s + len - 8, 8) : 0;
	key->len = (uint32_t)len;
	key->idx1 = 0;
	h = ((key->head * 0x9e3779b97f4a7c15u) ^ (key->tail + len)) * 0xc2b2ae3d27d4eb4fu;
	*slot = hit = &d->cache[(h >> 59) % STREAM_DICT_CACHE];
	if (hit->idx1 && hit->len == len && hit->head == key->head && hit->tail == key->tail &&
	    (len <= 16 || memcmp(d->t.arena + d->t.off[hit->idx1 - 1], s, len) == 0)) {
		*idx = hit->idx1 - 1;
		return true;
	}
	return false;
}

/* Copy s (UTF-8 fixed) unless an equal string is there; *idx is its index.  1: added,
 * 0: found, -1: the table is full. */
static inline int stream_dict_add(struct stream_dict *d, const char *s, size_t len, uint32_t *idx)
{
	struct stream_dict_hit key, *slot;

	if (stream_dict_cached(d, s, len, &key, &slot, idx))
		return 0;
	return stream_dict_add_slow(d, slot, key, s, idx);
}
/* The heap it holds. */
size_t stream_dict_bytes(const struct stream_dict *d);
size_t stream_dict_count(const struct stream_dict *d);
/* The i-th string, NUL-terminated; valid until the next add or reset. */
char *stream_dict_str(struct stream_dict *d, size_t i);
void stream_dict_reset(struct stream_dict *d);
void stream_dict_free(struct stream_dict *d);

#endif
