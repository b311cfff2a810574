/*
 * strtab.h - a table of distinct strings, each known by a 32-bit index in order of
 * first use: the state's interned labels, failures and counter names
 * (daemon/state-strtab.c) and an event batch's string dictionary
 * (daemon/stream-dict.c).  Open addressing over a word-at-a-time hash; the strings
 * live in one arena, NUL-terminated, so a string's pointer is valid until the next
 * insertion.
 * Out of memory aborts (xalloc.h); a table past its max refuses new strings.
 */
#ifndef MTRACE_STRTAB_H
#define MTRACE_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define STRTAB_NONE UINT32_MAX

struct strtab {
	char *arena;
	size_t arena_len, arena_cap;
	uint32_t *off, *len, *hash;
	uint32_t n, cap, max;
	uint32_t *slots; /* index + 1, 0 = empty */
	uint32_t nslots; /* power of two */
};

/* At most max strings (UINT32_MAX - 1: no cap of the table's own). */
void strtab_init(struct strtab *t, uint32_t max);
void strtab_free(struct strtab *t);
/* Forget every string, keep the memory. */
void strtab_reset(struct strtab *t);

/* The index of s (len bytes) if it is in the table, else STRTAB_NONE. */
uint32_t strtab_find(const struct strtab *t, const char *s, size_t len);
/* The index of s (len bytes), added if new (*added); STRTAB_NONE when full. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len, bool *added);
/*
 * The same in two steps, for a caller that rewrites the string first: room for len
 * bytes + NUL at the arena's end, then intern what was written there.
 */
char *strtab_reserve(struct strtab *t, size_t len);
uint32_t strtab_commit(struct strtab *t, size_t len, bool *added);

static inline const char *strtab_str(const struct strtab *t, uint32_t i)
{
	return t->arena + t->off[i];
}

static inline uint32_t strtab_len(const struct strtab *t, uint32_t i)
{
	return t->len[i];
}

static inline uint32_t strtab_count(const struct strtab *t)
{
	return t->n;
}

/* The first min(len, 8) bytes of s, little-endian, zero-padded: at most two loads (the
 * overlapping bytes of both are the same bytes in the same places), no byte loop.  With
 * the length and the last 8 bytes it is all of a string of up to 16 bytes: the key of
 * the caches of recent strings in front of a table (daemon/state-int.h, stream-dict.h). */
static inline uint64_t strtab_load8(const char *s, size_t len)
{
	uint64_t v = 0;
	uint32_t lo, hi;

	if (len >= 8) {
		memcpy(&v, s, 8);
	} else if (len >= 4) {
		memcpy(&lo, s, 4);
		memcpy(&hi, s + len - 4, 4);
		v = lo | (uint64_t)hi << (8 * (len - 4));
	} else if (len > 0) {
		v = (uint64_t)(unsigned char)s[0] |
		    (uint64_t)(unsigned char)s[len / 2] << (8 * (len / 2)) |
		    (uint64_t)(unsigned char)s[len - 1] << (8 * (len - 1));
	}
	return v;
}

/* Bytes the strings take (their NULs included). */
static inline size_t strtab_bytes(const struct strtab *t)
{
	return t->arena_len;
}

#endif
