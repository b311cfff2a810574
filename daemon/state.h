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

#include "mtrace.pb-c.h"

/* Build a Stats message for one subscription (domain filter, top-N, sort key, label
 * stats).  Free with state_stats_free. */
Mtrace__Stats *state_stats(const Mtrace__Subscribe *sub, uint64_t dropped_for_client);
void state_stats_free(Mtrace__Stats *s);

/* Label of a thread, or NULL (valid until the next event is applied). */
const char *state_thread_label(uint32_t domid, uint64_t thread);

/* Whether a domain passes a subscription's domain filter (ids or names). */
bool state_domain_matches(uint32_t domid, const Mtrace__Subscribe *sub);

/* Every domain currently traced, for a new client's DomainUp messages. */
typedef void (*state_domain_cb)(uint32_t domid, const char *name, uint32_t rings,
				uint32_t clock, bool legacy, void *arg);
void state_foreach_domain(state_domain_cb cb, void *arg);

/* Counts for sd_notify STATUS. */
unsigned state_guest_count(void);

#endif
