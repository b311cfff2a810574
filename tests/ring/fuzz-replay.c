/*
 * fuzz-replay.c - drives the libFuzzer entry point without libFuzzer (gcc builds):
 * replays the files given as arguments (a saved corpus or crash), or else a
 * generated corpus: valid producer output, then many seeded mutations of it
 * (bit flips, length/op/seq/index scribbles, truncations).
 *
 * usage: fuzz-replay [-n ITERATIONS] [FILE...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtrace-guest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 20];
	size_t n;

	if (f == NULL) {
		perror(path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

int
main(int argc, char **argv)
{
	long iters = 20000;
	int i = 1, rc = 0;

	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		iters = atol(argv[2]);
		i = 3;
	}
	if (i < argc) {
		for (; i < argc; i++)
			rc |= replay_file(argv[i]);
		printf("replayed the given file(s)\n");
		return rc;
	}

	/* Seed: a real ring's bytes, prefixed with its head and tail. */
	static _Alignas(4096) uint8_t hdr[MTRACE_PAGE_SIZE], data[2 * MTRACE_PAGE_SIZE];
	static uint8_t in[16 + sizeof(data)];
	struct mtrace_ring r;
	mtrace_ring_init_local(&r, (struct mtrace_ring_hdr *)hdr, data, 2, 0, 0, "seed");
	mtrace_ring_start(&r);
	for (int k = 0; k < 700; k++) {
		if (k % 5 == 0)
			mtrace_label(&r, (uint64_t)k, "label-for-the-fuzzer");
		else
			mtrace_emit_ts(&r, (uint8_t)(k % 14), (uint8_t)k, (uint64_t)k, 1, 2);
	}
	memcpy(in, &r.head, 8);
	memcpy(in + 8, &r.tail, 8);
	memcpy(in + 16, data, sizeof(data));
	LLVMFuzzerTestOneInput(in, sizeof(in));
	LLVMFuzzerTestOneInput(in + 16, sizeof(data));

	static uint8_t m[sizeof(in)];
	for (long it = 0; it < iters; it++) {
		size_t len = sizeof(in);
		memcpy(m, in, len);
		int muts = 1 + (int)(next() % 8);
		for (int k = 0; k < muts; k++) {
			size_t at = next() % len;
			switch (next() % 6) {
			case 0: m[at] ^= (uint8_t)(1u << (next() % 8)); break;
			case 1: m[at] = (uint8_t)next(); break;
			case 2: /* a record length */
				at &= ~(size_t)7;
				if (at + 2 <= len) { uint16_t l = (uint16_t)next(); memcpy(m + at, &l, 2); }
				break;
			case 3: /* head or tail */
				{ uint64_t v = next() % 3 ? next() % (1 << 16) : next();
				  memcpy(m + (next() % 2) * 8, &v, 8); }
				break;
			case 4: len = next() % len + 1; break;
			default: /* an op */
				at = (at & ~(size_t)7) + 2;
				if (at < len) m[at] = (uint8_t)next();
			}
		}
		/* Odd iterations: the plain-buffer view (no 16-byte prefix). */
		if (it & 1)
			LLVMFuzzerTestOneInput(m + 16, len > 16 ? len - 16 : 0);
		else
			LLVMFuzzerTestOneInput(m, len);
	}
	printf("fuzz-replay: %ld generated inputs ok\n", iters);
	return 0;
}
