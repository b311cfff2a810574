/*
 * mprof.h - reading mirage-profile's legacy Xen trace buffers (data/mprof/ring-ref):
 * 4 CTF packets in read-only granted pages, no index, no event channel.  The core maps
 * the pages, and on every poll copies the whole buffer once and hands the copy here.
 *
 * Format (../shared/brief/mirage-profile.md §2): the buffer is split into 4 packets, packet_size =
 * len / 4, the last one takes the remainder.  Each starts with a 30-byte little-endian
 * header { u32 magic 0xc1fc1fc1; u8 uuid[16]; u32 size_bits; u16 count; u16 content_lo;
 * u16 content_hi } followed by packed events { u64 ts; u8 op; payload }.
 *
 * What "emitted once" means here (the rule, mprof.c has the details):
 *  - Packets are ordered by their 16-bit counter, extended to 64 bits relative to the
 *    packet being read (first poll: the counter from which all others are nearest ahead).
 *  - An event is emitted only when its bytes are identical in two consecutive polls of
 *    the same packet (same slot, same counter) and lie inside content_size in both:
 *    mirage-profile publishes content_size before writing the event, so a lone snapshot
 *    may hold a half-written event.  Latency is therefore one poll interval, and the
 *    first poll emits nothing.
 *  - A packet is left (and the next one read) once a newer packet holds an event and
 *    everything up to its stable content_size was emitted.  (The 4 initial packets get
 *    counters 0..3 before they are written, so an empty newer packet proves nothing.)
 *  - Loss has snapshot semantics: counters never seen are whole lost packets; a packet
 *    that vanished before it was seen finished is a truncated packet (it may have been
 *    read to its end: a buffer cannot tell).  Lost *events* are an estimate: lost
 *    packets x the average events of packets read to their end, plus for a truncated
 *    packet that average less what was read of it.  History overwritten before the
 *    first poll is not loss.
 *  - Residual risk no reader of this format can remove: a writer stopped in the middle
 *    of an event for two whole polls (a paused domain) shows the same half-written
 *    event twice, and it is emitted; it is still bounded and well-formed.
 *  - Counters going backwards (a buffer restarted in place) restart reading (resyncs).
 *  - Only the 30-byte header is read (the one of net.ctf, of mirage-trace-viewer's
 *    reader and of the metadata); the sizeof_packet_header = 40 of mirage-profile's
 *    latest dune sources (events at +40) is not.
 */
#ifndef MTRACED_MPROF_H
#define MTRACED_MPROF_H

#include <stddef.h>
#include <stdint.h>

#include "ring-reader.h"

#define MPROF_MAX_PAGES		1024u
#define MPROF_PAGE_SIZE		4096u
#define MPROF_N_PACKETS		4u
#define MPROF_HDR_SIZE		30u
#define MPROF_MAGIC		0xc1fc1fc1u
#define MPROF_XS_REFS		"data/mprof/ring-ref"
/* Smallest buffer we accept: every packet must hold its header and one event. */
#define MPROF_MIN_BUF		(MPROF_N_PACKETS * (MPROF_HDR_SIZE + 9u))

struct mprof_stats {
	uint64_t events;	/* emitted */
	uint64_t lost;		/* events in packets overwritten between polls (estimated
				   from packet counters when a packet was never seen) */
	uint64_t lost_packets;	/* packets overwritten before we read them */
	uint64_t torn;		/* half-written or torn events dropped */
	uint64_t corrupt;	/* bad packet headers, bad events */
	uint64_t polls;
	uint64_t truncated;	/* packets read in part, whose tail was overwritten */
	uint64_t packets;	/* packets read to their end */
	uint64_t resyncs;	/* packet counters went backwards: reading restarted */
	uint64_t unknown;	/* events with an op we do not know (rest of packet skipped) */
};

struct mprof_reader;

/* buf_len: MPROF_MIN_BUF .. MPROF_MAX_PAGES * MPROF_PAGE_SIZE, else NULL/EINVAL. */
struct mprof_reader *mprof_reader_new(size_t buf_len);
void mprof_reader_free(struct mprof_reader *r);
/* Parse a private copy of the whole buffer; emit each event not emitted by an earlier
 * poll, in order.  Returns the number emitted.  ev->str points into `copy`; ev->seq is
 * the reader's own running event number (the format has none).  len must equal buf_len
 * (else nothing is emitted and corrupt is counted). */
size_t mprof_reader_poll(struct mprof_reader *r, const uint8_t *copy, size_t len,
			 ring_event_cb cb, void *arg);
const struct mprof_stats *mprof_reader_stats(const struct mprof_reader *r);
/* The last problem seen (bad header, bad event), "" if none; for the daemon's log. */
const char *mprof_reader_error(const struct mprof_reader *r);

/* Strictly parse "r1,r2,...": decimal, no spaces, 1..max refs.  Returns the count or
 * -1 with a reason in err. */
int mprof_parse_refs(const char *val, size_t len, uint32_t *refs, unsigned max, char *err,
		     size_t errlen);

#endif
