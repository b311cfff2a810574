/*
 * guests.h - the guests subsystem of mtraced, as main.c drives it: discovery through
 * xenstore (discover.c), attaching a guest's rings or legacy buffer (guests.c,
 * legacy.c), and draining them on wake-ups and timers (drain.c).
 */
#ifndef MTRACED_GUESTS_H
#define MTRACED_GUESTS_H

#include <stddef.h>

struct event_base;
struct mtraced_config;
struct xenif;

int guests_init(struct event_base *base, struct xenif *x, const struct mtraced_config *cfg,
    char *err, size_t errlen);
/* Find every guest there is now (start-up, before READY=1). */
void guests_scan(void);
void guests_reconfigure(const struct mtraced_config *cfg);
/* Drain every ring and legacy buffer a last time (shutdown). */
void guests_drain_all(void);
/* Unmap and unbind everything; no DomainDown is sent. */
void guests_fini(void);
/* Why the loop was left because the host's xenstore or event channels failed, or NULL. */
const char *guests_host_lost(void);

#endif
