/*
 * announce.h - a guest's xenstore announcement (data/mtrace, docs/ring-protocol.md),
 * parsed and range-checked.  Pure: the values come from a reader the caller gives
 * (xenstore in a transaction for mtraced, a table in the tests and the fuzzer), so
 * nothing here talks to Xen.
 */
#ifndef MTRACED_ANNOUNCE_H
#define MTRACED_ANNOUNCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtrace-ring.h"

#define ANNOUNCE_MAX_PORT (1u << 20) /* FIFO event channels go to 2^17; leave room */

/* What the guest announced under data/mtrace. */
struct announce {
	uint32_t clock;
	uint32_t port;
	uint32_t rings;
	uint32_t ref[MTRACE_MAX_RINGS];
	uint32_t pages[MTRACE_MAX_RINGS];
};

/*
 * The value of key (relative to the guest's data/mtrace, e.g. "ring/0/ref"), not
 * NUL-terminated, in a buffer the parser frees with free(); NULL when absent.
 */
typedef char *(*announce_read_fn)(const char *key, size_t *len, void *arg);

enum announce_status {
	ANNOUNCE_OK = 0,
	ANNOUNCE_NONE = 1, /* state absent or "closed": nothing announced */
	ANNOUNCE_BAD = -1, /* refused: why says which key and value */
};

/* Read and check every key through read; a fills in only on ANNOUNCE_OK. */
enum announce_status announce_parse(
    struct announce *a, announce_read_fn read, void *arg, char *why, size_t whylen);

/* Pages the announcement asks us to map: each ring's header page and data pages. */
unsigned announce_pages(const struct announce *a);

/* Strict decimal without sign, spaces or leading zeros, at most max. */
int announce_parse_dec(const char *v, size_t len, uint64_t max, uint64_t *out);

#endif
