/*
 * mtrace-replay - play a 2014 MirageOS (mirage-profile) sexp trace as a guest.
 *
 * The trace is loaded whole (bad lines reported and counted), then emitted through the
 * guest library at its recorded pace, optionally faster/slower and in a loop, so dom0
 * sees what the 2014 unikernel did, live.
 *
 * Timestamps: by default they are REBASED onto CLOCK_REALTIME: each pass starts at the
 * current time and keeps the recorded intervals (divided by --speed), so ages and
 * rates in mtraced are those of the replay as it runs.  --recorded-times writes the
 * original 2014 times instead (clock "realtime" either way).
 *
 * Thread ids: pass k (from 0) adds k * (largest id in the trace + 1) to every id except
 * -1, so each pass's threads are new threads, as they would be in a running unikernel.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "mtrace-guest.h"
#include "mtrace-ring.h"
#include "ops.h"
#include "trace.h"

#define MAX_BAD_REPORTED 20
#define SLEEP_SLACK_NS   50000 /* closer than this to due: emit now, no syscall */

static volatile sig_atomic_t stop;

struct opts {
	double speed;    /* 0: as fast as possible */
	uint64_t passes; /* 0: forever (--loop) */
	bool recorded_times;
	bool hold;
	bool check;
	bool dump;
	bool quiet;
	unsigned pages;
	const char *backend;
	const char *file;
};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void sleep_until(uint64_t mono_ns)
{
	struct timespec ts = ts_from_ns(mono_ns);
	/* EINTR is how a signal ends the wait; the caller checks `stop`. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static bool op_arg_is_thread(uint8_t op)
{
	return op == MTRACE_OP_CREATES || op == MTRACE_OP_READ || op == MTRACE_OP_FULFILLS ||
	    op == MTRACE_OP_FAILS || op == MTRACE_OP_BECOMES;
}

static bool op_has_string(uint8_t op)
{
	return op == MTRACE_OP_FAILS || op == MTRACE_OP_LABEL || op == MTRACE_OP_INCREASE;
}

static uint64_t shift_tid(int64_t tid, uint64_t shift)
{
	return tid < 0 ? MTRACE_THREAD_NONE : (uint64_t)tid + shift;
}

static void emit(struct mtrace_ring *r, const struct trace *t, const struct trace_ev *e,
    uint64_t ts, uint64_t shift)
{
	uint64_t thread = shift_tid(e->thread, shift);
	uint64_t arg = op_arg_is_thread(e->op) ? shift_tid(e->arg, shift) : (uint64_t)e->arg;
	if (e->op == MTRACE_OP_GC)
		thread = MTRACE_THREAD_NONE;
	if (op_has_string(e->op))
		mtrace_emit_slow(r, e->op, e->type, ts, thread, arg, trace_str(t, e), e->str_len);
	else
		mtrace_emit_ts(r, e->op, e->type, ts, thread, arg);
}

/* One pass over the trace.  Returns the events emitted. */
static uint64_t play_pass(
    struct mtrace_ring *r, const struct trace *t, const struct opts *o, uint64_t pass)
{
	uint64_t stride = (uint64_t)t->max_thread + 1;
	uint64_t shift = pass * stride;
	uint64_t t0 = t->n ? t->ev[0].t_ns : 0;
	uint64_t mono0 = clock_mono_ns(), real0 = clock_ns(CLOCK_REALTIME);
	uint64_t last_off = 0, n = 0;
	/* An event due within the sleep's slack goes out early, stamped with its due time:
	 * the next pass starts no earlier than that, or the ring's clock would step back. */
	static uint64_t last_ts;
	if (real0 < last_ts && !o->recorded_times)
		real0 = last_ts;
	for (size_t i = 0; i < t->n && !stop; i++) {
		const struct trace_ev *e = &t->ev[i];
		/* A trace whose clock steps back is played in file order, never faster. */
		uint64_t rec_off = e->t_ns > t0 ? e->t_ns - t0 : 0;
		uint64_t off = o->speed > 0 ? (uint64_t)((double)rec_off / o->speed) : 0;
		if (off < last_off)
			off = last_off;
		last_off = off;
		uint64_t ts;
		if (o->speed > 0) {
			uint64_t due = mono0 + off;
			if (due > clock_mono_ns() + SLEEP_SLACK_NS)
				sleep_until(due);
			if (stop)
				break;
			ts = real0 + off;
		} else {
			ts = clock_ns(CLOCK_REALTIME);
		}
		if (o->recorded_times)
			ts = e->t_ns;
		else
			last_ts = ts;
		emit(r, t, e, ts, shift);
		n++;
	}
	return n;
}

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: mtrace-replay [options] TRACE.sexp\n"
	    "Replay a MirageOS 2014 sexp trace (one ((time T)(op(...))) a line) as a traced guest.\n"
	    "\n"
	    "      --speed X         play X times the recorded pace (default 1; 0 = flat out)\n"
	    "      --loop            repeat forever (each pass gets fresh thread ids)\n"
	    "      --passes N        play N passes (default 1)\n"
	    "      --hold            stay announced after the last pass until SIGTERM/SIGINT\n"
	    "      --recorded-times  write the recorded 2014 times, not rebased ones\n"
	    "  -p, --pages N         ring data pages, a power of two (default 256)\n"
	    "  -B, --backend NAME    xen, sim or auto (default; sim when MTRACE_SIM_DIR is set)\n"
	    "      --check           parse only: print counts per op and bad lines, no Xen\n"
	    "      --dump            parse only: print each event as it would be written\n"
	    "  -q, --quiet           no summary on stderr\n"
	    "  -h, --help, -V, --version\n"
	    "The old spellings -s (--speed), -l (--loop) and -c (--passes) still work, with a\n"
	    "warning: in mtrace's programs -s is --socket, -l is --listen and -c is --config\n"
	    "(docs/HACKING.md).\n");
}

/* -s and -l mean --socket and --listen across mtrace; scripts that used the old
 * spellings keep working, told once. */
static void old_spelling(char c, const char *now)
{
	fprintf(stderr, "mtrace-replay: -%c is an old spelling; use %s\n", c, now);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "speed", required_argument, NULL, 'S' },
		{ "loop", no_argument, NULL, 'L' },
		{ "passes", required_argument, NULL, 'P' + 256 },
		{ "hold", no_argument, NULL, 'H' },
		{ "recorded-times", no_argument, NULL, 'R' },
		{ "pages", required_argument, NULL, 'p' },
		{ "backend", required_argument, NULL, 'B' },
		{ "check", no_argument, NULL, 'C' },
		{ "dump", no_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct opts){ .speed = 1.0, .passes = 1, .pages = 256 };
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "s:lc:p:B:qhV", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			old_spelling('s', "--speed");
			__attribute__((fallthrough));
		case 'S':
			errno = 0;
			o->speed = strtod(optarg, &end);
			if (errno || *end || !(o->speed >= 0) || o->speed > 1e6) {
				fprintf(stderr, "mtrace-replay: bad --speed '%s'\n", optarg);
				return -1;
			}
			break;
		case 'l':
			old_spelling('l', "--loop");
			__attribute__((fallthrough));
		case 'L':
			o->passes = 0;
			break;
		case 'c':
			old_spelling('c', "--passes");
			__attribute__((fallthrough));
		case 'P' + 256:
			errno = 0;
			o->passes = strtoull(optarg, &end, 10);
			if (errno || *end || o->passes == 0 || optarg[0] == '-') {
				fprintf(stderr, "mtrace-replay: bad --passes '%s'\n", optarg);
				return -1;
			}
			break;
		case 'H':
			o->hold = true;
			break;
		case 'R':
			o->recorded_times = true;
			break;
		case 'p': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v < MTRACE_RING_MIN_PAGES || v > MTRACE_RING_MAX_PAGES ||
			    (v & (v - 1))) {
				fprintf(stderr,
				    "mtrace-replay: --pages must be a power of two, %u..%u\n",
				    MTRACE_RING_MIN_PAGES, MTRACE_RING_MAX_PAGES);
				return -1;
			}
			o->pages = (unsigned)v;
			break;
		}
		case 'B':
			o->backend = optarg;
			break;
		case 'C':
			o->check = true;
			break;
		case 'D':
			o->dump = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("mtrace-replay %s\n", MTRACE_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return -1;
	}
	o->file = argv[optind];
	return 0;
}

/* The 2014 vocabulary: the ops up to gc, named as in the one table (common/ops.c). */
static const char *replay_op_name(unsigned op)
{
	return op <= MTRACE_OP_GC ? mtrace_op_name(op) : "?";
}

/* One event a line: time_ns op thread arg type "string", C escapes for the odd bytes. */
static void print_dump(const struct trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct trace_ev *e = &t->ev[i];
		printf("%" PRIu64 " %s %" PRId64 " %" PRId64 " %u", e->t_ns, replay_op_name(e->op),
		    e->thread, e->arg, e->type);
		if (op_has_string(e->op)) {
			const unsigned char *p = (const unsigned char *)trace_str(t, e);
			fputs(" \"", stdout);
			for (size_t k = 0; k < e->str_len; k++) {
				if (p[k] == '"' || p[k] == '\\')
					printf("\\%c", p[k]);
				else if (p[k] < 0x20 || p[k] >= 0x7f)
					printf("\\x%02x", p[k]);
				else
					putchar(p[k]);
			}
			putchar('"');
		}
		putchar('\n');
	}
}

static void print_check(const struct trace *t)
{
	printf("lines %" PRIu64 "\nevents %zu\nbad %" PRIu64 "\nmax_thread %" PRId64 "\n", t->lines,
	    t->n, t->bad, t->max_thread);
	for (unsigned op = 0; op <= MTRACE_OP_GC; op++)
		printf("%s %" PRIu64 "\n", replay_op_name(op), t->per_op[op]);
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse_opts(argc, argv, &o) < 0)
		return 2;

	FILE *in = strcmp(o.file, "-") == 0 ? stdin : fopen(o.file, "r");
	if (!in) {
		fprintf(stderr, "mtrace-replay: %s: %s\n", o.file, strerror(errno));
		return 1;
	}
	struct trace t;
	int rc = trace_load(&t, in, o.file, stderr, MAX_BAD_REPORTED);
	int saved = errno;
	if (in != stdin)
		fclose(in);
	if (rc < 0) {
		fprintf(stderr, "mtrace-replay: %s: %s\n", o.file, strerror(saved));
		return 1;
	}
	if (o.check || o.dump) {
		if (o.dump)
			print_dump(&t);
		else
			print_check(&t);
		trace_free(&t);
		return 0;
	}
	if (t.n == 0) {
		fprintf(stderr, "mtrace-replay: %s: no events to replay (%" PRIu64 " bad lines)\n",
		    o.file, t.bad);
		trace_free(&t);
		return 1;
	}

	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: wake sleeps */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	struct mtrace_guest_config cfg = {
		.rings = 1,
		.data_pages = o.pages,
		.clock = MTRACE_CLOCK_REALTIME,
		.backend = o.backend,
	};
	char err[256];
	struct mtrace_guest *g = mtrace_guest_open(&cfg, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "mtrace-replay: %s\n", err);
		trace_free(&t);
		return 1;
	}
	struct mtrace_ring *r = mtrace_guest_ring(g, 0);
	uint64_t pass = 0, emitted = 0;
	while (!stop && (o.passes == 0 || pass < o.passes))
		emitted += play_pass(r, &t, &o, pass++);
	/* Whatever the reader has not asked for yet is picked up by its periodic drain;
	 * one explicit kick makes the tail of a short replay arrive promptly. */
	mtrace_ring_kick(r);
	if (!o.quiet)
		fprintf(stderr,
		    "mtrace-replay: %" PRIu64 " events in %" PRIu64 " pass(es) from %s, "
		    "%" PRIu64 " bad line(s) skipped\n",
		    emitted, pass, o.file, t.bad);
	if (o.hold) {
		/* Block first so a signal between the test and the wait is not lost. */
		sigset_t block, old;
		sigemptyset(&block);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGHUP);
		sigprocmask(SIG_BLOCK, &block, &old);
		while (!stop)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	mtrace_guest_close(g);
	trace_free(&t);
	return 0;
}
