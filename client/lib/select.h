/*
 * select.h - a subscription's selection applied in the client, to records mtraced did
 * not select for this reader: a recording, the fleet stream.  The meaning is mtraced's
 * (docs/stream-protocol.md, Subscribe): domains by id or by name, ops, label prefixes,
 * events or statistics only; so `mtrace-cat -i FILE -D g1 --label x` prints what a live
 * `mtrace-cat -D g1 --label x` would have, and mtrace-top -D on a recording shows
 * what it shows live.  The session (session.h) applies it to every stored source.
 */
#ifndef MTRACE_SELECT_H
#define MTRACE_SELECT_H

#include <stdbool.h>

#include "mtrace.pb-c.h"

struct mtc_select;

/* The selection of sub (copied: sub may go); NULL when out of memory. */
struct mtc_select *mtc_select_new(const Mtrace__Subscribe *sub);
void mtc_select_free(struct mtc_select *f);
/* Whether it selects less than everything (else every message passes as it is). */
bool mtc_select_narrows(const struct mtc_select *f);

/* How a message reaches fn. */
enum mtc_select_how {
	MTC_SELECT_WHOLE, /* as it came: its frame stands for it */
	MTC_SELECT_CUT,   /* changed in place (a Stats of the selected domains only) */
	MTC_SELECT_MADE,  /* a piece made here (the selected events of a batch): valid during
	                   * the call only, never kept */
};

/*
 * The selected part of m, given to fn: not at all (m is left out), m itself (WHOLE or
 * CUT), or the pieces of an event batch (MADE, one call each, never an empty one; a
 * batch is split where a time delta would not fit in 32 bits).  host keys what is
 * learnt on the way (domain names from DomainUp and Stats, each thread's current
 * label): the fleet's hosts have domains of the same id.  0, or -1 when out of memory.
 */
int mtc_select_msg(struct mtc_select *f, const char *host, Mtrace__ServerMsg *m,
    void (*fn)(Mtrace__ServerMsg *m, enum mtc_select_how how, void *arg), void *arg);

#endif
