/*
 * load-args.c - mtrace-load's command line: options, their checks, --labels-from.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

const char *const load_garbage_names[G_MIXED + 1] = {
	"none",
	"random",
	"lengths",
	"strings",
	"indexes",
	"mixed",
};

void load_free_labels(struct opts *o)
{
	for (unsigned k = 0; k < MAX_NAMES; k++) {
		free(o->label_names[k]);
		o->label_names[k] = NULL;
	}
}

/* --labels-from: one label a line, the line as it is but its '\n' (any other byte,
 * control or not UTF-8, is the test's to choose); empty lines skipped. */
static int load_labels(struct opts *o)
{
	FILE *f = fopen(o->labels_from, "r");
	char *line = NULL;
	size_t cap = 0, no = 0;
	ssize_t n;
	unsigned k = 0;
	int rc = -1;

	if (!f) {
		fprintf(stderr, "mtrace-load: %s: %s\n", o->labels_from, strerror(errno));
		return -1;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		no++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n == 0)
			continue;
		if (memchr(line, '\0', (size_t)n)) {
			fprintf(stderr, "mtrace-load: %s:%zu: a NUL byte (labels are C strings)\n",
			    o->labels_from, no);
			goto out;
		}
		if (n > LABEL_MAX) {
			fprintf(stderr, "mtrace-load: %s:%zu: longer than %d bytes\n",
			    o->labels_from, no, LABEL_MAX);
			goto out;
		}
		if (k == MAX_NAMES) {
			fprintf(stderr, "mtrace-load: %s: more than %d labels\n", o->labels_from,
			    MAX_NAMES);
			goto out;
		}
		if (!(o->label_names[k++] = strdup(line))) {
			fprintf(stderr, "mtrace-load: out of memory\n");
			goto out;
		}
	}
	if (k == 0) {
		fprintf(stderr, "mtrace-load: %s: no labels\n", o->labels_from);
		goto out;
	}
	o->labels = k;
	rc = 0;
out:
	if (rc < 0)
		load_free_labels(o);
	free(line);
	fclose(f);
	return rc;
}

static void usage(FILE *f, const char *argv0)
{
	fprintf(f,
	    "usage: %s [options]\n"
	    "Write a deterministic trace workload into mtrace rings shared with dom0, then print\n"
	    "a JSON summary of exactly what was written (stdout, or --summary FILE).\n"
	    "\n"
	    "      --rings N          rings, one producer thread each (1..%u; default 1)\n"
	    "  -p, --pages N          data pages per ring, a power of two (default 16)\n"
	    "  -N, --threads N        cooperative threads simulated per ring, ids of its own (default 8)\n"
	    "      --labels N         distinct labels label-0.. given to new threads (0..%u; 4)\n"
	    "      --labels-from FILE the labels instead: one a line, any bytes but NUL\n"
	    "      --counters N       distinct counters counter-0.. (0..%u; default 2)\n"
	    "      --evtchn PCT       percent of events that are evtchn_send (default 5)\n"
	    "      --fail PCT         percent of resolutions that fail (default 10)\n"
	    "      --rate N           events/s per ring, paced in batches; 0 = flat out\n"
	    "      --batch-us U       pace in batches of U microseconds of events (default 1000)\n"
	    "      --spin             between batches wait on the CPU, not asleep: a vCPU that\n"
	    "                         is always runnable, at the same event rate\n"
	    "  -n, --events N         events per ring, including ring_start (default 100000)\n"
	    "      --duration S       run S seconds instead of a fixed count\n"
	    "      --seed N           workload seed (default 1); same seed, same events\n"
	    "      --clock NAME       monotonic | realtime | xen | tsc (default monotonic; tsc falls\n"
	    "                         back to monotonic where the TSC is not invariant)\n"
	    "      --garbage MODE     hostile guest: random | lengths | strings | indexes | mixed\n"
	    "      --pingpong NAME,N  instead of the workload, N round trips over an event channel\n"
	    "                         with another domain, set up through xenstore: when\n"
	    "                         data/mtrace-pingpong/NAME/role (own home) says \"offer D\",\n"
	    "                         bind a port for domain D, write it to NAME/port and answer;\n"
	    "                         \"connect D P\": bind to port P of D and start.  Each send\n"
	    "                         and receive is recorded (evtchn_send/recv, ring 0, thread 1).\n"
	    "                         Up to %u, run in order, each on its own port (all stay\n"
	    "                         bound until the last is done and, with --linger, read)\n"
	    "      --pingpong-timeout S  give up a wait for the other side after S s (default 60)\n"
	    "      --wait-reader S    first wait up to S s for dom0 to attach to every ring\n"
	    "      --linger S         afterwards wait up to S s for dom0 to read everything\n"
	    "      --hold             then stay announced, rings and all, until SIGTERM/SIGINT\n"
	    "      --summary FILE     write the summary there instead of stdout\n"
	    "  -B, --backend NAME     xen | sim | auto (default auto: sim if MTRACE_SIM_DIR is set)\n"
	    "      --sim-dir DIR      simulated Xen state directory (default $MTRACE_SIM_DIR)\n"
	    "      --backend-domid N  reader domain (default 0)\n"
	    "  -h, --help, -V, --version\n"
	    "The old spellings -l (--labels), -s (--seed), -r (--rings), -t (--threads, now\n"
	    "-N), -c (--counters), -R (--rate) and -d (--duration) still work, with a\n"
	    "warning: mtrace's programs share one table of letters (docs/HACKING.md).\n"
	    "SIGTERM/SIGINT stop early; the summary still says exactly what was written.\n"
	    "SIGUSR1 re-announces the rings in xenstore (as after resume or migration).\n",
	    argv0, MTRACE_MAX_RINGS, MAX_NAMES, MAX_NAMES, PINGPONG_MAX);
}

/* -s and -l mean --socket and --listen across mtrace; scripts that used the old
 * spellings keep working, told once. */
static void old_spelling(char c, const char *now)
{
	fprintf(stderr, "mtrace-load: -%c is an old spelling; use %s\n", c, now);
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		return false;
	*v = x;
	return true;
}

static bool parse_double(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return errno == 0 && end != s && *end == 0 && *v >= 0;
}

int load_parse_args(int argc, char **argv, struct opts *o)
{
	enum {
		O_EVTCHN = 256,
		O_FAIL,
		O_CLOCK,
		O_GARBAGE,
		O_WAIT,
		O_LINGER,
		O_SUMMARY,
		O_SIMDIR,
		O_BDOM,
		O_BATCH,
		O_LABELS,
		O_SEED,
		O_LABELS_FROM,
		O_HOLD,
		O_SPIN,
		O_RINGS,
		O_COUNTERS,
		O_RATE,
		O_DURATION,
		O_PINGPONG,
		O_PP_TIMEOUT
	};
	static const struct option lo[] = {
		{ "rings", 1, NULL, O_RINGS },
		{ "pages", 1, NULL, 'p' },
		{ "threads", 1, NULL, 'N' },
		{ "labels", 1, NULL, O_LABELS },
		{ "labels-from", 1, NULL, O_LABELS_FROM },
		{ "counters", 1, NULL, O_COUNTERS },
		{ "evtchn", 1, NULL, O_EVTCHN },
		{ "fail", 1, NULL, O_FAIL },
		{ "rate", 1, NULL, O_RATE },
		{ "events", 1, NULL, 'n' },
		{ "duration", 1, NULL, O_DURATION },
		{ "seed", 1, NULL, O_SEED },
		{ "clock", 1, NULL, O_CLOCK },
		{ "garbage", 1, NULL, O_GARBAGE },
		{ "wait-reader", 1, NULL, O_WAIT },
		{ "linger", 1, NULL, O_LINGER },
		{ "hold", 0, NULL, O_HOLD },
		{ "spin", 0, NULL, O_SPIN },
		{ "summary", 1, NULL, O_SUMMARY },
		{ "backend", 1, NULL, 'B' },
		{ "sim-dir", 1, NULL, O_SIMDIR },
		{ "backend-domid", 1, NULL, O_BDOM },
		{ "batch-us", 1, NULL, O_BATCH },
		{ "pingpong", 1, NULL, O_PINGPONG },
		{ "pingpong-timeout", 1, NULL, O_PP_TIMEOUT },
		{ "help", 0, NULL, 'h' },
		{ "version", 0, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t v;

	*o = (struct opts){ .rings = 1,
		.pages = 16,
		.threads = 8,
		.labels = 4,
		.counters = 2,
		.evtchn_pct = 5,
		.fail_pct = 10,
		.events = 100000,
		.seed = 1,
		.clock = MTRACE_CLOCK_MONOTONIC,
		.batch_us = 1000,
		.pingpong_timeout = 60 };
	while ((c = getopt_long(argc, argv, "r:p:t:N:l:c:R:n:d:s:B:hV", lo, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'r':
			old_spelling('r', "--rings");
			__attribute__((fallthrough));
		case O_RINGS:
			ok = parse_u64(optarg, &v) && v >= 1 && v <= MTRACE_MAX_RINGS;
			o->rings = (unsigned)v;
			break;
		case 'p':
			ok = parse_u64(optarg, &v) && v >= MTRACE_RING_MIN_PAGES &&
			    v <= MTRACE_RING_MAX_PAGES && (v & (v - 1)) == 0;
			o->pages = (unsigned)v;
			break;
		case 't':
			old_spelling('t', "-N (--threads)");
			__attribute__((fallthrough));
		case 'N':
			ok = parse_u64(optarg, &v) && v >= 1 && v <= 1000000;
			o->threads = (unsigned)v;
			break;
		case 'l':
			old_spelling('l', "--labels");
			__attribute__((fallthrough));
		case O_LABELS:
			ok = parse_u64(optarg, &v) && v <= MAX_NAMES;
			o->labels = (unsigned)v;
			break;
		case 'c':
			old_spelling('c', "--counters");
			__attribute__((fallthrough));
		case O_COUNTERS:
			ok = parse_u64(optarg, &v) && v <= MAX_NAMES;
			o->counters = (unsigned)v;
			break;
		case O_EVTCHN:
			ok = parse_u64(optarg, &v) && v <= 100;
			o->evtchn_pct = (unsigned)v;
			break;
		case O_FAIL:
			ok = parse_u64(optarg, &v) && v <= 100;
			o->fail_pct = (unsigned)v;
			break;
		case 'R':
			old_spelling('R', "--rate");
			__attribute__((fallthrough));
		case O_RATE:
			ok = parse_u64(optarg, &o->rate);
			break;
		case O_BATCH:
			ok = parse_u64(optarg, &o->batch_us) && o->batch_us >= 1 &&
			    o->batch_us <= 1000000;
			break;
		case 'n':
			ok = parse_u64(optarg, &o->events) && o->events >= 1;
			break;
		case 'd':
			old_spelling('d', "--duration");
			__attribute__((fallthrough));
		case O_DURATION:
			ok = parse_double(optarg, &o->duration);
			break;
		case 's':
			old_spelling('s', "--seed");
			__attribute__((fallthrough));
		case O_SEED:
			ok = parse_u64(optarg, &o->seed);
			break;
		case O_CLOCK:
			if (strcmp(optarg, "monotonic") == 0)
				o->clock = MTRACE_CLOCK_MONOTONIC;
			else if (strcmp(optarg, "realtime") == 0)
				o->clock = MTRACE_CLOCK_REALTIME;
			else if (strcmp(optarg, "xen") == 0)
				o->clock = MTRACE_CLOCK_XEN;
			else if (strcmp(optarg, "tsc") == 0)
				o->clock = MTRACE_CLOCK_TSC;
			else
				ok = false;
			break;
		case O_GARBAGE:
			ok = false;
			for (unsigned g = G_RANDOM; g <= G_MIXED; g++)
				if (strcmp(optarg, load_garbage_names[g]) == 0) {
					o->garbage = (enum garbage)g;
					ok = true;
				}
			break;
		case O_WAIT:
			ok = parse_double(optarg, &o->wait_reader);
			break;
		case O_LINGER:
			ok = parse_double(optarg, &o->linger);
			break;
		case O_HOLD:
			o->hold = true;
			ok = true;
			break;
		case O_PINGPONG: {
			/* NAME,N: a name xenstore takes as one path element, and a count */
			const char *comma = strchr(optarg, ',');
			size_t len = comma ? (size_t)(comma - optarg) : 0;
			struct pingpong_spec *sp = &o->pingpong[o->npingpong];
			ok = comma && len > 0 && len < sizeof(sp->name) &&
			    strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789-_") >= len &&
			    o->npingpong < PINGPONG_MAX && parse_u64(comma + 1, &v) && v > 0 &&
			    v <= 100000000;
			if (ok) {
				memcpy(sp->name, optarg, len);
				sp->name[len] = '\0';
				sp->n = (unsigned)v;
				o->npingpong++;
			}
			break;
		}
		case O_PP_TIMEOUT:
			ok = parse_double(optarg, &o->pingpong_timeout) && o->pingpong_timeout > 0;
			break;
		case O_SPIN:
			o->spin = true;
			ok = true;
			break;
		case O_SUMMARY:
			o->summary = optarg;
			break;
		case O_LABELS_FROM:
			o->labels_from = optarg;
			break;
		case 'B':
			o->backend = optarg;
			break;
		case O_SIMDIR:
			o->sim_dir = optarg;
			break;
		case O_BDOM:
			ok = parse_u64(optarg, &v) && v < 0x7ff0;
			o->backend_domid = (uint32_t)v;
			break;
		case 'h':
			usage(stdout, argv[0]);
			exit(0);
		case 'V':
			printf("mtrace-load %s\n", MTRACE_VERSION);
			exit(0);
		default:
			usage(stderr, argv[0]);
			return -1;
		}
		if (!ok) {
			fprintf(
			    stderr, "%s: bad option value '%s' (see --help)\n", argv[0], optarg);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument %s\n", argv[0], argv[optind]);
		return -1;
	}
	if (o->backend != NULL && strcmp(o->backend, "auto") == 0)
		o->backend = NULL;
	if (o->labels_from && load_labels(o) < 0)
		return -1;
	return 0;
}
