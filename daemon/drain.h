/*
 * drain.h - when ring guests are read (drain.c): event-channel wake-ups with a storm
 * limiter, the periodic drain, polling of busy guests and round-robin budgets.
 */
#ifndef MTRACED_DRAIN_H
#define MTRACED_DRAIN_H

#include <stdbool.h>
#include <stddef.h>

struct guest;
struct guests_ctx;

/* ctx->drain from now on, freed by drain_fini (after every guest's drain_forget). */
int drain_init(struct guests_ctx *ctx, char *err, size_t errlen);
void drain_reconfigure(struct guests_ctx *ctx);
void drain_fini(struct guests_ctx *ctx);
/* Drain g now within its budget, re-arm its wake-ups, queue it if data remains;
 * returns how many events it read. */
size_t drain_service(struct guest *g);
/* Drain everything (death, shutdown), bounded by the rings' size. */
void drain_final(struct guest *g);
void drain_forget(struct guest *g); /* before g is unmapped or freed */

#endif
