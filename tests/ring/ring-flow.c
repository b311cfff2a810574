/*
 * ring-flow.c - test-ring's cases on sound input: every op and field through the
 * decoder (roundtrip), wraps, a reader that falls behind (overwrite), drain budgets,
 * creation sites, and a producer and a reader at once (concurrent).
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

/* ---- roundtrip: every op, every field, strings, names ---- */
void t_roundtrip(void)
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
void t_wrap(void)
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
void t_overwrite(void)
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
void t_budget(void)
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

void t_concurrent(double seconds, uint32_t pages)
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

void t_sites(void)
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
