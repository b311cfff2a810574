/*
 * fuzz-volume-client - the daemon's request path (tests/stream/fuzz-request.c: frames,
 * ClientMsg unpack, Subscribe checks, the group's copy and compiled label filters) on N
 * generated request streams (gen.c: valid frames of every kind, then mutated), then
 * the count of streams and of frames that reached the unpacker.  On demand: a figure
 * of how many inputs ran, not a CI test.
 *
 *   fuzz-volume-client [-n STREAMS] [-s SEED]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Frames the request path will unpack: whole, within the limit, before a bad one. */
static uint64_t frames_in(const uint8_t *p, size_t n)
{
	uint64_t k = 0;
	size_t off = 0, hdr, mlen;

	while (off < n &&
	    frame_parse(p + off, n - off, FRAME_MAX_TO_DAEMON, &hdr, &mlen) == FRAME_OK) {
		k++;
		off += hdr + mlen;
	}
	return k;
}

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 20];
	struct gen g = { 0x9E3779B97F4A7C15ull };
	uint64_t n = 1000000, frames = 0, bytes = 0;
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
		frames += frames_in(buf, len);
		bytes += len;
		LLVMFuzzerTestOneInput(buf, len);
	}
	double t = now() - t0;
	printf("fuzz-volume-client: %" PRIu64 " streams, %" PRIu64 " whole frames, %" PRIu64
	       " bytes in %.1f s (%.0f frames/s), no crash\n",
	    n, frames, bytes, t, (double)frames / t);
	return 0;
}
