/*
 * fuzz-volume-client - the client frame + Subscribe path (fuzz-client.c) on N
 * generated request streams (gen.c), then the counts reached.  On demand: a figure of
 * how many inputs ran, not a CI test.
 *
 *   fuzz-volume-client [-n STREAMS] [-s SEED]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-client.h"
#include "gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 20];
	struct gen g = { 0x9E3779B97F4A7C15ull };
	uint64_t n = 1000000;
	int ch;

	while ((ch = getopt(argc, argv, "n:s:")) != -1) {
		switch (ch) {
		case 'n':
			n = strtoull(optarg, NULL, 10);
			break;
		case 's':
			g.rng = strtoull(optarg, NULL, 10) | 1;
			break;
		default:
			fprintf(stderr, "usage: fuzz-volume-client [-n STREAMS] [-s SEED]\n");
			return 2;
		}
	}
	double t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		size_t len = gen_stream(&g, buf, sizeof(buf));
		LLVMFuzzerTestOneInput(buf, len);
	}
	double t = now() - t0;
	const struct fuzz_client_counts *k = &fuzz_client_counts;
	printf("fuzz-volume-client: %" PRIu64 " streams, %" PRIu64 " frames in %.1f s "
	       "(%.0f frames/s): hello %" PRIu64 " ping %" PRIu64 " other %" PRIu64
	       " bad-frame %" PRIu64 " partial %" PRIu64 " undecodable %" PRIu64
	       " subscribe refused %" PRIu64 " taken %" PRIu64 " copy-failed %" PRIu64
	       " label-matches %" PRIu64 "\n",
	    k->inputs, k->frames, t, (double)k->frames / t, k->hellos, k->pings, k->other,
	    k->bad_frames, k->partial, k->undecodable, k->sub_refused, k->sub_taken,
	    k->sub_copy_failed, k->label_matches);
	return 0;
}
