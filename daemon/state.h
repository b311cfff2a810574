/*
 * state.h - per-domain, per-thread and per-label state with rolling statistics
 * (state.c and friends, owned by the core).  The stream server reads it through
 * these calls only.
 */
#ifndef MTRACED_STATE_H
#define MTRACED_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The wire format's messages, as state-stats.c builds and reads them; the tables
 * themselves know nothing of them (mtrace.pb-c.h defines them). */
typedef struct Mtrace__Stats Mtrace__Stats;
typedef struct Mtrace__Subscribe Mtrace__Subscribe;

/* ---- state-stats.c: the read-outs the stream server makes ---- */

/* Build a Stats message for one subscription (domain filter, top-N, sort key, label
 * stats).  Free with state_stats_free. */
Mtrace__Stats *state_stats(const Mtrace__Subscribe *sub, uint64_t dropped_for_client);
void state_stats_free(Mtrace__Stats *s);

/* Label of a thread, or NULL (valid until the next event is applied). */
const char *state_thread_label(uint32_t domid, uint64_t thread);

/* Whether a domain passes a subscription's domain filter (ids or names). */
bool state_domain_matches(uint32_t domid, const Mtrace__Subscribe *sub);

/* Every domain currently traced, for a new client's DomainUp messages. */
typedef void (*state_domain_cb)(
    uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy, void *arg);
void state_foreach_domain(state_domain_cb cb, void *arg);

/* Counts for sd_notify STATUS. */
unsigned state_guest_count(void);

/* ---- the core's side (guests.c, deliver.c, drain.c, main.c) ---- */

struct mtraced_config;
struct mtrace_event;
struct state_domain;

void state_init(const struct mtraced_config *cfg);
void state_reconfigure(const struct mtraced_config *cfg);
void state_fini(void);

/* Find or create the domain (revives a dead one: its statistics start afresh). */
struct state_domain *state_domain_get(uint32_t domid);
struct state_domain *state_domain_find(uint32_t domid);
void state_domain_set_name(struct state_domain *d, const char *name);
/* Traced: alive, with rings/clock/legacy as announced; status becomes "running". */
void state_domain_attached(struct state_domain *d, uint32_t rings, uint32_t clock, bool legacy);
/* Not traced because of a bad announcement; status "bad: <reason>". */
void state_domain_bad(struct state_domain *d, const char *reason);
/* Withdrawn (gone = false) or dead (gone = true): kept for dead_keep_s with its last
 * statistics, status = why.  A later attach of a gone domain starts afresh. */
void state_domain_detached(struct state_domain *d, const char *why, bool gone);
/* A withdrawn domain (kept with its statistics) that has since died: its status
 * becomes why ("destroyed", "crashed") for each one exists() denies. */
void state_mark_gone(bool (*exists)(uint32_t domid, bool *crashed, void *arg), void *arg);
/* Forget a domain now (it never was traced). */
void state_domain_forget(uint32_t domid);

/* The hot path: one decoded event of domain d.  No allocation in the steady state. */
void state_apply(struct state_domain *d, const struct mtrace_event *ev);
/* The same for n events in ring order. */
void state_apply_batch(struct state_domain *d, const struct mtrace_event *ev, size_t n);
/* The distinct ports the event-channel sends and receives of the last
 * state_apply_batch named, in the order first seen: the guest-time module asks Xen about
 * each once a batch rather than once an event.  *more: the batch named more ports than
 * the state keeps (8), and only those are here (the caller reads the batch). */
size_t state_batch_ports(const struct state_domain *d, const uint32_t **ports, bool *more);
/* Decoder deltas since the last call. */
void state_domain_add_counts(
    struct state_domain *d, uint64_t lost, uint64_t corrupt, uint64_t unknown);
void state_domain_add_wakeup(struct state_domain *d, bool ratelimited);
/* The guest's clock-sync announcement was refused (guest-time.c). */
void state_domain_add_clock_sync_bad(struct state_domain *d);

/* Advance the rolling windows, resolve new sites and expire dead domains; now is
 * CLOCK_MONOTONIC ns.  Called from timers, never per event.  True while sites wait to
 * be resolved (the caller comes back soon). */
bool state_tick(uint64_t now_ns);
uint64_t state_now_ns(void); /* CLOCK_MONOTONIC */

/* Read-outs for tests and benchmarks. */
uint64_t state_domain_events(const struct state_domain *d);
uint64_t state_domain_live_threads(const struct state_domain *d);

#endif
