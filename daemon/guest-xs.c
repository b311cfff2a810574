/*
 * guest-xs.c - what guests.c reads of a domain in xenstore, all of it written by the
 * guest: its announcement (data/mtrace, in one transaction, checked by announce.c) and
 * its name (believed only where the guest cannot write it).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "announce.h"
#include "guest.h"
#include "log.h"
#include "mtrace-ring.h"
#include "state.h"
#include "xenif.h"

char *guest_xs_get(
    const struct guests_ctx *ctx, uint32_t tx, uint32_t domid, const char *sub, size_t *len)
{
	char path[192];

	snprintf(path, sizeof(path), "/local/domain/%" PRIu32 "/%s", domid, sub);
	*len = 0;
	return ctx->x->ops->xs_read(ctx->x, tx, path, len);
}

struct xs_reader {
	const struct guests_ctx *ctx;
	uint32_t tx, domid;
};

static char *xs_read_key(const char *key, size_t *len, void *arg)
{
	const struct xs_reader *r = arg;
	char sub[96];

	snprintf(sub, sizeof(sub), MTRACE_XS_DIR "/%s", key);
	return guest_xs_get(r->ctx, r->tx, r->domid, sub, len);
}

int guest_read_announce(
    const struct guests_ctx *ctx, uint32_t domid, struct announce *a, char *why, size_t wl)
{
	struct xenif *x = ctx->x;
	struct xs_reader r = { ctx, 0, domid };
	int rc;

	for (int tries = 0; tries < 8; tries++) {
		r.tx = x->ops->xs_transaction_start(x); /* 0: read without one */
		rc = announce_parse(a, xs_read_key, &r, why, wl);
		if (!r.tx)
			return rc;
		if (x->ops->xs_transaction_end(x, r.tx, rc != ANNOUNCE_OK) == 0 ||
		    rc != ANNOUNCE_OK)
			return rc;
		if (errno != EAGAIN)
			break;
	}
	snprintf(why, wl, "xenstore transaction kept failing: %s", strerror(errno));
	return -2;
}

/*
 * Clients filter by name (-d NAME), so a name must be one the guest cannot choose:
 * /local/domain/<id>/name is the toolstack's (owner dom0, read-only for the guest) on
 * real Xen.  A name node the guest could write, or whose permissions cannot be read,
 * is not believed: the domain is called domain-<id>.  A domain being torn down loses
 * its nodes between our reads; a name once believed stays its name then, or the
 * domain_down of a guest that dies would carry a name its -d clients do not follow.
 */
enum name_trust {
	NAME_TRUSTED,
	NAME_WRITABLE,
	NAME_UNKNOWN
};

static enum name_trust name_trust(const struct guests_ctx *ctx, uint32_t domid)
{
	char path[64];
	unsigned num = 0;
	struct xenif_xs_perm *p;
	bool writable;

	if (!ctx->x->ops->xs_get_perms)
		return NAME_UNKNOWN;
	snprintf(path, sizeof(path), "/local/domain/%" PRIu32 "/name", domid);
	p = ctx->x->ops->xs_get_perms(ctx->x, 0, path, &num);
	if (!p)
		return NAME_UNKNOWN;
	writable = xenif_xs_perm_writable(p, num, domid);
	free(p);
	return writable ? NAME_WRITABLE : NAME_TRUSTED;
}

void guest_read_name(struct guest *g)
{
	size_t len = 0;
	char *v = guest_xs_get(g->ctx, 0, g->domid, "name", &len);
	enum name_trust trust = v ? name_trust(g->ctx, g->domid) : NAME_UNKNOWN;
	bool believed = g->name[0] && !g->name_untrusted;
	size_t i;

	if (trust == NAME_UNKNOWN && believed) {
		free(v);
		return;
	}
	if (v && trust != NAME_TRUSTED) {
		if (!g->name_untrusted)
			guest_log(g->ctx, g->domid, LOG_LVL_WARN,
			    "domain %" PRIu32 ": its xenstore name %s: not used", g->domid,
			    trust == NAME_WRITABLE ? "is writable by the guest"
			                           : "has permissions that cannot be read");
		g->name_untrusted = true;
		free(v);
		v = NULL;
	}
	if (!v) {
		snprintf(g->name, sizeof(g->name), "domain-%" PRIu32, g->domid);
	} else {
		for (i = 0; i < len && i < sizeof(g->name) - 1; i++)
			g->name[i] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
		g->name[i] = 0;
	}
	free(v);
	state_domain_set_name(g->sd, g->name);
}
