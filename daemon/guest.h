/*
 * guest.h - the guests subsystem of mtraced: discovery through xenstore (discover.c),
 * attaching a guest's rings (guest.c) or legacy buffer (legacy.c), and draining them
 * on wake-ups and timers (drain.c).  main.c drives it through the guests_* calls.
 */
#ifndef MTRACED_GUEST_H
#define MTRACED_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtrace-ring.h"
#include "ring-reader.h"
#include "xenif.h"

struct event;
struct event_base;
struct mtraced_config;
struct state_domain;
struct mprof_reader;

/* What the guest announced under data/mtrace, parsed and range-checked. */
struct announce {
	uint32_t clock;
	uint32_t port;
	uint32_t rings;
	uint32_t ref[MTRACE_MAX_RINGS];
	uint32_t pages[MTRACE_MAX_RINGS];
};

struct gring {
	void *hdr;			/* header page, mapped read-write */
	void *data;			/* data pages, mapped read-only */
	uint32_t pages;
	struct ring_reader *rr;
	struct ring_reader_stats seen;	/* decoder totals already passed on */
};

struct legacy;

/* NEW: just found, nothing mapped yet; BAD: announcement refused (see bad[]) */
enum guest_kind { GUEST_NEW, GUEST_RING, GUEST_LEGACY, GUEST_BAD };

/* A domain we trace, or could not trace (bad).  Exists only while the domain does. */
struct guest {
	uint32_t domid;
	enum guest_kind kind;
	char name[64];
	bool name_untrusted;	/* its name node was writable by it: told once */
	struct state_domain *sd;
	bool sd_fresh;			/* sd was created for this guest (not kept from before) */
	char bad[128];			/* why the announcement was refused */

	struct announce ann;
	struct gring ring[MTRACE_MAX_RINGS];
	unsigned pages_mapped;
	int lport;			/* bound local port, -1 none */

	/* wake-ups in the current period: all, and those that found nothing new (the
	 * storm limiter's count, as xenconsoled's) */
	uint64_t period_start_ns;
	unsigned period_wakeups, period_spurious;
	bool held;			/* port left masked until the period ends */
	struct event *unhold_ev;
	bool polling;			/* busy: drained on the poll tick, no wake-ups */
	unsigned poll_idle;		/* empty polls in a row */

	/* round-robin service of guests with more data than one budget */
	bool busy;
	struct guest *busy_next;
	unsigned next_ring;

	struct legacy *lg;
	bool up;			/* DomainUp sent, DomainDown owed */
	bool seen;			/* mark for the enumeration sweep */
};

/* guest.c: the table and the attach/detach life cycle */
extern struct xenif *guests_x;
extern const struct mtraced_config *guests_cfg;
extern unsigned guests_pages_total;

struct guest *guest_find(uint32_t domid);
unsigned guest_count_kind(enum guest_kind k);
void guest_foreach(void (*fn)(struct guest *g, void *arg), void *arg);
/* Re-read the domain's announcement and attach, remap, detach or mark it bad. */
void guest_refresh(uint32_t domid);
/* The domain is gone (reason "destroyed"/"crashed"): final drain, unmap, unbind, forget. */
void guest_death(struct guest *g, const char *reason);
/* Unmap and unbind everything (shutdown); no DomainDown is sent. */
void guest_release_all(void);
struct guest *guest_by_port(uint32_t port);

/* drain.c: wake-ups, budgets, the periodic drain */
int drain_init(struct event_base *base, char *err, size_t errlen);
void drain_reconfigure(void);
void drain_fini(void);
/* Drain up to budget events of g's rings; returns the count, *more if data is left. */
size_t drain_guest(struct guest *g, size_t budget, bool *more);
/* Drain g now within its budget, re-arm its wake-ups, queue it if data remains;
 * returns how many events it read. */
size_t drain_service(struct guest *g);
/* Drain everything (death, shutdown), bounded by the rings' size. */
void drain_final(struct guest *g);
void drain_forget(struct guest *g);	/* before g is freed */
/* Deliver events to the state and the stream in batches; ev->str must stay valid until
 * drain_batch_end (the legacy poller's strings point into its private copy). */
void drain_batch_begin(struct guest *g, uint32_t ring, uint32_t clock);
void drain_batch_event(const struct mtrace_event *ev, void *arg);	/* a ring_event_cb */
void drain_batch_end(void);

/* legacy.c: mirage-profile buffers */
int legacy_attach(struct guest *g, const char *refs, size_t len, char *why, size_t whylen);
void legacy_detach(struct guest *g);
bool legacy_same(const struct guest *g, const char *refs, size_t len);
void legacy_poll(struct guest *g);
void legacy_init(struct event_base *base);
void legacy_reconfigure(void);

/* discover.c: xenstore watches and the domain list */
int discover_init(struct event_base *base, char *err, size_t errlen);
/* Re-enumerate domains; deep also re-reads the announcements of known guests. */
void discover_scan_all(bool deep);
void discover_fini(void);

/* The entry points main.c uses. */
int guests_init(struct event_base *base, struct xenif *x, const struct mtraced_config *cfg,
		char *err, size_t errlen);
void guests_reconfigure(const struct mtraced_config *cfg);
void guests_drain_all(void);
void guests_fini(void);

#endif
