/*
 * stream-harness - runs the real stream server (daemon/stream*.c) on a real socket
 * with a state.h test double and a deterministic event generator in place of rings.
 * Tests drive clients against it and compare what they got with the summary of
 * what was generated, printed on stdout at the end as JSON.
 *
 *   stream-harness -s SOCK [-N events] [-r rate/s] [-D domains] [-R rings]
 *                  [-w clients to wait for] [-q queue bytes] [-m max clients]
 *                  [-L linger ms] [-C client_coalesce_us] [-B client_batch_total]
 *                  [--ring-loss] [--clock-jumps]
 *
 * --clock-jumps: event k's timestamp is clock_jump_ts(k) (arg is k), a clock that
 * jumps ahead 3 s every 997 events and steps back 2.5 s for one event in 101.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <event2/event.h>

#include "config.h"
#include "fake-state.h"
#include "log.h"
#include "ring-reader.h"
#include "stream-batch.h"
#include "stream.h"

#define CHUNK 256

static const uint8_t op_cycle[] = {
	MTRACE_OP_CREATES,
	MTRACE_OP_READ,
	MTRACE_OP_FULFILLS,
	MTRACE_OP_SWITCH,
	MTRACE_OP_LABEL,
	MTRACE_OP_COUNTER,
	MTRACE_OP_TRY_READ,
	MTRACE_OP_GC,
	MTRACE_OP_EVTCHN_SEND,
	MTRACE_OP_INCREASE,
	MTRACE_OP_SIGNAL,
	MTRACE_OP_BECOMES,
	MTRACE_OP_FAILS,
};

static struct {
	uint64_t total, rate, sent;
	unsigned domains, rings, wait_clients, linger_ms;
	bool ring_loss, clock_jumps;
	struct event_base *base;
	struct stream *s;
	struct event *gen_ev, *wait_ev, *end_ev;
	uint64_t start_ns;
	/* counts[domain][op][label index 0..3 (3 = none)] */
	uint64_t counts[FAKE_MAX_DOMAINS][256][4];
	uint64_t seq[FAKE_MAX_DOMAINS][8];
} h;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *str_for(uint8_t op)
{
	switch (op) {
	case MTRACE_OP_LABEL:
		return "net/rx \"quoted\"\tand tabbed caf\xc3\xa9";
	case MTRACE_OP_COUNTER:
		return "pkts";
	case MTRACE_OP_INCREASE:
		return "bytes";
	case MTRACE_OP_FAILS:
		return "Not_found";
	default:
		return NULL;
	}
}

/* Both jumps are beyond the 2^31 ns a batch's 32-bit deltas hold. */
static uint64_t clock_jump_ts(uint64_t k)
{
	return 1000000000000u + k * 1000u + (k / 997u) * 3000000000u -
	    (k % 101u == 50u ? 2500000000u : 0u);
}

/* Emit one run of up to CHUNK events for one (domain, ring). */
static void emit_run(unsigned dom, unsigned ring, size_t n)
{
	struct mtrace_event ev[CHUNK];
	uint64_t now = mono_ns();
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t k = h.sent + i;
		uint8_t op = op_cycle[k % sizeof(op_cycle)];
		const char *s = str_for(op);
		uint64_t thread = op == MTRACE_OP_GC ? MTRACE_THREAD_NONE : k % 13;
		/* fake_label_of's rule: thread % 4 picks the label, 3 (and idle) none. */
		unsigned li = thread == MTRACE_THREAD_NONE ? 3 : (unsigned)(thread % 4);

		ev[i] = (struct mtrace_event){
			.ts = h.clock_jumps ? clock_jump_ts(k) : now + i,
			.thread = thread,
			.arg = k,
			.op = op,
			.type = op == MTRACE_OP_CREATES ? MTRACE_TT_TASK : 0,
			.seq = (uint32_t)h.seq[dom][ring]++,
			.str = s,
			.str_len = s ? (uint16_t)strlen(s) : 0,
		};
		h.counts[dom][op][li]++;
	}
	stream_events(h.s, dom + 1, ring, MTRACE_CLOCK_MONOTONIC, ev, n);
	fake_state_count(dom + 1, n);
	h.sent += n;
}

static void finish(void)
{
	struct timeval tv = { h.linger_ms / 1000, (h.linger_ms % 1000) * 1000 };

	if (h.ring_loss)
		stream_ring_loss(h.s, 1, 0, 7);
	for (unsigned d = 0; d < h.domains; d++) {
		stream_domain_down(h.s, d + 1, "destroyed");
		fake_state_remove(d + 1);
	}
	evtimer_add(h.end_ev, &tv);
}

static void gen_cb(evutil_socket_t fd, short what, void *arg)
{
	uint64_t due = h.total;
	static unsigned dom, ring;

	if (h.rate) {
		uint64_t el = mono_ns() - h.start_ns;
		due = (uint64_t)((double)el * (double)h.rate / 1e9);
		if (due > h.total)
			due = h.total;
	} else if (due > h.sent + 64 * CHUNK) {
		due = h.sent + 64 * CHUNK; /* yield to the loop between slices */
	}
	while (h.sent < due) {
		size_t n = due - h.sent < CHUNK ? (size_t)(due - h.sent) : CHUNK;
		emit_run(dom, ring, n);
		if (++ring == h.rings) {
			ring = 0;
			dom = (dom + 1) % h.domains;
		}
	}
	if (h.sent >= h.total) {
		event_del(h.gen_ev);
		finish();
	} else if (!h.rate) {
		/* A zero timeout, not event_active: the loop polls the sockets in between. */
		struct timeval zero = { 0, 0 };
		evtimer_add(h.gen_ev, &zero);
	}
}

static void start(void)
{
	struct timeval tv = { 0, 1000 };

	for (unsigned d = 0; d < h.domains; d++) {
		char name[32];
		snprintf(name, sizeof(name), "guest%u", d + 1);
		fake_state_add(d + 1, name, h.rings);
		stream_domain_up(h.s, d + 1, name, h.rings, MTRACE_CLOCK_MONOTONIC, false);
	}
	h.start_ns = mono_ns();
	if (h.rate) {
		event_assign(h.gen_ev, h.base, -1, EV_PERSIST, gen_cb, NULL);
		event_add(h.gen_ev, &tv);
	} else {
		struct timeval zero = { 0, 0 };
		evtimer_add(h.gen_ev, &zero);
	}
}

static void wait_cb(evutil_socket_t fd, short what, void *arg)
{
	/* Every client's Subscribe taken (a count of connections was not enough: on a loaded
	 * machine a client subscribed after the events had begun and missed them). */
	if (stream_subscribed_count(h.s) >= h.wait_clients) {
		event_del(h.wait_ev);
		start();
	}
}

static void end_cb(evutil_socket_t fd, short what, void *arg)
{
	static unsigned waits;
	struct timeval tv = { 0, 50000 };

	/* On a loaded machine clients may lag: let them drain (up to 20 s) so that
	 * the counts compared are about the server, not the scheduler. */
	if (stream_pending_bytes(h.s) > 0 && ++waits < 400) {
		evtimer_add(h.end_ev, &tv);
		return;
	}
	event_base_loopexit(h.base, NULL);
}

static void sig_cb(evutil_socket_t fd, short what, void *arg)
{
	static bool stopping;

	/* First signal: stop generating and end as if done; second: now. */
	if (stopping || !h.start_ns) {
		event_base_loopexit(h.base, NULL);
		return;
	}
	stopping = true;
	event_del(h.gen_ev);
	h.linger_ms = 0;
	finish();
}

static void print_summary(double secs)
{
	static const char *const ln[] = { "net/rx", "net/tx", "disk/read", NULL };
	const struct stream_batch_memory *m = stream_memory(h.s);
	struct rusage ru;
	bool first = true;

	/* the whole process: bench/stream/run.sh serverflat divides it by the events */
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"events\":%" PRIu64 ",\"seconds\":%.3f,\"cpu_user_s\":%.6f,\"cpu_sys_s\":%.6f,"
	       "\"batch_peak\":%zu,\"batch_pressure\":%" PRIu64 ",\"batch_left\":%zu,"
	       "\"batches_encoded\":%" PRIu64 ",\"table\":[",
	    h.sent, secs, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, m->peak, m->pressure,
	    m->bytes, m->encoded);
	for (unsigned d = 0; d < h.domains; d++)
		for (unsigned op = 0; op < 256; op++)
			for (unsigned l = 0; l < 4; l++) {
				if (!h.counts[d][op][l])
					continue;
				printf("%s[%u,\"guest%u\",%u,%s%s%s,%" PRIu64 "]", first ? "" : ",",
				    d + 1, d + 1, op, ln[l] ? "\"" : "", ln[l] ? ln[l] : "null",
				    ln[l] ? "\"" : "", h.counts[d][op][l]);
				first = false;
			}
	printf("]}\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct mtraced_config cfg;
	struct timeval tv = { 0, 50000 };
	struct event *sigs[2];
	char err[256];
	int ch;
	static const struct option lo[] = {
		{ "ring-loss", no_argument, NULL, 'l' },
		{ "clock-jumps", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};

	/* Only what the stream server reads (config.c is the daemon's; not needed here). */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.socket_path, sizeof(cfg.socket_path), "/run/mtrace/mtraced.sock");
	cfg.max_clients = 64;
	cfg.client_queue_bytes = 8u << 20;
	cfg.max_top_n = 1000;
	cfg.log_level = 1;
	snprintf(cfg.socket_group, sizeof(cfg.socket_group), "mtrace-test-nonexistent");
	h.total = 100000;
	h.domains = 2;
	h.rings = 2;
	h.linger_ms = 300;
	while ((ch = getopt_long(argc, argv, "s:N:r:D:R:w:q:m:L:C:K:B:v", lo, NULL)) != -1) {
		switch (ch) {
		case 's':
			snprintf(cfg.socket_path, sizeof(cfg.socket_path), "%s", optarg);
			break;
		case 'N':
			h.total = strtoull(optarg, NULL, 10);
			break;
		case 'r':
			h.rate = strtoull(optarg, NULL, 10);
			break;
		case 'D':
			h.domains = (unsigned)atoi(optarg);
			break;
		case 'R':
			h.rings = (unsigned)atoi(optarg);
			break;
		case 'w':
			h.wait_clients = (unsigned)atoi(optarg);
			break;
		case 'q':
			cfg.client_queue_bytes = strtoull(optarg, NULL, 10);
			break;
		case 'm':
			cfg.max_clients = (unsigned)atoi(optarg);
			break;
		case 'L':
			h.linger_ms = (unsigned)atoi(optarg);
			break;
		case 'C':
			cfg.client_coalesce_us = (unsigned)atoi(optarg);
			break;
		case 'K':
			cfg.client_coalesce_rate = (unsigned)atoi(optarg);
			break;
		case 'B':
			cfg.client_batch_total = strtoull(optarg, NULL, 10);
			break;
		case 'v':
			cfg.log_level = 3;
			break;
		case 'l':
			h.ring_loss = true;
			break;
		case 'J':
			h.clock_jumps = true;
			break;
		default:
			return 2;
		}
	}
	if (h.domains < 1 || h.domains > FAKE_MAX_DOMAINS || h.rings < 1 || h.rings > 8)
		return 2;
	log_set_level(cfg.log_level);
	h.base = event_base_new();
	if (!h.base)
		return 1;
	if (!(h.s = stream_new(h.base, &cfg, err, sizeof(err)))) {
		fprintf(stderr, "stream-harness: %s\n", err);
		return 1;
	}
	h.gen_ev = event_new(h.base, -1, 0, gen_cb, NULL);
	h.wait_ev = event_new(h.base, -1, EV_PERSIST, wait_cb, NULL);
	h.end_ev = evtimer_new(h.base, end_cb, NULL);
	sigs[0] = evsignal_new(h.base, SIGTERM, sig_cb, NULL);
	sigs[1] = evsignal_new(h.base, SIGINT, sig_cb, NULL);
	event_add(sigs[0], NULL);
	event_add(sigs[1], NULL);
	event_add(h.wait_ev, &tv);
	/* Ready for clients: tests wait for this line. */
	fprintf(stderr, "stream-harness: listening on %s\n", cfg.socket_path);
	event_base_dispatch(h.base);
	stream_shutdown(h.s, "harness done");
	print_summary((double)(mono_ns() - h.start_ns) / 1e9);
	stream_free(h.s);
	event_free(h.gen_ev);
	event_free(h.wait_ev);
	event_free(h.end_ev);
	event_free(sigs[0]);
	event_free(sigs[1]);
	event_base_free(h.base);
	return 0;
}
