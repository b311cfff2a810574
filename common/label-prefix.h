/*
 * label-prefix.h - the label filter of a subscription (Subscribe.labels), applied
 * alike to streamed events (daemon/stream-batch.c) and to statistics
 * (daemon/state-stats.c): a label passes when it starts with any of the prefixes.
 * The prefixes are compiled once, so that matching a label costs one binary search
 * whatever their number.
 */
#ifndef MTRACE_LABEL_PREFIX_H
#define MTRACE_LABEL_PREFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct label_filter {
	char **prefix; /* sorted, none a prefix of another (those are redundant) */
	size_t *len;
	size_t n;
	bool any; /* no prefixes given: every label and no label pass */
};

/* The definition, for a one-off check (mtrace-cat -i): no prefixes, every label passes,
 * even none; else a NULL label passes none. */
static inline bool label_prefix_match(const char *label, char *const *prefixes, size_t n)
{
	if (n == 0)
		return true;
	if (!label)
		return false;
	for (size_t i = 0; i < n; i++)
		if (prefixes[i] && !strncmp(label, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* Compile n prefixes (copied).  -1 when out of memory (f is then empty and "any"). */
int label_filter_compile(struct label_filter *f, char *const *prefixes, size_t n);
void label_filter_free(struct label_filter *f);
/* Whether label (NULL: the thread has none) starts with one of the prefixes. */
bool label_filter_match(const struct label_filter *f, const char *label);

#endif
