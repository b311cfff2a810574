/*
 * gen.h - client request streams for the fuzz-volume targets: valid frames (Hello,
 * Subscribe with every field, Ping, unknown fields under odd tags) packed by
 * protobuf-c, then mutated (bits, bytes, lengths, cuts, repeats), from a seed.
 */
#ifndef MTRACE_BENCH_FUZZ_GEN_H
#define MTRACE_BENCH_FUZZ_GEN_H

#include <stddef.h>
#include <stdint.h>

struct gen {
	uint64_t rng;
};

/* Fill buf (cap bytes) with one stream of frames; returns its length. */
size_t gen_stream(struct gen *g, uint8_t *buf, size_t cap);
uint64_t gen_next(struct gen *g);

#endif
