/*
 * discover.h - noticing guests come, change and go (discover.c): xenstore watches and
 * the domain list.  It decides which domain to look at; guests.c does the looking.
 */
#ifndef MTRACED_DISCOVER_H
#define MTRACED_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct guest;
struct guests_ctx;

struct discover_ops {
	/* Re-read the domain's announcement (it may be unknown, new, changed or gone). */
	void (*refresh)(struct guests_ctx *ctx, uint32_t domid);
	/* The domain is gone ("destroyed", "crashed"). */
	void (*death)(struct guest *g, const char *reason);
};

/* Watch ctx's xenstore (ctx->discover from now on, freed by discover_fini). */
int discover_init(struct guests_ctx *ctx, const struct discover_ops *ops, char *err, size_t errlen);
/* Re-enumerate domains; deep also re-reads the announcements of known guests. */
void discover_scan_all(struct guests_ctx *ctx, bool deep);
void discover_fini(struct guests_ctx *ctx);

#endif
