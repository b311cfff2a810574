/*
 * peer-load.c - the LTTng-UST side of bench/peer-lttng: one thread emits N events,
 * flat out or paced at RATE events/s in 1 ms batches, and prints what that cost, both
 * in wall time and in its own CPU time (the machine is shared: CPU time is what
 * bench-ring reports for mtrace's producer too).
 *
 * usage: peer-load N [RATE]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mtrace_peer_tp.h"

static uint64_t ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t n, i = 0, w0, c0, w1, c1, batch;
	double rate;

	if (argc < 2) {
		fprintf(stderr, "usage: %s N [RATE]\n", argv[0]);
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	rate = argc > 2 ? strtod(argv[2], NULL) : 0;
	batch = rate > 0 ? (uint64_t)(rate / 1000) : n;
	if (batch < 1)
		batch = 1;
	w0 = ns(CLOCK_MONOTONIC);
	c0 = ns(CLOCK_THREAD_CPUTIME_ID);
	while (i < n) {
		uint64_t end = i + batch < n ? i + batch : n;
		for (; i < end; i++)
			tracepoint(mtrace_peer, ev, 1, 0, i, i + 1);
		if (rate > 0) {
			uint64_t due = w0 + (uint64_t)((double)i * 1e9 / rate);
			struct timespec ts = { (time_t)(due / 1000000000u),
				(long)(due % 1000000000u) };
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	c1 = ns(CLOCK_THREAD_CPUTIME_ID);
	w1 = ns(CLOCK_MONOTONIC);
	printf("events=%llu elapsed_s=%.6f ns_per_event=%.2f cpu_ns_per_event=%.2f "
	       "events_per_s=%.0f\n",
	    (unsigned long long)n, (w1 - w0) / 1e9, (double)(w1 - w0) / (double)n,
	    (double)(c1 - c0) / (double)n, (double)n * 1e9 / (double)(w1 - w0));
	return 0;
}
