/*
 * clockmap.h - one timeline (issue 37): how each traced domain's clock maps onto the
 * host timeline (dom0's CLOCK_REALTIME, ns since the epoch), and which event-channel
 * port of one domain is bound to which of another.  The tables are the process's one
 * (like the state's): the guests subsystem offers what it measured (guest-time.c), the
 * stream server reads what a new client must be told (stream-request.c).  Pure: no
 * Xen, no loop, no clock read here.
 *
 * A map is affine with rate 1: host_ns = guest_ns + offset_ns, for the domain's events
 * whose EventBatch clock is `clock` (a TSC ring's timeline), with the half-width of the
 * interval the true offset lies in.  A new record is made only when the offset moved by
 * more than max(uncertainty, CLOCKMAP_MOVE_NS), the source changed, or the measure is at
 * least twice as narrow (by CLOCKMAP_MOVE_NS or more: a refinement): a change is always
 * a record (ClockMap in proto/mtrace.proto), never a silent jump.
 */
#ifndef MTRACED_CLOCKMAP_H
#define MTRACED_CLOCKMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLOCKMAP_MOVE_NS    50000u     /* 50 us: smaller moves keep the record */
#define CLOCKMAP_UNKNOWN_NS UINT64_MAX /* the uncertainty of an unknown map */

/* The values of ClockMap.Source. */
enum clockmap_source {
	CLOCKMAP_UNKNOWN = 0,
	CLOCKMAP_SAME_KERNEL = 1,
	CLOCKMAP_XEN_SYSTEM_TIME = 2,
};

struct clockmap_rec {
	uint32_t domid, clock;
	int64_t offset_ns;
	uint64_t uncertainty_ns;
	enum clockmap_source source;
	int64_t since_host_ns;
	uint64_t seq; /* per (domid, clock), from 1 */
};

/*
 * A map measured now (host time now_host_ns) for (domid, clock): true, with the new
 * record in *out, when it becomes the current one (the first, a move beyond the
 * threshold, another source); false when the current one stands.
 */
bool clockmap_offer(uint32_t domid, uint32_t clock, int64_t offset_ns, uint64_t uncertainty_ns,
    enum clockmap_source source, int64_t now_host_ns, struct clockmap_rec *out);
/* The current map of (domid, clock), or NULL. */
const struct clockmap_rec *clockmap_get(uint32_t domid, uint32_t clock);
/* The domain is no longer traced: its maps and links go. */
void clockmap_forget(uint32_t domid);
/* Every current map, for a new client. */
void clockmap_foreach(void (*cb)(const struct clockmap_rec *r, void *arg), void *arg);

/* ---- the guest's announcement, data/mtrace/clock-sync (docs/ring-protocol.md §7) ---- */

#define CLOCK_SYNC_MAX      100           /* bytes of a value we look at */
#define CLOCK_SYNC_WIDTH_NS 1000000000ull /* a bracket wider than 1 s is refused */

struct clock_sync {
	uint64_t seq;
	uint64_t ring_ns; /* the ring's clock (a TSC ring: its timeline) ... */
	uint64_t xen_ns;  /* ... and Xen system time, at the same instant */
	uint64_t width_ns;
};
/* "<seq> <ring_clock_ns> <xen_ns> <width_ns>": four decimal numbers, one space between,
 * nothing else (a trailing NUL or newline tolerated), times below 2^63 and the width at
 * most CLOCK_SYNC_WIDTH_NS.  0, or -1 for anything else. */
int clock_sync_parse(const char *s, size_t len, struct clock_sync *cs);

/* ---- event-channel links ---- */

struct evlink {
	uint32_t domid, port, remote_domid, remote_port;
};
/* A link Xen told of: true when it is new (or changed) and is to be sent. */
bool evlink_note(const struct evlink *l);
void evlink_foreach(void (*cb)(const struct evlink *l, void *arg), void *arg);

/* Everything freed (mtraced's exit, tests). */
void clockmap_fini(void);

#endif
