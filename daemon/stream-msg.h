/*
 * stream-msg.h - protocol messages checked and built without a connection
 * (stream-msg.c): pure functions of proto/mtrace.proto messages.
 */
#ifndef MTRACED_STREAM_MSG_H
#define MTRACED_STREAM_MSG_H

#include <stdbool.h>
#include <stdint.h>

#include "mtrace.pb-c.h"

/* Why a Subscribe is refused (NULL: valid), checked whole before any of it is used. */
const char *stream_subscribe_invalid(const Mtrace__Subscribe *s);
/* The group's own copy of a Subscribe (unknown fields left out); NULL when out of
 * memory. */
Mtrace__Subscribe *stream_sub_copy(const Mtrace__Subscribe *sub);
/* A DomainUp in m/u; the name (guest-written in xenstore) is made valid UTF-8 in nm. */
void stream_msg_domain_up(Mtrace__ServerMsg *m, Mtrace__DomainUp *u, char nm[static 256],
    uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy);
/* A ClockMap / an EvtchnLink in m, from the tables of clockmap.h. */
struct clockmap_rec;
struct evlink;
void stream_msg_clock_map(Mtrace__ServerMsg *m, Mtrace__ClockMap *cm, const struct clockmap_rec *r);
void stream_msg_evtchn_link(Mtrace__ServerMsg *m, Mtrace__EvtchnLink *el, const struct evlink *l);
/* Make every guest-written string of a Stats valid UTF-8, in place. */
void stream_stats_fix_strings(Mtrace__Stats *s);
/* Cut s, m's Stats, until m fits FRAME_MAX_TO_CLIENT: the largest table first, each cut
 * counted in its *_omitted. */
void stream_stats_fit(const Mtrace__ServerMsg *m, Mtrace__Stats *s);

#endif
