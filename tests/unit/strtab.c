/*
 * strtab.c - unit tests of common/strtab.c, the interned-string table of the state and
 * the stream dictionary: indexes in order of first use, lengths (embedded NULs count),
 * the cap, growth past the first sizes, reset, and the reserve/commit path.
 */
#include <stdio.h>
#include <string.h>

#include "strtab.h"
#include "unit.h"

static void intern(void)
{
	struct strtab t;
	bool added;

	strtab_init(&t, UINT32_MAX - 1);
	CHECK(strtab_intern(&t, "net/rx", 6, &added) == 0 && added);
	CHECK(strtab_intern(&t, "net/tx", 6, &added) == 1 && added);
	CHECK(strtab_intern(&t, "net/rx", 6, &added) == 0 && !added);
	/* a prefix, and bytes past len, are other strings or not looked at */
	CHECK(strtab_intern(&t, "net/rxyz", 3, &added) == 2 && added);
	CHECK(strcmp(strtab_str(&t, 2), "net") == 0 && strtab_len(&t, 2) == 3);
	CHECK(strtab_intern(&t, "", 0, &added) == 3 && added);
	CHECK(strtab_intern(&t, "", 0, &added) == 3 && !added);
	/* an embedded NUL is part of the string */
	CHECK(strtab_intern(&t, "a\0b", 3, &added) == 4 && added);
	CHECK(strtab_intern(&t, "a", 1, &added) == 5 && added);
	CHECK(strtab_len(&t, 4) == 3 && memcmp(strtab_str(&t, 4), "a\0b", 4) == 0);
	CHECK(strtab_count(&t) == 6);
	CHECK(strtab_bytes(&t) == 7 + 7 + 4 + 1 + 4 + 2, "%zu", strtab_bytes(&t));
	strtab_free(&t);
}

static void cap(void)
{
	struct strtab t;
	bool added;

	strtab_init(&t, 2);
	CHECK(strtab_intern(&t, "a", 1, &added) == 0);
	CHECK(strtab_intern(&t, "b", 1, &added) == 1);
	CHECK(strtab_intern(&t, "c", 1, &added) == STRTAB_NONE && !added);
	/* known strings are still found at the cap */
	CHECK(strtab_intern(&t, "a", 1, &added) == 0 && !added);
	CHECK(strtab_count(&t) == 2);
	strtab_reset(&t);
	CHECK(strtab_count(&t) == 0 && strtab_bytes(&t) == 0);
	CHECK(strtab_intern(&t, "c", 1, &added) == 0 && added);
	strtab_free(&t);
}

static void growth(void)
{
	struct strtab t;
	char s[32];
	bool added, ok = true;

	strtab_init(&t, UINT32_MAX - 1);
	for (unsigned i = 0; i < 20000; i++) {
		int n = snprintf(s, sizeof(s), "label-%u", i);

		ok = ok && strtab_intern(&t, s, (size_t)n, &added) == i && added;
	}
	CHECK(ok, "first insertion");
	for (unsigned i = 0; i < 20000; i += 7) {
		int n = snprintf(s, sizeof(s), "label-%u", i);

		ok = ok && strtab_intern(&t, s, (size_t)n, &added) == i && !added &&
		    strcmp(strtab_str(&t, i), s) == 0;
	}
	CHECK(ok, "lookups after growth");
	strtab_free(&t);
}

static void reserve_commit(void)
{
	struct strtab t;
	bool added;
	char *p;

	strtab_init(&t, UINT32_MAX - 1);
	CHECK(strtab_intern(&t, "fixed?", 6, &added) == 0);
	/* written in place, then interned: a duplicate gives the old index */
	p = strtab_reserve(&t, 6);
	REQUIRE(p != NULL);
	memcpy(p, "fixed?", 6);
	CHECK(strtab_commit(&t, 6, &added) == 0 && !added);
	p = strtab_reserve(&t, 3);
	REQUIRE(p != NULL);
	memcpy(p, "new", 3);
	CHECK(strtab_commit(&t, 3, &added) == 1 && added);
	CHECK(strcmp(strtab_str(&t, 1), "new") == 0 && strtab_count(&t) == 2);
	strtab_free(&t);
}

const struct unit_test unit_strtab[] = {
	{ "strtab", "intern", intern },
	{ "strtab", "cap", cap },
	{ "strtab", "growth", growth },
	{ "strtab", "reserve-commit", reserve_commit },
	{ "strtab", NULL, NULL },
};
