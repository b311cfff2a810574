/*
 * label-prefix.c - label prefixes as a sorted antichain.  If no prefix of the set is a
 * prefix of another, a label can only start with the greatest prefix not above it (any
 * prefix P of L with P < Q <= L would make P a prefix of Q), so one binary search and
 * one comparison decide, where a scan costs a comparison per prefix per event.
 */
#include <stdlib.h>
#include <string.h>

#include "label-prefix.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool starts_with(const char *s, const char *p, size_t plen)
{
	return strncmp(s, p, plen) == 0;
}

int label_filter_compile(struct label_filter *f, char *const *prefixes, size_t n)
{
	size_t i, k = 0;

	memset(f, 0, sizeof(*f));
	f->any = n == 0;
	if (n == 0)
		return 0;
	f->prefix = calloc(n, sizeof(*f->prefix));
	f->len = calloc(n, sizeof(*f->len));
	if (!f->prefix || !f->len)
		goto oom;
	for (i = 0; i < n; i++) {
		f->prefix[i] = strdup(prefixes[i] ? prefixes[i] : "");
		if (!f->prefix[i])
			goto oom;
		f->n = i + 1;
	}
	qsort(f->prefix, f->n, sizeof(*f->prefix), cmp_str);
	/* Sorted, a prefix comes right before everything it is a prefix of: keep a
	 * string only if the last one kept is not a prefix of it. */
	for (i = 0; i < f->n; i++) {
		if (k && starts_with(f->prefix[i], f->prefix[k - 1], f->len[k - 1])) {
			free(f->prefix[i]);
			continue;
		}
		f->prefix[k] = f->prefix[i];
		f->len[k] = strlen(f->prefix[k]);
		k++;
	}
	f->n = k;
	return 0;
oom:
	label_filter_free(f);
	f->any = true;
	return -1;
}

void label_filter_free(struct label_filter *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->prefix[i]);
	free(f->prefix);
	free(f->len);
	memset(f, 0, sizeof(*f));
}

bool label_filter_match(const struct label_filter *f, const char *label)
{
	size_t lo = 0, hi;

	if (f->any)
		return true;
	if (!label || !f->n)
		return false;
	/* the last prefix <= label */
	hi = f->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(f->prefix[mid], label) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && starts_with(label, f->prefix[lo - 1], f->len[lo - 1]);
}
