/*
 * stream-columns.h - the column encoder (stream-columns.c): one (domain, ring)'s
 * events in EventBatch columns, encoded once into a framed ServerMsg that every
 * client of a batch shares.  All columns together are held to client_batch_total;
 * the subscription groups (stream-batch.c) decide what to send when it is reached.
 */
#ifndef MTRACED_STREAM_COLUMNS_H
#define MTRACED_STREAM_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "stream-dict.h"

struct mtrace_event;
struct stream_blob;

/* What the columns of every group and ring hold (client_batch_total). */
struct stream_batch_memory {
	size_t bytes, peak;
	uint64_t pressure; /* times the total was reached: batches sent early */
	uint64_t encoded;  /* batches encoded (once for all the clients that get one) */
};

/* The account of every column of one batcher (stream-batch.c): client_batch_total, and
 * what the columns hold against it.  Each column knows its account. */
struct stream_col_account {
	size_t cap; /* client_batch_total; SIZE_MAX: no cap of its own */
	struct stream_batch_memory mem;
};

/* Columns of one (domain, ring) for one group, in ring order. */
struct stream_columns {
	TAILQ_ENTRY(stream_columns) entry; /* the group's list (stream-batch.c) */
	struct stream_col_account *ac;
	uint32_t domid, ring, clock;
	uint64_t first_seq;
	uint64_t base_ts, last_ts; /* the first and the last event's timestamps */
	size_t n, cap;
	size_t bytes; /* what it holds, counted in the memory's bytes */
	int32_t *dts; /* deltas from the previous event (the first: 0) */
	uint8_t *op;  /* op and type are bytes: copied whole into the packed varints */
	int64_t *thread;
	int64_t *arg;
	uint8_t *type;
	struct stream_dict dict; /* the batch's distinct strings */
	uint32_t *str_ref;       /* per event with a string: index into dict */
	size_t nref;             /* <= n: str_ref has the columns' capacity */
	uint64_t idle_since;     /* CLOCK_MONOTONIC of the first flush it had nothing; 0: it
	                          * had an event since */
};

/* Nothing held, no cap. */
void stream_col_account_init(struct stream_col_account *ac);
/* client_batch_total (0: no cap of its own); takes effect at the next event. */
void stream_columns_set_cap(struct stream_col_account *ac, size_t total);
/* The total was reached (counted in pressure). */
void stream_columns_pressure(struct stream_col_account *ac);

/* Empty columns, counted in ac; NULL when out of memory. */
struct stream_columns *stream_columns_new(
    struct stream_col_account *ac, uint32_t domid, uint32_t ring, uint32_t clock);
/* Give back the columns and strings of a (it holds no events then). */
void stream_columns_release(struct stream_columns *a);
void stream_columns_free(struct stream_columns *a);
/* Room for one more event (and, with str, a string) without growing. */
bool stream_columns_has_room(const struct stream_columns *a, bool str);
/* Room for one more event, within client_batch_total; -1 when that has no room. */
int stream_columns_grow(struct stream_columns *a);
/* Whether e must start a new batch: a's frame would grow too large, or e's delta
 * from the last event does not fit. */
bool stream_columns_full_for(const struct stream_columns *a, const struct mtrace_event *e);
/* Append e's string (NULL: empty); -1 when the dictionary has no room. */
int stream_columns_add_str(struct stream_columns *a, const char *s, size_t len);
/* Append e's columns (there is room; its string, if any, was added first). */
void stream_columns_put(struct stream_columns *a, const struct mtrace_event *e);
/*
 * Most events land in a batch already begun with room for them, follow the one before
 * within a 32-bit delta and have no string, or one the batch has or can take: append
 * the leading run of ev that needs no check one by one, and return how many that was.
 * The run ends where acc_append (stream-batch.c) would send the batch first or grow
 * the columns: the next event takes that checked path.
 */
size_t stream_columns_take(struct stream_columns *a, const struct mtrace_event *ev, size_t n);
/* Encode a's events (a->n > 0) into one framed ServerMsg and empty a; NULL when out
 * of memory (the events are lost: the caller reports a drop). */
struct stream_blob *stream_columns_encode(struct stream_columns *a);
/* The same into the caller's buffer (stream_blob_pack_cols_into): the framed length,
 * or -1 (the batch is gone either way). */
ssize_t stream_columns_encode_into(
    struct stream_columns *a, uint8_t *(*get)(void *arg, size_t framed), void *arg);
/* Forget a's events without sending them. */
void stream_columns_reset(struct stream_columns *a);

#endif
