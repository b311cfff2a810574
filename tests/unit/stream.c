/*
 * stream.c - unit tests of the stream's pure parts: an event batch packed by
 * stream_blob_pack_events is byte for byte what protobuf-c packs for the whole
 * ServerMsg, and the batch dictionary's cache never takes one string for another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtrace-ring.h"
#include "stream-blob.h"
#include "stream-dict.h"
#include "unit.h"

static void check_same(const Mtrace__EventBatch *eb, uint32_t col_max, const char *what)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	struct stream_blob *whole, *events;

	m.msg_case = MTRACE__SERVER_MSG__MSG_EVENTS;
	m.events = (Mtrace__EventBatch *)eb;
	whole = stream_blob_pack(&m);
	events = stream_blob_pack_events(eb, col_max);
	REQUIRE(whole && events, "%s", what);
	CHECK(whole->len == events->len && memcmp(whole->data, events->data, whole->len) == 0,
	    "%s: %zu bytes, protobuf-c %zu", what, events->len, whole->len);
	stream_blob_unref(whole);
	stream_blob_unref(events);
}

/*
 * stream_blob_pack_events packs into room for the most a batch can take (no sizing
 * pass): varint columns at the width of col_max and of the string count, strings long
 * and short.  Under ASan a bound one byte short is a heap overflow.
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
	/* the largest op and type value: 1-, 2- and 3-byte varints */
	uint32_t maxes[] = { 0, 127, 255, 300, 20000 };
	/* strings: none, a few, past 128 (2-byte refs) */
	size_t nstrs[] = { 0, 3, 300 };

	memset(long_str, 'x', MTRACE_STR_MAX);
	for (size_t i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "s%zu", i);
		strs[i] = names[i];
	}
	strs[1] = (char *)"";
	strs[2] = long_str;
	check_same(&eb, 0, "empty batch");
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
				check_same(&eb, max, "batch");
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

const struct unit_test unit_stream[] = {
	{ "stream", "blob_events", blob_events },
	{ "stream", "dict_cache", dict_cache },
	{ "stream", NULL, NULL },
};
