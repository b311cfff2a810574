/*
 * stream-dict.h - the distinct strings of one event batch (EventBatch.str), in order
 * of first use (stream-dict.c, over common/strtab).
 */
#ifndef MTRACED_STREAM_DICT_H
#define MTRACED_STREAM_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

struct stream_dict {
	struct strtab t;
};

/* Copy s (UTF-8 fixed) unless an equal string is there; *idx is its index. */
int stream_dict_add(struct stream_dict *d, const char *s, size_t len, uint32_t *idx);
size_t stream_dict_count(const struct stream_dict *d);
/* The i-th string, NUL-terminated; valid until the next add or reset. */
char *stream_dict_str(struct stream_dict *d, size_t i);
void stream_dict_reset(struct stream_dict *d);
void stream_dict_free(struct stream_dict *d);

#endif
