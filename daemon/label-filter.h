/*
 * label-filter.h - a client's label prefixes (Subscribe.labels) compiled once, so that
 * matching a label costs one binary search whatever their number: used per event by
 * the stream server's groups and per thread by the statistics.
 */
#ifndef MTRACED_LABEL_FILTER_H
#define MTRACED_LABEL_FILTER_H

#include <stdbool.h>
#include <stddef.h>

struct label_filter {
	char **prefix; /* sorted, none a prefix of another (those are redundant) */
	size_t *len;
	size_t n;
	bool any; /* no prefixes given: every label and no label pass */
};

/* Compile n prefixes (copied).  -1 when out of memory (f is then empty and "any"). */
int label_filter_compile(struct label_filter *f, char *const *prefixes, size_t n);
void label_filter_free(struct label_filter *f);
/* Whether label (NULL: the thread has none) starts with one of the prefixes. */
bool label_filter_match(const struct label_filter *f, const char *label);

#endif
