/*
 * stream-dict.c - the distinct strings of one event batch.
 *
 * An EventBatch carries each distinct string once (str) and, per event whose op has
 * a string, an index into them (str_ref).  Labels, counter names and failures repeat
 * all the time, so a batch of thousands of events holds a handful of strings: every
 * client then unpacks a handful of strings instead of one allocation and copy per
 * event, and the UTF-8 fix runs once per distinct string.
 *
 * The strings are interned once for the columns' life, not once per batch: at 100 k
 * events a second a batch holds about a hundred events and its handful of strings
 * each came anew, hashed, copied and checked again, a tenth of what mtraced did per
 * event (bench/daemon/callgrind.sh, e2e).  The table is emptied with a batch only
 * once it holds more than DICT_KEEP strings or DICT_KEEP_BYTES, so that a guest
 * whose strings never repeat keeps it no larger than a batch of its own would.
 *
 * The table hashes every byte of a string it looks up; in front of it, a small cache
 * keyed by a string's length and its first and last 8 bytes finds the strings that
 * repeat with one compare.
 */
#include <stdlib.h>
#include <string.h>

#include "stream-dict.h"
#include "utf8.h"
#include "xalloc.h"

#define DICT_KEEP       1024u
#define DICT_KEEP_BYTES (64u * 1024)

/* batch_of and order for every string the table holds. */
static void room(struct stream_dict *d)
{
	uint32_t cap;

	if (d->t.n <= d->cap)
		return;
	cap = d->t.cap > d->t.n ? d->t.cap : d->t.n;
	d->batch_of = xreallocarray(d->batch_of, cap, sizeof(*d->batch_of));
	d->order = xreallocarray(d->order, cap, sizeof(*d->order));
	memset(d->batch_of + d->cap, 0, (cap - d->cap) * sizeof(*d->batch_of));
	d->cap = cap;
}

int stream_dict_find_slow(struct stream_dict *d, struct stream_dict_hit *hit,
    struct stream_dict_hit key, const char *s, uint32_t *ti)
{
	size_t len = key.len;
	char *copy;
	bool added;

	if (!d->t.max)
		strtab_init(&d->t, STRTAB_NONE - 1);
	/* What the table holds is fixed UTF-8, so a string found as it is was valid and
	 * needs neither the copy nor the fix (one with invalid bytes is never found). */
	*ti = strtab_find(&d->t, s, len);
	if (*ti != STRTAB_NONE) {
		key.idx1 = *ti + 1;
		*hit = key;
		return 0;
	}
	/* Fixed before it is added: the batch holds what clients will see, and
	 * proto3 strings must be UTF-8 or Google's parsers reject the whole message. */
	d->grew = true;
	copy = strtab_reserve(&d->t, len);
	memcpy(copy, s, len);
	copy[len] = '\0';
	utf8_fix(copy);
	*ti = strtab_commit(&d->t, len, &added);
	if (*ti == STRTAB_NONE)
		return -1;
	room(d);
	/* a string with bytes the fix changed is never found as it came (no compare
	 * equal): caching its fixed copy would only evict another */
	if (added && memcmp(d->t.arena + d->t.off[*ti], s, len) == 0) {
		key.idx1 = *ti + 1;
		*hit = key;
	}
	return 0;
}

uint32_t stream_dict_batch_add(struct stream_dict *d, uint32_t ti)
{
	uint32_t b = d->n++;

	d->order[b] = ti;
	d->batch_of[ti] = b + 1;
	d->bytes += strtab_len(&d->t, ti) + 1u;
	return b;
}

size_t stream_dict_bytes(const struct stream_dict *d)
{
	const struct strtab *t = &d->t;

	return t->arena_cap + (size_t)t->cap * 3 * sizeof(uint32_t) +
	    (size_t)t->nslots * sizeof(uint32_t) + (size_t)d->cap * 2 * sizeof(uint32_t);
}

void stream_dict_reset(struct stream_dict *d)
{
	for (uint32_t i = 0; i < d->n; i++)
		d->batch_of[d->order[i]] = 0;
	d->n = 0;
	d->bytes = 0;
	if (strtab_count(&d->t) > DICT_KEEP || strtab_bytes(&d->t) > DICT_KEEP_BYTES) {
		strtab_reset(&d->t);
		memset(d->cache, 0, sizeof(d->cache));
	}
}

void stream_dict_free(struct stream_dict *d)
{
	strtab_free(&d->t);
	free(d->batch_of);
	free(d->order);
	memset(d, 0, sizeof(*d));
}
