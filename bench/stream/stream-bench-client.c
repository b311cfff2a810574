/*
 * stream-bench-client - a client that decodes every batch, counts events and measures
 * the delay from the guest's timestamp (CLOCK_MONOTONIC, same host) to receipt.
 *
 *   stream-bench-client -s|--socket SOCK [-N|--count events] [-t|--time seconds]
 *                       [-i|--idle idle-ms] [-q|--no-latency] [-S|--shared-memory]
 *                       [-T|--timeline FILE (one line per batch: receipt ns, events,
 *                        oldest/newest delay us)]
 *
 * With -S the events come through a shared-memory region (docs/stream-protocol.md).
 * Ends at N events, after t seconds, idle-ms after the last message once events came,
 * or on Goodbye/EOF, then prints one JSON line:
 * events, seconds from first to last event received, events/s, client drops, ring
 * losses, latency p50/p99/max in microseconds.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "malloc-tune.h"
#include "mtrace-client.h"

#define HIST_US 100000 /* 1 us buckets up to 100 ms, then one overflow bucket */

static uint64_t hist[HIST_US + 1];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double pct(uint64_t total, double p)
{
	uint64_t want = (uint64_t)((double)total * p), acc = 0;

	for (size_t i = 0; i <= HIST_US; i++) {
		acc += hist[i];
		if (acc > want)
			return (double)i;
	}
	return (double)HIST_US;
}

int main(int argc, char **argv)
{
	const char *sock = NULL;
	FILE *timeline = NULL;
	uint64_t want = 0, events = 0, dropped = 0, lost = 0, maxlat = 0, t0 = 0, t1 = 0;
	double seconds = 0;
	int ch, latency = 1, idle_ms = 0, shm = 0;
	char err[256];
	struct mtc *c;
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;

	malloc_tune();
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'N' },
		{ "time", required_argument, NULL, 't' },
		{ "idle", required_argument, NULL, 'i' },
		{ "no-latency", no_argument, NULL, 'q' },
		{ "timeline", required_argument, NULL, 'T' },
		{ "shared-memory", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	while ((ch = getopt_long(argc, argv, "s:N:t:i:qT:S", longopts, NULL)) != -1) {
		switch (ch) {
		case 'i':
			idle_ms = atoi(optarg);
			break;
		case 's':
			sock = optarg;
			break;
		case 'N':
			want = strtoull(optarg, NULL, 10);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 'q':
			latency = 0;
			break;
		case 'S':
			shm = 1;
			break;
		case 'T':
			timeline = fopen(optarg, "w");
			if (!timeline) {
				perror(optarg);
				return 2;
			}
			break;
		default:
			return 2;
		}
	}
	c = mtc_connect(sock, "stream-bench-client", err, sizeof(err));
	if (!c) {
		fprintf(stderr, "stream-bench-client: %s\n", err);
		return 1;
	}
	sub.events = 1;
	sub.shared_memory = shm;
	if (mtc_subscribe(c, &sub) < 0)
		return 1;
	uint64_t deadline = seconds > 0 ? mono_ns() + (uint64_t)(seconds * 1e9) : 0;
	for (;;) {
		Mtrace__ServerMsg *m;
		int timeout = deadline ? (int)((int64_t)(deadline - mono_ns()) / 1000000) : -1;
		int r;

		if (deadline && timeout <= 0)
			break;
		if (idle_ms > 0 && events > 0 && (timeout < 0 || timeout > idle_ms))
			timeout = idle_ms;
		r = mtc_next(c, timeout, &m, NULL, NULL, err, sizeof(err));
		if (r <= 0) {
			if (r < 0 && errno)
				fprintf(stderr, "stream-bench-client: %s\n", err);
			break;
		}
		if (m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS) {
			const Mtrace__EventBatch *b = m->events;
			uint64_t now = mono_ns(), ts = b->base_ts;

			if (!t0)
				t0 = now;
			t1 = now;
			events += b->n_op;
			uint64_t oldest = 0, newest = UINT64_MAX;
			for (size_t i = 0; latency && i < b->n_ts_delta; i++) {
				uint64_t d;
				ts += (uint64_t)b->ts_delta[i];
				d = now > ts ? (now - ts) / 1000 : 0;
				hist[d > HIST_US ? HIST_US : d]++;
				if (d > maxlat)
					maxlat = d;
				if (d > oldest)
					oldest = d;
				if (d < newest)
					newest = d;
			}
			if (timeline && b->n_ts_delta)
				fprintf(timeline, "%" PRIu64 " %zu %" PRIu64 " %" PRIu64 "\n", now,
				    b->n_op, oldest, newest);
		} else if (m->msg_case == MTRACE__SERVER_MSG__MSG_LOSS) {
			dropped += m->loss->dropped_for_client;
			lost += m->loss->lost_in_ring;
		} else if (m->msg_case == MTRACE__SERVER_MSG__MSG_GOODBYE) {
			mtc_msg_free(m);
			break;
		}
		mtc_msg_free(m);
		if (want && events + dropped >= want)
			break;
	}
	double el = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	/* CPU time: on a shared machine, wall-clock rates mostly measure the neighbours. */
	double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("{\"events\":%" PRIu64 ",\"seconds\":%.3f,\"events_per_s\":%.0f,"
	       "\"dropped_for_client\":%" PRIu64 ",\"lost_in_ring\":%" PRIu64
	       ",\"cpu_s\":%.3f,\"cpu_ns_per_event\":%.1f",
	    events, el, el > 0 ? (double)events / el : 0, dropped, lost, cpu,
	    events ? cpu * 1e9 / (double)events : 0);
	if (latency && events)
		printf(
		    ",\"latency_p50_us\":%.0f,\"latency_p99_us\":%.0f,\"latency_max_us\":%" PRIu64,
		    pct(events, 0.5), pct(events, 0.99), maxlat);
	printf("}\n");
	mtc_close(c);
	if (timeline)
		fclose(timeline);
	return 0;
}
