/*
 * mprof.h - reading mirage-profile's legacy Xen trace buffers (data/mprof/ring-ref):
 * 4 CTF packets in read-only granted pages, no index, no event channel.  The core maps
 * the pages, and on every poll copies the whole buffer once and hands the copy here.
 */
#ifndef MTRACED_MPROF_H
#define MTRACED_MPROF_H

#include <stddef.h>
#include <stdint.h>

#include "ring-reader.h"

#define MPROF_MAX_PAGES	1024u

struct mprof_stats {
	uint64_t events;	/* emitted */
	uint64_t lost;		/* events in packets overwritten between polls (estimated
				   from packet counters when a packet was never seen) */
	uint64_t lost_packets;	/* packets overwritten before we read them */
	uint64_t torn;		/* half-written or torn events dropped */
	uint64_t corrupt;	/* bad packet headers, bad events */
	uint64_t polls;
};

struct mprof_reader;

struct mprof_reader *mprof_reader_new(size_t buf_len);
void mprof_reader_free(struct mprof_reader *r);
/* Parse a private copy of the whole buffer; emit each event not emitted by an earlier
 * poll, in order.  Returns the number emitted. */
size_t mprof_reader_poll(struct mprof_reader *r, const uint8_t *copy, size_t len,
			 ring_event_cb cb, void *arg);
const struct mprof_stats *mprof_reader_stats(const struct mprof_reader *r);

/* Strictly parse "r1,r2,...": decimal, no spaces, 1..max refs.  Returns the count or
 * -1 with a reason in err. */
int mprof_parse_refs(const char *val, size_t len, uint32_t *refs, unsigned max, char *err,
		     size_t errlen);

#endif
