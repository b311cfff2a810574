/*
 * cat-filter.h - mtrace-cat's filters applied in the client, for recordings read with
 * -i: what mtraced does for a live subscription (domains by id or name, ops, label
 * prefixes), with the same meaning, so `-i FILE -d g1 -o label` prints what a live
 * `-d g1 -o label` would have.
 */
#ifndef MTRACE_CAT_FILTER_H
#define MTRACE_CAT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtrace.pb-c.h"

struct cat_filter {
	const uint32_t *domids;
	char *const *names;
	const char *const *labels;
	size_t n_domids, n_names, n_labels;
	uint8_t ops[32]; /* bitmap; all_ops when no -o */
	bool all_ops;
};

/* Is a domain selected (names from DomainUp, cat_names_get)? */
bool cat_filter_domain(const struct cat_filter *f, uint32_t domid);
/* Does the filter select anything less than everything? */
bool cat_filter_active(const struct cat_filter *f);

/*
 * The selected events of b, as batches of their own (ts deltas recomputed, split where
 * one would not fit in 32 bits): fn is called once per piece, never for an empty one.
 * Keeps each thread's label (label prefix filter); returns -1 if out of memory.
 */
int cat_filter_batch(struct cat_filter *f, const Mtrace__EventBatch *b,
    void (*fn)(const Mtrace__EventBatch *part, void *arg), void *arg);

/* A Stats message with only the selected domains' entries (arrays point into m). */
struct cat_stats_view {
	Mtrace__Stats s;
	Mtrace__DomainStats **d;
	Mtrace__ThreadStats **t;
	Mtrace__LabelStats **l;
};
int cat_filter_stats(const struct cat_filter *f, const Mtrace__Stats *m, struct cat_stats_view *v);
void cat_filter_stats_free(struct cat_stats_view *v);
void cat_filter_free(struct cat_filter *f);

#endif
