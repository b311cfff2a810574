/*
 * stream-dict.c - the distinct strings of one event batch.
 *
 * An EventBatch carries each distinct string once (str) and, per event whose op has
 * a string, an index into them (str_ref).  Labels, counter names and failures repeat
 * all the time, so a batch of thousands of events holds a handful of strings: every
 * client then unpacks a handful of strings instead of one allocation and copy per
 * event, and the UTF-8 fix runs once per distinct string.
 *
 * The table hashes every byte of a string it looks up; in front of it, a small cache
 * keyed by a string's length and its first and last 8 bytes finds the strings that
 * repeat with one compare (bench/README.md, stream: the dictionary was a tenth of
 * mtraced's stream side).
 */
#include <string.h>

#include "stream-dict.h"
#include "utf8.h"

/* The first min(len, 8) bytes, little-endian, zero-padded: at most two loads (the
 * overlapping bytes of both are the same bytes in the same places), no byte loop. */
static uint64_t load8(const char *s, size_t len)
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

int stream_dict_add(struct stream_dict *d, const char *s, size_t len, uint32_t *idx)
{
	uint64_t head = load8(s, len), tail = len > 8 ? load8(s + len - 8, 8) : 0;
	uint64_t h = ((head * 0x9e3779b97f4a7c15u) ^ (tail + len)) * 0xc2b2ae3d27d4eb4fu;
	struct stream_dict_hit *hit = &d->cache[(h >> 59) % STREAM_DICT_CACHE];
	char *copy;
	bool added;

	if (hit->idx1 && hit->len == len && hit->head == head && hit->tail == tail &&
	    (len <= 16 || memcmp(d->t.arena + d->t.off[hit->idx1 - 1], s, len) == 0)) {
		*idx = hit->idx1 - 1;
		return 0;
	}
	if (!d->t.max)
		strtab_init(&d->t, STRTAB_NONE - 1);
	/* What the table holds is fixed UTF-8, so a string found as it is was valid and
	 * needs neither the copy nor the fix (one with invalid bytes is never found). */
	*idx = strtab_find(&d->t, s, len);
	if (*idx != STRTAB_NONE) {
		*hit = (struct stream_dict_hit){ head, tail, (uint32_t)len, *idx + 1 };
		return 0;
	}
	/* Fixed before it is added: the batch holds what clients will see, and
	 * proto3 strings must be UTF-8 or Google's parsers reject the whole message. */
	copy = strtab_reserve(&d->t, len);
	memcpy(copy, s, len);
	copy[len] = '\0';
	utf8_fix(copy);
	*idx = strtab_commit(&d->t, len, &added);
	if (*idx == STRTAB_NONE)
		return -1;
	/* a string with bytes the fix changed is never found as it came (no compare
	 * equal): caching its fixed copy would only evict another */
	if (added && memcmp(d->t.arena + d->t.off[*idx], s, len) == 0)
		*hit = (struct stream_dict_hit){ head, tail, (uint32_t)len, *idx + 1 };
	return added ? 1 : 0;
}

size_t stream_dict_bytes(const struct stream_dict *d)
{
	const struct strtab *t = &d->t;

	return t->arena_cap + (size_t)t->cap * 3 * sizeof(uint32_t) +
	    (size_t)t->nslots * sizeof(uint32_t);
}

size_t stream_dict_count(const struct stream_dict *d)
{
	return strtab_count(&d->t);
}

char *stream_dict_str(struct stream_dict *d, size_t i)
{
	return d->t.arena + d->t.off[i];
}

void stream_dict_reset(struct stream_dict *d)
{
	strtab_reset(&d->t);
	memset(d->cache, 0, sizeof(d->cache));
}

void stream_dict_free(struct stream_dict *d)
{
	strtab_free(&d->t);
	memset(d->cache, 0, sizeof(d->cache));
}
