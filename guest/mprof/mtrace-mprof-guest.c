/*
 * mtrace-mprof-guest - a simulated mirage-profile (legacy) guest.
 *
 * It shares a trace buffer the way a MirageOS unikernel built with mirage-profile does
 * (xen/mProf_xen.ml): one read-only grant per 4 KiB page to dom0, the refs written
 * comma-separated to /local/domain/<domid>/data/mprof/ring-ref in one transaction; no
 * event channel, no other key.  Then it either
 *   --file CTF   serves a recorded buffer (e.g. net.ctf) as it is, or
 *   --live       keeps writing the synthetic workload (mprof-writer.h) with mirage-
 *                profile's writer algorithm, at --rate events/s (0: as fast as it can),
 *                with optional bursts that overwrite whole packets between polls;
 *                timestamps are synthetic (event number, mprof-writer.h) unless
 *                --real-clock asks for CLOCK_MONOTONIC.
 * With --mmap PATH the buffer is a MAP_SHARED file instead of granted pages: mirage-
 * profile's Unix mode, for tests without a (simulated) Xen.
 *
 * When the workload is written (--count N) it writes a JSON summary (events, per op,
 * per label, packets begun/overwritten, first event of each packet) to --summary PATH
 * (or stdout) and keeps the buffer shared until SIGTERM/SIGINT.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "mprof-writer.h"
#include "xenif.h"

#define PAGE      4096u
#define MAX_PAGES 1024u /* the reader's cap, and xenstore's value limit */
#define N_OPS     14u
#define N_LABELS  7u

struct opts {
	const char *file, *mmap_path, *summary, *backend, *sim_dir;
	bool live, real_clock;
	unsigned pages;
	uint64_t rate, count;
	uint64_t burst_every, burst; /* every N events, write `burst` more at full speed */
	unsigned start_delay_ms;
};

struct tally {
	uint64_t events;
	uint64_t per_op[N_OPS];
	uint64_t per_label[N_LABELS];
	uint64_t *first; /* first event of each packet */
	size_t nfirst, cap;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: mtrace-mprof-guest (--file CTF | --live) [--pages N] [--rate EV/S]\n"
	    "         [--count N] [--burst-every N --burst M] [--start-delay MS]\n"
	    "         [--real-clock] [--mmap PATH] [--summary PATH] [--backend xen|sim]\n"
	    "         [--sim-dir DIR]\n"
	    "       mtrace-mprof-guest --help | --version\n"
	    "A simulated mirage-profile guest: shares a CTF trace buffer read-only with dom0\n"
	    "and lists its grant refs in data/mprof/ring-ref, as MirageOS unikernels do.\n");
	exit(status);
}

static uint64_t now_ns(void)
{
	return clock_mono_ns();
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = ts_from_ns(ns);

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR && !stop)
		;
}

/* The buffer in a MAP_SHARED file (mirage-profile's MProf_unix.mmap_buffer). */
static uint8_t *share_mmap(const char *path, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
		fprintf(stderr, "mtrace-mprof-guest: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "mtrace-mprof-guest: mmap: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

static void load_file(const char *path, uint8_t *buf, size_t len);

/* Grant every page read-only to dom0 and announce the refs, as mProf_xen.ml does; a
 * recorded buffer (file) is in the pages before they are announced, so that dom0
 * never polls it half-copied. */
static uint8_t *share_xen(struct xenif *x, unsigned pages, const char *file)
{
	static xenif_gref_t refs[MAX_PAGES];
	static char val[MAX_PAGES * 11];
	char path[128];
	xenif_domid_t self;
	size_t off = 0;
	uint8_t *p;

	if (x->ops->xs_get_domid(x, &self) < 0) {
		fprintf(stderr, "mtrace-mprof-guest: own domid: %s\n", strerror(errno));
		exit(1);
	}
	/* dom0 polls guests' buffers, never its own: shared there, nobody would read it. */
	if (self == 0) {
		fprintf(stderr,
		    "mtrace-mprof-guest: not running in a guest domain (this is domain 0, the "
		    "reader's own): start it in a guest (mtrace-simxen create -- PROG on the "
		    "simulated Xen)\n");
		exit(1);
	}
	/* One call, so the writer gets the contiguous buffer Io_page.get gives; still one
	 * grant (ref) per page. */
	p = x->ops->gntshr_share(x, 0, pages, refs, false);
	if (!p) {
		fprintf(stderr, "mtrace-mprof-guest: gntshr_share: %s\n", strerror(errno));
		exit(1);
	}
	if (file)
		load_file(file, p, (size_t)pages * PAGE);
	for (unsigned i = 0; i < pages; i++)
		off += (size_t)snprintf(
		    val + off, sizeof(val) - off, "%s%" PRIu32, i ? "," : "", refs[i]);
	snprintf(path, sizeof(path), "/local/domain/%" PRIu32 "/data/mprof/ring-ref", self);
	for (int tries = 0;; tries++) {
		uint32_t tx = x->ops->xs_transaction_start(x);

		if (tx == 0) {
			fprintf(stderr, "mtrace-mprof-guest: xenstore transaction: %s\n",
			    strerror(errno));
			exit(1);
		}
		if (x->ops->xs_write(x, tx, path, val, off) < 0) {
			fprintf(
			    stderr, "mtrace-mprof-guest: write %s: %s\n", path, strerror(errno));
			x->ops->xs_transaction_end(x, tx, true);
			exit(1);
		}
		if (x->ops->xs_transaction_end(x, tx, false) == 0)
			break;
		if (errno != EAGAIN || tries > 100) {
			fprintf(stderr, "mtrace-mprof-guest: commit: %s\n", strerror(errno));
			exit(1);
		}
	}
	fprintf(stderr, "mtrace-mprof-guest: domain %" PRIu32 ": %u pages shared\n", self, pages);
	return p;
}

static void note_packet(struct tally *t, uint64_t i)
{
	if (t->nfirst == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->first = realloc(t->first, t->cap * sizeof(*t->first));
		if (!t->first) {
			perror("mtrace-mprof-guest");
			exit(1);
		}
	}
	t->first[t->nfirst++] = i;
}

static void write_summary(const struct opts *o, const struct mprof_writer *w, const struct tally *t)
{
	FILE *f = stdout;
	char tmp[4096];

	if (o->summary) {
		/* write then rename, so a reader never sees half a summary */
		snprintf(tmp, sizeof(tmp), "%s.tmp", o->summary);
		f = fopen(tmp, "w");
	}
	if (!f) {
		fprintf(stderr, "mtrace-mprof-guest: summary: %s\n", strerror(errno));
		return;
	}
	fprintf(f,
	    "{\"events\":%" PRIu64 ",\"buffer_bytes\":%zu,\"packets_begun\":%" PRIu64
	    ",\"packets_overwritten\":%" PRIu64 ",\"per_op\":{",
	    t->events, w->len, w->packets_started,
	    w->packets_started > MPW_PACKETS ? w->packets_started - MPW_PACKETS : 0);
	for (unsigned i = 0; i < N_OPS; i++)
		fprintf(f, "%s\"%u\":%" PRIu64, i ? "," : "", i, t->per_op[i]);
	fprintf(f, "},\"per_label\":{");
	for (unsigned i = 0; i < N_LABELS; i++)
		fprintf(f, "%s\"label-%u\":%" PRIu64, i ? "," : "", i, t->per_label[i]);
	fprintf(f, "},\"packet_first_event\":[");
	for (size_t i = 0; i < t->nfirst; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", t->first[i]);
	fprintf(f, "]}\n");
	if (o->summary) {
		fclose(f);
		if (rename(tmp, o->summary) < 0)
			fprintf(stderr, "mtrace-mprof-guest: rename: %s\n", strerror(errno));
	} else {
		fflush(f);
	}
}

static void run_live(const struct opts *o, uint8_t *buf, size_t len)
{
	struct mprof_writer w;
	struct tally t = { 0 };
	uint64_t start, i = 0, paced = 0, in_burst = 0;

	if (mpw_init(&w, buf, len) < 0) {
		fprintf(stderr, "mtrace-mprof-guest: buffer too small\n");
		exit(1);
	}
	note_packet(&t, 0);
	if (o->start_delay_ms)
		sleep_ns((uint64_t)o->start_delay_ms * 1000000u);
	start = now_ns();
	while (!stop && (o->count == 0 || i < o->count)) {
		struct mpw_event ev;
		char str[32];
		bool ok;

		/* Pace: event i is due at start + i / rate, except inside a burst. */
		if (o->burst_every && i && i % o->burst_every == 0 && in_burst == 0)
			in_burst = o->burst;
		if (in_burst) {
			in_burst--; /* bursts come on top of the paced events */
		} else if (o->rate) {
			uint64_t due = start + paced++ * 1000000000u / o->rate, now = now_ns();

			if (due > now + 200000)
				sleep_ns(due - now);
		}
		mpw_gen(i, &ev, str, sizeof(str));
		if (o->real_clock)
			ev.ts = now_ns(); /* a demo's timeline; tests keep the synthetic one */
		if (mpw_emit(&w, &ev, &ok))
			note_packet(&t, i);
		if (!ok) {
			fprintf(stderr, "mtrace-mprof-guest: event %" PRIu64 " does not fit\n", i);
			exit(1);
		}
		t.events++;
		t.per_op[ev.op]++;
		if (ev.op == 5)
			t.per_label[i % N_LABELS]++;
		i++;
	}
	write_summary(o, &w, &t);
	free(t.first);
	while (!stop)
		pause();
}

static void load_file(const char *path, uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "rb");

	if (!f || fread(buf, 1, len, f) != len) {
		fprintf(stderr, "mtrace-mprof-guest: %s: cannot read %zu bytes\n", path, len);
		exit(1);
	}
	fclose(f);
	fprintf(stderr, "mtrace-mprof-guest: serving %s (%zu bytes)\n", path, len);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "live", no_argument, NULL, 'l' },
		{ "pages", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'c' },
		{ "burst-every", required_argument, NULL, 'E' },
		{ "burst", required_argument, NULL, 'B' },
		{ "start-delay", required_argument, NULL, 'd' },
		{ "mmap", required_argument, NULL, 'm' },
		{ "summary", required_argument, NULL, 's' },
		{ "backend", required_argument, NULL, 'b' },
		{ "sim-dir", required_argument, NULL, 'D' },
		{ "real-clock", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .pages = 245 };
	struct xenif *x = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	size_t len;
	uint8_t *buf;
	int c;

	while ((c = getopt_long(argc, argv, "hV", lo, NULL)) != -1) {
		switch (c) {
		case 'f':
			o.file = optarg;
			break;
		case 'l':
			o.live = true;
			break;
		case 'p':
			o.pages = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			o.rate = strtoull(optarg, NULL, 10);
			break;
		case 'c':
			o.count = strtoull(optarg, NULL, 10);
			break;
		case 'E':
			o.burst_every = strtoull(optarg, NULL, 10);
			break;
		case 'B':
			o.burst = strtoull(optarg, NULL, 10);
			break;
		case 'd':
			o.start_delay_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'm':
			o.mmap_path = optarg;
			break;
		case 's':
			o.summary = optarg;
			break;
		case 'b':
			o.backend = optarg;
			break;
		case 'D':
			o.sim_dir = optarg;
			break;
		case 'R':
			o.real_clock = true;
			break;
		case 'h':
			usage(0);
			break;
		case 'V':
			printf("mtrace-mprof-guest %s\n", MTRACE_VERSION);
			return 0;
		default:
			usage(2);
		}
	}
	if (optind != argc || (!o.file) == (!o.live))
		usage(2);
	if (o.file) {
		struct stat sb;

		/* Io_page buffers are whole pages, and the packet split depends on the size. */
		if (stat(o.file, &sb) < 0 || sb.st_size == 0 || sb.st_size % PAGE) {
			fprintf(stderr, "mtrace-mprof-guest: %s: not a whole number of pages\n",
			    o.file);
			return 1;
		}
		o.pages = (unsigned)(sb.st_size / PAGE);
	}
	if (o.pages == 0 || o.pages > MAX_PAGES) {
		fprintf(stderr, "mtrace-mprof-guest: --pages must be 1..%u\n", MAX_PAGES);
		return 2;
	}
	len = (size_t)o.pages * PAGE;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (o.mmap_path) {
		buf = share_mmap(o.mmap_path, len);
	} else {
		char err[256];

		x = xenif_open(o.backend, o.sim_dir, XENIF_GNTSHR | XENIF_XS, err, sizeof(err));
		if (!x) {
			fprintf(stderr, "mtrace-mprof-guest: %s\n", err);
			return 1;
		}
		buf = share_xen(x, o.pages, o.file);
	}
	if (o.file) {
		if (o.mmap_path)
			load_file(o.file, buf, len);
		while (!stop)
			pause();
	} else {
		run_live(&o, buf, len);
	}
	/* mirage-profile never revokes its grants; we leave with the domain. */
	if (x)
		xenif_close(x);
	return 0;
}
