/*
 * test-ring.c - the ring ABI end to end in one process: the producer library writes,
 * the checked decoder reads.  Data pages sit between PROT_NONE guard pages, so a
 * decoder read outside the ring faults instead of passing silently.
 *
 * usage: test-ring CASE   (roundtrip, wrap, overwrite, budget, corrupt, header,
 *                          truncated, concurrent [seconds])
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

struct mem {
	struct mtrace_ring_hdr *hdr;
	uint8_t *data;
	uint8_t *map;
	size_t maplen;
	uint32_t pages;
};

static void mem_init(struct mem *m, uint32_t pages)
{
	size_t len = (size_t)(pages + 3) * MTRACE_PAGE_SIZE;
	uint8_t *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQUIRE(p != MAP_FAILED, "mmap: %s", strerror(errno));
	/* [guard][hdr][data...][guard] */
	REQUIRE(mprotect(p + MTRACE_PAGE_SIZE, (size_t)(pages + 1) * MTRACE_PAGE_SIZE,
	            PROT_READ | PROT_WRITE) == 0,
	    "mprotect");
	m->map = p;
	m->maplen = len;
	m->hdr = (struct mtrace_ring_hdr *)(p + MTRACE_PAGE_SIZE);
	m->data = p + 2 * MTRACE_PAGE_SIZE;
	m->pages = pages;
}

static void mem_free(struct mem *m)
{
	munmap(m->map, m->maplen);
}

/* Events collected by the callback, strings copied out (they die at the next drain). */
struct ev {
	struct mtrace_event e;
	char *str; /* copy, "" when the op has none */
};
struct coll {
	struct ev *v;
	size_t n, cap;
};

static void collect(const struct mtrace_event *e, void *arg)
{
	struct coll *c = arg;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		REQUIRE(c->v != NULL, "realloc");
	}
	c->v[c->n].e = *e;
	if (e->str != NULL)
		REQUIRE(e->str[e->str_len] == 0, "string not terminated");
	c->v[c->n].str = strndup(e->str != NULL ? e->str : "", e->str_len);
	REQUIRE(c->v[c->n].str != NULL, "strndup");
	c->v[c->n].e.str = NULL;
	c->n++;
}

static void coll_reset(struct coll *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].str);
	c->n = 0;
}

static void coll_free(struct coll *c)
{
	coll_reset(c);
	free(c->v);
}

static size_t drain_all(struct ring_reader *rd, struct coll *c)
{
	size_t n = 0;
	bool more = true;

	for (int i = 0; more && i < 1000000; i++)
		n += ring_reader_drain(rd, 1000, collect, c, &more);
	return n;
}

static struct ring_reader *attach(struct mem *m)
{
	char err[128];
	struct mtrace_ring_hdr h;
	struct ring_reader *rd = NULL;

	if (ring_hdr_copy(m->hdr, m->pages, &h, NULL, err, sizeof(err)) == 0)
		rd = ring_reader_attach_copy(m->hdr, &h, m->data, m->pages, err, sizeof(err));
	REQUIRE(rd != NULL, "attach: %s", err);
	return rd;
}

/* A deterministic event derived from its sequence number (contents checkable). */
static void emit_seq(struct mtrace_ring *r, uint32_t seq)
{
	char s[64];

	switch (seq % 7) {
	case 3:
		snprintf(s, sizeof(s), "label-%" PRIu32 "%.*s", seq, (int)(seq % 29),
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		mtrace_emit_slow(
		    r, MTRACE_OP_LABEL, 0, seq * 3ull, seq ^ 0x5555ull, 0, s, strlen(s));
		break;
	default:
		mtrace_emit_ts(r, (uint8_t)(seq % 5 == 0 ? MTRACE_OP_SWITCH : MTRACE_OP_READ),
		    (uint8_t)(seq % 20), seq * 3ull, seq ^ 0x5555ull, seq * 7ull);
	}
}

static bool check_seq_event(const struct mtrace_event *e, const char *str)
{
	uint32_t seq = e->seq;
	char s[64];

	if (e->ts != seq * 3ull || e->thread != (seq ^ 0x5555ull))
		return false;
	if (seq % 7 == 3) {
		snprintf(s, sizeof(s), "label-%" PRIu32 "%.*s", seq, (int)(seq % 29),
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		return e->op == MTRACE_OP_LABEL && e->arg == 0 && str != NULL &&
		    e->str_len == strlen(s) && strcmp(str, s) == 0;
	}
	return e->op == (seq % 5 == 0 ? MTRACE_OP_SWITCH : MTRACE_OP_READ) && e->type == seq % 20 &&
	    e->arg == seq * 7ull && e->str == NULL;
}

/* ---- roundtrip: every op, every field, strings, names ---- */
static void t_roundtrip(void)
{
	struct mem m;
	struct mtrace_ring r;
	struct coll c = { 0 };
	char big[5000];

	mem_init(&m, 4);
	mtrace_ring_init_local(&r, m.hdr, m.data, 4, MTRACE_CLOCK_MONOTONIC, 3, "vcpu3");
	struct ring_reader *rd = attach(&m);
	CHECK(strcmp(ring_reader_info(rd)->name, "vcpu3") == 0, "name");
	CHECK(ring_reader_info(rd)->ring_index == 3, "index");

	mtrace_ring_start(&r);
	for (unsigned t = 0; t < MTRACE_TT_COUNT; t++)
		mtrace_creates(&r, 1, 100 + t, (uint8_t)t);
	mtrace_read(&r, 2, 3);
	mtrace_fulfills(&r, 3, 4);
	mtrace_fails(&r, 4, 5, "Not_found");
	mtrace_becomes(&r, 5, 6);
	mtrace_label(&r, 6, "http-server");
	mtrace_increase(&r, 7, "bytes", -42);
	mtrace_switch(&r, MTRACE_THREAD_NONE);
	mtrace_gc(&r, 12345);
	mtrace_signal(&r, 9, 10);
	mtrace_try_read(&r, 10, 11);
	mtrace_counter(&r, 11, "queue", INT64_MIN);
	mtrace_emit_ts(&r, MTRACE_OP_READ_LATER, 0, 777, 12, 13);
	mtrace_emit_ts(&r, MTRACE_OP_SIGNAL_NEW, 0, 778, 13, 14);
	mtrace_evtchn_send(&r, 14, 7);
	mtrace_evtchn_recv(&r, 15, 8);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	mtrace_label(&r, 16, big);
	mtrace_label(&r, 17, "");
	mtrace_label(&r, 18, NULL);

	size_t n = drain_all(rd, &c);
	size_t expect = 1 + MTRACE_TT_COUNT + 15 + 3;
	REQUIRE(n == expect && c.n == expect, "delivered %zu, want %zu", n, expect);
	for (size_t i = 0; i < c.n; i++) {
		CHECK(c.v[i].e.seq == i, "seq %" PRIu32 " at %zu", c.v[i].e.seq, i);
		if (i > 0 && c.v[i].e.op != MTRACE_OP_READ_LATER &&
		    c.v[i].e.op != MTRACE_OP_SIGNAL_NEW && c.v[i - 1].e.op != MTRACE_OP_SIGNAL_NEW)
			CHECK(c.v[i].e.ts >= c.v[i - 1].e.ts, "ts goes back at %zu", i);
	}
	struct ev *v = c.v;
	CHECK(
	    v[0].e.op == MTRACE_OP_RING_START && v[0].e.arg == 3 && strcmp(v[0].str, "vcpu3") == 0,
	    "ring_start");
	for (unsigned t = 0; t < MTRACE_TT_COUNT; t++) {
		struct mtrace_event *e = &v[1 + t].e;
		CHECK(e->op == MTRACE_OP_CREATES && e->thread == 1 && e->arg == 100 + t &&
		        e->type == t,
		    "creates %u", t);
	}
	v += 1 + MTRACE_TT_COUNT;
	CHECK(v[0].e.op == MTRACE_OP_READ && v[0].e.thread == 2 && v[0].e.arg == 3, "read");
	CHECK(v[1].e.op == MTRACE_OP_FULFILLS && v[1].e.thread == 3 && v[1].e.arg == 4, "fulfills");
	CHECK(v[2].e.op == MTRACE_OP_FAILS && v[2].e.arg == 5 &&
	        strcmp(v[2].str, "Not_found") == 0 && v[2].e.str_len == 9,
	    "fails");
	CHECK(v[3].e.op == MTRACE_OP_BECOMES && v[3].e.thread == 5 && v[3].e.arg == 6, "becomes");
	CHECK(v[4].e.op == MTRACE_OP_LABEL && v[4].e.thread == 6 &&
	        strcmp(v[4].str, "http-server") == 0,
	    "label");
	CHECK(v[5].e.op == MTRACE_OP_INCREASE && (int64_t)v[5].e.arg == -42 &&
	        strcmp(v[5].str, "bytes") == 0,
	    "increase");
	CHECK(v[6].e.op == MTRACE_OP_SWITCH && v[6].e.thread == MTRACE_THREAD_NONE, "switch");
	CHECK(v[7].e.op == MTRACE_OP_GC && v[7].e.arg == 12345, "gc");
	CHECK(v[8].e.op == MTRACE_OP_SIGNAL && v[8].e.thread == 9 && v[8].e.arg == 10, "signal");
	CHECK(v[9].e.op == MTRACE_OP_TRY_READ && v[9].e.arg == 11, "try_read");
	CHECK(v[10].e.op == MTRACE_OP_COUNTER && (int64_t)v[10].e.arg == INT64_MIN &&
	        strcmp(v[10].str, "queue") == 0,
	    "counter");
	CHECK(v[11].e.op == MTRACE_OP_READ_LATER && v[11].e.ts == 777 && v[11].e.arg == 13,
	    "read_later");
	CHECK(v[12].e.op == MTRACE_OP_SIGNAL_NEW && v[12].e.ts == 778 && v[12].e.arg == 14,
	    "signal_new");
	CHECK(v[13].e.op == MTRACE_OP_EVTCHN_SEND && v[13].e.arg == 7, "evtchn_send");
	CHECK(v[14].e.op == MTRACE_OP_EVTCHN_RECV && v[14].e.arg == 8, "evtchn_recv");
	CHECK(v[15].e.op == MTRACE_OP_LABEL && v[15].e.str_len == MTRACE_STR_MAX &&
	        strspn(v[15].str, "a") == MTRACE_STR_MAX,
	    "truncated label, len %u", v[15].e.str_len);
	CHECK(v[16].e.str_len == 0 && v[16].str[0] == 0, "empty label");
	CHECK(v[17].e.str_len == 0, "NULL label");

	const struct ring_reader_stats *st = ring_reader_stats(rd);
	CHECK(st->events == expect && st->lost == 0 && st->corrupt == 0 && st->unknown == 0 &&
	        st->resyncs == 0,
	    "stats %" PRIu64 "/%" PRIu64 "/%" PRIu64, st->events, st->lost, st->corrupt);
	CHECK(st->bytes == m.hdr->head, "bytes %" PRIu64 " head %" PRIu64, st->bytes, m.hdr->head);
	CHECK(m.hdr->reader_pos == m.hdr->head, "reader_pos");

	/* Names. */
	CHECK(strcmp(mtrace_op_name(MTRACE_OP_CREATES), "creates") == 0, "op name");
	CHECK(strcmp(mtrace_op_name(MTRACE_OP_SIGNAL_NEW), "signal_new") == 0, "op name");
	CHECK(strcmp(mtrace_op_name(MTRACE_OP_EVTCHN_SEND), "evtchn_send") == 0, "op name");
	CHECK(mtrace_op_name(14) == NULL && mtrace_op_name(200) == NULL, "unknown op name");
	CHECK(strcmp(mtrace_thread_type_name(MTRACE_TT_MUTEX), "Mutex") == 0, "tt");
	CHECK(strcmp(mtrace_thread_type_name(MTRACE_TT_UNKNOWN), "Unknown") == 0, "tt unknown");
	CHECK(
	    mtrace_op_has_string(MTRACE_OP_FAILS) && !mtrace_op_has_string(MTRACE_OP_READ), "str");

	/* Nothing new: a drain delivers nothing, and wake-up semantics hold. */
	bool more;
	CHECK(ring_reader_drain(rd, 100, collect, &c, &more) == 0 && !more, "empty drain");
	uint64_t kicks = m.hdr->notifies;
	CHECK(!ring_reader_request_wakeup(rd, 0), "nothing waiting");
	mtrace_read(&r, 1, 2);
	CHECK(m.hdr->notifies == kicks + 1, "kick at the next record");
	mtrace_read(&r, 1, 2);
	CHECK(m.hdr->notifies == kicks + 1, "one kick until the reader asks again");
	CHECK(ring_reader_request_wakeup(rd, 0), "data waiting");
	drain_all(rd, &c);
	CHECK(!ring_reader_request_wakeup(rd, 64), "nothing waiting");
	mtrace_read(&r, 1, 2);
	mtrace_read(&r, 1, 2);
	CHECK(m.hdr->notifies == kicks + 1, "batched: not yet");
	mtrace_read(&r, 1, 2);
	CHECK(m.hdr->notifies == kicks + 2, "batched: past 64 bytes");
	ring_reader_free(rd);
	coll_free(&c);
	mem_free(&m);
}

/* ---- wrap: a 1-page ring read as it fills, many wraps with PAD records ---- */
static void t_wrap(void)
{
	struct mem m;
	struct mtrace_ring r;
	struct coll c = { 0 };
	const uint32_t total = 200000;

	mem_init(&m, 1);
	mtrace_ring_init_local(&r, m.hdr, m.data, 1, 0, 0, "w");
	struct ring_reader *rd = attach(&m);
	uint32_t seq = 0;
	uint64_t pads = 0;
	while (seq < total) {
		/* Batches of 1..40 records (never more than the ring holds). */
		unsigned batch = 1 + seq % 40;
		for (unsigned i = 0; i < batch && seq < total; i++) {
			uint64_t before = r.head;
			emit_seq(&r, seq++);
			uint64_t rl = seq % 7 == 4 ? 64 : 32;
			if (r.head - before > rl + 8)
				pads++;
		}
		drain_all(rd, &c);
	}
	CHECK(c.n == total, "delivered %zu of %" PRIu32, c.n, total);
	for (size_t i = 0; i < c.n; i++) {
		if (c.v[i].e.seq != i || !check_seq_event(&c.v[i].e, c.v[i].str)) {
			CHECK(0, "event %zu (seq %" PRIu32 ") wrong", i, c.v[i].e.seq);
			break;
		}
	}
	const struct ring_reader_stats *st = ring_reader_stats(rd);
	CHECK(st->lost == 0 && st->corrupt == 0, "lost %" PRIu64 " corrupt %" PRIu64, st->lost,
	    st->corrupt);
	CHECK(r.head / (r.mask + 1) > 1000, "wrapped %" PRIu64 " times", r.head / (r.mask + 1));
	CHECK(pads > 100, "pads %" PRIu64, pads);
	printf("wrap: %" PRIu64 " laps, ~%" PRIu64 " pads\n", r.head / (r.mask + 1), pads);
	ring_reader_free(rd);
	coll_free(&c);
	mem_free(&m);
}

/* ---- overwrite: the reader falls behind; it loses exactly what it did not get ---- */
static void t_overwrite(void)
{
	struct mem m;
	struct mtrace_ring r;
	struct coll c = { 0 };
	uint32_t seq = 0;

	mem_init(&m, 2);
	mtrace_ring_init_local(&r, m.hdr, m.data, 2, 0, 0, "o");
	/* Producer runs before anyone attaches: 10000 events into 8 KiB. */
	while (seq < 10000)
		emit_seq(&r, seq++);
	struct ring_reader *rd = attach(&m);
	drain_all(rd, &c);
	const struct ring_reader_stats *st = ring_reader_stats(rd);
	CHECK(c.n > 100 && c.n < 300, "delivered %zu", c.n);
	CHECK(st->events + st->lost == seq, "events %" PRIu64 " + lost %" PRIu64 " != %" PRIu32,
	    st->events, st->lost, seq);
	CHECK(c.v[c.n - 1].e.seq == seq - 1, "last seq %" PRIu32, c.v[c.n - 1].e.seq);
	for (size_t i = 1; i < c.n; i++)
		CHECK(c.v[i].e.seq == c.v[i - 1].e.seq + 1, "contiguous tail at %zu", i);

	/* Rounds of: read part, overwrite, read. */
	for (int round = 0; round < 50; round++) {
		uint32_t burst = (uint32_t)(round * 397 % 3000);
		while (burst--)
			emit_seq(&r, seq++);
		bool more;
		ring_reader_drain(rd, (size_t)(round % 5) * 10, collect, &c, &more);
		burst = (uint32_t)(round * 131 % 900);
		while (burst--)
			emit_seq(&r, seq++);
		drain_all(rd, &c);
	}
	CHECK(st->events + st->lost == seq, "events %" PRIu64 " + lost %" PRIu64 " != %" PRIu32,
	    st->events, st->lost, seq);
	CHECK(st->corrupt == 0 && st->lost > 0, "corrupt %" PRIu64, st->corrupt);
	for (size_t i = 0; i < c.n; i++) {
		if (!check_seq_event(&c.v[i].e, c.v[i].str) ||
		    (i > 0 && c.v[i].e.seq <= c.v[i - 1].e.seq)) {
			CHECK(0, "event %zu (seq %" PRIu32 ") wrong", i, c.v[i].e.seq);
			break;
		}
	}
	printf("overwrite: %" PRIu32 " written, %" PRIu64 " read, %" PRIu64 " lost\n", seq,
	    st->events, st->lost);
	ring_reader_free(rd);
	coll_free(&c);
	mem_free(&m);
}

/* ---- budget: a drain stops at its budget and says more is waiting ---- */
static void t_budget(void)
{
	struct mem m;
	struct mtrace_ring r;
	struct coll c = { 0 };
	bool more;

	mem_init(&m, 8);
	mtrace_ring_init_local(&r, m.hdr, m.data, 8, 0, 0, "b");
	struct ring_reader *rd = attach(&m);
	for (uint32_t s = 0; s < 500; s++)
		emit_seq(&r, s);
	CHECK(ring_reader_drain(rd, 0, collect, &c, &more) == 0, "budget 0");
	for (int i = 0; i < 4; i++) {
		CHECK(ring_reader_drain(rd, 100, collect, &c, &more) == 100 && more, "step %d", i);
	}
	CHECK(ring_reader_drain(rd, 1000, collect, &c, &more) == 100 && !more, "last step");
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.v[i].e.seq == i && check_seq_event(&c.v[i].e, c.v[i].str), "event %zu", i);
	ring_reader_free(rd);
	coll_free(&c);
	mem_free(&m);
}

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

static void t_corrupt(void)
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
static void t_header(void)
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
static void t_truncated(void)
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

/* ---- concurrent: a producer and a reader hammer one small ring ---- */
struct conc {
	struct mtrace_ring r;
	struct mem m;
	double seconds;
	volatile uint32_t produced;
	volatile int done;
};

static void *producer(void *arg)
{
	struct conc *k = arg;
	struct timespec t0, t;
	uint32_t seq = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 1024; i++)
			emit_seq(&k->r, seq++);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > k->seconds)
			break;
	}
	__atomic_store_n(&k->produced, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct verify {
	uint64_t n, bad;
	uint32_t last;
	bool any;
};

static void verify_cb(const struct mtrace_event *e, void *arg)
{
	struct verify *v = arg;

	if (!check_seq_event(e, e->str) || (v->any && e->seq <= v->last)) {
		if (v->bad++ < 5)
			fprintf(stderr, "bad event seq %" PRIu32 " op %u ts %" PRIu64 "\n", e->seq,
			    e->op, e->ts);
	}
	v->last = e->seq;
	v->any = true;
	v->n++;
}

static void t_concurrent(double seconds, uint32_t pages)
{
	struct conc k = { .seconds = seconds };
	struct verify v = { 0 };
	pthread_t th;
	bool more;

	mem_init(&k.m, pages);
	mtrace_ring_init_local(&k.r, k.m.hdr, k.m.data, pages, 0, 0, "conc");
	struct ring_reader *rd = attach(&k.m);
	REQUIRE(pthread_create(&th, NULL, producer, &k) == 0, "pthread_create");
	uint64_t drains = 0;
	while (!__atomic_load_n(&k.done, __ATOMIC_ACQUIRE)) {
		ring_reader_drain(rd, 1 + drains % 3000, verify_cb, &v, &more);
		drains++;
	}
	pthread_join(th, NULL);
	do
		ring_reader_drain(rd, 4096, verify_cb, &v, &more);
	while (more);
	const struct ring_reader_stats *st = ring_reader_stats(rd);
	uint32_t produced = k.produced;
	printf("concurrent (%u pages): produced %" PRIu32 ", delivered %" PRIu64 ", lost %" PRIu64
	       ", corrupt %" PRIu64 ", drains %" PRIu64 "\n",
	    pages, produced, st->events, st->lost, st->corrupt, drains);
	CHECK(v.bad == 0, "%" PRIu64 " events delivered damaged or out of order", v.bad);
	CHECK(st->events + st->lost == produced,
	    "delivered %" PRIu64 " + lost %" PRIu64 " != produced %" PRIu32, st->events, st->lost,
	    produced);
	CHECK(st->corrupt == 0 && st->unknown == 0, "corrupt %" PRIu64, st->corrupt);
	CHECK(st->events > 0 && v.n == st->events, "delivered");
	ring_reader_free(rd);
	mem_free(&k.m);
}

/* ---- sites: a CREATES with its site decodes as CREATES then SITE; site records ---- */
static __attribute__((noinline)) uint64_t create_here(struct mtrace_ring *r, uint64_t child)
{
	uint64_t before = mtrace_here();

	mtrace_creates_here(r, 1, child, MTRACE_TT_BIND);
	return before;
}

static void t_sites(void)
{
	struct mem m;
	struct mtrace_ring r;
	struct coll c = { 0 };
	uint64_t here[2];

	mem_init(&m, 4);
	mtrace_ring_init_local(&r, m.hdr, m.data, 4, MTRACE_CLOCK_MONOTONIC, 0, "s");
	struct ring_reader *rd = attach(&m);
	/* one line, called twice (a loop here could be unrolled into two sites) */
	for (int i = 0; i < 2; i++)
		here[i] = create_here(&r, 10 + (uint64_t)i);
	mtrace_site_name(&r, 42, "server.ml:42 Server.handle");
	mtrace_creates_named(&r, 1, 20, MTRACE_TT_TASK, 42);
	mtrace_creates(&r, 1, 21, MTRACE_TT_TASK);
	CHECK(mtrace_modules(&r) >= 1, "no module with a build-id (the test itself has one)");

	size_t n = drain_all(rd, &c);
	REQUIRE(n >= 8 && c.n == n, "delivered %zu", n);
	struct ev *v = c.v;
	for (int i = 0; i < 2; i++, v += 2) {
		CHECK(v[0].e.op == MTRACE_OP_CREATES && v[0].e.arg == 10 + (uint64_t)i &&
		        v[0].e.thread == 1 && v[0].e.type == MTRACE_TT_BIND,
		    "creates %d", i);
		CHECK(v[1].e.op == MTRACE_OP_SITE && v[1].e.thread == 10 + (uint64_t)i &&
		        v[1].e.type == MTRACE_SITE_PC && v[1].e.seq == v[0].e.seq &&
		        v[1].e.ts == v[0].e.ts,
		    "site %d", i);
		/* the site is the creating line's own code, next to the mtrace_here before it */
		CHECK(v[1].e.arg - here[i] + 256 < 512, "site 0x%" PRIx64 " far from 0x%" PRIx64,
		    v[1].e.arg, here[i]);
	}
	CHECK(c.v[1].e.arg == c.v[3].e.arg, "one line, one site");
	CHECK(v[0].e.op == MTRACE_OP_SITE_NAME && v[0].e.arg == 42 &&
	        strcmp(v[0].str, "server.ml:42 Server.handle") == 0,
	    "site_name");
	CHECK(v[1].e.op == MTRACE_OP_CREATES && v[2].e.op == MTRACE_OP_SITE &&
	        v[2].e.type == MTRACE_SITE_NAMED && v[2].e.arg == 42 && v[2].e.thread == 20,
	    "named");
	CHECK(v[3].e.op == MTRACE_OP_CREATES && v[3].e.arg == 21 &&
	        (v + 4 == c.v + n || v[4].e.op != MTRACE_OP_SITE),
	    "a CREATES without a site has none");
	for (v += 4; v < c.v + n; v++) {
		char hex[129];
		unsigned long long lo, hi;
		CHECK(v->e.op == MTRACE_OP_MODULE && v->str &&
		        sscanf(v->str, "%128[0-9a-f] %llx %llx", hex, &lo, &hi) == 3 && lo < hi &&
		        strlen(hex) >= 4 && strlen(hex) % 2 == 0,
		    "module record '%s'", v->str);
	}
	/* 48 bytes per CREATES with a site: an older reader steps over the tail by len */
	CHECK(((struct mtrace_rec *)m.data)->len == MTRACE_REC_CREATES_SITE, "record length");
	CHECK(
	    ring_reader_stats(rd)->corrupt == 0 && ring_reader_stats(rd)->unknown == 0, "corrupt");
	coll_free(&c);
	ring_reader_free(rd);
	mem_free(&m);
}

/* ---- strings: the NUL found wherever it is, whatever surrounds it ---- */
static void t_strings(void)
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

static void t_seq(void)
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

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (strcmp(what, "roundtrip") == 0)
		t_roundtrip();
	else if (strcmp(what, "wrap") == 0)
		t_wrap();
	else if (strcmp(what, "overwrite") == 0)
		t_overwrite();
	else if (strcmp(what, "budget") == 0)
		t_budget();
	else if (strcmp(what, "corrupt") == 0)
		t_corrupt();
	else if (strcmp(what, "header") == 0)
		t_header();
	else if (strcmp(what, "truncated") == 0)
		t_truncated();
	else if (strcmp(what, "sites") == 0)
		t_sites();
	else if (strcmp(what, "strings") == 0)
		t_strings();
	else if (strcmp(what, "seq") == 0)
		t_seq();
	else if (strcmp(what, "concurrent") == 0) {
		double s = argc > 2 ? atof(argv[2]) : 3;
		t_concurrent(s, 1);
		t_concurrent(s, 16);
	} else {
		fprintf(stderr,
		    "usage: %s roundtrip|wrap|overwrite|budget|corrupt|header|"
		    "truncated|sites|strings|seq|concurrent [seconds]\n",
		    argv[0]);
		return 2;
	}
	return check_status(what);
}
