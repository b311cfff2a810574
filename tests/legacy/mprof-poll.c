/*
 * mprof-poll.c - poll a mirage-profile buffer held in a file with daemon/mprof.c, the
 * way mtraced does with granted pages: map it read-only and shared, copy the whole
 * buffer once per poll, hand the copy to the reader.  The file is either a dump
 * (net.ctf) or live: mtrace-mprof-guest --mmap writes it through MAP_SHARED, which is
 * mirage-profile's Unix mode (MProf_unix.mmap_buffer).
 *
 * Usage: mprof-poll [-n POLLS] [-i MS] [-e] [-u DONEFILE] FILE
 *   -n  stop after this many polls (default 2: enough for a still buffer)
 *   -i  poll interval in ms (default 0)
 *   -e  print every event as a JSON line
 *   -u  poll until DONEFILE exists, then 3 more polls (live mode; -n ignored)
 * Prints a JSON summary last: {"summary":{events, per_op, per_label, stats}}.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "mprof.h"

#define MAX_LABELS 4096

struct out {
	bool events;
	uint64_t per_op[MTRACE_OP_COUNT_MIRAGE];
	char *label[MAX_LABELS];
	uint64_t label_n[MAX_LABELS];
	unsigned nlabels;
	uint64_t label_overflow;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void json_str(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void on_event(const struct mtrace_event *ev, void *arg)
{
	struct out *o = arg;

	if (ev->op < MTRACE_OP_COUNT_MIRAGE)
		o->per_op[ev->op]++;
	if (ev->op == MTRACE_OP_LABEL) {
		unsigned i;

		for (i = 0; i < o->nlabels; i++)
			if (strlen(o->label[i]) == ev->str_len &&
			    !memcmp(o->label[i], ev->str, ev->str_len))
				break;
		if (i == o->nlabels && i < MAX_LABELS)
			o->label[o->nlabels++] = strndup(ev->str, ev->str_len);
		if (i < MAX_LABELS)
			o->label_n[i]++;
		else
			o->label_overflow++;
	}
	if (!o->events)
		return;
	printf("{\"ts\":%" PRIu64 ",\"op\":\"%s\",\"thread\":%" PRId64 ",\"arg\":%" PRId64
	       ",\"type\":%u,\"seq\":%u",
	    ev->ts, mtrace_op_name(ev->op), (int64_t)ev->thread, (int64_t)ev->arg, ev->type,
	    ev->seq);
	if (ev->str) {
		printf(",\"str\":");
		json_str(stdout, ev->str, ev->str_len);
	}
	printf("}\n");
}

static void summary(const struct out *o, const struct mprof_reader *r)
{
	const struct mprof_stats *st = mprof_reader_stats(r);
	bool first = true;

	printf("{\"summary\":{\"events\":%" PRIu64 ",\"per_op\":{", st->events);
	for (unsigned i = 0; i < MTRACE_OP_COUNT_MIRAGE; i++) {
		if (!o->per_op[i])
			continue;
		printf("%s\"%s\":%" PRIu64, first ? "" : ",", mtrace_op_name(i), o->per_op[i]);
		first = false;
	}
	printf("},\"per_label\":{");
	for (unsigned i = 0; i < o->nlabels; i++) {
		if (i)
			printf(",");
		json_str(stdout, o->label[i], strlen(o->label[i]));
		printf(":%" PRIu64, o->label_n[i]);
	}
	printf("},\"stats\":{\"events\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"lost_packets\":%" PRIu64
	       ",\"torn\":%" PRIu64 ",\"corrupt\":%" PRIu64 ",\"polls\":%" PRIu64
	       ",\"truncated\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"resyncs\":%" PRIu64
	       ",\"unknown\":%" PRIu64 "},\"error\":",
	    st->events, st->lost, st->lost_packets, st->torn, st->corrupt, st->polls, st->truncated,
	    st->packets, st->resyncs, st->unknown);
	json_str(stdout, mprof_reader_error(r), strlen(mprof_reader_error(r)));
	printf("}}\n");
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR && !stop)
		;
}

int main(int argc, char **argv)
{
	unsigned polls = 2, interval = 0, after_done = 3;
	const char *done = NULL;
	static struct out o;
	struct mprof_reader *r;
	struct stat sb;
	uint8_t *map, *copy;
	int c, fd;

	while ((c = getopt(argc, argv, "n:i:eu:")) != -1) {
		switch (c) {
		case 'n':
			polls = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'i':
			interval = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'e':
			o.events = true;
			break;
		case 'u':
			done = optarg;
			break;
		default:
			fprintf(
			    stderr, "usage: mprof-poll [-n POLLS] [-i MS] [-e] [-u DONE] FILE\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: mprof-poll [-n POLLS] [-i MS] [-e] [-u DONE] FILE\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	fd = open(argv[optind], O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		fprintf(stderr, "mprof-poll: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	r = mprof_reader_new((size_t)sb.st_size);
	if (!r) {
		fprintf(stderr, "mprof-poll: %s: unusable size %lld\n", argv[optind],
		    (long long)sb.st_size);
		return 1;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	copy = malloc((size_t)sb.st_size);
	if (map == MAP_FAILED || !copy) {
		fprintf(stderr, "mprof-poll: map: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned n = 0; !stop; n++) {
		memcpy(copy, map, (size_t)sb.st_size);
		mprof_reader_poll(r, copy, (size_t)sb.st_size, on_event, &o);
		if (done) {
			if (access(done, F_OK) == 0 && after_done-- == 0)
				break;
		} else if (n + 1 >= polls) {
			break;
		}
		if (interval)
			sleep_ms(interval);
	}
	summary(&o, r);
	fflush(stdout);
	for (unsigned i = 0; i < o.nlabels; i++)
		free(o.label[i]);
	free(copy);
	munmap(map, (size_t)sb.st_size);
	close(fd);
	mprof_reader_free(r);
	return 0;
}
