/*
 * guest.h - what the guests subsystem's files share: one traced (or refused) domain,
 * the subsystem's context, and the table of guests (guest-table.c).  guests.c owns
 * the life cycle; discover.c, drain.c and legacy.c only look guests up here.  Every
 * file's state is in the context (or in the guest), reached from what it is handed:
 * a test, or a second Xen interface, has a context of its own (the state they feed,
 * state.c, is still the process's one).
 */
#ifndef MTRACED_GUEST_H
#define MTRACED_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "announce.h"
#include "clockmap.h"
#include "mtrace-ring.h"
#include "ring-reader.h"

struct deliver;
struct discover;
struct drain;
struct drain_sched;
struct event;
struct event_base;
struct glog_slot;
struct legacy;
struct mtraced_config;
struct state_domain;
struct xenif;

/* The subsystem's context, made by guests_init: what all its files read (the loop, the
 * Xen interface, the settings), the table of guests, and each file's own state, which
 * only that file looks into. */
struct guests_ctx {
	struct event_base *base;
	struct xenif *x;
	const struct mtraced_config *cfg;
	uint32_t self_domid;
	unsigned pages_total; /* mapped for all guests: admission (guests.c) only */
	/* guest-table.c */
	struct guest **table;
	unsigned nguests;
	struct guest **portmap; /* by local event-channel port */
	uint32_t portmap_len;
	char host_lost[160]; /* why mtraced exits: a host resource went away */
	struct discover *discover;
	struct drain *drain;
	struct deliver *deliver; /* where events and domain changes go (deliver.c) */
	struct glog_slot *glog;  /* guests.c: each domain's allowance of log lines */
	uint64_t time_tick_ns;   /* guest-time.c: when every guest was last re-measured */
};

struct gring {
	void *hdr;  /* header page, mapped read-write */
	void *data; /* data pages, mapped read-only */
	uint32_t pages;
	struct ring_reader *rr;
	struct ring_reader_stats seen; /* decoder totals already passed on */
};

/* guest-time.c's per guest: the clock-sync announcement, the ports asked about. */
#define GUEST_PORTS_MAX 64
struct guest_port {
	uint32_t port;
	uint64_t tried_ns; /* when Xen was last asked (CLOCK_MONOTONIC_COARSE) */
};
struct guest_time {
	struct clock_sync sync; /* the last good one */
	bool have_sync;
	uint64_t bad, bad_hash, bad_logged_ns;
	struct guest_port ports[GUEST_PORTS_MAX];
	unsigned nports;
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
	struct guests_ctx *ctx;
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
	struct guest_time time;
	bool up;   /* DomainUp sent, DomainDown owed (guests.c) */
	bool seen; /* mark for the enumeration sweep (discover.c) */
};

/* ---- guest-table.c: the guests by domain id and by bound local port ---- */

/* Add g to its context's table; remove it (its port too) before freeing it. */
void guest_table_add(struct guest *g);
void guest_table_remove(struct guest *g);
struct guest *guest_find(const struct guests_ctx *ctx, uint32_t domid);
struct guest *guest_by_port(const struct guests_ctx *ctx, uint32_t port);
/* Map port to g (NULL unmaps); -1 when the port is out of range. */
int guest_port_set(struct guests_ctx *ctx, uint32_t port, struct guest *g);
unsigned guest_count_kind(const struct guests_ctx *ctx, enum guest_kind k);
/* fn may free the guest it is given, and no other. */
void guest_foreach(struct guests_ctx *ctx, void (*fn)(struct guest *g, void *arg), void *arg);
/* The last guest of the table (for emptying it), NULL when empty. */
struct guest *guest_last(const struct guests_ctx *ctx);
void guest_table_free(struct guests_ctx *ctx);
/* The host's xenstore or event channels failed for good: log, leave the loop (once). */
void guest_host_lost(struct guests_ctx *ctx, const char *what, int err);
const char *guest_host_lost_reason(const struct guests_ctx *ctx);

/* ---- guest-log.c: what guests cost the host's journal ---- */

int guest_log_init(struct guests_ctx *ctx); /* -1 when out of memory */
void guest_log_free(struct guests_ctx *ctx);
/* A line domid caused, out of its allowance (held back, and counted, past it). */
void guest_log_at(struct guests_ctx *ctx, uint32_t domid, unsigned level, const char *func,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
#define guest_log(ctx, domid, level, ...) guest_log_at(ctx, domid, level, __func__, __VA_ARGS__)
/* Whether two reasons are the same but for the values in them (the guest's, or the
 * others' page counts) and a trailing "(...)": a refusal is told once per reason. */
bool guest_reason_same(const char *a, const char *b);

/* ---- guest-xs.c: what is read of a domain in xenstore ---- */

/* /local/domain/<domid>/<sub> in transaction tx (0: none); NULL when absent. */
char *guest_xs_get(
    const struct guests_ctx *ctx, uint32_t tx, uint32_t domid, const char *sub, size_t *len);
/* data/mtrace in one transaction: ANNOUNCE_*, or -2 when xenstore kept failing the
 * transaction (not the guest's fault: retry later). */
int guest_read_announce(
    const struct guests_ctx *ctx, uint32_t domid, struct announce *a, char *why, size_t wl);
/* g's name as far as it is believed (else domain-<id>), into g and its state. */
void guest_read_name(struct guest *g);

/* ---- guest-time.c: the guest's clocks on the host timeline, its channels' other ends ---- */

void guest_time_init(struct guests_ctx *ctx); /* deliver's port hook */
/* g is up (DomainUp sent): its clock-sync read, its maps to clients before its events. */
void guest_time_up(struct guest *g);
/* Its data/mtrace changed (a watch, the rescan): clock-sync read again. */
void guest_time_announced(struct guest *g);
/* g is no longer traced: its maps and links forgotten. */
void guest_time_down(struct guest *g);
/* From the drain's timer: every guest measured again, at most once a second. */
void guest_time_tick(struct guests_ctx *ctx);

#endif
