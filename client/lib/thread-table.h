/*
 * thread-table.h - a hash table keyed by (domain, thread), for the per-thread state of
 * mtrace-cat's converters (labels for -l on a recording, open slices for Chrome JSON, the
 * creation tree of -f folded).
 * Entries are removed when their thread ends, so memory follows the live threads.
 */
#ifndef MTRACE_THREAD_TABLE_H
#define MTRACE_THREAD_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct ttab_entry {
	uint64_t k1, k2;
	struct ttab_entry *next;
	/* the user's payload follows (ttab_new's size) */
};

struct ttab {
	struct ttab_entry **b;
	size_t nb, n, size;
};

/* size: bytes of payload per entry, zeroed on insertion. */
void ttab_init(struct ttab *t, size_t size);
void ttab_free(struct ttab *t, void (*fn)(void *payload));
void *ttab_get(const struct ttab *t, uint64_t k1, uint64_t k2);
/* Existing or new (zeroed) payload; *fresh says which.  NULL when out of memory. */
void *ttab_put(struct ttab *t, uint64_t k1, uint64_t k2, int *fresh);
/* Remove; fn (if any) cleans the payload first. */
void ttab_del(struct ttab *t, uint64_t k1, uint64_t k2, void (*fn)(void *payload));
/* Call fn on every payload (which must not change the table). */
void ttab_each(const struct ttab *t, void (*fn)(void *payload, void *arg), void *arg);
/* The keys of a payload. */
const struct ttab_entry *ttab_entry_of(const void *payload);

/* Keys in order of arrival (finished threads, oldest first: what is forgotten first). */
struct ttab_fifo {
	uint64_t (*k)[2];
	size_t head, len, cap;
};
int ttab_fifo_push(struct ttab_fifo *q, uint64_t k1, uint64_t k2);
int ttab_fifo_pop(struct ttab_fifo *q, uint64_t *k1, uint64_t *k2); /* 0 when empty */
void ttab_fifo_free(struct ttab_fifo *q);

#endif
