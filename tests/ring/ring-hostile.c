/*
 * ring-hostile.c - test-ring's cases on what a guest may write wrong: hostile bytes and
 * indexes (corrupt), bad headers, truncated streams, strings whatever surrounds their
 * NUL, and the decoder's sequence accounting on records built by hand.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "check.h"
#include "mtrace-guest.h"
#include "ring-reader.h"
#include "ring-test.h"

/* ---- corrupt: hostile bytes and indexes never crash, are counted, and we recover ---- */
static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void)
{
	return check_xorshift(&rng);
}

static void write_raw(struct mem *m, uint64_t pos, const void *p, size_t n)
{
	uint64_t size = (uint64_t)m->pages * MTRACE_PAGE_SIZE;
	for (size_t i = 0; i < n; i++)
		m->data[(pos + i) & (size - 1)] = ((const uint8_t *)p)[i];
}

void t_corrupt(void)
{
	struct mem m;
	struct mtrace_ring r;
	struct coll c = { 0 };
	const struct ring_reader_stats *st;
	struct mtrace_rec rec;

	/* 1. Random data and random indexes, thousands of times: no crash, no hang. */
	mem_init(&m, 2);
	mtrace_ring_init_local(&r, m.hdr, m.data, 2, 0, 0, "c");
	struct ring_reader *rd = attach(&m);
	for (int it = 0; it < 20000; it++) {
		uint64_t x = xorshift();
		for (unsigned i = 0; i < 64; i++)
			m.data[xorshift() % (2 * MTRACE_PAGE_SIZE)] = (uint8_t)xorshift();
		if (it % 3 == 0) {
			/* plausible-looking records */
			rec.len = (uint16_t)(8 * (xorshift() % 20));
			rec.op = (uint8_t)(xorshift() % 70);
			write_raw(&m, xorshift() & ~7ull, &rec, 4);
		}
		switch (x % 6) {
		case 0:
			m.hdr->head = xorshift();
			m.hdr->tail = xorshift();
			break;
		case 1:
			m.hdr->head += 8 * (xorshift() % 2048);
			break;
		case 2:
			m.hdr->tail = m.hdr->head - 8 * (xorshift() % 4096);
			break;
		case 3:
			m.hdr->head -= 8 * (xorshift() % 64);
			break;
		case 4:
			m.hdr->head = (m.hdr->head & ~7ull) + 8 * (xorshift() % 512);
			m.hdr->tail = m.hdr->head - 8 * (xorshift() % 1024);
			break;
		default:
			m.hdr->head |= 4;
			break;
		}
		bool more;
		ring_reader_drain(rd, 1 + xorshift() % 5000, collect, &c, &more);
		coll_reset(&c);
	}
	st = ring_reader_stats(rd);
	CHECK(st->corrupt > 1000, "corrupt %" PRIu64, st->corrupt);
	printf("random: corrupt %" PRIu64 " resyncs %" PRIu64 " events %" PRIu64 " unknown %" PRIu64
	       "\n",
	    st->corrupt, st->resyncs, st->events, st->unknown);
	ring_reader_free(rd);

	/* 2. Precise cases: each bad record is counted, what precedes it delivered, and the
	 * reader resumes with the producer's next records (skipped ones counted lost). */
	struct {
		const char *what;
		uint16_t len;
		uint8_t op;
		bool nul;
	} bad[] = {
		{ "len 0", 0, MTRACE_OP_READ, true },
		{ "len 7", 7, MTRACE_OP_READ, true },
		{ "len 12", 12, MTRACE_OP_READ, true },
		{ "len 24 event", 24, MTRACE_OP_READ, true },
		{ "len > REC_MAX", MTRACE_REC_MAX + 8, MTRACE_OP_READ, true },
		{ "len past head", 512, MTRACE_OP_READ, true },
		{ "label without NUL", 64, MTRACE_OP_LABEL, false },
		{ "label with no room for NUL", 32, MTRACE_OP_LABEL, false },
	};
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		mtrace_ring_init_local(&r, m.hdr, m.data, 2, 0, 0, "c");
		rd = attach(&m);
		coll_reset(&c);
		for (uint32_t s = 0; s < 10; s++)
			emit_seq(&r, s);
		/* forge a record at head, claiming seq 10, then publish 64 bytes */
		uint8_t raw[64];
		memset(raw, bad[b].nul ? 0 : 'z', sizeof(raw));
		memset(&rec, 0, sizeof(rec));
		rec.len = bad[b].len;
		rec.op = bad[b].op;
		rec.seq = 10;
		memcpy(raw, &rec, sizeof(rec));
		if (!bad[b].nul)
			memset(raw + 32, 'z', 32);
		write_raw(&m, r.head, raw, sizeof(raw));
		r.head += 64;
		r.seq = 11;
		m.hdr->head = r.head;
		drain_all(rd, &c);
		st = ring_reader_stats(rd);
		CHECK(c.n == 10 && st->corrupt == 1 && st->resyncs == 1,
		    "%s: delivered %zu corrupt %" PRIu64, bad[b].what, c.n, st->corrupt);
		for (uint32_t s = 11; s < 20; s++)
			emit_seq(&r, s);
		drain_all(rd, &c);
		CHECK(c.n == 19 && c.v[10].e.seq == 11 && check_seq_event(&c.v[18].e, c.v[18].str),
		    "%s: recovered %zu", bad[b].what, c.n);
		CHECK(st->lost == 1, "%s: lost %" PRIu64, bad[b].what, st->lost);
		ring_reader_free(rd);
	}

	/* 3. Unknown but well-formed ops: counted and skipped, not corrupt. */
	mtrace_ring_init_local(&r, m.hdr, m.data, 2, 0, 0, "c");
	rd = attach(&m);
	coll_reset(&c);
	mtrace_read(&r, 1, 2);
	mtrace_emit_ts(&r, 100, 0, 1, 2, 3);
	mtrace_emit_slow(&r, 101, 0, 1, 2, 3, "no NUL needed for unknown ops", 20);
	mtrace_read(&r, 1, 2);
	drain_all(rd, &c);
	st = ring_reader_stats(rd);
	CHECK(c.n == 2 && st->unknown == 2 && st->corrupt == 0 && st->lost == 0,
	    "unknown: n %zu unknown %" PRIu64, c.n, st->unknown);
	ring_reader_free(rd);

	/* 4. Index garbage: misaligned head, tail > head, head backwards, huge jumps. */
	mtrace_ring_init_local(&r, m.hdr, m.data, 2, 0, 0, "c");
	rd = attach(&m);
	coll_reset(&c);
	for (uint32_t s = 0; s < 10; s++)
		emit_seq(&r, s);
	drain_all(rd, &c);
	uint64_t good = m.hdr->head;
	m.hdr->head = good + 4;
	CHECK(ring_reader_drain(rd, 100, collect, &c, NULL) == 0, "misaligned head");
	m.hdr->head = good + 4096 + 4;
	CHECK(ring_reader_drain(rd, 100, collect, &c, NULL) == 0, "misaligned head");
	CHECK(!ring_reader_request_wakeup(rd, 0), "no busy loop on a hostile head");
	m.hdr->head = good;
	m.hdr->tail = good + 64;
	CHECK(ring_reader_drain(rd, 100, collect, &c, NULL) == 0, "tail > head");
	m.hdr->tail = 0;
	m.hdr->head = good - 64;
	CHECK(ring_reader_drain(rd, 100, collect, &c, NULL) == 0, "head backwards");
	st = ring_reader_stats(rd);
	CHECK(st->corrupt == 4 && c.n == 10, "index garbage: corrupt %" PRIu64 " n %zu",
	    st->corrupt, c.n);
	/* head far ahead over stale bytes: copied at most one ring, no crash */
	m.hdr->tail = 0;
	m.hdr->head = 1ull << 40;
	ring_reader_drain(rd, 100000, collect, &c, NULL);
	m.hdr->tail = UINT64_MAX - 7;
	m.hdr->head = UINT64_MAX - 7;
	ring_reader_drain(rd, 100000, collect, &c, NULL);
	ring_reader_free(rd);
	coll_free(&c);
	mem_free(&m);
}

/* ---- header: every bad header is refused at attach with a reason ---- */
void t_header(void)
{
	struct mem m;
	struct mtrace_ring r;
	char err[128];
	uint32_t refs[8];

	mem_init(&m, 4);
#define BAD(what, stmt, pages)                                                        \
	do {                                                                          \
		mtrace_ring_init_local(&r, m.hdr, m.data, 4, 0, 0, "h");              \
		struct mtrace_ring_hdr *h = m.hdr;                                    \
		stmt;                                                                 \
		struct mtrace_ring_hdr hc;                                            \
		errno = 0;                                                            \
		err[0] = 0;                                                           \
		CHECK(ring_hdr_copy(m.hdr, pages, &hc, refs, err, sizeof(err)) < 0 && \
		        (errno == EPROTO || errno == EINVAL) && err[0],               \
		    "%s: accepted (errno %d)", what, errno);                          \
		printf("header %-22s -> %s\n", what, err);                            \
	} while (0)
	BAD("magic", h->magic = 0xdeadbeef, 4);
	BAD("byte-swapped magic", h->magic = __builtin_bswap32(MTRACE_RING_MAGIC), 4);
	BAD("version", h->version = 3, 4);
	BAD("hdr_size", h->hdr_size = 128, 4);
	BAD("pages mismatch", (void)h, 8);
	BAD("pages not pow2", h->data_pages = 3, 3);
	BAD("pages 0", h->data_pages = 0, 0);
	BAD("pages too many", h->data_pages = 1024, 1024);
	BAD("pages differ", h->data_pages = 2, 4);
	BAD("clock 0", h->clock = 0, 4);
	BAD("clock 9", h->clock = 9, 4);
	BAD("name unterminated", memset(h->name, 'n', sizeof(h->name)), 4);
	struct mtrace_ring_hdr hc;
	errno = 0;
	CHECK(
	    ring_hdr_copy(NULL, 4, &hc, refs, err, sizeof(err)) < 0 && errno == EINVAL, "NULL hdr");

	/* A good header: refs copied; a non-printable name is made printable. */
	mtrace_ring_init_local(&r, m.hdr, m.data, 4, MTRACE_CLOCK_XEN, 5, "a\tb");
	for (uint32_t i = 0; i < 4; i++)
		m.hdr->data_refs[i] = 100 + i;
	CHECK(ring_hdr_copy(m.hdr, 4, &hc, refs, err, sizeof(err)) == 0 && refs[3] == 103, "refs");
	/* the copy is what attach uses: the page changing afterwards is not looked at */
	m.hdr->clock = 0;
	struct ring_reader *rd = ring_reader_attach_copy(m.hdr, &hc, m.data, 4, err, sizeof(err));
	errno = 0;
	CHECK(ring_reader_attach_copy(m.hdr, &hc, NULL, 4, err, sizeof(err)) == NULL &&
	        errno == EINVAL,
	    "NULL data");
	REQUIRE(rd != NULL, "good header: %s", err);
	CHECK(strcmp(ring_reader_info(rd)->name, "a?b") == 0 &&
	        ring_reader_info(rd)->clock == MTRACE_CLOCK_XEN &&
	        ring_reader_info(rd)->ring_index == 5,
	    "info");
	ring_reader_free(rd);
	mem_free(&m);
}

/* ---- truncated: every prefix of a valid stream decodes its whole records only ---- */
void t_truncated(void)
{
	struct mem m;
	struct mtrace_ring r;
	struct coll c = { 0 };

	mem_init(&m, 1);
	mtrace_ring_init_local(&r, m.hdr, m.data, 1, 0, 0, "t");
	size_t ends[64];
	unsigned n = 0;
	for (uint32_t s = 0; s < 40; s++) {
		emit_seq(&r, s);
		ends[n++] = r.head;
	}
	REQUIRE(r.head < MTRACE_PAGE_SIZE, "fits");
	for (size_t len = 0; len <= r.head; len++) {
		struct ring_reader_stats st = { 0 };
		uint32_t next = 0;
		bool known = false;
		/* a private copy exactly len long, so any over-read is caught by ASan */
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, m.data, len);
		coll_reset(&c);
		size_t got = ring_decode_buffer(copy, len, collect, &c, &st, &next, &known);
		size_t whole = 0;
		while (whole < n && ends[whole] <= len)
			whole++;
		bool aligned = whole == 0 ? len == 0 : ends[whole - 1] == len;
		CHECK(got == whole, "len %zu: got %zu want %zu", len, got, whole);
		CHECK(aligned ? st.corrupt == 0 : st.corrupt > 0, "len %zu corrupt %" PRIu64, len,
		    st.corrupt);
		free(copy);
	}
	coll_free(&c);
	mem_free(&m);
}

/* ---- strings: the NUL found wherever it is, whatever surrounds it ---- */
void t_strings(void)
{
	/* every length up to 300, then the longest few; bytes that trip naive zero-byte
	 * tests (0x01, 0x80, 0xff) before the NUL, zeros and 0x01 after it */
	static const uint8_t fill[] = { 0x01, 0x80, 0xff, 'a', 0x7f, 0x81, 0x01, 0x00 };
	static uint8_t buf[MTRACE_REC_MAX];
	struct ring_reader_stats st;
	struct coll c = { 0 };
	uint32_t next_seq = 0;
	bool known = false;
	size_t lens[320], nl = 0;

	for (size_t l = 0; l <= 300; l++)
		lens[nl++] = l;
	for (size_t l = MTRACE_STR_MAX - 9; l <= MTRACE_STR_MAX; l++)
		lens[nl++] = l;
	memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < nl; i++) {
		size_t l = lens[i],
		       rlen = (MTRACE_REC_FIXED + l + 1 + (i % 3) * 8 + 7) & ~(size_t)7;
		struct mtrace_rec rec = { 0 };

		if (rlen > MTRACE_REC_MAX)
			rlen = MTRACE_REC_MAX;
		rec.len = (uint16_t)rlen;
		rec.op = MTRACE_OP_LABEL;
		rec.seq = (uint32_t)i;
		rec.thread = l;
		memcpy(buf, &rec, sizeof(rec));
		for (size_t k = 0; k < l; k++)
			buf[MTRACE_REC_FIXED + k] = fill[k % 7];
		for (size_t k = MTRACE_REC_FIXED + l; k < rlen; k++)
			buf[k] = k % 2 ? 0x01 : 0x00;
		buf[MTRACE_REC_FIXED + l] = 0;
		coll_reset(&c);
		CHECK(ring_decode_buffer(buf, rlen, collect, &c, &st, &next_seq, &known) == 1 &&
		        c.n == 1,
		    "length %zu: %zu events", l, c.n);
		if (c.n != 1)
			continue;
		CHECK(c.v[0].e.str_len == l && c.v[0].e.thread == l &&
		        memcmp(c.v[0].str, buf + MTRACE_REC_FIXED, l) == 0,
		    "length %zu: decoded %u", l, c.v[0].e.str_len);
	}
	CHECK(st.corrupt == 0 && st.lost == 0, "corrupt %" PRIu64 " lost %" PRIu64, st.corrupt,
	    st.lost);
	/* no NUL anywhere in the string part, however long: corrupt, nothing decoded */
	for (size_t rlen = MTRACE_REC_FIXED + 8; rlen <= MTRACE_REC_MAX;
	     rlen += rlen < 128 ? 8 : 984) {
		struct mtrace_rec rec = { 0 };
		struct ring_reader_stats st2;

		memset(&st2, 0, sizeof(st2));
		rec.len = (uint16_t)rlen;
		rec.op = MTRACE_OP_LABEL;
		memcpy(buf, &rec, sizeof(rec));
		for (size_t k = MTRACE_REC_FIXED; k < rlen; k++)
			buf[k] = fill[k % 7];
		coll_reset(&c);
		known = false;
		CHECK(ring_decode_buffer(buf, rlen, collect, &c, &st2, &next_seq, &known) == 0 &&
		        st2.corrupt >= 1,
		    "record of %zu bytes without a NUL: %zu events, corrupt %" PRIu64, rlen, c.n,
		    st2.corrupt);
	}
	coll_free(&c);
}

/* Sequence accounting in the decoder, records built by hand: a first seq in the upper
 * half is lost events (not a step back), a gap is lost, a step back is corrupt, the
 * wrap at 2^32 is not a gap, an unknown op takes a number, a pad takes none and a
 * buffer of pads leaves the expectation as it was. */
static size_t seq_rec(uint8_t *buf, uint8_t op, uint32_t seq)
{
	struct mtrace_rec rec = { 0 };

	rec.len = MTRACE_REC_FIXED;
	rec.op = op;
	rec.seq = op == MTRACE_OP_PAD ? 0 : seq;
	rec.thread = 7;
	memcpy(buf, &rec, sizeof(rec));
	return sizeof(rec);
}

void t_seq(void)
{
	static const struct {
		uint8_t op;
		uint32_t seq;
		uint64_t lost, corrupt, unknown; /* the counts after it */
	} steps[] = {
		{ MTRACE_OP_READ, 0x90000000u, 0x90000000u, 0, 0 },
		{ MTRACE_OP_PAD, 0, 0x90000000u, 0, 0 },
		{ MTRACE_OP_READ, 0x90000001u, 0x90000000u, 0, 0 },
		{ MTRACE_OP_READ, 0x90000005u, 0x90000003u, 0, 0 },
		{ MTRACE_OP_READ, 0x90000002u, 0x90000003u, 1, 0 },
		{ 200, 0x90000003u, 0x90000003u, 1, 1 },
		{ MTRACE_OP_READ, 0x90000004u, 0x90000003u, 1, 1 },
		{ MTRACE_OP_READ, 0xffffffffu, 0x90000003u + 0x6ffffffau, 1, 1 },
		{ MTRACE_OP_SWITCH, 0, 0x90000003u + 0x6ffffffau, 1, 1 },
		{ 201, 2, 0x90000003u + 0x6ffffffbu, 1, 2 },
		{ MTRACE_OP_READ, 3, 0x90000003u + 0x6ffffffbu, 1, 2 },
	};
	uint8_t buf[MTRACE_REC_FIXED];
	struct ring_reader_stats st;
	struct coll c = { 0 };
	uint32_t next = 1234;
	bool known = false;

	memset(&st, 0, sizeof(st));
	/* pads alone: nothing known, nothing changed */
	CHECK(ring_decode_buffer(
	          buf, seq_rec(buf, MTRACE_OP_PAD, 0), collect, &c, &st, &next, &known) == 0 &&
	        !known && next == 1234 && st.lost == 0,
	    "pads: known %d next %u lost %" PRIu64, known, next, st.lost);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		size_t n = ring_decode_buffer(
		    buf, seq_rec(buf, steps[i].op, steps[i].seq), collect, &c, &st, &next, &known);
		bool ev = steps[i].op != MTRACE_OP_PAD && steps[i].op < 200;

		CHECK(n == (ev ? 1u : 0u) && st.lost == steps[i].lost &&
		        st.corrupt == steps[i].corrupt && st.unknown == steps[i].unknown,
		    "step %zu (seq 0x%x): %zu events, lost %" PRIu64 " corrupt %" PRIu64
		    " unknown %" PRIu64,
		    i, steps[i].seq, n, st.lost, st.corrupt, st.unknown);
		if (steps[i].op != MTRACE_OP_PAD)
			CHECK(known && next == steps[i].seq + 1u, "step %zu: next %u", i, next);
	}
	coll_free(&c);
}
