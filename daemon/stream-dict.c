/*
 * stream-dict.c - the distinct strings of one event batch.
 *
 * An EventBatch carries each distinct string once (str) and, per event whose op has
 * a string, an index into them (str_ref).  Labels, counter names and failures repeat
 * all the time, so a batch of thousands of events holds a handful of strings: every
 * client then unpacks a handful of strings instead of one allocation and copy per
 * event, and the UTF-8 fix runs once per distinct string.
 */
#include <stdlib.h>
#include <string.h>

#include "stream-int.h"

#define SLOTS_MIN	64u

int
stream_grow(void **p, size_t size, size_t n)
{
	void *q = realloc(*p, size * n);

	if (!q)
		return -1;
	*p = q;
	return 0;
}

/* FNV-1a: strings are short and few; anything simple and well spread does. */
static uint32_t
hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static uint32_t *
slot_for(struct stream_dict *d, const char *s, size_t len, uint32_t h)
{
	size_t mask = d->nslots - 1, i = h & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t v = d->slots[i];
		if (v == 0 || (d->len[v - 1] == len && memcmp(d->arena + d->off[v - 1], s, len) == 0))
			return &d->slots[i];
	}
}

static int
rehash(struct stream_dict *d, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	free(d->slots);
	d->slots = slots;
	d->nslots = nslots;
	for (size_t k = 0; k < d->n; k++) {
		const char *s = d->arena + d->off[k];
		*slot_for(d, s, d->len[k], hash(s, d->len[k])) = (uint32_t)k + 1;
	}
	return 0;
}

int
stream_dict_add(struct stream_dict *d, const char *s, size_t len, uint32_t *idx)
{
	char *copy;
	uint32_t *slot;

	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		if (stream_grow((void **)&d->off, sizeof(*d->off), cap) ||
		    stream_grow((void **)&d->len, sizeof(*d->len), cap))
			return -1;
		d->cap = cap;
	}
	if ((d->n + 1) * 2 > d->nslots &&
	    rehash(d, d->nslots ? d->nslots * 2 : SLOTS_MIN) < 0)
		return -1;
	if (d->arena_len + len + 1 > d->arena_cap) {
		size_t cap = d->arena_cap ? d->arena_cap : 4096;
		while (cap < d->arena_len + len + 1)
			cap *= 2;
		if (stream_grow((void **)&d->arena, 1, cap))
			return -1;
		d->arena_cap = cap;
	}
	/* Fixed before it is looked up: the batch holds what clients will see, and
	 * proto3 strings must be UTF-8 or Google's parsers reject the whole message. */
	copy = d->arena + d->arena_len;
	memcpy(copy, s, len);
	copy[len] = '\0';
	stream_utf8_fix(copy);
	slot = slot_for(d, copy, len, hash(copy, len));
	if (*slot == 0) {
		d->off[d->n] = d->arena_len;
		d->len[d->n] = len;
		d->arena_len += len + 1;
		*slot = (uint32_t)++d->n;
	}
	*idx = *slot - 1;
	return 0;
}

void
stream_dict_reset(struct stream_dict *d)
{
	if (d->n && d->slots)
		memset(d->slots, 0, d->nslots * sizeof(*d->slots));
	d->n = 0;
	d->arena_len = 0;
}

void
stream_dict_free(struct stream_dict *d)
{
	free(d->off);
	free(d->len);
	free(d->slots);
	free(d->arena);
	memset(d, 0, sizeof(*d));
}
