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

static struct guest **table;
static unsigned nguests;
static struct guest **portmap;
static uint32_t portmap_len;

struct guest *guest_find(uint32_t domid)
{
	for (unsigned i = 0; i < nguests; i++)
		if (table[i]->domid == domid)
			return table[i];
	return NULL;
}

unsigned guest_count_kind(enum guest_kind k)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nguests; i++)
		n += table[i]->kind == k;
	return n;
}

void guest_foreach(void (*fn)(struct guest *g, void *arg), void *arg)
{
	/* backwards: fn may free the guest it is given (guest_table_remove moves the last
	 * entry, already visited, into its slot), and no other */
	for (unsigned i = nguests; i-- > 0;)
		if (i < nguests)
			fn(table[i], arg);
}

struct guest *guest_last(void)
{
	return nguests ? table[nguests - 1] : NULL;
}

struct guest *guest_by_port(uint32_t port)
{
	return port < portmap_len ? portmap[port] : NULL;
}

int guest_port_set(uint32_t port, struct guest *g)
{
	if (port >= ANNOUNCE_MAX_PORT)
		return -1;
	if (port >= portmap_len) {
		uint32_t n = portmap_len ? portmap_len : 64;

		while (n <= port)
			n *= 2;
		portmap = xreallocarray(portmap, n, sizeof(*portmap));
		memset(portmap + portmap_len, 0, (n - portmap_len) * sizeof(*portmap));
		portmap_len = n;
	}
	portmap[port] = g;
	return 0;
}

void guest_table_add(struct guest *g)
{
	table = xreallocarray(table, nguests + 1, sizeof(*table));
	table[nguests++] = g;
}

void guest_table_remove(struct guest *g)
{
	if (g->lport >= 0 && guest_by_port((uint32_t)g->lport) == g)
		portmap[g->lport] = NULL;
	for (unsigned i = 0; i < nguests; i++)
		if (table[i] == g) {
			table[i] = table[--nguests];
			break;
		}
}

void guest_table_free(void)
{
	free(table);
	table = NULL;
	nguests = 0;
	free(portmap);
	portmap = NULL;
	portmap_len = 0;
}

static char host_lost[160];

/*
 * The host's xenstore connection or event-channel device failing for good leaves
 * nothing to serve from, and their descriptors stay readable: say so once and leave
 * the loop, so that mtraced exits non-zero and its service manager restarts it
 * (Restart=on-failure) -- a restarted mtraced finds every guest again.
 */
void guest_host_lost(struct event_base *base, const char *what, int err)
{
	if (host_lost[0])
		return;
	snprintf(host_lost, sizeof(host_lost), "%s: %s", what, strerror(err));
	log_err(
	    "lost the host's %s; exiting so that the service manager restarts mtraced", host_lost);
	event_base_loopexit(base, NULL);
}

const char *guest_host_lost_reason(void)
{
	return host_lost[0] ? host_lost : NULL;
}
