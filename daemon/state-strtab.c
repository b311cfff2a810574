/*
 * state-strtab.c - interned strings of a domain: labels, failure reasons and counter
 * names.  Threads and counters keep a 32-bit index instead of a copy, so a label
 * shared by a million threads is stored once.  The table is capped (max) and never
 * shrinks until the domain goes, so an index a thread holds stays valid.
 */
#include <stdlib.h>
#include <string.h>

#include "state-int.h"

static uint32_t str_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

void state_strtab_init(struct strtab *t, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
}

void state_strtab_free(struct strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->hash);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static void strtab_rehash(struct strtab *t, uint32_t nslots)
{
	free(t->slots);
	t->slots = state_xcalloc(nslots, sizeof(uint32_t));
	t->nslots = nslots;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t j = t->hash[i] & (nslots - 1);
		while (t->slots[j])
			j = (j + 1) & (nslots - 1);
		t->slots[j] = i + 1;
	}
}

uint32_t state_strtab_intern(struct strtab *t, const char *s, size_t n, bool *added)
{
	uint32_t h, j;

	*added = false;
	if (n >= STR_MAX_STORE)
		n = STR_MAX_STORE - 1;
	h = str_hash(s, n);
	if (t->nslots) {
		for (j = h & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
			uint32_t i = t->slots[j] - 1;
			if (t->hash[i] == h && !strncmp(t->s[i], s, n) && !t->s[i][n])
				return i;
		}
	}
	if (t->n >= t->max)
		return NO_IDX;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->s = state_xrealloc(t->s, t->cap, sizeof(char *));
		t->hash = state_xrealloc(t->hash, t->cap, sizeof(uint32_t));
	}
	t->s[t->n] = state_xcalloc(1, n + 1);
	memcpy(t->s[t->n], s, n);
	t->hash[t->n] = h;
	t->n++;
	if (t->n * 2 > t->nslots)
		strtab_rehash(t, t->nslots ? t->nslots * 2 : 16);
	else {
		for (j = h & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
			;
		t->slots[j] = t->n;
	}
	*added = true;
	return t->n - 1;
}
