/*
 * rows.c - rows found by (domain, thread id or site index): the thread tree (view.c)
 * and the site tree (sitetree.c) both link rows by id.
 */
#include <stdlib.h>

#include "top.h"

int row_key_cmp(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;
	if (x->domid != y->domid)
		return x->domid < y->domid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

long row_key_find(const struct row_key *keys, size_t n, uint32_t domid, int64_t id)
{
	struct row_key k = { domid, id, 0 };
	const struct row_key *f = bsearch(&k, keys, n, sizeof(*keys), row_key_cmp);
	return f ? (long)f->row : -1;
}
