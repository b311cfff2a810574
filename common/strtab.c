/* strtab.c - distinct strings by index (strtab.h). */
#include <stdlib.h>
#include <string.h>

#include "strtab.h"
#include "xalloc.h"

#define SLOTS_MIN 16u

static inline uint64_t load64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t load32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Eight bytes at a time, the last eight (or two overlapping fours, or three bytes)
 * read in place, then a final mix so that the low bits (the slot) depend on all of
 * them.  Every label, counter and failure event and every string of a stream batch
 * is hashed: FNV-1a's byte-at-a-time loop was most of what interning cost.
 */
static uint32_t hash(const char *s, size_t len)
{
	const uint64_t m = 0x9E3779B97F4A7C15ull;
	uint64_t h = (uint64_t)len * m;

	if (len >= 8) {
		size_t i = 0;

		for (; i + 8 < len; i += 8) {
			h = (h ^ load64(s + i)) * m;
			h ^= h >> 29;
		}
		h = (h ^ load64(s + len - 8)) * m;
	} else if (len >= 4) {
		h = (h ^ (load32(s) << 32 | load32(s + len - 4))) * m;
	} else if (len > 0) {
		h = (h ^
		        ((uint64_t)(unsigned char)s[0] << 16 |
		            (uint64_t)(unsigned char)s[len >> 1] << 8 |
		            (unsigned char)s[len - 1])) *
		    m;
	}
	h ^= h >> 32;
	h *= 0xD6E8FEB86659FD93ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

void strtab_init(struct strtab *t, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max < STRTAB_NONE ? max : STRTAB_NONE - 1;
}

void strtab_free(struct strtab *t)
{
	free(t->arena);
	free(t->off);
	free(t->len);
	free(t->hash);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

void strtab_reset(struct strtab *t)
{
	if (t->n && t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	t->n = 0;
	t->arena_len = 0;
}

static void rehash(struct strtab *t, uint32_t nslots)
{
	free(t->slots);
	t->slots = xcalloc(nslots, sizeof(*t->slots));
	t->nslots = nslots;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t j = t->hash[i] & (nslots - 1);

		while (t->slots[j])
			j = (j + 1) & (nslots - 1);
		t->slots[j] = i + 1;
	}
}

char *strtab_reserve(struct strtab *t, size_t len)
{
	if (t->arena_len + len + 1 > t->arena_cap) {
		size_t cap = t->arena_cap ? t->arena_cap : 256;

		while (cap < t->arena_len + len + 1)
			cap *= 2;
		t->arena = xreallocarray(t->arena, cap, 1);
		t->arena_cap = cap;
	}
	return t->arena + t->arena_len;
}

static uint32_t lookup(const struct strtab *t, const char *s, size_t len, uint32_t h)
{
	if (!t->nslots)
		return STRTAB_NONE;
	for (uint32_t j = h & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		uint32_t i = t->slots[j] - 1;

		if (t->hash[i] == h && t->len[i] == len && !memcmp(t->arena + t->off[i], s, len))
			return i;
	}
	return STRTAB_NONE;
}

uint32_t strtab_find(const struct strtab *t, const char *s, size_t len)
{
	return lookup(t, s, len, hash(s, len));
}

uint32_t strtab_commit(struct strtab *t, size_t len, bool *added)
{
	const char *s = t->arena + t->arena_len;
	uint32_t h = hash(s, len), j, i;

	*added = false;
	if ((i = lookup(t, s, len, h)) != STRTAB_NONE)
		return i;
	if (t->n >= t->max)
		return STRTAB_NONE;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->off = xreallocarray(t->off, t->cap, sizeof(*t->off));
		t->len = xreallocarray(t->len, t->cap, sizeof(*t->len));
		t->hash = xreallocarray(t->hash, t->cap, sizeof(*t->hash));
	}
	t->arena[t->arena_len + len] = '\0';
	t->off[t->n] = (uint32_t)t->arena_len;
	t->len[t->n] = (uint32_t)len;
	t->hash[t->n] = h;
	t->arena_len += len + 1;
	t->n++;
	if (t->n * 2 > t->nslots) {
		rehash(t, t->nslots ? t->nslots * 2 : SLOTS_MIN);
	} else {
		for (j = h & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
			;
		t->slots[j] = t->n;
	}
	*added = true;
	return t->n - 1;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len, bool *added)
{
	/* Strings repeat (a handful of labels and counters, thousands of events): look up
	 * in place first, copy only what is new. */
	uint32_t i = strtab_find(t, s, len);
	char *p;

	if (i != STRTAB_NONE) {
		*added = false;
		return i;
	}
	p = strtab_reserve(t, len);

	memcpy(p, s, len);
	return strtab_commit(t, len, added);
}
