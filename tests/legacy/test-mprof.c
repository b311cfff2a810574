/*
 * test-mprof.c - unit tests of daemon/mprof.c: ref lists, the real net.ctf buffer, and
 * buffers written by mirage-profile's writer algorithm (guest/mprof/mprof-writer.c)
 * with half-written events, counter wrap, overwritten packets and damaged headers.
 *
 * Usage: test-mprof NET.CTF
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mprof.h"
#include "mprof-writer.h"


/* Emitted events, as the checks need them. */
struct sink {
	uint64_t n;
	uint64_t next_index;	/* expected workload index of the next event, or UINT64_MAX */
	uint64_t bad;		/* events differing from what was written */
	uint64_t backwards;	/* duplicate or out of order */
	uint64_t per_op[MTRACE_OP_COUNT_MIRAGE];
	uint64_t *seen;		/* per-index flag for the loss checks */
	size_t seen_len;
};

static void
sink_cb(const struct mtrace_event *ev, void *arg)
{
	struct sink *s = arg;
	struct mpw_event want;
	char str[64];
	uint64_t i;

	s->n++;
	if (ev->op < MTRACE_OP_COUNT_MIRAGE)
		s->per_op[ev->op]++;
	if (s->next_index == UINT64_MAX - 1)
		return;		/* not a workload buffer */
	if (ev->ts < MPW_GEN_T0 || (ev->ts - MPW_GEN_T0) % 1000) {
		s->bad++;
		return;
	}
	i = (ev->ts - MPW_GEN_T0) / 1000;
	mpw_gen(i, &want, str, sizeof(str));
	if (ev->op != want.op || ev->thread != want.thread || ev->arg != want.arg ||
	    ev->type != want.type || (want.str == NULL) != (ev->str == NULL) ||
	    (want.str && (strlen(want.str) != ev->str_len || strcmp(want.str, ev->str)))) {
		s->bad++;
		return;
	}
	if (s->next_index != UINT64_MAX && i < s->next_index)
		s->backwards++;
	s->next_index = i + 1;
	if (i < s->seen_len)
		s->seen[i] = 1;
}

static void
sink_init(struct sink *s, size_t seen_len)
{
	memset(s, 0, sizeof(*s));
	s->next_index = UINT64_MAX;
	s->seen_len = seen_len;
	s->seen = calloc(seen_len ? seen_len : 1, sizeof(*s->seen));
}

static size_t
poll_copy(struct mprof_reader *r, const uint8_t *buf, size_t len, struct sink *s)
{
	uint8_t *copy = malloc(len);
	size_t n;

	memcpy(copy, buf, len);
	n = mprof_reader_poll(r, copy, len, sink_cb, s);
	free(copy);
	return n;
}

static void
test_refs(void)
{
	uint32_t refs[8];
	char err[128];
	static const char *const bad[] = {
		"", ",", "1,", ",1", "1,,2", "1, 2", " 1", "1 ", "-1", "+1", "01", "1,01",
		"4294967296", "99999999999999999999", "1;2", "1\n", "a", "1,1", "1,2,3,4,5,6,7,8,9",
	};

	CHECK(mprof_parse_refs("8,9,10", 6, refs, 8, err, sizeof(err)) == 3);
	CHECK(refs[0] == 8 && refs[1] == 9 && refs[2] == 10);
	CHECK(mprof_parse_refs("0", 1, refs, 8, err, sizeof(err)) == 1 && refs[0] == 0);
	CHECK(mprof_parse_refs("4294967295", 10, refs, 8, err, sizeof(err)) == 1 &&
	      refs[0] == UINT32_MAX);
	/* len bounds the value: bytes past it are not read, an embedded NUL is garbage */
	CHECK(mprof_parse_refs("12,13xyz", 5, refs, 8, err, sizeof(err)) == 2);
	CHECK(mprof_parse_refs("12\0" "13", 5, refs, 8, err, sizeof(err)) == -1);
	CHECK(mprof_parse_refs(NULL, 0, refs, 8, err, sizeof(err)) == -1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		if (mprof_parse_refs(bad[i], strlen(bad[i]), refs, 8, err, sizeof(err)) != -1) {
			fprintf(stderr, "accepted bad ref list \"%s\"\n", bad[i]);
			check_failures++;
		}
		CHECK(err[0] != 0);
	}
	/* the cap: exactly max is fine, one more is not */
	CHECK(mprof_parse_refs("1,2,3,4,5,6,7,8", 15, refs, 8, err, sizeof(err)) == 8);
}

static uint8_t *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The real buffer: nothing on the first poll (not yet stable), everything on the
 * second, nothing again on the third; no loss, no damage. */
static void
test_net_ctf(const char *path)
{
	size_t len;
	uint8_t *buf = read_file(path, &len);
	struct mprof_reader *r;
	struct sink s;
	const struct mprof_stats *st;
	size_t total;

	CHECK(buf != NULL);
	if (!buf)
		return;
	sink_init(&s, 0);
	s.next_index = UINT64_MAX - 1;
	r = mprof_reader_new(len);
	CHECK(r != NULL);
	CHECK(poll_copy(r, buf, len, &s) == 0);
	total = poll_copy(r, buf, len, &s);
	CHECK(total > 0);
	CHECK(poll_copy(r, buf, len, &s) == 0);
	st = mprof_reader_stats(r);
	CHECK(st->events == total && s.n == total);
	CHECK(st->lost == 0 && st->lost_packets == 0 && st->truncated == 0);
	CHECK(st->torn == 0 && st->corrupt == 0 && st->unknown == 0);
	/* packet 0 is full (sealed), 1 is being written, 2 and 3 are empty */
	CHECK(st->packets == 1);
	fprintf(stderr, "net.ctf: %zu events, %s\n", total, mprof_reader_error(r));

	/* damaged copy: a bad magic in packet 2 is counted once however often it is seen */
	buf[2 * (len / 4)] ^= 0xff;
	poll_copy(r, buf, len, &s);
	poll_copy(r, buf, len, &s);
	CHECK(st->corrupt == 1);
	CHECK(strstr(mprof_reader_error(r), "magic") != NULL);
	/* a length that is not the reader's */
	CHECK(mprof_reader_poll(r, buf, len - 1, sink_cb, &s) == 0 && st->corrupt == 2);
	CHECK(s.n == total);
	mprof_reader_free(r);
	free(buf);
	free(s.seen);
}

/* A writer and a reader polling after every event, across 16-bit counter wrap. */
static void
test_wrap(void)
{
	size_t len = 4 * 256 + 3;	/* not a multiple of 4: the last packet is longer */
	uint8_t *buf = calloc(1, len);
	struct mprof_writer w;
	struct mprof_reader *r = mprof_reader_new(len);
	struct sink s;
	uint64_t i;

	sink_init(&s, 0);
	CHECK(mpw_init(&w, buf, len) == 0);
	for (i = 0; w.packets_started < 70000 + 4; i++) {
		struct mpw_event ev;
		char str[32];
		bool ok;

		mpw_gen(i, &ev, str, sizeof(str));
		mpw_emit(&w, &ev, &ok);
		CHECK(ok);
		poll_copy(r, buf, len, &s);
	}
	poll_copy(r, buf, len, &s);
	CHECK(s.n == i);
	CHECK(s.bad == 0 && s.backwards == 0);
	CHECK(mprof_reader_stats(r)->lost_packets == 0);
	CHECK(mprof_reader_stats(r)->corrupt == 0);
	CHECK(mprof_reader_stats(r)->resyncs == 0);
	CHECK(mprof_reader_stats(r)->packets + 1 == w.packets_started);
	mprof_reader_free(r);
	free(buf);
	free(s.seen);
}

/*
 * Half-written events: content_size is published before the bytes.  Each event is
 * begun, partly written, polled, then finished.  No partial image may be emitted,
 * every finished event must be, once.
 */
static void
test_torn(void)
{
	size_t len = 4 * 512;
	uint8_t *buf = calloc(1, len);
	struct mprof_writer w;
	struct mprof_reader *r = mprof_reader_new(len);
	struct sink s;
	uint64_t i, n = 5000;

	srand(7);
	sink_init(&s, n);
	mpw_init(&w, buf, len);
	for (i = 0; i < n; i++) {
		struct mpw_event ev;
		char str[32];
		bool ok;

		mpw_gen(i, &ev, str, sizeof(str));
		mpw_begin(&w, &ev, &ok);
		mpw_write(&w, (uint32_t)rand() % w.pending_len);
		poll_copy(r, buf, len, &s);
		mpw_write(&w, UINT32_MAX);
		if (rand() % 3 == 0)
			poll_copy(r, buf, len, &s);
	}
	poll_copy(r, buf, len, &s);
	poll_copy(r, buf, len, &s);
	CHECK(s.bad == 0 && s.backwards == 0);
	CHECK(s.n == n);
	CHECK(mprof_reader_stats(r)->torn > 0);
	CHECK(mprof_reader_stats(r)->corrupt == 0);
	CHECK(mprof_reader_stats(r)->lost_packets == 0);
	fprintf(stderr, "torn: %" PRIu64 " torn images rejected, %" PRIu64 " events\n",
		mprof_reader_stats(r)->torn, s.n);
	mprof_reader_free(r);
	free(buf);
	free(s.seen);
}

/*
 * Overwrites between polls: bursts of events between polls so that whole packets are
 * overwritten unseen.  The reader's lost_packets / truncated must equal the packets
 * of which nothing / a strict prefix was emitted, found from the writer's side.
 */
static void
test_loss(void)
{
	size_t len = 4 * 400;
	uint8_t *buf = calloc(1, len);
	struct mprof_writer w;
	struct mprof_reader *r = mprof_reader_new(len);
	struct sink s;
	uint64_t n = 40000, i;
	uint64_t *first = calloc(n + 8, sizeof(*first));	/* first event of packet k */
	uint64_t npk = 1, lost = 0, trunc = 0, full = 0, k0 = UINT64_MAX;

	srand(11);
	sink_init(&s, n);
	mpw_init(&w, buf, len);
	first[0] = 0;
	for (i = 0; i < n; i++) {
		struct mpw_event ev;
		char str[32];
		bool ok;

		mpw_gen(i, &ev, str, sizeof(str));
		if (mpw_emit(&w, &ev, &ok))
			first[npk++] = i;
		/* mostly frequent polls, sometimes a long gap of up to ~10 packets */
		if (rand() % 100 < 4 && rand() % 2) {
			/* the packets in the buffer at the first poll are where reading starts */
			if (k0 == UINT64_MAX)
				k0 = w.packets_started > MPW_PACKETS ?
				     w.packets_started - MPW_PACKETS : 0;
			poll_copy(r, buf, len, &s);
		}
	}
	poll_copy(r, buf, len, &s);
	poll_copy(r, buf, len, &s);
	first[npk] = n;
	for (uint64_t k = 0; k < npk; k++) {
		uint64_t got = 0;

		for (uint64_t e = first[k]; e < first[k + 1]; e++)
			got += s.seen[e];
		if (k < k0)
			continue;	/* overwritten before the first poll: history, not loss */
		/* what was emitted of a packet is always its beginning */
		for (uint64_t e = first[k]; e + 1 < first[k + 1]; e++)
			CHECK(!(s.seen[e + 1] && !s.seen[e]));
		if (got == 0)
			lost++;
		else if (got < first[k + 1] - first[k])
			trunc++;
		else if (k + 1 < npk)
			full++;
	}
	CHECK(s.bad == 0 && s.backwards == 0);
	CHECK(lost > 0);
	CHECK(mprof_reader_stats(r)->lost_packets == lost);
	/* A packet may vanish after all its events were read but before a newer packet
	 * proved it finished: the reader cannot tell that from a truncation. */
	CHECK(mprof_reader_stats(r)->truncated >= trunc);
	CHECK(mprof_reader_stats(r)->truncated <= trunc + full);
	CHECK(mprof_reader_stats(r)->corrupt == 0);
	CHECK(s.seen[n - 1]);
	fprintf(stderr, "loss: %" PRIu64 " packets, %" PRIu64 " lost, %" PRIu64 " truncated, "
		"%" PRIu64 " events emitted, %" PRIu64 " estimated lost (true %" PRIu64 ")\n",
		npk, lost, trunc, s.n, mprof_reader_stats(r)->lost,
		n - first[k0] - s.n);
	mprof_reader_free(r);
	free(buf);
	free(first);
	free(s.seen);
}

/* Random damage of copies (headers and events): never a crash or a read outside the
 * copy (ASan), never an event outside what the copy holds. */
static void
test_damage(void)
{
	size_t len = 4 * 300;
	uint8_t *buf = calloc(1, len);
	struct mprof_writer w;
	struct mprof_reader *r = mprof_reader_new(len);
	struct sink s;

	srand(3);
	sink_init(&s, 0);
	s.next_index = UINT64_MAX - 1;
	mpw_init(&w, buf, len);
	for (uint64_t i = 0; i < 20000; i++) {
		struct mpw_event ev;
		char str[32];
		bool ok;
		uint8_t *copy;

		mpw_gen(i, &ev, str, sizeof(str));
		mpw_emit(&w, &ev, &ok);
		copy = malloc(len);
		memcpy(copy, buf, len);
		for (int k = rand() % 4; k > 0; k--)
			copy[rand() % len] = (uint8_t)rand();
		mprof_reader_poll(r, copy, len, sink_cb, &s);
		free(copy);
	}
	CHECK(mprof_reader_stats(r)->corrupt + mprof_reader_stats(r)->unknown > 0);
	CHECK(mprof_reader_stats(r)->events == s.n);
	mprof_reader_free(r);
	free(buf);
	free(s.seen);
}

static void
test_new_bounds(void)
{
	CHECK(mprof_reader_new(MPROF_MIN_BUF - 1) == NULL);
	CHECK(mprof_reader_new((size_t)MPROF_MAX_PAGES * MPROF_PAGE_SIZE + 1) == NULL);
	mprof_reader_free(mprof_reader_new(MPROF_MIN_BUF));
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test-mprof NET.CTF\n");
		return 2;
	}
	test_refs();
	test_new_bounds();
	test_net_ctf(argv[1]);
	test_wrap();
	test_torn();
	test_loss();
	test_damage();
	return check_status("mprof");
}
