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
