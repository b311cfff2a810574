/*
 * state-strtab.c - interned strings of a domain: labels, failure reasons and counter
 * names.  Threads and counters keep a 32-bit index instead of a copy, so a label
 * shared by a million threads is stored once.  The tables (common/strtab) are capped
 * and never shrink until the domain goes, so an index a thread holds stays valid.
 */
#include <string.h>

#include "state-int.h"
#include "state.h"

_Static_assert(NO_IDX == STRTAB_NONE, "a full table's answer is NO_IDX");

uint32_t state_strtab_intern(struct strtab *t, const char *s, size_t n, bool *added)
{
	if (n >= STR_MAX_STORE)
		n = STR_MAX_STORE - 1;
	/* shown as C strings: what follows a NUL is not part of the name */
	n = strnlen(s, n);
	return strtab_intern(t, s, n, added);
}

void state_str_cache_init(struct str_cache *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned k = 0; k < STR_CACHE; k++)
		c->len[k] = UINT32_MAX;
}

uint32_t state_intern_slow(
    struct strtab *t, struct str_cache *c, const char *s, size_t n, bool *added)
{
	uint32_t i = state_strtab_intern(t, s, n, added), k;

	/* a string cut or stopped at a NUL is stored as another, which a hit past 16
	 * bytes would compare it with: not kept */
	if (i == NO_IDX || strtab_len(t, i) != n)
		return i;
	k = c->next;
	c->next = (k + 1) % STR_CACHE;
	c->head[k] = strtab_load8(s, n);
	c->tail[k] = n > 8 ? strtab_load8(s + n - 8, 8) : 0;
	c->len[k] = (uint32_t)n;
	c->idx[k] = i;
	return i;
}
