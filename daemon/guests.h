/*
 * guests.h - the guests subsystem of mtraced, as main.c drives it: discovery through
 * xenstore (discover.c), attaching a guest's rings or legacy buffer (guests.c,
 * legacy.c), and draining them on wake-ups and timers (drain.c).
 */
#ifndef MTRACED_GUESTS_H
#define MTRACED_GUESTS_H

#include <stddef.h>

struct event_base;
struct guests_ctx;
struct mtraced_config;
struct stream;
struct xenif;

/* The guests of x, their events and domain changes delivered to stream; cfg is read
 * from there on (guests_reconfigure gives another).  NULL with err on failure. */
struct guests_ctx *guests_init(struct event_base *base, struct xenif *x,
    const struct mtraced_config *cfg, struct stream *stream, char *err, size_t errlen);
/* Find every guest there is now (start-up, before READY=1). */
void guests_scan(struct guests_ctx *ctx);
void guests_reconfigure(struct guests_ctx *ctx, const struct mtraced_config *cfg);
/* Drain every ring and legacy buffer a last time (shutdown). */
void guests_drain_all(struct guests_ctx *ctx);
/* Unmap and unbind everything (no DomainDown is sent), and free ctx. */
void guests_fini(struct guests_ctx *ctx);
/* Why the loop was left because the host's xenstore or event channels failed, or NULL. */
const char *guests_host_lost(const struct guests_ctx *ctx);

#endif
