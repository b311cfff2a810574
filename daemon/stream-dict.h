/*
 * stream-dict.h - the distinct strings of one event batch (EventBatch.str), in order
 * of first use (stream-dict.c, over common/strtab).
 */
#ifndef MTRACED_STREAM_DICT_H
#define MTRACED_STREAM_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

#define STREAM_DICT_CACHE 32u

/* A recent string by its length and first and last 8 bytes (which are all of it up
 * to 16 bytes): most events repeat one of a handful of strings, found here with a
 * compare or two instead of hashing every byte. */
struct stream_dict_hit {
	uint64_t head, tail;
	uint32_t len, idx1; /* index + 1, 0: empty */
};

struct stream_dict {
	struct strtab t;
	struct stream_dict_hit cache[STREAM_DICT_CACHE];
};

/* Copy s (UTF-8 fixed) unless an equal string is there; *idx is its index.  1: added,
 * 0: found, -1: the table is full. */
int stream_dict_add(struct stream_dict *d, const char *s, size_t len, uint32_t *idx);
/* The heap it holds. */
size_t stream_dict_bytes(const struct stream_dict *d);
size_t stream_dict_count(const struct stream_dict *d);
/* The i-th string, NUL-terminated; valid until the next add or reset. */
char *stream_dict_str(struct stream_dict *d, size_t i);
void stream_dict_reset(struct stream_dict *d);
void stream_dict_free(struct stream_dict *d);

#endif
