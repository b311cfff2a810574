/*
 * legacy.h - guests that only have mirage-profile's trace buffer (legacy.c).
 * guests.c admits them (the same caps as ring guests) and owns their life cycle.
 */
#ifndef MTRACED_LEGACY_H
#define MTRACED_LEGACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mprof.h"

struct guest;
struct guests_ctx;

/* mprof_poll_ms may have changed: re-arm every legacy guest's poll timer. */
void legacy_reconfigure(struct guests_ctx *ctx);
/* The grant refs of data/mprof/ring-ref: their count, or -1 with why. */
int legacy_parse_refs(
    const char *refs, size_t len, uint32_t r[MPROF_MAX_PAGES], char *why, size_t whylen);
/* Map the n admitted pages r and start polling: 0, or -1 with why (g untouched). */
int legacy_attach(struct guest *g, const uint32_t *r, unsigned n, char *why, size_t whylen);
void legacy_detach(struct guest *g);
/* Whether refs names the pages g already has. */
bool legacy_same(const struct guest *g, const char *refs, size_t len);
/* Copy the buffer once and deliver what is new. */
void legacy_poll(struct guest *g);

#endif
