/*
 * mprof.c - the legacy mirage-profile buffer reader (see mprof.h for the rules).
 *
 * Everything here works on private copies handed in by the caller: the current poll's
 * copy and our own copy of the previous poll.  The guest cannot change what we parse.
 * All offsets are bounded by the slot they belong to; every loop advances.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mprof.h"

static const uint8_t mprof_uuid[16] = { 0x05, 0x88, 0x3b, 0x8d, 0x52, 0x1a, 0x48, 0x7b, 0xb3, 0x97,
	0x45, 0x6a, 0xb1, 0x50, 0x68, 0x0c };

/* A packet header as found in one copy; only meaningful when ok. */
struct slot {
	bool ok;
	uint16_t count;
	uint32_t start;     /* offset of the slot in the buffer */
	uint32_t len;       /* slot length (bytes) */
	uint32_t content;   /* content end relative to start, header included */
	uint32_t kept_from; /* previous copy only: bytes [kept_from, content) kept */
};

/* A valid packet of the current copy, with its counter extended to 64 bits. */
struct pkt {
	int64_t ext;
	unsigned slot;
};

struct mprof_reader {
	size_t len;
	uint8_t *prev; /* previous poll's copy (ours) */
	struct slot prev_slot[MPROF_N_PACKETS];
	bool have_prev;
	bool slot_bad[MPROF_N_PACKETS]; /* count a bad header once, not every poll */

	/* The packet being read: its extended counter and how far it was emitted. */
	bool have_cur;
	int64_t cur;
	uint32_t cur_off;
	uint64_t cur_events;
	uint32_t torn_at; /* offset whose torn image was already counted */

	uint64_t done_events; /* events in packets read to their end */
	uint32_t seq;
	struct mprof_stats st;
	char err[160];
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void __attribute__((format(printf, 2, 3)))
set_err(struct mprof_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

struct mprof_reader *mprof_reader_new(size_t buf_len)
{
	struct mprof_reader *r;

	if (buf_len < MPROF_MIN_BUF || buf_len > (size_t)MPROF_MAX_PAGES * MPROF_PAGE_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->prev = malloc(buf_len);
	if (!r->prev) {
		free(r);
		return NULL;
	}
	r->len = buf_len;
	return r;
}

void mprof_reader_free(struct mprof_reader *r)
{
	if (!r)
		return;
	free(r->prev);
	free(r);
}

const struct mprof_stats *mprof_reader_stats(const struct mprof_reader *r)
{
	return &r->st;
}

const char *mprof_reader_error(const struct mprof_reader *r)
{
	return r->err;
}

/* The geometry mirage-profile's Control.make uses: len/4 each, the last takes the rest. */
static void slot_geometry(size_t len, unsigned i, uint32_t *start, uint32_t *slen)
{
	size_t ps = len / MPROF_N_PACKETS;

	*start = (uint32_t)(i * ps);
	*slen = (uint32_t)(i == MPROF_N_PACKETS - 1 ? len - i * ps : ps);
}

/* Check one packet header of a copy; NULL if good, else why not. */
static const char *parse_slot(const uint8_t *buf, size_t len, unsigned i, struct slot *s)
{
	const uint8_t *h;
	uint32_t size_bits, content_bits;

	memset(s, 0, sizeof(*s));
	slot_geometry(len, i, &s->start, &s->len);
	h = buf + s->start;
	if (get32(h) != MPROF_MAGIC)
		return "bad magic";
	if (memcmp(h + 4, mprof_uuid, sizeof(mprof_uuid)) != 0)
		return "bad uuid";
	size_bits = get32(h + 20);
	/* The writer stores its own slot length: anything else means a different split. */
	if (size_bits != (uint64_t)s->len * 8)
		return "packet size does not match the slot";
	s->count = get16(h + 24);
	content_bits = (uint32_t)get16(h + 26) | (uint32_t)get16(h + 28) << 16;
	if (content_bits % 8 != 0)
		return "content size not byte-aligned";
	if (content_bits / 8 < MPROF_HDR_SIZE || content_bits > size_bits)
		return "content size outside the packet";
	s->content = content_bits / 8;
	s->ok = true;
	return NULL;
}

/*
 * Order of the first poll: the oldest packet is the one from which every other counter
 * is nearest ahead (smallest span modulo 2^16).  For the 4 consecutive counters an
 * intact buffer holds this is mtv's "first jump by more than 0x8000" rule, and it does
 * not depend on which slot holds the oldest packet.
 */
static uint16_t oldest_counter(const struct slot *s)
{
	unsigned best_span = 0x10000;
	uint16_t best = 0;

	for (unsigned i = 0; i < MPROF_N_PACKETS; i++) {
		unsigned span = 0;

		if (!s[i].ok)
			continue;
		for (unsigned j = 0; j < MPROF_N_PACKETS; j++) {
			unsigned d;

			if (!s[j].ok)
				continue;
			d = (uint16_t)(s[j].count - s[i].count);
			if (d > span)
				span = d;
		}
		if (span < best_span) {
			best_span = span;
			best = s[i].count;
		}
	}
	return best;
}

enum dec {
	DEC_OK,
	DEC_MORE,
	DEC_BAD,
	DEC_UNKNOWN
};

/*
 * Decode the event at buf[off..end) into ev.  DEC_MORE: it does not end before `end`
 * (it may once more bytes are stable).  DEC_BAD / DEC_UNKNOWN: it never will be an
 * event; the packet cannot be resynchronised past it (events carry no length).
 */
static enum dec decode(
    const uint8_t *buf, uint32_t off, uint32_t end, struct mtrace_event *ev, uint32_t *next)
{
	uint32_t p = off + 9, fixed;
	const uint8_t *nul;
	bool has_str = false;

	if (end < p)
		return DEC_MORE;
	memset(ev, 0, sizeof(*ev));
	ev->ts = get64(buf + off);
	ev->op = buf[off + 8];
	switch (ev->op) {
	case MTRACE_OP_CREATES:
		fixed = 17;
		break;
	case MTRACE_OP_READ:
	case MTRACE_OP_FULFILLS:
	case MTRACE_OP_BECOMES:
	case MTRACE_OP_SIGNAL:
	case MTRACE_OP_TRY_READ:
	case MTRACE_OP_READ_LATER:
	case MTRACE_OP_SIGNAL_NEW:
		fixed = 16;
		break;
	case MTRACE_OP_FAILS:
	case MTRACE_OP_INCREASE:
	case MTRACE_OP_COUNTER:
		fixed = 16;
		has_str = true;
		break;
	case MTRACE_OP_LABEL:
		fixed = 8;
		has_str = true;
		break;
	case MTRACE_OP_SWITCH:
	case MTRACE_OP_GC:
		fixed = 8;
		break;
	default:
		return DEC_UNKNOWN;
	}
	if (end - p < fixed)
		return DEC_MORE;
	if (ev->op == MTRACE_OP_GC) {
		/* The GC hook runs outside any thread: its payload is only the duration. */
		ev->thread = MTRACE_THREAD_NONE;
		ev->arg = get64(buf + p);
	} else {
		/* -1 (idle) is already MTRACE_THREAD_NONE as an unsigned 64-bit value. */
		ev->thread = get64(buf + p);
		if (fixed >= 16)
			ev->arg = get64(buf + p + 8);
	}
	if (ev->op == MTRACE_OP_CREATES) {
		uint8_t t = buf[p + 16];

		ev->type = t < MTRACE_TT_COUNT ? t : MTRACE_TT_UNKNOWN;
	}
	p += fixed;
	if (has_str) {
		size_t room = end - p;

		if (room > MTRACE_STR_MAX + 1)
			room = MTRACE_STR_MAX + 1;
		nul = memchr(buf + p, 0, room);
		if (!nul)
			return room == MTRACE_STR_MAX + 1 ? DEC_BAD : DEC_MORE;
		ev->str = (const char *)buf + p;
		ev->str_len = (uint16_t)(nul - (buf + p));
		p += ev->str_len + 1u;
	}
	*next = p;
	return DEC_OK;
}

/* The first offset in [from, to) where the two copies differ, or `to`. */
static uint32_t stable_until(const uint8_t *a, const uint8_t *b, uint32_t from, uint32_t to)
{
	uint32_t i = from;

	/* Compare in chunks with memcmp (fast), then find the byte in the odd chunk. */
	while (i < to) {
		uint32_t n = to - i < 4096 ? to - i : 4096;

		if (memcmp(a + i, b + i, n) != 0) {
			while (a[i] == b[i])
				i++;
			return i;
		}
		i += n;
	}
	return to;
}

/* Average events per packet read to its end; 0 when we have not read one yet. */
static uint64_t avg_events(const struct mprof_reader *r)
{
	return r->st.packets ? (r->done_events + r->st.packets / 2) / r->st.packets : 0;
}

/* We are leaving packet `cur` without having read it to its end. */
static void abandon_unread(struct mprof_reader *r)
{
	uint64_t avg = avg_events(r);

	if (r->cur_events == 0 && r->cur_off == MPROF_HDR_SIZE) {
		r->st.lost_packets++;
		r->st.lost += avg;
	} else {
		r->st.truncated++;
		if (avg > r->cur_events)
			r->st.lost += avg - r->cur_events;
	}
}

static void next_packet(struct mprof_reader *r, int64_t ext)
{
	r->cur = ext;
	r->cur_off = MPROF_HDR_SIZE;
	r->cur_events = 0;
	r->torn_at = 0;
}

enum pkt_state {
	PKT_WAIT,
	PKT_DONE,
	PKT_ABANDONED
};

/*
 * Emit what is stable of the current packet (slot s of copy).  PKT_DONE: read to its
 * final end; PKT_ABANDONED: a bad event, the rest cannot be parsed; PKT_WAIT: more later.
 */
static enum pkt_state emit_packet(struct mprof_reader *r, const uint8_t *copy, const struct slot *s,
    const struct slot *ps, bool sealed, ring_event_cb cb, void *arg, size_t *emitted)
{
	const uint8_t *cur = copy + s->start, *old = r->prev + s->start;
	uint32_t limit, stable;
	struct mtrace_event ev;

	/* Same slot, same counter in the previous copy: the same packet, seen twice. */
	if (!ps->ok || ps->count != s->count || r->cur_off < ps->kept_from)
		return PKT_WAIT;
	limit = s->content < ps->content ? s->content : ps->content;
	if (limit <= r->cur_off)
		goto end;
	stable = stable_until(cur, old, r->cur_off, limit);

	while (r->cur_off < stable) {
		uint32_t next = 0;

		switch (decode(cur, r->cur_off, stable, &ev, &next)) {
		case DEC_OK:
			ev.seq = r->seq++;
			cb(&ev, arg);
			r->st.events++;
			r->cur_events++;
			(*emitted)++;
			r->cur_off = next;
			continue;
		case DEC_MORE:
			/* The copies disagree inside content_size: the previous one caught an
			 * event being written.  Wait for it to settle; count the image once. */
			if (stable < limit && r->torn_at != r->cur_off) {
				r->torn_at = r->cur_off;
				r->st.torn++;
			}
			goto end;
		case DEC_UNKNOWN:
			r->st.unknown++;
			set_err(r, "packet %u: unknown op %u at offset %u; rest of packet skipped",
			    s->count, cur[r->cur_off + 8], r->cur_off);
			return PKT_ABANDONED;
		case DEC_BAD:
			r->st.corrupt++;
			set_err(r, "packet %u: unterminated string at offset %u; rest skipped",
			    s->count, r->cur_off);
			return PKT_ABANDONED;
		}
	}
end:
	/*
	 * A newer packet exists, so the writer left this one and content_size is final once
	 * both copies agree on it.  Bytes left over that do not make an event are an event
	 * cut by content_size: torn.
	 */
	if (sealed && s->content == ps->content &&
	    stable_until(cur, old, r->cur_off, s->content) == s->content) {
		if (r->cur_off < s->content) {
			r->st.torn++;
			set_err(r, "packet %u: %u bytes at its end are not a whole event", s->count,
			    s->content - r->cur_off);
			return PKT_ABANDONED;
		}
		return PKT_DONE;
	}
	return PKT_WAIT;
}

/*
 * Whether the writer has left packet p[i]: a newer packet holds an event.  A newer
 * packet with no event does not count: the 4 initial packets get counters 0..3 before
 * any is written, and a packet is cleared just before its first event is added.
 */
static bool newer_has_events(const struct slot *s, const struct pkt *p, unsigned i, unsigned n)
{
	for (unsigned j = i + 1; j < n; j++)
		if (s[p[j].slot].content > MPROF_HDR_SIZE)
			return true;
	return false;
}

/*
 * Keep, for the next poll's comparison, only the bytes not emitted yet: from the read
 * position of the packet being read, and whole newer packets.  On a live buffer that
 * is most of it, but a still or slow one costs a fraction of a full copy.  Slots not
 * kept are marked not ok, so they are never compared against stale bytes.
 */
static void keep_unread(struct mprof_reader *r, const uint8_t *copy, const struct slot *s,
    const struct pkt *p, unsigned n)
{
	for (unsigned i = 0; i < MPROF_N_PACKETS; i++)
		r->prev_slot[i].ok = false;
	for (unsigned k = 0; k < n && r->have_cur; k++) {
		const struct slot *sl = &s[p[k].slot];
		struct slot *keep = &r->prev_slot[p[k].slot];
		uint32_t from = MPROF_HDR_SIZE;

		if (p[k].ext < r->cur)
			continue; /* read already: never compared again */
		if (p[k].ext == r->cur && r->cur_off > from)
			from = r->cur_off < sl->content ? r->cur_off : sl->content;
		*keep = *sl;
		keep->kept_from = from;
		memcpy(r->prev + sl->start + from, copy + sl->start + from, sl->content - from);
	}
}

size_t mprof_reader_poll(
    struct mprof_reader *r, const uint8_t *copy, size_t len, ring_event_cb cb, void *arg)
{
	struct slot s[MPROF_N_PACKETS];
	struct pkt p[MPROF_N_PACKETS];
	unsigned n = 0;
	size_t emitted = 0;
	enum pkt_state ps;

	r->st.polls++;
	if (len != r->len) {
		r->st.corrupt++;
		set_err(r, "buffer of %zu bytes, expected %zu", len, r->len);
		return 0;
	}

	for (unsigned i = 0; i < MPROF_N_PACKETS; i++) {
		const char *why = parse_slot(copy, len, i, &s[i]);

		for (unsigned j = 0; why == NULL && j < i; j++)
			if (s[j].ok && s[j].count == s[i].count)
				why = "counter repeated in another packet";
		if (why) {
			s[i].ok = false;
			if (!r->slot_bad[i]) {
				r->st.corrupt++;
				set_err(r, "packet %u: %s", i, why);
			}
		}
		r->slot_bad[i] = why != NULL;
	}

	/* Extend the counters relative to the packet being read (the first poll: to the
	 * oldest one) and sort; 4 entries, insertion sort. */
	if (r->have_cur) {
		int64_t newest = INT64_MIN;

		for (unsigned i = 0; i < MPROF_N_PACKETS; i++)
			if (s[i].ok) {
				int64_t e =
				    r->cur + (int16_t)(uint16_t)(s[i].count - (uint16_t)r->cur);
				newest = e > newest ? e : newest;
			}
		/* Counters behind the one we read: the guest restarted its buffer. */
		if (newest != INT64_MIN && newest < r->cur) {
			r->have_cur = false;
			r->st.resyncs++;
			set_err(r, "packet counters went backwards; reading restarted");
		}
	}
	for (unsigned i = 0; i < MPROF_N_PACKETS; i++) {
		int64_t e;
		unsigned k;

		if (!s[i].ok)
			continue;
		if (r->have_cur)
			e = r->cur + (int16_t)(uint16_t)(s[i].count - (uint16_t)r->cur);
		else
			e = 0x10000 + (uint16_t)(s[i].count - oldest_counter(s));
		for (k = n; k > 0 && p[k - 1].ext > e; k--)
			p[k] = p[k - 1];
		p[k].ext = e;
		p[k].slot = i;
		n++;
	}
	if (!r->have_cur && n > 0) {
		r->have_cur = true;
		next_packet(r, p[0].ext);
	}

	for (unsigned i = 0; i < n && r->have_prev; i++) {
		if (p[i].ext < r->cur)
			continue; /* read already, or lost already */
		if (p[i].ext > r->cur) {
			/* The packet we were reading is gone, and so are any between. */
			abandon_unread(r);
			for (int64_t gap = p[i].ext - r->cur - 1; gap > 0; gap--) {
				r->st.lost_packets++;
				r->st.lost += avg_events(r);
			}
			next_packet(r, p[i].ext);
		}
		ps = emit_packet(r, copy, &s[p[i].slot], &r->prev_slot[p[i].slot],
		    newer_has_events(s, p, i, n), cb, arg, &emitted);
		if (ps == PKT_WAIT)
			break;
		/* Only whole packets feed the loss estimate's average. */
		if (ps == PKT_DONE) {
			r->st.packets++;
			r->done_events += r->cur_events;
		}
		next_packet(r, r->cur + 1);
	}

	keep_unread(r, copy, s, p, n);
	r->have_prev = true;
	return emitted;
}

int mprof_parse_refs(
    const char *val, size_t len, uint32_t *refs, unsigned max, char *err, size_t errlen)
{
	unsigned n = 0;
	size_t i = 0;

	if (max > MPROF_MAX_PAGES)
		max = MPROF_MAX_PAGES;
	if (!val || len == 0) {
		snprintf(err, errlen, "empty ref list");
		return -1;
	}
	while (i < len) {
		uint64_t v = 0;
		size_t start = i;

		while (i < len && val[i] >= '0' && val[i] <= '9') {
			v = v * 10 + (uint64_t)(val[i] - '0');
			if (v > UINT32_MAX) {
				snprintf(err, errlen, "ref %u out of range", n + 1);
				return -1;
			}
			i++;
		}
		if (i == start) {
			if (i < len && val[i] != ',')
				snprintf(err, errlen, "unexpected byte 0x%02x at %zu",
				    (uint8_t)val[i], i);
			else
				snprintf(err, errlen, "empty ref at %zu", i);
			return -1;
		}
		/* One spelling per number, as the guest's string_of_int writes it. */
		if (val[start] == '0' && i - start > 1) {
			snprintf(err, errlen, "leading zero in ref %u", n + 1);
			return -1;
		}
		if (n == max) {
			snprintf(err, errlen, "more than %u refs", max);
			return -1;
		}
		for (unsigned j = 0; j < n; j++)
			if (refs[j] == v) {
				snprintf(err, errlen, "ref %" PRIu64 " listed twice", v);
				return -1;
			}
		refs[n++] = (uint32_t)v;
		if (i == len)
			break;
		if (val[i] != ',') {
			snprintf(err, errlen, "unexpected byte 0x%02x at %zu", (uint8_t)val[i], i);
			return -1;
		}
		if (++i == len) {
			snprintf(err, errlen, "trailing comma");
			return -1;
		}
	}
	return (int)n;
}
