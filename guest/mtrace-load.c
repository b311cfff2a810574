/*
 * mtrace-load - a workload guest: opens a tracing session (simulated or real Xen),
 * runs one producer pthread per ring writing a deterministic mix of the whole
 * vocabulary, and prints a JSON summary of exactly what it wrote, so tests can
 * compare the daemon's counts with the truth.  --garbage makes it a hostile guest.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "mtrace-guest.h"
#include "utf8.h"

#define MAX_NAMES 64   /* distinct labels / counters */
#define LABEL_MAX 1024 /* bytes of a --labels-from line */
#define OPS       256
/* Ring i's thread ids start at i << RING_ID_SHIFT: below the queue's kind byte. */
#define RING_ID_SHIFT 40
_Static_assert(((uint64_t)MTRACE_MAX_RINGS << RING_ID_SHIFT) < (1ull << 56), "ids fit the queue");

enum garbage {
	G_NONE,
	G_RANDOM,
	G_LENGTHS,
	G_STRINGS,
	G_INDEXES,
	G_MIXED
};
static const char *const garbage_names[] = {
	"none",
	"random",
	"lengths",
	"strings",
	"indexes",
	"mixed",
};

struct opts {
	unsigned rings, pages, threads, labels, counters;
	unsigned evtchn_pct, fail_pct;
	uint64_t rate, events, seed, batch_us;
	double duration, wait_reader, linger;
	bool hold; /* --hold: stay announced after the summary until SIGTERM/SIGINT */
	uint32_t clock;
	enum garbage garbage;
	const char *summary, *backend, *sim_dir, *labels_from;
	uint32_t backend_domid;
	char *label_names[MAX_NAMES]; /* --labels-from: the strings, else label-N */
};

struct ring_job {
	const struct opts *o;
	struct mtrace_ring *r;
	unsigned index;
	uint32_t port;
	uint64_t rng;
	/* what we wrote */
	uint64_t events;
	uint64_t per_op[OPS];
	uint64_t labels[MAX_NAMES];
	uint64_t counters[MAX_NAMES];
	uint64_t garbage_writes;
	/* workload state */
	uint64_t *slots;
	uint64_t next_id, cur;
	uint64_t queue[4];
	unsigned queued;
};

static volatile sig_atomic_t stop, reannounce;
static unsigned finished; /* producer threads done (atomic) */
static unsigned reannounced;
static struct mtrace_guest *guest;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		reannounce = 1;
	else
		stop = 1;
}

/* SIGUSR1: announce again, as after resume or migration (main thread only). */
static void service_signals(void)
{
	if (!reannounce)
		return;
	reannounce = 0;
	if (mtrace_guest_reannounce(guest) < 0)
		fprintf(stderr, "mtrace-load: re-announce failed: %s\n", strerror(errno));
	else
		reannounced++;
}

static uint64_t rnd(struct ring_job *j)
{
	/* xorshift64*: deterministic per (seed, ring) */
	j->rng ^= j->rng >> 12;
	j->rng ^= j->rng << 25;
	j->rng ^= j->rng >> 27;
	return j->rng * 2685821657736338717ull;
}

static double now_s(void)
{
	return clock_mono_s();
}

static void sleep_s(double s)
{
	struct timespec ts;
	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void count(struct ring_job *j, uint8_t op)
{
	j->events++;
	j->per_op[op]++;
}

/* Follow-up ops of a thread replacement: resolve the old one, create, label the new. */
enum {
	Q_RESOLVE = 1,
	Q_CREATE,
	Q_LABEL
};

/* One event of the mix. */
static void step(struct ring_job *j)
{
	const struct opts *o = j->o;
	struct mtrace_ring *r = j->r;
	unsigned slot = (unsigned)(rnd(j) % o->threads);
	uint64_t other = j->slots[slot];
	char s[32];

	if (j->queued > 0) {
		uint64_t q = j->queue[--j->queued];
		unsigned kind = (unsigned)(q >> 56);
		uint64_t id = q & ((1ull << 56) - 1);
		if (kind == Q_RESOLVE) {
			if (rnd(j) % 100 < o->fail_pct) {
				mtrace_fails(r, j->cur, id, "Failure(\"mtrace-load\")");
				count(j, MTRACE_OP_FAILS);
			} else {
				mtrace_fulfills(r, j->cur, id);
				count(j, MTRACE_OP_FULFILLS);
			}
		} else if (kind == Q_CREATE) {
			mtrace_creates(r, j->cur, id, (uint8_t)(rnd(j) % MTRACE_TT_COUNT));
			count(j, MTRACE_OP_CREATES);
		} else {
			unsigned k = (unsigned)(rnd(j) % o->labels);
			snprintf(s, sizeof(s), "label-%u", k);
			mtrace_label(r, id, o->label_names[k] ? o->label_names[k] : s);
			count(j, MTRACE_OP_LABEL);
			j->labels[k]++;
		}
		return;
	}
	if (rnd(j) % 100 < o->evtchn_pct) {
		mtrace_evtchn_send(r, j->cur, j->port);
		count(j, MTRACE_OP_EVTCHN_SEND);
		return;
	}
	switch (rnd(j) % 16) {
	case 0: { /* replace a thread: resolve it, create its successor, maybe label it */
		uint64_t id = j->next_id++;
		j->slots[slot] = id;
		if (o->labels > 0)
			j->queue[j->queued++] = ((uint64_t)Q_LABEL << 56) | id;
		j->queue[j->queued++] = ((uint64_t)Q_CREATE << 56) | id;
		j->queue[j->queued++] = ((uint64_t)Q_RESOLVE << 56) | other;
		step(j);
		return;
	}
	case 1:
	case 2:
	case 3:
	case 4:
		j->cur = other;
		mtrace_switch(r, other);
		count(j, MTRACE_OP_SWITCH);
		return;
	case 5:
	case 6:
	case 7:
		mtrace_read(r, j->cur, other);
		count(j, MTRACE_OP_READ);
		return;
	case 8:
		mtrace_try_read(r, j->cur, other);
		count(j, MTRACE_OP_TRY_READ);
		return;
	case 9:
		mtrace_signal(r, other, j->cur);
		j->cur = other;
		count(j, MTRACE_OP_SIGNAL);
		return;
	case 10:
		if (o->counters > 0) {
			unsigned k = (unsigned)(rnd(j) % o->counters);
			snprintf(s, sizeof(s), "counter-%u", k);
			mtrace_counter(r, j->cur, s, (int64_t)(rnd(j) % 100000));
			count(j, MTRACE_OP_COUNTER);
			j->counters[k]++;
			return;
		}
		break;
	case 11:
		if (o->counters > 0) {
			unsigned k = (unsigned)(rnd(j) % o->counters);
			snprintf(s, sizeof(s), "counter-%u", k);
			mtrace_increase(r, j->cur, s, (int64_t)(rnd(j) % 100) - 50);
			count(j, MTRACE_OP_INCREASE);
			j->counters[k]++;
			return;
		}
		break;
	case 12:
		mtrace_becomes(r, other, j->cur);
		count(j, MTRACE_OP_BECOMES);
		return;
	case 13:
		mtrace_gc(r, 1000 + rnd(j) % 100000);
		count(j, MTRACE_OP_GC);
		return;
	case 14:
		mtrace_evtchn_recv(r, j->cur, j->port);
		count(j, MTRACE_OP_EVTCHN_RECV);
		return;
	default:
		break;
	}
	/* guest goes idle */
	j->cur = MTRACE_THREAD_NONE;
	mtrace_switch(r, MTRACE_THREAD_NONE);
	count(j, MTRACE_OP_SWITCH);
}

/*
 * Hostile writes straight into our own ring, bypassing the library: what a broken
 * or malicious guest could put there.  Afterwards the producer state is reset to
 * an empty ring a lap further on, so valid events can follow.
 */
static void garbage_step(struct ring_job *j, enum garbage g)
{
	struct mtrace_ring *r = j->r;
	struct mtrace_ring_hdr *h = r->hdr;
	uint64_t size = r->mask + 1;
	uint64_t base = r->head, n, i;
	struct mtrace_rec rec;

	if (g == G_MIXED)
		g = (enum garbage)(G_RANDOM + rnd(j) % 4);
	switch (g) {
	case G_RANDOM:
		n = 8 * (1 + rnd(j) % (size / 16));
		for (i = 0; i < n; i++)
			r->data[(base + i) & r->mask] = (uint8_t)rnd(j);
		__atomic_store_n(&h->head, base + n, __ATOMIC_RELEASE);
		break;
	case G_LENGTHS: {
		static const uint16_t bad[] = { 0, 7, 12, 24, 4104, 65528, 1000 };
		memset(&rec, 0, sizeof(rec));
		rec.len = bad[rnd(j) % (sizeof(bad) / sizeof(bad[0]))];
		rec.op = MTRACE_OP_READ;
		rec.seq = r->seq;
		memcpy(r->data + (base & r->mask), &rec, 8);
		__atomic_store_n(&h->head, base + 64, __ATOMIC_RELEASE);
		break;
	}
	case G_STRINGS:
		memset(&rec, 0, sizeof(rec));
		rec.len = 64;
		rec.op = MTRACE_OP_LABEL;
		rec.seq = r->seq;
		if ((base & r->mask) + 64 <= size) {
			memcpy(r->data + (base & r->mask), &rec, sizeof(rec));
			memset(r->data + (base & r->mask) + 32, 'A', 32);
			__atomic_store_n(&h->head, base + 64, __ATOMIC_RELEASE);
		}
		break;
	case G_INDEXES:
		switch (rnd(j) % 4) {
		case 0:
			__atomic_store_n(&h->head, base + 4, __ATOMIC_RELEASE);
			break;
		case 1:
			__atomic_store_n(&h->tail, base + 4096, __ATOMIC_RELEASE);
			break;
		case 2:
			__atomic_store_n(&h->head, rnd(j), __ATOMIC_RELEASE);
			__atomic_store_n(&h->tail, rnd(j), __ATOMIC_RELEASE);
			break;
		default:
			__atomic_store_n(&h->head, base > 4096 ? base - 4096 : 0, __ATOMIC_RELEASE);
			break;
		}
		break;
	default:
		return;
	}
	j->garbage_writes++;
	/* Leave it there long enough for dom0 to look at it, then start clean a lap on. */
	sleep_s(0.002);
	r->head = (base + 2 * size) & ~(uint64_t)7;
	r->tail = r->head;
	__atomic_store_n(&h->tail, r->tail, __ATOMIC_RELEASE);
	__atomic_store_n(&h->head, r->head, __ATOMIC_RELEASE);
}

static void *ring_main(void *arg)
{
	struct ring_job *j = arg;
	const struct opts *o = j->o;
	double t0 = now_s(), end = o->duration > 0 ? t0 + o->duration : 0;
	uint64_t target = o->duration > 0 ? UINT64_MAX : o->events;
	uint64_t batch = o->rate ? (uint64_t)((double)o->rate * (double)o->batch_us / 1e6) : 256;

	if (batch == 0)
		batch = 1;

	while (j->events < target && !stop) {
		for (uint64_t i = 0; i < batch && j->events < target; i++) {
			if (o->garbage != G_NONE && rnd(j) % 64 == 0)
				garbage_step(j, o->garbage);
			else
				step(j);
		}
		double now = now_s();
		if (end > 0 && now >= end)
			break;
		if (o->rate) {
			/* absolute schedule: sleeping late does not accumulate drift */
			double due = t0 + (double)(j->events - 1) / (double)o->rate;
			if (end > 0 && due > end)
				due = end;
			sleep_s(due - now);
		}
	}
	__atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait until every ring satisfies pred, or timeout; returns true if it did. */
static bool wait_rings(
    struct ring_job *jobs, unsigned n, double timeout, bool (*pred)(struct mtrace_ring *))
{
	double end = now_s() + timeout;

	for (;;) {
		unsigned ok = 0;
		for (unsigned i = 0; i < n; i++)
			ok += pred(jobs[i].r);
		if (ok == n)
			return true;
		if (now_s() >= end || stop)
			return false;
		service_signals();
		sleep_s(0.005);
	}
}

static bool reader_attached(struct mtrace_ring *r)
{
	return __atomic_load_n(&r->hdr->req_event, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&r->hdr->reader_pos, __ATOMIC_RELAXED) != 0;
}

static bool reader_done(struct mtrace_ring *r)
{
	return __atomic_load_n(&r->hdr->reader_pos, __ATOMIC_RELAXED) >=
	    __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED);
}

static void print_op_map(FILE *f, const uint64_t *per_op)
{
	bool first = true;
	static const char *const names[OPS] = {
		[MTRACE_OP_CREATES] = "creates",
		[MTRACE_OP_READ] = "read",
		[MTRACE_OP_FULFILLS] = "fulfills",
		[MTRACE_OP_FAILS] = "fails",
		[MTRACE_OP_BECOMES] = "becomes",
		[MTRACE_OP_LABEL] = "label",
		[MTRACE_OP_INCREASE] = "increase",
		[MTRACE_OP_SWITCH] = "switch",
		[MTRACE_OP_GC] = "gc",
		[MTRACE_OP_SIGNAL] = "signal",
		[MTRACE_OP_TRY_READ] = "try_read",
		[MTRACE_OP_COUNTER] = "counter",
		[MTRACE_OP_EVTCHN_SEND] = "evtchn_send",
		[MTRACE_OP_EVTCHN_RECV] = "evtchn_recv",
		[MTRACE_OP_RING_START] = "ring_start",
	};

	fputc('{', f);
	for (unsigned op = 0; op < OPS; op++) {
		if (per_op[op] == 0 || names[op] == NULL)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", names[op], per_op[op]);
		first = false;
	}
	fputc('}', f);
}

static void print_name_map(FILE *f, const char *prefix, const uint64_t *v, unsigned n)
{
	bool first = true;

	fputc('{', f);
	for (unsigned k = 0; k < n; k++) {
		if (v[k] == 0)
			continue;
		fprintf(f, "%s\"%s-%u\": %" PRIu64, first ? "" : ", ", prefix, k, v[k]);
		first = false;
	}
	fputc('}', f);
}

/* The labels a summary counts, keyed by the string a reader shows: what is not UTF-8
 * becomes '?' (as mtraced sends it), JSON-escaped. */
static void print_label_map(FILE *f, const struct opts *o, const uint64_t *v)
{
	bool first = true;

	if (!o->labels_from) {
		print_name_map(f, "label", v, MAX_NAMES);
		return;
	}
	fputc('{', f);
	for (unsigned k = 0; k < o->labels; k++) {
		if (v[k] == 0)
			continue;
		char *fixed = strdup(o->label_names[k]);
		if (!fixed)
			continue;
		utf8_fix(fixed);
		fputs(first ? "\"" : ", \"", f);
		for (const unsigned char *c = (const unsigned char *)fixed; *c; c++) {
			if (*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
				fprintf(f, "\\u%04x", *c);
			else
				fputc(*c, f);
		}
		fprintf(f, "\": %" PRIu64, v[k]);
		free(fixed);
		first = false;
	}
	fputc('}', f);
}

static void free_labels(struct opts *o)
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
		free_labels(o);
	free(line);
	fclose(f);
	return rc;
}

static const char *clock_str(uint32_t clock)
{
	static const char *const names[] = { "?", "monotonic", "xen", "realtime", "tsc" };
	return clock < sizeof(names) / sizeof(names[0]) ? names[clock] : "?";
}

static void summary(FILE *f, const struct opts *o, struct mtrace_guest *g, struct ring_job *jobs,
    double elapsed, bool reader_caught_up)
{
	uint64_t total = 0, per_op[OPS] = { 0 }, labels[MAX_NAMES] = { 0 },
	         counters[MAX_NAMES] = { 0 };
	uint64_t garbage = 0, kicks = 0;

	for (unsigned i = 0; i < o->rings; i++) {
		total += jobs[i].events;
		garbage += jobs[i].garbage_writes;
		kicks += jobs[i].r->hdr->notifies;
		for (unsigned op = 0; op < OPS; op++)
			per_op[op] += jobs[i].per_op[op];
		for (unsigned k = 0; k < MAX_NAMES; k++) {
			labels[k] += jobs[i].labels[k];
			counters[k] += jobs[i].counters[k];
		}
	}
	fprintf(f,
	    "{\"program\": \"mtrace-load\", \"version\": \"%s\", \"domid\": %" PRIu32
	    ", \"event_channel\": %" PRIu32 ", \"seed\": %" PRIu64 ", \"rings\": %u, "
	    "\"pages\": %u, \"rate\": %" PRIu64 ", \"garbage\": \"%s\", "
	    "\"garbage_writes\": %" PRIu64 ", \"elapsed_s\": %.3f, \"kicks\": %" PRIu64
	    ", \"kicks_skipped\": %" PRIu64 ", \"reannounced\": %u, \"reader_caught_up\": %s,"
	    " \"clock\": \"%s\",\n"
	    " \"events\": %" PRIu64 ",\n \"per_op\": ",
	    MTRACE_VERSION, mtrace_guest_domid(g), mtrace_guest_port(g), o->seed, o->rings,
	    o->pages, o->rate, garbage_names[o->garbage], garbage, elapsed, kicks,
	    mtrace_guest_kicks_skipped(g), reannounced, reader_caught_up ? "true" : "false",
	    clock_str(mtrace_guest_clock(g)), total);
	print_op_map(f, per_op);
	fprintf(f, ",\n \"labels\": ");
	print_label_map(f, o, labels);
	fprintf(f, ",\n \"counters\": ");
	print_name_map(f, "counter", counters, MAX_NAMES);
	fprintf(f, ",\n \"per_ring\": [");
	for (unsigned i = 0; i < o->rings; i++) {
		fprintf(f,
		    "%s\n  {\"ring\": %u, \"events\": %" PRIu64 ", \"head\": %" PRIu64
		    ", \"per_op\": ",
		    i ? "," : "", i, jobs[i].events, jobs[i].r->head);
		print_op_map(f, jobs[i].per_op);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
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
	    "  -n, --events N         events per ring, including ring_start (default 100000)\n"
	    "      --duration S       run S seconds instead of a fixed count\n"
	    "      --seed N           workload seed (default 1); same seed, same events\n"
	    "      --clock NAME       monotonic | realtime | xen | tsc (default monotonic; tsc falls\n"
	    "                         back to monotonic where the TSC is not invariant)\n"
	    "      --garbage MODE     hostile guest: random | lengths | strings | indexes | mixed\n"
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
	    argv0, MTRACE_MAX_RINGS, MAX_NAMES, MAX_NAMES);
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

static int parse_args(int argc, char **argv, struct opts *o)
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
		O_RINGS,
		O_COUNTERS,
		O_RATE,
		O_DURATION
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
		{ "summary", 1, NULL, O_SUMMARY },
		{ "backend", 1, NULL, 'B' },
		{ "sim-dir", 1, NULL, O_SIMDIR },
		{ "backend-domid", 1, NULL, O_BDOM },
		{ "batch-us", 1, NULL, O_BATCH },
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
		.batch_us = 1000 };
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
				if (strcmp(optarg, garbage_names[g]) == 0) {
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

int main(int argc, char **argv)
{
	struct opts o;
	struct mtrace_guest_config cfg = { 0 };
	struct mtrace_guest *g;
	struct ring_job *jobs;
	pthread_t *th;
	char err[256];
	struct sigaction sa = { 0 };
	FILE *out = stdout;
	int rc = 0;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	cfg.rings = o.rings;
	cfg.data_pages = o.pages;
	cfg.clock = o.clock;
	cfg.backend = o.backend;
	cfg.sim_dir = o.sim_dir;
	cfg.backend_domid = o.backend_domid;
	g = guest = mtrace_guest_open(&cfg, err, sizeof(err));
	if (g == NULL) {
		fprintf(stderr, "mtrace-load: %s\n", err);
		free_labels(&o);
		return 1;
	}
	jobs = calloc(o.rings, sizeof(*jobs));
	th = calloc(o.rings, sizeof(*th));
	if (jobs == NULL || th == NULL) {
		fprintf(stderr, "mtrace-load: out of memory\n");
		mtrace_guest_close(g);
		return 1;
	}
	for (unsigned i = 0; i < o.rings; i++) {
		struct ring_job *j = &jobs[i];
		j->o = &o;
		j->r = mtrace_guest_ring(g, i);
		j->index = i;
		j->port = mtrace_guest_port(g);
		j->rng = (o.seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
		j->slots = calloc(o.threads, sizeof(uint64_t));
		if (j->slots == NULL) {
			fprintf(stderr, "mtrace-load: out of memory\n");
			return 1;
		}
		/* Each ring is a vCPU running threads of its own: thread ids are the
		 * domain's, and two vCPUs never create the same one.  A shared id space
		 * made both rings create threads N+1, N+2, ... (N = -t) at about the
		 * same time, and which
		 * creation and which label the daemon saw last depended on how it
		 * interleaved the rings (a label counted once instead of twice). */
		uint64_t base = (uint64_t)i << RING_ID_SHIFT;
		for (unsigned k = 0; k < o.threads; k++)
			j->slots[k] = base + k + 1;
		j->next_id = base + o.threads + 1;
		j->cur = MTRACE_THREAD_NONE;
		/* The session already wrote RING_START (seq 0). */
		count(j, MTRACE_OP_RING_START);
	}
	if (o.wait_reader > 0 && !wait_rings(jobs, o.rings, o.wait_reader, reader_attached))
		fprintf(stderr, "mtrace-load: no reader attached after %.1f s; writing anyway\n",
		    o.wait_reader);

	double t0 = now_s();
	for (unsigned i = 0; i < o.rings; i++)
		if (pthread_create(&th[i], NULL, ring_main, &jobs[i]) != 0) {
			fprintf(stderr, "mtrace-load: pthread_create failed\n");
			stop = 1;
			o.rings = i;
			rc = 1;
			break;
		}
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < o.rings) {
		service_signals();
		sleep_s(0.01);
	}
	for (unsigned i = 0; i < o.rings; i++)
		pthread_join(th[i], NULL);
	double elapsed = now_s() - t0;

	bool caught_up = false;
	if (o.linger > 0) {
		/* Ask dom0 to wake at once for the rest, then wait for it to catch up. */
		for (unsigned i = 0; i < o.rings; i++)
			mtrace_ring_kick(jobs[i].r);
		caught_up = wait_rings(jobs, o.rings, o.linger, reader_done);
	}
	if (o.summary != NULL && (out = fopen(o.summary, "w")) == NULL) {
		fprintf(stderr, "mtrace-load: %s: %s\n", o.summary, strerror(errno));
		out = stdout;
		rc = 1;
	}
	summary(out, &o, g, jobs, elapsed, caught_up);
	if (out != stdout)
		fclose(out);
	else
		fflush(stdout);
	/* The domain stays as the workload left it (its pending threads pending), so that
	 * every reader's figures can settle on the same numbers (test-outlets-agree). */
	while (o.hold && !stop) {
		service_signals();
		sleep_s(0.05);
	}
	mtrace_guest_close(g);
	for (unsigned i = 0; i < o.rings; i++)
		free(jobs[i].slots);
	free(jobs);
	free_labels(&o);
	free(th);
	return rc;
}
