/*
 * fuzz-client.h - what fuzz-client.c reached, for the volume driver to print.
 */
#ifndef MTRACE_BENCH_FUZZ_CLIENT_H
#define MTRACE_BENCH_FUZZ_CLIENT_H

#include <stdint.h>

struct fuzz_client_counts {
	uint64_t inputs, frames, bad_frames, partial, undecodable;
	uint64_t hellos, pings, other;
	uint64_t sub_refused, sub_copy_failed, sub_taken, label_matches;
};

extern struct fuzz_client_counts fuzz_client_counts;

#endif
