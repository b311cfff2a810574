/*
 * xalloc.h - allocation that cannot fail, as tmux's xmalloc.c and OpenBSD's daemons do.
 *
 * The out-of-memory policy of mtrace: small, bounded allocations (tables, copies of
 * guest strings within caps, per-client state) never return NULL; running out of
 * memory for them writes a line to stderr (the journal under systemd) and aborts,
 * since neither the hot path nor the loop has a sensible way to go on.  Allocations
 * whose size a guest or client chooses (a legacy buffer, a client's queue) are
 * refused with a counted error instead and use malloc directly.
 */
#ifndef MTRACE_XALLOC_H
#define MTRACE_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
/* realloc(p, n * size) with overflow checking; n or size 0 allocates one byte. */
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);

#endif
