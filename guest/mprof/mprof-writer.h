/*
 * mprof-writer.h - mirage-profile's trace writer (lib/mProf_trace_with_tracing.ml,
 * Control + Packet), redone in C for the simulated legacy guest and the tests.
 *
 * It keeps the original's behaviour on purpose, including what makes the buffer hard
 * to read live: 4 packets (len/4, the last takes the remainder), a 30-byte header,
 * content_size published before the event's bytes and stored as two separate u16
 * halves, packets cleared and reused in turn (whole-packet overwrite), no index.
 * Stores go through volatile accesses so they reach shared memory in program order.
 */
#ifndef MPROF_WRITER_H
#define MPROF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MPW_PACKETS 4u
#define MPW_HDR     30u

/* One event to write; str is used by the ops that carry one (fails, label, increase,
 * counter).  op 8 (gc) writes arg only, with no thread context, as mirage-profile does. */
struct mpw_event {
	uint64_t ts;
	uint8_t op;
	uint8_t type; /* creates */
	uint64_t thread;
	uint64_t arg;
	const char *str;
};

struct mprof_writer {
	volatile uint8_t *buf;
	size_t len;
	uint32_t pstart[MPW_PACKETS], pend[MPW_PACKETS];
	unsigned active;
	uint32_t next_event; /* always < packet end */
	uint32_t next_count; /* next stream_packet_count */
	/* the event begun by mpw_begin and not yet wholly written */
	uint8_t pending[9 + 17 + 4096];
	uint32_t pending_len, pending_at, pending_done;
	uint64_t packets_started; /* packets begun (counters 0..n-1): packet 0 at init */
};

/* len >= 4 * (MPW_HDR + 9 + 17 + strings); the buffer is formatted (headers 0..3). */
int mpw_init(struct mprof_writer *w, void *buf, size_t len);
/* Bytes the event takes (9 + payload); 0 if it cannot be written (unknown op, string
 * longer than a packet allows). */
uint32_t mpw_event_len(const struct mprof_writer *w, const struct mpw_event *ev);
/* Reserve room the way add_event does (moving to, and clearing, the next packet when
 * needed) and publish content_size; no event byte is written yet.  Returns true when a
 * new packet was started.  *ok false when the event cannot be written. */
bool mpw_begin(struct mprof_writer *w, const struct mpw_event *ev, bool *ok);
/* Write the begun event's bytes up to byte `upto` (clamped), in order. */
void mpw_write(struct mprof_writer *w, uint32_t upto);
/* begin + write everything.  Returns true when a new packet was started. */
bool mpw_emit(struct mprof_writer *w, const struct mpw_event *ev, bool *ok);

/*
 * The synthetic workload of mtrace-mprof-guest --live, event number i (tests rebuild it
 * independently, tests/legacy/check_live.py):
 *   ts = MPW_GEN_T0 + i * 1000;  op = i % 14;
 *   thread = i % 50, or -1 for switch when i % 5 == 0;  gc: arg = i, no thread;
 *   arg = 1000 + i % 77 (0 for label and switch);  creates: type = i % 20;
 *   fails: "Exn_<i % 3>";  label: "label-<i % 7>";  increase/counter: "ctr-<i % 4>".
 * strbuf (>= 32 bytes) holds the string.
 */
#define MPW_GEN_T0 1000000000ull
void mpw_gen(uint64_t i, struct mpw_event *ev, char *strbuf, size_t len);

#endif
