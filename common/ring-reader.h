/*
 * ring-reader.h - dom0's checked reader of one mtrace ring (the decoder).
 *
 * It never trusts guest memory: the header is copied at attach and the copy checked;
 * on every drain head/tail are loaded once, checked, the window is copied out once,
 * the tail re-checked after the copy, and only the private copy is parsed.
 * Nothing a guest writes can make it read outside the mapping or loop forever.
 */
#ifndef MTRACE_RING_READER_H
#define MTRACE_RING_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtrace-ring.h"
#include "ops.h"

/* A decoded, validated event.  str points into the reader's private copy window and is
 * valid only until the callback returns (the next window of the same drain call
 * overwrites it); it is NUL-terminated and str_len excludes the NUL. */
struct mtrace_event {
	/* laid out as a record's fixed part (struct mtrace_rec), str_len in its len: the
	 * decoder copies that part in whole */
	uint16_t str_len;
	uint8_t op;
	uint8_t type;
	uint32_t seq;
	uint64_t ts;
	uint64_t thread;
	uint64_t arg;
	const char *str;
};

struct ring_reader_stats {
	uint64_t events;  /* delivered */
	uint64_t lost;    /* overwritten before we read them (from seq gaps) */
	uint64_t corrupt; /* records or windows rejected */
	uint64_t unknown; /* well-formed records with an op we do not know (skipped) */
	uint64_t resyncs; /* times we jumped to the producer's tail */
	uint64_t bytes;   /* bytes consumed */
};

struct ring_reader;

/* The header copy, validated at attach. */
struct ring_reader_info {
	uint32_t data_pages;
	uint32_t clock;        /* the clock of decoded timestamps (a TSC ring's timeline) */
	uint32_t source_clock; /* the header's clock: the same, or MTRACE_CLOCK_TSC */
	uint32_t ring_index;
	char name[40];
};

/*
 * Attaching is two steps around mapping the data pages, and the guest's header page
 * is read once: ring_hdr_copy copies the mapped header page into *h, checks the copy
 * (data_pages is the count dom0 expects from xenstore and must match) and copies the
 * grant refs of the data pages into refs[] (refs may be NULL).  Returns 0, or -1 with
 * errno EINVAL/EPROTO and a reason in err.
 */
int ring_hdr_copy(const void *hdr_page, uint32_t data_pages, struct mtrace_ring_hdr *h,
    uint32_t *refs, char *err, size_t errlen);
/*
 * Then attach over that checked copy: hdr is the mapped header page (read-write: we
 * write req_event), data the mapped data pages (read-only).  NULL with errno EINVAL
 * and a reason in err on bad arguments.
 */
struct ring_reader *ring_reader_attach_copy(void *hdr, const struct mtrace_ring_hdr *copy,
    const void *data, uint32_t data_pages, char *err, size_t errlen);
void ring_reader_free(struct ring_reader *r);

/* Our position (byte count) in the ring: the next record boundary we will read. */
uint64_t ring_reader_position(const struct ring_reader *r);
const struct ring_reader_info *ring_reader_info(const struct ring_reader *r);

typedef void (*ring_event_cb)(const struct mtrace_event *ev, void *arg);

/*
 * Drain up to `budget` events, calling cb for each in ring order.  Returns the
 * number delivered; *more is set when data remains (budget ran out).
 * Losses and corruption are added to the stats.
 */
size_t ring_reader_drain(
    struct ring_reader *r, size_t budget, ring_event_cb cb, void *arg, bool *more);

/*
 * The same, handing the events over in arrays: cb gets up to cap events at a time,
 * decoded into ev[] (the caller's, cap >= 2) straight from the reader's private copy;
 * a CREATES and the SITE event its record carries are never split, so a drain may
 * deliver one event past budget.
 * Their strings point into that copy and are valid until cb returns.  A copy window
 * holds at most RING_READER_WINDOW_EVENTS events (every record a 48-byte CREATES with
 * its site, two events each): with cap that large, each window is handed over whole.
 */
#define RING_READER_WINDOW_BYTES  (16u * 1024)
#define RING_READER_WINDOW_EVENTS (RING_READER_WINDOW_BYTES / 48 * 2)
typedef void (*ring_batch_cb)(const struct mtrace_event *ev, size_t n, void *arg);
size_t ring_reader_drain_batch(struct ring_reader *r, size_t budget, struct mtrace_event *ev,
    size_t cap, ring_batch_cb cb, void *arg, bool *more);

/* Ask the producer to notify when head passes our position + `bytes_ahead`
 * (0 = at the next record).  Returns true if head is already past that point (drain
 * again rather than sleep).  attach already asks for the next record. */
bool ring_reader_request_wakeup(struct ring_reader *r, uint64_t bytes_ahead);

const struct ring_reader_stats *ring_reader_stats(const struct ring_reader *r);
/* A TSC ring: recalibrations seen, and seqlock reads given up (previous block kept). */
uint64_t ring_reader_time_updates(const struct ring_reader *r);
uint64_t ring_reader_time_retries(const struct ring_reader *r);

/* Decode the records in a private buffer [buf, buf+len) with the same checks as a
 * drain, continuing the sequence expectation in *next_seq / *seq_known.  A corrupt
 * record is counted and the next 8-byte slot tried (there is no producer head to
 * resync to).  Returns the events delivered.  For the fuzzer and tests. */
size_t ring_decode_buffer(const uint8_t *buf, size_t len, ring_event_cb cb, void *arg,
    struct ring_reader_stats *st, uint32_t *next_seq, bool *seq_known);

#endif
