/*
 * guest.h - what the guests subsystem's files share: one traced (or refused) domain,
 * the subsystem's context, and the table of guests (guest-table.c).  guests.c owns
 * the life cycle; discover.c, drain.c and legacy.c only look guests up here.
 */
#ifndef MTRACED_GUEST_H
#define MTRACED_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "announce.h"
#include "mtrace-ring.h"
#include "ring-reader.h"

struct drain_sched;
struct event;
struct event_base;
struct legacy;
struct mtraced_config;
struct state_domain;
struct xenif;

/* The subsystem's context: set up by guests_init, one for the daemon. */
struct guests_ctx {
	struct event_base *base;
	struct xenif *x;
	const struct mtraced_config *cfg;
	uint32_t self_domid;
	unsigned pages_total; /* mapped for all guests: admission (guests.c) only */
};

struct gring {
	void *hdr;  /* header page, mapped read-write */
	void *data; /* data pages, mapped read-only */
	uint32_t pages;
	struct ring_reader *rr;
	struct ring_reader_stats seen; /* decoder totals already passed on */
};

/* NEW: just found, nothing mapped yet; BAD: announcement refused (see bad[]) */
enum guest_kind {
	GUEST_NEW,
	GUEST_RING,
	GUEST_LEGACY,
	GUEST_BAD
};

/* A domain we trace, or could not trace (bad).  Exists only while the domain does. */
struct guest {
	uint32_t domid;
	enum guest_kind kind;
	char name[64];
	bool name_untrusted; /* its name node was writable by it: told once */
	struct state_domain *sd;
	bool sd_fresh; /* sd was created for this guest (not kept from before) */
	char bad[128]; /* why the announcement was refused */

	struct announce ann;
	struct gring ring[MTRACE_MAX_RINGS];
	unsigned pages_mapped; /* admitted by guests.c, counted in pages_total */
	int lport;             /* bound local port, -1 none */

	struct drain_sched *sched; /* when it is read: drain.c's own, NULL until then */

	struct legacy *lg;
	bool up;   /* DomainUp sent, DomainDown owed (guests.c) */
	bool seen; /* mark for the enumeration sweep (discover.c) */
};

/* ---- guest-table.c: the guests by domain id and by bound local port ---- */

/* Add g; remove it (its port too) before freeing it. */
void guest_table_add(struct guest *g);
void guest_table_remove(struct guest *g);
struct guest *guest_find(uint32_t domid);
struct guest *guest_by_port(uint32_t port);
/* Map port to g (NULL unmaps); -1 when the port is out of range. */
int guest_port_set(uint32_t port, struct guest *g);
unsigned guest_count_kind(enum guest_kind k);
/* fn may free the guest it is given, and no other. */
void guest_foreach(void (*fn)(struct guest *g, void *arg), void *arg);
/* The last guest of the table (for emptying it), NULL when empty. */
struct guest *guest_last(void);
void guest_table_free(void);
/* The host's xenstore or event channels failed for good: log, leave the loop (once). */
void guest_host_lost(struct event_base *base, const char *what, int err);
const char *guest_host_lost_reason(void);

#endif
