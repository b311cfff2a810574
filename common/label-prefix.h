/*
 * label-prefix.h - the label filter of a subscription (Subscribe.labels), applied
 * alike to streamed events (daemon/stream-batch.c) and to statistics
 * (daemon/state-stats.c): a label passes when it starts with any of the prefixes.
 */
#ifndef MTRACE_LABEL_PREFIX_H
#define MTRACE_LABEL_PREFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* No prefixes: every label passes, even none; else a NULL label passes none. */
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

#endif
