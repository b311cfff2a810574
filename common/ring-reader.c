/*
 * ring-reader.c - dom0's checked decoder of one mtrace ring.
 *
 * The guest can write anything into the header and data pages at any moment, so:
 * the header is copied once at attach; on each drain round head and tail are loaded
 * once, checked, the window is copied once into a private buffer, and only that copy
 * is parsed.  The producer stores its new tail before it overwrites bytes (a release
 * store + fence, docs/ring-protocol.md "Producer"), so after copying we fence and
 * re-load the tail: everything below it may have been overwritten under us and is
 * discarded, everything at or above it was intact while we copied.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "ring-reader.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mtrace rings are little-endian; this reader copies fields without swapping"
#endif

/* Copy window: large enough to amortise the fences (512 records), small enough that
 * the copy is still in L1 when parse() reads it (64 KiB, as before, was not). */
#define RING_CHUNK RING_READER_WINDOW_BYTES
/* Seqlock reads of a TSC ring's time block per drain before keeping the old copy. */
#define TIME_TRIES 4
/* Copy rounds per drain: a producer lapping us forever must not keep us here. */
#define RING_MAX_ROUNDS 64

_Static_assert(RING_CHUNK >= 2 * MTRACE_REC_MAX, "a chunk holds a whole record");
_Static_assert(RING_READER_WINDOW_EVENTS == RING_CHUNK / MTRACE_REC_CREATES_SITE * 2 &&
        RING_READER_WINDOW_EVENTS >= RING_CHUNK / MTRACE_REC_FIXED,
    "events a window holds");

struct ring_reader {
	struct mtrace_ring_hdr *hdr; /* mapped, guest-writable */
	const uint8_t *data;         /* mapped, guest-writable */
	uint64_t size;               /* from our validated copy, never re-read */
	uint64_t mask;
	uint64_t pos; /* next record boundary we expect */
	uint32_t next_seq;
	bool seq_known;
	bool stalled;      /* last drain stopped on impossible indexes */
	bool tsc;          /* convert ticks with `time` */
	uint32_t time_seq; /* seq of the block we hold */
	uint64_t time_updates, time_retries;
	struct mtrace_time_info time; /* private copy of the header's time block */
	struct ring_reader_info info;
	struct ring_reader_stats st;
	/* the private copy, and a record header's worth past its end that parse may read
	 * (never use) after a window's last record */
	uint8_t buf[RING_CHUNK + MTRACE_REC_ALIGN];
};

static void __attribute__((format(printf, 3, 4)))
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Validate a private copy of the header; returns 0 or an errno value. */
static int hdr_check(const struct mtrace_ring_hdr *h, uint32_t data_pages, char *err, size_t errlen)
{
	if (h->magic != MTRACE_RING_MAGIC) {
		if (h->magic == __builtin_bswap32(MTRACE_RING_MAGIC))
			set_err(err, errlen, "ring header is big-endian");
		else
			set_err(err, errlen, "bad ring magic 0x%08x", h->magic);
		return EPROTO;
	}
	if (h->version < MTRACE_RING_VERSION_MIN || h->version > MTRACE_RING_VERSION) {
		set_err(err, errlen, "unsupported ring version %u", h->version);
		return EPROTO;
	}
	if (h->hdr_size != sizeof(struct mtrace_ring_hdr)) {
		set_err(err, errlen, "bad header size %u", h->hdr_size);
		return EPROTO;
	}
	if (h->data_pages < MTRACE_RING_MIN_PAGES || h->data_pages > MTRACE_RING_MAX_PAGES ||
	    (h->data_pages & (h->data_pages - 1)) != 0 || h->data_pages > MTRACE_HDR_REFS_MAX) {
		set_err(err, errlen, "bad data page count %u", h->data_pages);
		return EPROTO;
	}
	if (h->data_pages != data_pages) {
		set_err(err, errlen, "header has %u data pages, xenstore said %u", h->data_pages,
		    data_pages);
		return EPROTO;
	}
	if (h->clock < MTRACE_CLOCK_MONOTONIC || h->clock > MTRACE_CLOCK_TSC ||
	    (h->clock == MTRACE_CLOCK_TSC && h->version < 2)) {
		set_err(err, errlen, "unknown clock %u", h->clock);
		return EPROTO;
	}
	/* The block's other fields may change at any time; its timeline may not. */
	if (h->clock == MTRACE_CLOCK_TSC && h->time.timeline != MTRACE_CLOCK_MONOTONIC &&
	    h->time.timeline != MTRACE_CLOCK_XEN) {
		set_err(err, errlen, "TSC ring with unknown timeline %u", h->time.timeline);
		return EPROTO;
	}
	if (memchr(h->name, 0, sizeof(h->name)) == NULL) {
		set_err(err, errlen, "producer name not terminated");
		return EPROTO;
	}
	return 0;
}

static bool pages_ok(uint32_t data_pages)
{
	return data_pages >= MTRACE_RING_MIN_PAGES && data_pages <= MTRACE_RING_MAX_PAGES &&
	    (data_pages & (data_pages - 1)) == 0;
}

int ring_hdr_copy(const void *hdr_page, uint32_t data_pages, struct mtrace_ring_hdr *h,
    uint32_t *refs, char *err, size_t errlen)
{
	int e;

	if (hdr_page == NULL || h == NULL || !pages_ok(data_pages)) {
		set_err(err, errlen, "bad arguments");
		errno = EINVAL;
		return -1;
	}
	memcpy(h, hdr_page, sizeof(*h));
	if ((e = hdr_check(h, data_pages, err, errlen)) != 0) {
		errno = e;
		return -1;
	}
	/* Refs are copied once; the guest may change them afterwards, we do not look again. */
	if (refs != NULL)
		memcpy(refs, (const uint8_t *)hdr_page + sizeof(*h), data_pages * sizeof(uint32_t));
	return 0;
}

struct ring_reader *ring_reader_attach_copy(void *hdr, const struct mtrace_ring_hdr *copy,
    const void *data, uint32_t data_pages, char *err, size_t errlen)
{
	struct ring_reader *r;
	const struct mtrace_ring_hdr h = *copy;

	if (hdr == NULL || data == NULL || !pages_ok(data_pages) || h.data_pages != data_pages) {
		set_err(err, errlen, "bad arguments");
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	r->hdr = hdr;
	r->data = data;
	r->size = (uint64_t)data_pages * MTRACE_PAGE_SIZE;
	r->mask = r->size - 1;
	r->info.data_pages = h.data_pages;
	r->info.source_clock = h.clock;
	r->info.clock = h.clock;
	if (h.clock == MTRACE_CLOCK_TSC) {
		r->tsc = true;
		r->info.clock = h.time.timeline;
		r->time = h.time;
		/* A block copied mid-update is refreshed at the first drain (UINT32_MAX is odd:
		 * it never matches). */
		r->time_seq = (h.time.seq & 1) ? UINT32_MAX : h.time.seq;
	}
	r->info.ring_index = h.ring_index;
	/* The name reaches logs and clients: keep it printable. */
	for (size_t i = 0; i < sizeof(h.name) && h.name[i] != '\0'; i++) {
		unsigned char c = (unsigned char)h.name[i];
		r->info.name[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	/*
	 * Start at the oldest record the producer still has.  A garbage tail is caught by
	 * the first drain (a misaligned or impossible position is never used to copy).
	 */
	r->pos = __atomic_load_n(&r->hdr->tail, __ATOMIC_ACQUIRE) & ~(uint64_t)7;
	/* Ask to be woken at the next record: also tells the guest someone is reading. */
	__atomic_store_n(&r->hdr->req_event, r->pos + 1, __ATOMIC_RELAXED);
	return r;
}

void ring_reader_free(struct ring_reader *r)
{
	free(r);
}

const struct ring_reader_info *ring_reader_info(const struct ring_reader *r)
{
	return &r->info;
}

const struct ring_reader_stats *ring_reader_stats(const struct ring_reader *r)
{
	return &r->st;
}

uint64_t ring_reader_time_updates(const struct ring_reader *r)
{
	return r->time_updates;
}

uint64_t ring_reader_time_retries(const struct ring_reader *r)
{
	return r->time_retries;
}

/*
 * Copy the guest's time block if it changed (seqlock: an even seq, the same before and
 * after the copy).  A guest that keeps it odd or rewrites it under us gets its previous
 * block: bounded work, and only its own timestamps can suffer.
 */
static void time_refresh(struct ring_reader *r)
{
	struct mtrace_time_info *src = &r->hdr->time;

	for (int i = 0; i < TIME_TRIES; i++) {
		uint32_t s1 = __atomic_load_n(&src->seq, __ATOMIC_ACQUIRE), s2;
		struct mtrace_time_info t;

		if (s1 == r->time_seq)
			return;
		if (s1 & 1)
			continue;
		t.tsc_timestamp = __atomic_load_n(&src->tsc_timestamp, __ATOMIC_RELAXED);
		t.system_time = __atomic_load_n(&src->system_time, __ATOMIC_RELAXED);
		t.tsc_to_system_mul = __atomic_load_n(&src->tsc_to_system_mul, __ATOMIC_RELAXED);
		t.tsc_shift = __atomic_load_n(&src->tsc_shift, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&src->seq, __ATOMIC_RELAXED);
		if (s1 != s2)
			continue;
		r->time.tsc_timestamp = t.tsc_timestamp;
		r->time.system_time = t.system_time;
		r->time.tsc_to_system_mul = t.tsc_to_system_mul;
		r->time.tsc_shift = t.tsc_shift;
		r->time_seq = s1;
		r->time_updates++;
		return;
	}
	r->time_retries++;
}

enum parse_end {
	PARSE_DONE,    /* consumed everything, or the budget ran out */
	PARSE_PARTIAL, /* a record runs past the end of an incomplete window */
	PARSE_CORRUPT, /* a record failed a check; *consumed stops before it */
};

/* Sequence accounting: gaps are events the producer wrote that we never saw.  The
 * caller has found seq is not the one expected (or none is expected yet). */
static void seq_gap(uint32_t seq, struct ring_reader_stats *st, uint32_t next_seq, bool seq_known)
{
	if (!seq_known) {
		/* Numbering starts at 0 per ring: whatever came before our first record is lost. */
		st->lost += seq;
	} else {
		uint32_t gap = seq - next_seq;
		if (gap < 0x80000000u)
			st->lost += gap;
		else
			st->corrupt++; /* went backwards: a broken producer; the event is still whole */
	}
}

/*
 * Where the first NUL of a record's string part is (SIZE_MAX: none).  len is a
 * multiple of 8 (records are), so whole words are read: strings are mostly a word or
 * two, where memchr's call and set-up cost more than the scan.  The lowest byte the
 * test flags is always a real zero (only bytes above a zero can be flagged falsely).
 */
static inline size_t str_nul(const uint8_t *s, size_t len)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w, z;

		memcpy(&w, s + i, sizeof(w));
		z = (w - 0x0101010101010101u) & ~w & 0x8080808080808080u;
		if (z)
			return i + (size_t)(__builtin_ctzll(z) >> 3);
	}
	return SIZE_MAX;
#else
	/* the lowest flagged byte is the first in memory only on little-endian */
	const uint8_t *nul = memchr(s, 0, len);
	return nul ? (size_t)(nul - s) : SIZE_MAX;
#endif
}

_Static_assert(MTRACE_REC_FIXED % 8 == 0 && MTRACE_REC_ALIGN % 8 == 0,
    "a record's string part is whole words");

/* A record whose length is a multiple of 8 in [MTRACE_REC_FIXED, MTRACE_REC_MAX]
 * (every event record an honest producer writes), in one compare: rotated right by
 * 3, a length off the 8-byte grid has a top bit set. */
static inline bool rec_len_fixed_ok(uint16_t rlen)
{
	uint16_t x = (uint16_t)(rlen - MTRACE_REC_FIXED);

	x = (uint16_t)((x >> 3) | (x << 13));
	return x <= (MTRACE_REC_MAX - MTRACE_REC_FIXED) / MTRACE_REC_ALIGN;
}

/* struct mtrace_event begins as a record does, with str_len where the record has its
 * length: parse copies a record's fixed part into an event whole. */
_Static_assert(offsetof(struct mtrace_event, str_len) == offsetof(struct mtrace_rec, len) &&
        offsetof(struct mtrace_event, op) == offsetof(struct mtrace_rec, op) &&
        offsetof(struct mtrace_event, type) == offsetof(struct mtrace_rec, type) &&
        offsetof(struct mtrace_event, seq) == offsetof(struct mtrace_rec, seq) &&
        offsetof(struct mtrace_event, ts) == offsetof(struct mtrace_rec, ts) &&
        offsetof(struct mtrace_event, thread) == offsetof(struct mtrace_rec, thread) &&
        offsetof(struct mtrace_event, arg) == offsetof(struct mtrace_rec, arg) &&
        offsetof(struct mtrace_event, str) == MTRACE_REC_FIXED,
    "an event's first bytes are a record's fixed part");

/* The sequence number expected next while none is (no 32-bit seq equals it). */
#define SEQ_UNKNOWN ((uint64_t)1 << 32)

/*
 * Parse [buf, buf+len), a private copy starting at a record boundary.  complete: the
 * window ends at the producer's head, so a record running past the end is corrupt
 * rather than "continued in the next chunk".  A record is checked once, in the order
 * below; an event record of a sound length passes it with one compare for its length,
 * one against what is left and one for its op, and is copied into out[] as it is.
 * The sequence expectation is kept in a local: this loop runs per record.  slack: the
 * buffer has MTRACE_REC_ALIGN readable bytes past its end (the reader's copy), so a
 * record's first word is read before what is left is looked at: less than a word left
 * fails the length compare, and the rare path sorts it out.
 */
static inline __attribute__((always_inline)) size_t parse_body(const uint8_t *buf, size_t len,
    bool complete, size_t budget, struct mtrace_event *out, struct ring_reader_stats *st,
    uint32_t *next_seq, bool *seq_known, const struct mtrace_time_info *time, size_t *consumed,
    enum parse_end *end, bool slack)
{
	const uint8_t *p = buf, *stop = buf + len;
	struct mtrace_event *ev = out, *ev_end = out + budget;
	uint64_t nseq = *seq_known ? *next_seq : SEQ_UNKNOWN;
	size_t n;

	*end = PARSE_DONE;
	while (ev < ev_end) {
		size_t rem = (size_t)(stop - p);
		uint32_t seq;
		uint16_t rlen;
		uint8_t op, fl;

		if (!slack && rem < MTRACE_REC_ALIGN) {
			if (rem != 0)
				*end = complete ? PARSE_CORRUPT : PARSE_PARTIAL;
			break;
		}
		/* the record's first word, a field at a time: loads, where one load of the
		 * word took shifts and moves to split */
		memcpy(&rlen, p, sizeof(rlen));
		op = p[2];
		memcpy(&seq, p + 4, sizeof(seq));
		fl = mtrace_op_flags[op];
		if (__builtin_expect(
		        !rec_len_fixed_ok(rlen) || rlen > rem || !(fl & MTRACE_OPF_EVENT), 0)) {
			/* with slack, the word may be past the end: a length of at least
			 * MTRACE_REC_FIXED failed the compare with rem */
			if (slack && rem < MTRACE_REC_ALIGN) {
				if (rem != 0)
					*end = complete ? PARSE_CORRUPT : PARSE_PARTIAL;
				break;
			}
			/* one compare for MTRACE_REC_ALIGN <= rlen <= MTRACE_REC_MAX */
			if ((uint16_t)(rlen - MTRACE_REC_ALIGN) >
			        MTRACE_REC_MAX - MTRACE_REC_ALIGN ||
			    rlen % MTRACE_REC_ALIGN != 0) {
				*end = PARSE_CORRUPT;
				break;
			}
			if (rlen > rem) {
				*end = complete ? PARSE_CORRUPT : PARSE_PARTIAL;
				break;
			}
			if (op == MTRACE_OP_PAD) {
				p += rlen;
				continue;
			}
			if (rlen < MTRACE_REC_FIXED) {
				*end = PARSE_CORRUPT;
				break;
			}
			/* Unknown ops still consume a sequence number: they are events of a
			 * newer producer. */
			if (seq != nseq)
				seq_gap(seq, st, (uint32_t)nseq, nseq != SEQ_UNKNOWN);
			nseq = (uint32_t)(seq + 1);
			st->unknown++;
			p += rlen;
			continue;
		}
		memcpy(ev, p, MTRACE_REC_FIXED);
		ev->str_len = 0;
		ev->str = NULL;
		if (__builtin_expect(fl & MTRACE_OPF_STR, 0)) {
			size_t slen = str_nul(p + MTRACE_REC_FIXED, rlen - MTRACE_REC_FIXED);
			if (slen == SIZE_MAX) {
				*end = PARSE_CORRUPT;
				break;
			}
			ev->str = (const char *)p + MTRACE_REC_FIXED;
			ev->str_len = (uint16_t)slen;
		}
		if (__builtin_expect(seq != nseq, 0))
			seq_gap(seq, st, (uint32_t)nseq, nseq != SEQ_UNKNOWN);
		nseq = (uint32_t)(seq + 1);
		if (time != NULL)
			ev->ts = mtrace_time_convert(time, ev->ts);
		if (op == MTRACE_OP_CREATES && rlen >= MTRACE_REC_CREATES_SITE) {
			/* the child's creation site, carried by the CREATES: a SITE event */
			struct mtrace_site_ext ext;
			struct mtrace_event *site = ev + 1;

			memcpy(&ext, p + MTRACE_REC_FIXED, sizeof(ext));
			/* out[] has room for one past budget (the callers' arrays): the pair
			 * is never split, and a drain may deliver one event past its budget */
			*site = *ev;
			site->op = MTRACE_OP_SITE;
			site->type = ext.kind;
			site->thread = ev->arg;
			site->arg = ext.site;
			ev++;
		}
		ev++;
		p += rlen;
	}
	n = (size_t)(ev - out);
	if (nseq != SEQ_UNKNOWN) {
		*next_seq = (uint32_t)nseq;
		*seq_known = true;
	}
	*consumed = (size_t)(p - buf);
	st->events += n;
	st->bytes += *consumed;
	return n;
}

/* parse_body for a ring of ns timestamps and for a TSC ring, in the reader's copy
 * (slack): the first without the conversion's test per event. */
static size_t parse(const uint8_t *buf, size_t len, bool complete, size_t budget,
    struct mtrace_event *out, struct ring_reader_stats *st, uint32_t *next_seq, bool *seq_known,
    const struct mtrace_time_info *time, size_t *consumed, enum parse_end *end)
{
	if (time == NULL)
		return parse_body(buf, len, complete, budget, out, st, next_seq, seq_known, NULL,
		    consumed, end, true);
	return parse_body(
	    buf, len, complete, budget, out, st, next_seq, seq_known, time, consumed, end, true);
}

size_t ring_decode_buffer(const uint8_t *buf, size_t len, ring_event_cb cb, void *arg,
    struct ring_reader_stats *st, uint32_t *next_seq, bool *seq_known)
{
	size_t total = 0, off = 0, consumed;
	enum parse_end end;

	struct mtrace_event ev[64 + 1]; /* + a CREATES' SITE past the 64 */

	/* Standalone buffers have no producer to resync with: skip a corrupt record's
	 * 8-byte slot and look for the next plausible boundary, so every byte is tried. */
	while (off < len) {
		/* the caller's buffer: nothing readable past its end */
		size_t n = parse_body(buf + off, len - off, true, 64, ev, st, next_seq, seq_known,
		    NULL, &consumed, &end, false);
		for (size_t i = 0; i < n; i++)
			cb(&ev[i], arg);
		total += n;
		off += consumed;
		if (n >= 64 && end == PARSE_DONE && off < len)
			continue; /* the array was full, not the buffer done */
		if (end != PARSE_CORRUPT)
			break;
		st->corrupt++;
		off += MTRACE_REC_ALIGN;
	}
	return total;
}

/* Copy ring bytes [from, to) (to - from <= RING_CHUNK <= size) in at most two pieces. */
static void copy_window(struct ring_reader *r, uint64_t from, uint64_t to)
{
	uint64_t off = from & r->mask, n = to - from;
	uint64_t first = r->size - off < n ? r->size - off : n;

	copy_bytes(r->buf, r->data + off, first);
	if (first < n)
		copy_bytes(r->buf + first, r->data, n - first);
}

size_t ring_reader_drain_batch(struct ring_reader *r, size_t budget, struct mtrace_event *ev,
    size_t cap, ring_batch_cb cb, void *arg, bool *more)
{
	size_t delivered = 0;
	bool more_data = false;

	if (cap < 2)
		return 0;
	r->stalled = false;
	if (r->tsc)
		time_refresh(r);
	for (int round = 0; delivered < budget; round++) {
		uint64_t t1, h, t2, start, cstart, cend, begin;
		size_t consumed;
		enum parse_end end;

		if (round == RING_MAX_ROUNDS) {
			more_data = true;
			break;
		}
		/* Tail before head: for an honest producer t1 <= h then always holds. */
		t1 = __atomic_load_n(&r->hdr->tail, __ATOMIC_ACQUIRE);
		h = __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE);
		if ((t1 | h) % MTRACE_REC_ALIGN != 0 || t1 > h) {
			r->st.corrupt++;
			r->stalled = true;
			break;
		}
		if (h < r->pos) {
			/* Head went backwards: nothing we hold is meaningful; restart at its tail. */
			r->st.corrupt++;
			r->st.resyncs++;
			r->pos = t1;
			break;
		}
		start = r->pos > t1 ? r->pos : t1; /* below t1 is already gone */
		if (start == h)
			break; /* caught up */
		cstart = h - start > r->size ? h - r->size : start;
		cend = h - cstart > RING_CHUNK ? cstart + RING_CHUNK : h;
		copy_window(r, cstart, cend);
		/* Order the copy before the re-load (pairs with the producer's tail-then-bytes). */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		t2 = __atomic_load_n(&r->hdr->tail, __ATOMIC_RELAXED);
		if (t2 % MTRACE_REC_ALIGN != 0 || t2 < t1) {
			r->st.corrupt++;
			r->stalled = true;
			break;
		}
		begin = start > t2 ? start : t2;
		if (begin < cstart) {
			/* An honest tail is >= head - size; this one points at bytes we never
			 * copied.  Give up on the window and start again at the head. */
			r->st.corrupt++;
			r->st.resyncs++;
			r->pos = h;
			break;
		}
		if (begin >= cend) {
			r->pos = begin; /* the producer lapped the whole chunk; seq gaps count it */
			continue;
		}
		/* The private copy stays consistent: parse it in arrays of up to cap events,
		 * each handed over while its strings (pointers into the copy) are valid. */
		for (;;) {
			/* cap - 1: room for a CREATES' SITE event past want */
			size_t want = budget - delivered < cap - 1 ? budget - delivered : cap - 1;
			size_t n = parse(r->buf + (begin - cstart), cend - begin, cend == h, want,
			    ev, &r->st, &r->next_seq, &r->seq_known, r->tsc ? &r->time : NULL,
			    &consumed, &end);
			begin += consumed;
			r->pos = begin;
			if (n)
				cb(ev, n, arg);
			delivered += n;
			if (n < want || end != PARSE_DONE || begin == cend || delivered >= budget)
				break;
		}
		if (end == PARSE_CORRUPT) {
			/* The head is a record boundary: resume there; skipped events show up
			 * as a sequence gap (lost) at the next record. */
			r->st.corrupt++;
			r->st.resyncs++;
			r->pos = h;
			break;
		}
		if (delivered >= budget) {
			more_data = r->pos < h;
			break;
		}
	}
	__atomic_store_n(&r->hdr->reader_pos, r->pos, __ATOMIC_RELAXED);
	if (more != NULL)
		*more = more_data;
	return delivered;
}

struct one_by_one {
	ring_event_cb cb;
	void *arg;
};

static void one_by_one(const struct mtrace_event *ev, size_t n, void *arg)
{
	const struct one_by_one *o = arg;

	for (size_t i = 0; i < n; i++)
		o->cb(&ev[i], o->arg);
}

size_t ring_reader_drain(
    struct ring_reader *r, size_t budget, ring_event_cb cb, void *arg, bool *more)
{
	struct mtrace_event ev[128];
	struct one_by_one o = { cb, arg };

	return ring_reader_drain_batch(r, budget, ev, 128, one_by_one, &o, more);
}

bool ring_reader_request_wakeup(struct ring_reader *r, uint64_t bytes_ahead)
{
	uint64_t want = r->pos + bytes_ahead, h;

	/* The producer notifies when a publish moves head from below want+1 to at least it. */
	__atomic_store_n(&r->hdr->req_event, want + 1, __ATOMIC_RELAXED);
	/* Store req_event before re-reading head (Xen's public/io/ring.h, RING_FINAL_CHECK_FOR_REQUESTS); the producer
	 * side has no matching full barrier, so a wake-up can still be missed: the
	 * daemon's periodic drain covers that window. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	h = __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE);
	/* Indexes we could not use last time: "data waiting" would only make the caller
	 * spin on a hostile ring; it waits for the next kick or periodic drain instead. */
	return !r->stalled && h > want && h % MTRACE_REC_ALIGN == 0;
}

uint64_t ring_reader_position(const struct ring_reader *r)
{
	return r->pos;
}
