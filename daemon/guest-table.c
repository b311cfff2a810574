/*
 * guest-table.c - the guests by domain id (a small array: a dom0 traces tens of
 * guests, looked up on xenstore events only) and by bound local port (the hot
 * lookup of every wake-up).
 */
#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "announce.h"
#include "guest.h"
#include "log.h"
#include "xalloc.h"

struct guest *guest_find(const struct guests_ctx *gt, uint32_t domid)
{
	for (unsigned i = 0; i < gt->nguests; i++)
		if (gt->table[i]->domid == domid)
			return gt->table[i];
	return NULL;
}

unsigned guest_count_kind(const struct guests_ctx *gt, enum guest_kind k)
{
	unsigned n = 0;

	for (unsigned i = 0; i < gt->nguests; i++)
		n += gt->table[i]->kind == k;
	return n;
}

void guest_foreach(struct guests_ctx *gt, void (*fn)(struct guest *g, void *arg), void *arg)
{
	/* backwards: fn may free the guest it is given (guest_table_remove moves the last
	 * entry, already visited, into its slot), and no other */
	for (unsigned i = gt->nguests; i-- > 0;)
		if (i < gt->nguests)
			fn(gt->table[i], arg);
}

struct guest *guest_last(const struct guests_ctx *gt)
{
	return gt->nguests ? gt->table[gt->nguests - 1] : NULL;
}

struct guest *guest_by_port(const struct guests_ctx *gt, uint32_t port)
{
	return port < gt->portmap_len ? gt->portmap[port] : NULL;
}

int guest_port_set(struct guests_ctx *gt, uint32_t port, struct guest *g)
{
	if (port >= ANNOUNCE_MAX_PORT)
		return -1;
	if (port >= gt->portmap_len) {
		uint32_t n = gt->portmap_len ? gt->portmap_len : 64;

		while (n <= port)
			n *= 2;
		gt->portmap = xreallocarray(gt->portmap, n, sizeof(*gt->portmap));
		memset(
		    gt->portmap + gt->portmap_len, 0, (n - gt->portmap_len) * sizeof(*gt->portmap));
		gt->portmap_len = n;
	}
	gt->portmap[port] = g;
	return 0;
}

void guest_table_add(struct guest *g)
{
	struct guests_ctx *gt = g->ctx;

	gt->table = xreallocarray(gt->table, gt->nguests + 1, sizeof(*gt->table));
	gt->table[gt->nguests++] = g;
}

void guest_table_remove(struct guest *g)
{
	struct guests_ctx *gt = g->ctx;

	if (g->lport >= 0 && guest_by_port(gt, (uint32_t)g->lport) == g)
		gt->portmap[g->lport] = NULL;
	for (unsigned i = 0; i < gt->nguests; i++)
		if (gt->table[i] == g) {
			gt->table[i] = gt->table[--gt->nguests];
			break;
		}
}

void guest_table_free(struct guests_ctx *gt)
{
	free(gt->table);
	gt->table = NULL;
	gt->nguests = 0;
	free(gt->portmap);
	gt->portmap = NULL;
	gt->portmap_len = 0;
}

/*
 * The host's xenstore connection or event-channel device failing for good leaves
 * nothing to serve from, and their descriptors stay readable: say so once and leave
 * the loop, so that mtraced exits non-zero and its service manager restarts it
 * (Restart=on-failure) -- a restarted mtraced finds every guest again.
 */
void guest_host_lost(struct guests_ctx *gt, const char *what, int err)
{
	if (gt->host_lost[0])
		return;
	snprintf(gt->host_lost, sizeof(gt->host_lost), "%s: %s", what, strerror(err));
	log_err("lost the host's %s; exiting so that the service manager restarts mtraced",
	    gt->host_lost);
	event_base_loopexit(gt->base, NULL);
}

const char *guest_host_lost_reason(const struct guests_ctx *gt)
{
	return gt->host_lost[0] ? gt->host_lost : NULL;
}
