/*
 * timeline.h - one timeline for every reader (issue 37): a guest's time -> the host
 * timeline (its dom0's CLOCK_REALTIME, ns since the epoch), from the ClockMap records
 * mtraced sends (docs/stream-protocol.md §4), and event-channel sends paired with
 * their receives across domains (EvtchnLink), each pair judged on that timeline.
 *
 * A reader hands every record it gets to tl_msg (the others are ignored), then maps
 * each batch's events: tl_clock once a batch, tl_map per event.  Guest time stays what
 * it was; host time is derived.  A domain whose map is `unknown`, or of which no map
 * was told (a recording made before maps existed), keeps its guest time as host time
 * and is marked not known: outputs never draw it as if aligned.
 *
 * Maps are kept per (host, domain, clock) in the order told; a guest time is mapped by
 * the last map in force at it (its since_host_ns, taken back to guest time by its own
 * offset), or by the first map for what came before the first.  A map whose seq is not
 * above the last one's starts the list again (the domain was attached anew).
 *
 * Pairs: on a channel (A, port a) -> (B, port b) the k-th send of A is the k-th receive
 * of B (exact for request/response traffic; notifications that coalesce make fewer
 * receives, and a loss in either ring, realigns the channel).  A capture that begins
 * mid-traffic may hold receives whose send it missed: those before the channel's first
 * send (beyond the uncertainty) are dropped, not paired.
 */
#ifndef MTRACE_TIMELINE_H
#define MTRACE_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "mtrace.pb-c.h"

#define TL_NO_MAP 255 /* tl_time.source when no map was told */

/* Where a guest time lies on the host timeline. */
struct tl_time {
	int64_t host_ns;         /* guest + offset; when not known the guest's own (at most
	                          * 2^63-1: no clock of ours is past it) */
	uint64_t uncertainty_ns; /* UINT64_MAX when not known */
	uint8_t source;          /* ClockMap.Source, or TL_NO_MAP */
	bool known;              /* a map other than unknown */
};

struct tl;
struct tl_clock;

struct tl *tl_new(void); /* NULL when out of memory */
void tl_free(struct tl *t);
/* Learn from a record: ClockMap, EvtchnLink, Loss (realigns channels), and with
 * tl_forget_gone DomainDown; host is the fleet's host of the record, NULL or "" for
 * mtraced's and a recording's. */
void tl_msg(struct tl *t, const char *host, const Mtrace__ServerMsg *m);
/* A live reader's (mtrace-top, the exporter, mtrace-web, which run for as long as the
 * host does): a domain's DomainDown forgets its maps, links and channels (their waiting
 * ends counted unpaired), so that domains coming and going cost nothing lasting.  A
 * converter, which lists every map told at its end, keeps them. */
void tl_forget_gone(struct tl *t);

/* The maps of one clock of a domain (a batch's clock), NULL when none was told. */
const struct tl_clock *tl_clock(struct tl *t, const char *host, uint32_t domid, uint32_t clock);
void tl_map(const struct tl_clock *c, uint64_t guest_ns, struct tl_time *out);
/* The map in force now (the last told), NULL when none. */
const Mtrace__ClockMap *tl_clock_last(const struct tl_clock *c);
/* Every map told of a (host, domain, clock), in order, for what outputs print. */
void tl_each_map(const struct tl *t,
    void (*fn)(const char *host, const Mtrace__ClockMap *m, size_t nth, void *arg), void *arg);

/* ---- event-channel pairs ---- */

/* One end as the output keeps it. */
struct tl_end {
	uint32_t domid, port, ring;
	uint64_t guest_ns;
	struct tl_time at;
	uint64_t user, user2; /* the output's own (Chrome: its instant's track and time) */
	int64_t thread;       /* the event's thread (-1: none), where outputs draw the end */
};

enum tl_order {
	TL_ORDERED,   /* send <= receive, by more than the two uncertainties */
	TL_UNCERTAIN, /* the uncertainties are larger than the gap (either way) */
	TL_VIOLATED,  /* receive before send by more than the uncertainties */
	TL_UNMAPPED,  /* an end whose clock is not known */
};

struct tl_pair {
	struct tl_end send, recv;
	int64_t gap_ns;          /* receive - send on the host timeline */
	uint64_t uncertainty_ns; /* the two ends' added (saturating) */
	enum tl_order order;
};

struct tl_counts {
	uint64_t pairs, ordered, uncertain, violated, unmapped;
	uint64_t unpaired; /* ends dropped: a receive with no send, a channel's overflow */
};

/*
 * An evtchn_send (send) or evtchn_recv of e->domid on e->port: true with *out when it
 * completes a pair, false when it waits for its other end, or is no channel's known.
 */
bool tl_evtchn(
    struct tl *t, const char *host, bool send, const struct tl_end *e, struct tl_pair *out);
/* What was paired so far; pending sends whose receiver is a traced domain count as
 * unpaired. */
void tl_counts(const struct tl *t, struct tl_counts *c);
const char *tl_order_name(enum tl_order o);

#endif
