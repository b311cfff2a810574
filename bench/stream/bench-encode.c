/*
 * bench-encode - what an EventBatch costs protobuf-c to pack (mtraced, once per
 * subscription) and to unpack (every client), per event, for the shipped layout
 * (proto/mtrace.proto) and the alternatives in encodings.proto.
 *
 *   bench-encode [-n events per batch (default 4096)] [-r rounds (default 2000)]
 *
 * Two value mixes: "small" (thread ids below 4096, small args: a unikernel's usual
 * trace) and "wide" (64-bit ids and args: varints at their worst).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "encodings.pb-c.h"
#include "mtrace.pb-c.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

struct cols {
	size_t n;
	int64_t *ts64, *thread, *arg;
	int32_t *ts32;
	uint32_t *op, *type;
};

static void fill(struct cols *c, int wide)
{
	for (size_t i = 0; i < c->n; i++) {
		c->ts32[i] = (int32_t)(50 + rnd() % 400);
		c->ts64[i] = c->ts32[i];
		c->op[i] = (uint32_t)(rnd() % 14);
		c->type[i] = c->op[i] == 0 ? (uint32_t)(rnd() % 20) : 0;
		if (wide) {
			c->thread[i] = (int64_t)rnd();
			c->arg[i] = (int64_t)rnd();
		} else {
			c->thread[i] = rnd() % 10 == 0 ? -1 : (int64_t)(1 + rnd() % 4096);
			c->arg[i] =
			    rnd() % 3 == 0 ? (int64_t)(1 + rnd() % 4096) : (int64_t)(rnd() % 100);
		}
	}
}

/* pack = get_packed_size + pack, as mtraced does; unpack = unpack + free, as a client. */
#define MEASURE(NAME, TYPE, PFX, SETUP)                                                             \
	do {                                                                                        \
		TYPE m;                                                                             \
		PFX##__init(&m);                                                                    \
		SETUP;                                                                              \
		size_t len = PFX##__get_packed_size(&m);                                            \
		uint8_t *buf = malloc(len);                                                         \
		double t0 = now_s();                                                                \
		for (int r = 0; r < rounds; r++) {                                                  \
			len = PFX##__get_packed_size(&m);                                           \
			PFX##__pack(&m, buf);                                                       \
		}                                                                                   \
		double t1 = now_s();                                                                \
		for (int r = 0; r < rounds; r++) {                                                  \
			TYPE *u = PFX##__unpack(NULL, len, buf);                                    \
			if (!u || u->n_op != c.n) {                                                 \
				fprintf(stderr, "bench-encode: %s does not decode\n", NAME);        \
				exit(1);                                                            \
			}                                                                           \
			PFX##__free_unpacked(u, NULL);                                              \
		}                                                                                   \
		double t2 = now_s();                                                                \
		double ev = (double)rounds * (double)c.n;                                           \
		printf(                                                                             \
		    "  %-38s pack %5.1f ns/event  unpack+free %5.1f ns/event  %5.1f bytes/event\n", \
		    NAME, (t1 - t0) * 1e9 / ev, (t2 - t1) * 1e9 / ev, (double)len / (double)c.n);   \
		free(buf);                                                                          \
	} while (0)

#define COLS(ts)                                                                           \
	(m.n_ts_delta = m.n_op = m.n_thread = m.n_arg = m.n_type = c.n, m.ts_delta = (ts), \
	    m.op = c.op, m.thread = c.thread, m.arg = c.arg, m.type = c.type)

int main(int argc, char **argv)
{
	size_t n = 4096;
	int rounds = 2000, ch;
	struct cols c;

	while ((ch = getopt(argc, argv, "n:r:")) != -1) {
		switch (ch) {
		case 'n':
			n = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench-encode [-n events per batch] [-r rounds]\n");
			return 2;
		}
	}
	if (n == 0 || rounds <= 0)
		return 2;
	c.n = n;
	c.ts64 = calloc(n, 8);
	c.thread = calloc(n, 8);
	c.arg = calloc(n, 8);
	c.ts32 = calloc(n, 4);
	c.op = calloc(n, 4);
	c.type = calloc(n, 4);
	if (!c.ts64 || !c.thread || !c.arg || !c.ts32 || !c.op || !c.type)
		return 1;
	printf("protobuf-c EventBatch columns, %zu events a batch, %d rounds\n", n, rounds);
	for (int wide = 0; wide < 2; wide++) {
		fill(&c, wide);
		printf("%s values:\n", wide ? "wide (64-bit)" : "small");
		MEASURE("shipped: sfixed32/sfixed64", Mtrace__EventBatch, mtrace__event_batch,
		    COLS(c.ts32));
		MEASURE("mixed: sfixed32 deltas, sint64", MtraceBench__MixedBatch,
		    mtrace_bench__mixed_batch, COLS(c.ts32));
		MEASURE("varint: every column (until 2026-12)", MtraceBench__VarintBatch,
		    mtrace_bench__varint_batch, COLS(c.ts64));
	}
	return 0;
}
