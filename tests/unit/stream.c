/*
 * stream.c - unit tests of the stream's pure parts: an event batch packed by
 * stream_blob_pack_cols is byte for byte what protobuf-c packs for the whole
 * ServerMsg and unpacks to the same columns, the batch dictionary's cache never takes one string for another, its table outlives a batch, and
 * every event handed to the batches (every path: runs, strings the cache lacks, deltas
 * past 32 bits, filters) comes out of the frames as it went in.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "frame.h"
#include "mtrace-ring.h"
#include "ops.h"
#include "ring-reader.h"
#include "stream-batch.h"
#include "stream-blob.h"
#include "stream-columns.h"
#include "stream-dict.h"
#include "unit.h"

/* What protobuf-c's generated unpack makes of the frame f: the same as eb? */
static void check_unpacked(
    const struct stream_blob *f, const Mtrace__EventBatch *eb, const char *what)
{
	size_t hdr, len;
	Mtrace__ServerMsg *m;
	const Mtrace__EventBatch *u;
	bool same;

	REQUIRE(
	    frame_parse(f->data, f->len, SIZE_MAX, &hdr, &len) == FRAME_OK && hdr + len == f->len,
	    "%s: framing", what);
	m = mtrace__server_msg__unpack(NULL, len, f->data + hdr);
	REQUIRE(m && m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS, "%s: unpack", what);
	u = m->events;
	same = u->domid == eb->domid && u->ring == eb->ring && u->base_ts == eb->base_ts &&
	    u->clock == eb->clock && u->first_seq == eb->first_seq &&
	    u->n_ts_delta == eb->n_ts_delta && u->n_op == eb->n_op && u->n_thread == eb->n_thread &&
	    u->n_arg == eb->n_arg && u->n_type == eb->n_type && u->n_str == eb->n_str &&
	    u->n_str_ref == eb->n_str_ref;
	for (size_t i = 0; same && i < eb->n_op; i++)
		same = u->ts_delta[i] == eb->ts_delta[i] && u->op[i] == eb->op[i] &&
		    u->thread[i] == eb->thread[i] && u->arg[i] == eb->arg[i] &&
		    u->type[i] == eb->type[i];
	for (size_t i = 0; same && i < eb->n_str; i++)
		same = !strcmp(u->str[i], eb->str[i]);
	for (size_t i = 0; same && i < eb->n_str_ref; i++)
		same = u->str_ref[i] == eb->str_ref[i];
	CHECK(same, "%s: protobuf-c unpacks other columns", what);
	mtrace__server_msg__free_unpacked(m, NULL);
}

/* eb's ops and types are bytes, as stream-columns.c holds them. */
static void check_same(const Mtrace__EventBatch *eb, const char *what)
{
	static uint8_t op[20000], type[20000];
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	struct stream_blob *whole, *events;

	for (size_t i = 0; i < eb->n_op; i++) {
		op[i] = (uint8_t)eb->op[i];
		type[i] = (uint8_t)eb->type[i];
	}
	m.msg_case = MTRACE__SERVER_MSG__MSG_EVENTS;
	m.events = (Mtrace__EventBatch *)eb;
	whole = stream_blob_pack(&m);
	events = stream_blob_pack_cols(&(struct stream_batch_cols){
	    .domid = eb->domid,
	    .ring = eb->ring,
	    .clock = eb->clock,
	    .base_ts = eb->base_ts,
	    .first_seq = eb->first_seq,
	    .n = eb->n_op,
	    .dts = eb->ts_delta,
	    .op = op,
	    .type = type,
	    .thread = eb->thread,
	    .arg = eb->arg,
	    .nstr = eb->n_str,
	    .str = eb->str,
	    .nref = eb->n_str_ref,
	    .str_ref = eb->str_ref,
	});
	REQUIRE(whole && events, "%s", what);
	CHECK(whole->len == events->len && memcmp(whole->data, events->data, whole->len) == 0,
	    "%s: %zu bytes, protobuf-c %zu", what, events->len, whole->len);
	check_unpacked(events, eb, what);
	stream_blob_unref(whole);
	stream_blob_unref(events);
}

/*
 * stream_blob_pack_cols sizes the frame from the columns and writes them straight in:
 * byte columns with and without values of two varint bytes, lengths whose varints take
 * 1, 2 and 3 bytes, string refs past 128, strings long and short, zero fields left
 * out.  Under ASan a size one byte short is a heap overflow.
 */
static void blob_events(void)
{
	static int32_t dts[20000];
	static uint32_t op[20000], type[20000], ref[20000];
	static int64_t thread[20000], arg[20000];
	static char *strs[300], long_str[MTRACE_STR_MAX + 1];
	static char names[300][16];
	Mtrace__EventBatch eb = MTRACE__EVENT_BATCH__INIT;
	/* lengths whose varints take 1, 2 and 3 bytes, the batch's and the frame's */
	size_t sizes[] = { 0, 1, 3, 5, 6, 100, 1000, 20000 };
	/* the largest op and type value (bytes): 1- and 2-byte varints */
	uint32_t maxes[] = { 0, 1, 127, 128, 255 };
	/* strings: none, a few, past 128 (2-byte refs) */
	size_t nstrs[] = { 0, 3, 300 };

	memset(long_str, 'x', MTRACE_STR_MAX);
	for (size_t i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "s%zu", i);
		strs[i] = names[i];
	}
	strs[1] = (char *)"";
	strs[2] = long_str;
	check_same(&eb, "empty batch");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
			for (size_t q = 0; q < sizeof(nstrs) / sizeof(nstrs[0]); q++) {
				size_t n = sizes[k], ns = nstrs[q];
				uint32_t max = maxes[m];

				for (size_t i = 0; i < n; i++) {
					dts[i] = (int32_t)(i * 7919) - 1000;
					/* every value up to max, and max itself */
					op[i] = i + 1 == n ? max : (uint32_t)(i % (max + 1u));
					type[i] = i == 0 ? max : (uint32_t)(i % 5) % (max + 1u);
					thread[i] = i % 17 ? (int64_t)i : -1;
					arg[i] = (int64_t)(i * 0x9e3779b97f4a7c15u);
					ref[i] = ns ? (uint32_t)((i * 7) % ns) : 0;
				}
				if (ns && n)
					ref[0] = (uint32_t)ns - 1;
				eb.domid = (uint32_t)k * 1000;
				eb.ring = (uint32_t)k;
				eb.base_ts = 1000000000000u + k;
				eb.clock = (uint32_t)(k & 1);
				eb.first_seq = k * 123456789u;
				eb.n_ts_delta = eb.n_op = eb.n_thread = eb.n_arg = eb.n_type = n;
				eb.ts_delta = dts;
				eb.op = op;
				eb.thread = thread;
				eb.arg = arg;
				eb.type = type;
				eb.n_str = ns;
				eb.str = strs;
				eb.n_str_ref = ns ? n / 2 : 0;
				eb.str_ref = ref;
				check_same(&eb, "batch");
			}
		}
	}
}

static uint32_t add(struct stream_dict *d, const char *s, int want)
{
	uint32_t idx = UINT32_MAX;
	int r = stream_dict_add(d, s, strlen(s), &idx);

	CHECK(r == want, "%s: %d, want %d", s, r, want);
	return idx;
}

static void dict_cache(void)
{
	/* same length, first and last 8 bytes: only the middle tells them apart */
	const char *mid1 = "aaaaaaaaXaaaaaaaa", *mid2 = "aaaaaaaaYaaaaaaaa";
	struct stream_dict d;
	uint32_t a, b, c, e, m1, m2;

	memset(&d, 0, sizeof(d));
	a = add(&d, "label-1", 1);
	b = add(&d, "label-2", 1);
	c = add(&d, "counter-12", 1);
	CHECK(a == 0 && b == 1 && c == 2);
	for (int i = 0; i < 3; i++) {
		CHECK(add(&d, "label-1", 0) == a);
		CHECK(add(&d, "label-2", 0) == b);
		CHECK(add(&d, "counter-12", 0) == c);
	}
	m1 = add(&d, mid1, 1);
	m2 = add(&d, mid2, 1);
	CHECK(m1 != m2 && add(&d, mid1, 0) == m1 && add(&d, mid2, 0) == m2);
	/* a prefix is another string; the empty string is one */
	CHECK(add(&d, "label-", 1) != a);
	e = add(&d, "", 1);
	CHECK(add(&d, "", 0) == e);
	/* bytes that are not UTF-8: fixed once, found again, never cached as they came */
	uint32_t bad = add(&d, "x\xff", 1);
	CHECK(add(&d, "x\xff", 0) == bad && strcmp(stream_dict_str(&d, bad), "x\xff") != 0);
	/* every length up to 24, one byte changed at every place: each its own string */
	stream_dict_reset(&d);
	for (int pass = 0; pass < 2; pass++) {
		uint32_t want = 0;

		for (size_t len = 1; len <= 24; len++)
			for (size_t at = 0; at <= len; at++) {
				char buf[32];

				memset(buf, 'a', len);
				if (at < len)
					buf[at] = 'b';
				buf[len] = '\0';
				CHECK(add(&d, buf, pass ? 0 : 1) == want, "%s", buf);
				want++;
			}
	}
	/* after a reset every string is new again */
	stream_dict_reset(&d);
	CHECK(stream_dict_count(&d) == 0);
	CHECK(add(&d, "label-2", 1) == 0 && add(&d, "label-1", 1) == 1);
	CHECK(strcmp(stream_dict_str(&d, 0), "label-2") == 0);
	CHECK(stream_dict_bytes(&d) > 0);
	stream_dict_free(&d);
	CHECK(stream_dict_bytes(&d) == 0);
}

/* The table keeps its strings from batch to batch (a string new to a batch is not
 * interned again), and is emptied with a batch once it holds more than 1024. */
static void dict_keeps(void)
{
	struct stream_dict d;
	char buf[32];

	memset(&d, 0, sizeof(d));
	CHECK(add(&d, "label-1", 1) == 0 && add(&d, "label-2", 1) == 1);
	stream_dict_reset(&d);
	d.grew = false;
	/* new to this batch, in its own order, but found in the table */
	CHECK(add(&d, "label-2", 1) == 0 && add(&d, "label-1", 1) == 1);
	CHECK(!d.grew && strtab_count(&d.t) == 2, "table of %u strings, grew %d",
	    strtab_count(&d.t), d.grew);
	CHECK(stream_dict_count(&d) == 2 && d.bytes == 16 &&
	        strcmp(stream_dict_str(&d, 0), "label-2") == 0 && stream_dict_len(&d, 1) == 7,
	    "%zu bytes", d.bytes);
	stream_dict_reset(&d);
	for (unsigned i = 0; i < 1100; i++) {
		snprintf(buf, sizeof(buf), "s%u", i);
		add(&d, buf, 1);
	}
	CHECK(strtab_count(&d.t) == 1102, "%u strings",
	    strtab_count(&d.t)); /* and label-1, label-2 */
	stream_dict_reset(&d);
	CHECK(strtab_count(&d.t) == 0 && stream_dict_count(&d) == 0 && d.bytes == 0,
	    "a table of 1100 strings kept %u", strtab_count(&d.t));
	d.grew = false;
	CHECK(add(&d, "s5", 1) == 0 && d.grew);
	stream_dict_free(&d);
}

/* ---- batch_events: what goes into the batches comes out of the frames ---- */

#define BE_EVENTS 60000u
#define BE_STRS   300u /* past the dictionary's cache and past 128 (2-byte refs) */

struct be_ev {
	uint32_t domid, ring;
	struct mtrace_event e;
};

static struct be_ev be_sent[BE_EVENTS];
static size_t be_nsent;
/* what each client got, in order: indexes into be_sent matched as they come */
struct be_client {
	size_t got, bad, dropped, batches;
	bool ops_only; /* the client of the op filter */
};
static struct be_client be_all = { 0 }, be_ops = { .ops_only = true }, be_other = { 0 };
static char be_strs[BE_STRS][24];

static bool be_selected(const struct be_client *c, uint8_t op)
{
	return !c->ops_only || op == MTRACE_OP_READ || op == MTRACE_OP_LABEL;
}

/* The next sent event of (domid, ring) c should get, or NULL: each (domid, ring) is
 * its own stream, in order; batches of different rings come in flush order. */
static const struct be_ev *be_next(struct be_client *c, size_t *at, uint32_t domid, uint32_t ring)
{
	while (*at < be_nsent &&
	    (be_sent[*at].domid != domid || be_sent[*at].ring != ring ||
	        !be_selected(c, be_sent[*at].e.op)))
		(*at)++;
	return *at < be_nsent ? &be_sent[*at] : NULL;
}

static size_t be_pos[2][4]; /* per client, per (domid, ring) */

static void be_send(struct stream_client *sc, struct stream_blob *b, size_t n)
{
	struct be_client *c = (struct be_client *)(void *)sc;
	size_t hdr, len, ref = 0, *at;
	Mtrace__ServerMsg *m;
	const Mtrace__EventBatch *eb;
	uint64_t ts;

	if (!b) {
		c->dropped += n;
		return;
	}
	REQUIRE(frame_parse(b->data, b->len, FRAME_MAX_TO_CLIENT, &hdr, &len) == FRAME_OK &&
	    hdr + len == b->len);
	m = mtrace__server_msg__unpack(NULL, len, b->data + hdr);
	REQUIRE(m && m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS, "a batch that unpacks");
	eb = m->events;
	REQUIRE(eb->domid >= 1 && eb->domid <= 2 && eb->ring <= 1);
	at = &be_pos[c == &be_ops][(eb->domid - 1) * 2 + eb->ring];
	c->batches++;
	CHECK(eb->n_op == n && eb->n_ts_delta == n && eb->n_thread == n && eb->n_arg == n &&
	    eb->n_type == n);
	ts = eb->base_ts;
	for (size_t i = 0; i < eb->n_op && i < n; i++) {
		const struct be_ev *want = be_next(c, at, eb->domid, eb->ring);
		const char *str = NULL;

		ts += (uint64_t)(int64_t)eb->ts_delta[i];
		if (mtrace_op_has_string(eb->op[i])) {
			CHECK(ref < eb->n_str_ref && eb->str_ref[ref] < eb->n_str);
			str = ref < eb->n_str_ref && eb->str_ref[ref] < eb->n_str
			    ? eb->str[eb->str_ref[ref]]
			    : "?";
			ref++;
		}
		if (!want || want->domid != eb->domid || want->ring != eb->ring ||
		    want->e.ts != ts || want->e.op != eb->op[i] ||
		    (int64_t)want->e.thread != eb->thread[i] ||
		    (int64_t)want->e.arg != eb->arg[i] || want->e.type != eb->type[i] ||
		    (i == 0 && want->e.seq != eb->first_seq) ||
		    (str && strcmp(str, want->e.str ? want->e.str : "") != 0)) {
			c->bad++;
		} else {
			c->got++;
		}
		(*at)++;
	}
	CHECK(ref == eb->n_str_ref, "%zu string refs used of %zu", ref, eb->n_str_ref);
	mtrace__server_msg__free_unpacked(m, NULL);
}

static uint64_t be_rnd = 0x9e3779b97f4a7c15u;

static uint64_t be_random(void)
{
	return check_xorshift(&be_rnd);
}

/* One array of n events of (domid, ring) continuing at *ts / *seq, into sb. */
static void be_emit(
    struct stream_batch *sb, uint32_t domid, uint32_t ring, size_t n, uint64_t *ts, uint32_t *seq)
{
	static const uint8_t ops[] = { MTRACE_OP_CREATES, MTRACE_OP_READ, MTRACE_OP_FULFILLS,
		MTRACE_OP_SWITCH, MTRACE_OP_LABEL, MTRACE_OP_COUNTER, MTRACE_OP_GC, MTRACE_OP_FAILS,
		MTRACE_OP_SITE };
	static struct mtrace_event arr[1024];
	size_t first = be_nsent;

	for (size_t i = 0; i < n && i < 1024 && be_nsent < BE_EVENTS; i++) {
		struct be_ev *b = &be_sent[be_nsent++];
		uint64_t r = be_random();
		uint8_t op = ops[r % sizeof(ops)];

		/* mostly small steps; now and then past a 32-bit delta either way */
		if (r % 997 == 0)
			*ts += 3000000000u;
		else if (r % 991 == 0)
			*ts -= 2500000000u;
		else
			*ts += (r >> 8) % 500;
		b->domid = domid;
		b->ring = ring;
		b->e = (struct mtrace_event){
			.ts = *ts,
			.thread = (r >> 16) % 5 ? (r >> 20) % 1000 : MTRACE_THREAD_NONE,
			.arg = r >> 3,
			.seq = (*seq)++,
			.op = op,
			.type = op == MTRACE_OP_CREATES || op == MTRACE_OP_SITE ? (uint8_t)(r >> 40)
			                                                        : 0,
		};
		if (mtrace_op_has_string(op) && (r >> 30) % 50) {
			/* a few strings most of the time, any of them now and then */
			const char *str =
			    be_strs[(r >> 32) % 8 ? (r >> 36) % 6 : (r >> 36) % BE_STRS];
			b->e.str = str;
			b->e.str_len = (uint16_t)strlen(str);
		}
	}
	/* the daemon hands over arrays of struct mtrace_event */
	for (size_t i = first; i < be_nsent; i++)
		arr[i - first] = be_sent[i].e;
	stream_batch_events(sb, domid, ring, MTRACE_CLOCK_MONOTONIC, arr, be_nsent - first);
}

static void batch_events(void)
{
	struct event_base *base = event_base_new();
	Mtrace__Subscribe all = MTRACE__SUBSCRIBE__INIT, some = MTRACE__SUBSCRIBE__INIT;
	uint32_t ops[] = { MTRACE_OP_READ, MTRACE_OP_LABEL };
	struct stream_batch *sb, *sb2;
	struct stream_group *ga, *go, *g2;
	uint64_t ts[4] = { 1000000000000u, 2000000000000u, 3000000000000u, 4000000000000u };
	uint32_t seq[4] = { 0, 0, 0, 0 };
	size_t busy, idle;

	REQUIRE(base);
	for (size_t i = 0; i < BE_STRS; i++)
		snprintf(
		    be_strs[i], sizeof(be_strs[i]), i % 2 ? "label-%zu" : "a-longer-name-%zu", i);
	strcpy(be_strs[1], "");
	all.events = some.events = true;
	some.n_ops = 2;
	some.ops = ops;
	sb = stream_batch_new(base, be_send, NULL);
	REQUIRE(sb);
	ga = stream_group_join(sb, (struct stream_client *)(void *)&be_all, &all);
	go = stream_group_join(sb, (struct stream_client *)(void *)&be_ops, &some);
	REQUIRE(ga && go && ga != go);
	/* two domains of two rings, arrays of 1 to 700 events, flushed now and then */
	while (be_nsent < BE_EVENTS - 1000) {
		unsigned which = (unsigned)(be_random() % 4);

		be_emit(
		    sb, 1 + which / 2, which % 2, 1 + be_random() % 700, &ts[which], &seq[which]);
		if (be_random() % 3 == 0)
			stream_batch_flush(sb);
	}
	stream_batch_flush(sb);
	CHECK(be_all.bad == 0 && be_all.dropped == 0 && be_all.got == be_nsent,
	    "everything: got %zu of %zu, %zu wrong, %zu dropped", be_all.got, be_nsent, be_all.bad,
	    be_all.dropped);
	CHECK(be_ops.bad == 0 && be_ops.dropped == 0 && be_ops.got > 0,
	    "op filter: got %zu, %zu wrong, %zu dropped", be_ops.got, be_ops.bad, be_ops.dropped);
	CHECK(be_all.batches > 100, "%zu batches", be_all.batches);

	/* Columns idle for a flush are kept (a ring that speaks every other turn would
	 * grow them again each time); idle for a second, given back. */
	for (unsigned which = 0; which < 4; which++)
		be_emit(sb, 1 + which / 2, which % 2, 100, &ts[which], &seq[which]);
	stream_batch_flush(sb);
	busy = stream_batch_memory(sb)->bytes;
	be_emit(sb, 1, 0, 100, &ts[0], &seq[0]);
	stream_batch_flush(sb);
	stream_batch_flush(sb);
	CHECK(stream_batch_memory(sb)->bytes == busy, "one ring busy: %zu bytes, all four %zu",
	    stream_batch_memory(sb)->bytes, busy);
	usleep(1100 * 1000);
	be_emit(sb, 1, 0, 100, &ts[0], &seq[0]);
	stream_batch_flush(sb);
	idle = stream_batch_memory(sb)->bytes;
	CHECK(idle < busy / 2, "after a second idle: %zu bytes, all four busy %zu", idle, busy);
	CHECK(be_all.bad == 0 && be_all.got == be_nsent, "after: got %zu of %zu", be_all.got,
	    be_nsent);

	/* A second batcher (a second server's, another test's) beside it: its columns
	 * are counted in its own account, its groups get none of the first one's events,
	 * and its cap is its own. */
	sb2 = stream_batch_new(base, be_send, NULL);
	REQUIRE(sb2);
	g2 = stream_group_join(sb2, (struct stream_client *)(void *)&be_other, &all);
	REQUIRE(g2);
	stream_batch_set_cap(sb2, 1);
	busy = stream_batch_memory(sb)->bytes;
	be_emit(sb, 1, 0, 100, &ts[0], &seq[0]);
	stream_batch_flush(sb);
	stream_batch_flush(sb2);
	CHECK(stream_batch_memory(sb2)->bytes == 0 && stream_batch_memory(sb2)->encoded == 0,
	    "the second batcher holds %zu bytes, encoded %llu batches",
	    stream_batch_memory(sb2)->bytes, (unsigned long long)stream_batch_memory(sb2)->encoded);
	CHECK(be_other.batches == 0 && be_other.dropped == 0,
	    "the second batcher's client: %zu "
	    "batches, %zu dropped",
	    be_other.batches, be_other.dropped);
	CHECK(be_all.bad == 0 && be_all.dropped == 0 && be_all.got == be_nsent,
	    "the first one's cap is not the second's: got %zu of %zu, %zu dropped", be_all.got,
	    be_nsent, be_all.dropped);
	stream_group_leave(g2, (struct stream_client *)(void *)&be_other);
	stream_batch_free(sb2);

	stream_group_leave(ga, (struct stream_client *)(void *)&be_all);
	stream_group_leave(go, (struct stream_client *)(void *)&be_ops);
	CHECK(
	    stream_batch_memory(sb)->bytes == 0, "%zu bytes left", stream_batch_memory(sb)->bytes);
	stream_batch_free(sb);
	event_base_free(base);
}

/*
 * A run (stream_columns_take) takes the strings new to its batch itself, and ends
 * where acc_append would send the batch first: before its strings pass 512 KiB
 * (COL_MAX_STR), and at the first string once the columns are past
 * client_batch_total.  Distinct 4000-byte labels: 131 fit in 512 KiB.
 */
static void run_new_strings(void)
{
	static char strs[255][4000];
	struct mtrace_event ev[255], first = { .ts = 1000, .thread = 1, .op = MTRACE_OP_READ };
	struct stream_col_account ac;
	struct stream_columns *a;
	size_t n, cap_at;

	for (size_t i = 0; i < 255; i++) {
		memset(strs[i], 'a' + (int)(i % 26), sizeof(strs[i]) - 1);
		snprintf(strs[i], 8, "%03zu", i);
		strs[i][3] = '-';
		ev[i] = (struct mtrace_event){ .ts = 1001 + i, .thread = 1, .op = MTRACE_OP_LABEL };
		ev[i].str = strs[i];
		ev[i].str_len = (uint16_t)strlen(strs[i]);
	}
	stream_col_account_init(&ac);
	for (int pass = 0; pass < 2; pass++) {
		a = stream_columns_new(&ac, 1, 0, MTRACE_CLOCK_MONOTONIC);
		REQUIRE(a && stream_columns_grow(a) == 0 && a->cap >= 256, "columns");
		stream_columns_put(a, &first);
		/* pass 1: room for a few strings more than the columns hold now */
		cap_at = ac.mem.bytes + 40000;
		stream_columns_set_cap(&ac, pass ? cap_at : 0);
		n = stream_columns_take(a, ev, 255);
		if (pass == 0)
			CHECK(n == 131 && a->nref == 131 && a->dict.bytes <= 512 * 1024,
			    "run of %zu events, %zu strings, %zu bytes of them", n, a->nref,
			    a->dict.bytes);
		else
			CHECK(n > 0 && n < 131 && a->nref == n && ac.mem.bytes > cap_at,
			    "capped: run of %zu events, %zu bytes held of %zu", n, ac.mem.bytes,
			    cap_at);
		stream_columns_set_cap(&ac, 0);
		for (size_t i = 0; i < a->nref; i++)
			CHECK(!strcmp(stream_dict_str(&a->dict, a->str_ref[i]), strs[i]),
			    "string %zu", i);
		stream_columns_free(a);
		if (pass == 1 && n > 0) {
			/* no further than the first string past the total: one fewer was
			 * within it */
			a = stream_columns_new(&ac, 1, 0, MTRACE_CLOCK_MONOTONIC);
			REQUIRE(a && stream_columns_grow(a) == 0, "columns");
			stream_columns_put(a, &first);
			CHECK(stream_columns_take(a, ev, n - 1) == n - 1 && ac.mem.bytes <= cap_at,
			    "%zu strings: %zu bytes held of %zu", n - 1, ac.mem.bytes, cap_at);
			stream_columns_free(a);
		}
	}
	CHECK(ac.mem.bytes == 0, "%zu bytes left", ac.mem.bytes);
}

const struct unit_test unit_stream[] = {
	{ "stream", "blob_events", blob_events },
	{ "stream", "dict_cache", dict_cache },
	{ "stream", "dict_keeps", dict_keeps },
	{ "stream", "batch_events", batch_events },
	{ "stream", "run_new_strings", run_new_strings },
	{ "stream", NULL, NULL },
};
