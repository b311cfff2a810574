/*
 * stream-dict.c - the distinct strings of one event batch.
 *
 * An EventBatch carries each distinct string once (str) and, per event whose op has
 * a string, an index into them (str_ref).  Labels, counter names and failures repeat
 * all the time, so a batch of thousands of events holds a handful of strings: every
 * client then unpacks a handful of strings instead of one allocation and copy per
 * event, and the UTF-8 fix runs once per distinct string.
 */
#include <string.h>

#include "stream-dict.h"
#include "utf8.h"

int stream_dict_add(struct stream_dict *d, const char *s, size_t len, uint32_t *idx)
{
	char *copy;
	bool added;

	if (!d->t.max)
		strtab_init(&d->t, STRTAB_NONE - 1);
	/* What the table holds is fixed UTF-8, so a string found as it is was valid and
	 * needs neither the copy nor the fix (one with invalid bytes is never found). */
	*idx = strtab_find(&d->t, s, len);
	if (*idx != STRTAB_NONE)
		return 0;
	/* Fixed before it is added: the batch holds what clients will see, and
	 * proto3 strings must be UTF-8 or Google's parsers reject the whole message. */
	copy = strtab_reserve(&d->t, len);
	memcpy(copy, s, len);
	copy[len] = '\0';
	utf8_fix(copy);
	*idx = strtab_commit(&d->t, len, &added);
	return *idx == STRTAB_NONE ? -1 : 0;
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
}

void stream_dict_free(struct stream_dict *d)
{
	strtab_free(&d->t);
}
