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

int stream_dict_add_slow(struct stream_dict *d, struct stream_dict_hit *hit,
    struct stream_dict_hit key, const char *s, uint32_t *idx)
{
	size_t len = key.len;
	char *copy;
	bool added;

	if (!d->t.max)
		strtab_init(&d->t, STRTAB_NONE - 1);
	/* What the table holds is fixed UTF-8, so a string found as it is was valid and
	 * needs neither the copy nor the fix (one with invalid bytes is never found). */
	*idx = strtab_find(&d->t, s, len);
	if (*idx != STRTAB_NONE) {
		key.idx1 = *idx + 1;
		*hit = key;
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
	if (added && memcmp(d->t.arena + d->t.off[*idx], s, len) == 0) {
		key.idx1 = *idx + 1;
		*hit = key;
	}
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
