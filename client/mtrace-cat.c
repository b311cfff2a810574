/*
 * mtrace-cat - subscribe to mtraced and print events and statistics as text, JSON
 * lines, Chrome trace events, or the raw delimited ServerMsg frames for other
 * collectors.
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

#include "clock.h"
#include "cat-format.h"
#include "malloc-tune.h"
#include "mtrace-client.h"
#include "ring-reader.h"

#define MAX_FILTER 256

static volatile sig_atomic_t stop_signal;

struct cat_opts {
	const char *socket;
	enum cat_format fmt;
	uint32_t domids[MAX_FILTER];
	char *names[MAX_FILTER];
	uint32_t ops[MAX_FILTER];
	char *labels[MAX_FILTER];
	size_t n_domids, n_names, n_ops, n_labels;
	bool no_events;
	unsigned stats_ms, top_n, sort;
	bool label_stats;
	uint64_t count;		/* 0: unlimited */
	double seconds;		/* 0: unlimited */
	bool summary;
};

/* What --summary reports at exit (tests compare it with what the guest wrote). */
static struct {
	uint64_t events, batches, messages, stats, dropped, lost_in_ring, bytes;
	uint64_t by_op[256];
	bool goodbye;
} sum;

static void
usage(FILE *f)
{
	fprintf(f,
"usage: mtrace-cat [options]\n"
"Print what mtraced streams: events and statistics of the traced Xen guests.\n"
"\n"
"  -s, --socket PATH     daemon socket (default $MTRACE_SOCKET or %s)\n"
"  -f, --format FMT      text (default), json (JSON lines), proto (raw delimited\n"
"                        mtrace.ServerMsg frames), chrome (trace-event JSON for\n"
"                        Perfetto / chrome://tracing), count (print nothing)\n"
"  -d, --domain D        only domain D (id or name); repeatable\n"
"  -o, --ops LIST        only these ops (names or numbers, comma separated)\n"
"  -l, --label PREFIX    only events of threads whose label starts with PREFIX;\n"
"                        repeatable\n"
"      --stats MS        statistics every MS milliseconds (>= 100)\n"
"      --top N           top N threads in statistics\n"
"      --sort KEY        events|running|pending|age|children|reads|resolves|id\n"
"      --label-stats     per-label aggregates in statistics\n"
"      --no-events       statistics only\n"
"  -n, --count N         exit after N events (N statistics with --no-events)\n"
"  -t, --time SECONDS    exit after SECONDS\n"
"      --summary         print a JSON summary of what was received on stderr at exit\n"
"  -h, --help            this text\n"
"  -V, --version         version\n", MTRACE_DEFAULT_SOCKET);
}

static const char *const sort_names[] = {
	"events", "running", "pending", "age", "children", "reads", "resolves", "id",
};

static int
parse_ops(struct cat_opts *o, char *list)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);
		unsigned op;

		if (*tok && !*end && v < 256) {
			op = (unsigned)v;
		} else {
			for (op = 0; op < 256; op++) {
				const char *n = mtrace_op_name(op);
				if (n && strcmp(n, tok) == 0)
					break;
			}
			if (op == 256) {
				fprintf(stderr, "mtrace-cat: unknown op '%s'\n", tok);
				return -1;
			}
		}
		if (o->n_ops == MAX_FILTER)
			return -1;
		o->ops[o->n_ops++] = op;
	}
	return 0;
}

static int
parse_args(int argc, char **argv, struct cat_opts *o)
{
	enum { O_STATS = 256, O_TOP, O_SORT, O_NOEV, O_SUMMARY, O_LSTATS };
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "domain", required_argument, NULL, 'd' },
		{ "ops", required_argument, NULL, 'o' },
		{ "label", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, 't' },
		{ "stats", required_argument, NULL, O_STATS },
		{ "top", required_argument, NULL, O_TOP },
		{ "sort", required_argument, NULL, O_SORT },
		{ "label-stats", no_argument, NULL, O_LSTATS },
		{ "no-events", no_argument, NULL, O_NOEV },
		{ "summary", no_argument, NULL, O_SUMMARY },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "s:f:d:o:l:n:t:hV", lo, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (ch) {
		case 's':
			o->socket = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "text")) o->fmt = CAT_TEXT;
			else if (!strcmp(optarg, "json")) o->fmt = CAT_JSON;
			else if (!strcmp(optarg, "proto")) o->fmt = CAT_PROTO;
			else if (!strcmp(optarg, "chrome")) o->fmt = CAT_CHROME;
			else if (!strcmp(optarg, "count")) o->fmt = CAT_COUNT;
			else {
				fprintf(stderr, "mtrace-cat: unknown format '%s'\n", optarg);
				return -1;
			}
			break;
		case 'd':
			v = strtoul(optarg, &end, 10);
			if (*optarg >= '0' && *optarg <= '9' && !*end && v <= UINT32_MAX) {
				if (o->n_domids == MAX_FILTER)
					return -1;
				o->domids[o->n_domids++] = (uint32_t)v;
			} else {
				if (o->n_names == MAX_FILTER)
					return -1;
				o->names[o->n_names++] = optarg;
			}
			break;
		case 'o':
			if (parse_ops(o, optarg) < 0)
				return -1;
			break;
		case 'l':
			if (o->n_labels == MAX_FILTER)
				return -1;
			o->labels[o->n_labels++] = optarg;
			break;
		case 'n':
			o->count = strtoull(optarg, &end, 10);
			if (*end || !o->count) {
				fprintf(stderr, "mtrace-cat: bad count '%s'\n", optarg);
				return -1;
			}
			break;
		case 't':
			o->seconds = strtod(optarg, &end);
			if (*end || o->seconds <= 0) {
				fprintf(stderr, "mtrace-cat: bad time '%s'\n", optarg);
				return -1;
			}
			break;
		case O_STATS:
			v = strtoul(optarg, &end, 10);
			if (*end || v < 100 || v > 3600000) {
				fprintf(stderr, "mtrace-cat: --stats needs 100..3600000 ms\n");
				return -1;
			}
			o->stats_ms = (unsigned)v;
			break;
		case O_TOP:
			v = strtoul(optarg, &end, 10);
			if (*end || v > 100000) {
				fprintf(stderr, "mtrace-cat: bad --top '%s'\n", optarg);
				return -1;
			}
			o->top_n = (unsigned)v;
			break;
		case O_SORT:
			for (o->sort = 0; o->sort < 8; o->sort++)
				if (!strcmp(sort_names[o->sort], optarg))
					break;
			if (o->sort == 8) {
				fprintf(stderr, "mtrace-cat: unknown sort key '%s'\n", optarg);
				return -1;
			}
			break;
		case O_LSTATS:
			o->label_stats = true;
			break;
		case O_NOEV:
			o->no_events = true;
			break;
		case O_SUMMARY:
			o->summary = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("mtrace-cat %s\n", MTRACE_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	if (o->no_events && !o->stats_ms) {
		fprintf(stderr, "mtrace-cat: --no-events without --stats would print nothing\n");
		return -1;
	}
	return 0;
}

static void
on_signal(int sig)
{
	stop_signal = sig;
}

static double
now_s(void)
{
	return clock_mono_s();
}

/* Print a batch's events; returns false once the -n count is reached. */
static bool
print_batch(const struct cat_opts *o, const Mtrace__EventBatch *b)
{
	size_t n = b->n_op, si = 0, i;
	uint64_t ts = b->base_ts;

	/* Columns of unequal length come from a broken or hostile peer: refuse them. */
	if (b->n_ts_delta != n || b->n_thread != n || b->n_arg != n ||
	    (b->n_type != n && b->n_type != 0)) {
		fprintf(stderr, "mtrace-cat: malformed event batch (column lengths differ)\n");
		return true;
	}
	sum.batches++;
	for (i = 0; i < n; i++) {
		const char *str = NULL;

		ts += (uint64_t)b->ts_delta[i];
		/* a reference past the dictionary is the peer's bug: print no string */
		if (mtrace_op_has_string(b->op[i]) && si < b->n_str_ref &&
		    b->str_ref[si++] < b->n_str)
			str = b->str[b->str_ref[si - 1]];
		sum.events++;
		sum.by_op[b->op[i] & 0xff]++;
		cat_event(stdout, o->fmt, b, i, ts, str);
		if (o->count && !o->no_events && sum.events >= o->count)
			return false;
	}
	return true;
}

static void
print_summary(void)
{
	fprintf(stderr, "{\"events\":%" PRIu64 ",\"batches\":%" PRIu64 ",\"messages\":%" PRIu64
		",\"stats\":%" PRIu64 ",\"dropped_for_client\":%" PRIu64 ",\"lost_in_ring\":%"
		PRIu64 ",\"bytes\":%" PRIu64 ",\"goodbye\":%s,\"by_op\":{", sum.events,
		sum.batches, sum.messages, sum.stats, sum.dropped, sum.lost_in_ring, sum.bytes,
		sum.goodbye ? "true" : "false");
	for (unsigned op = 0, first = 1; op < 256; op++) {
		if (!sum.by_op[op])
			continue;
		fprintf(stderr, "%s\"%u\":%" PRIu64, first ? "" : ",", op, sum.by_op[op]);
		first = 0;
	}
	fprintf(stderr, "}}\n");
}

/* Returns 1 to go on, 0 to stop cleanly, -1 on error. */
static int
handle(const struct cat_opts *o, const Mtrace__ServerMsg *m, const uint8_t *raw, size_t rlen)
{
	sum.messages++;
	sum.bytes += rlen;
	if (o->fmt == CAT_PROTO && fwrite(raw, 1, rlen, stdout) != rlen)
		return 0;
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		return print_batch(o, m->events) ? 1 : 0;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		cat_names_note(m->domain_up->domid, m->domain_up->name);
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		sum.dropped += m->loss->dropped_for_client;
		sum.lost_in_ring += m->loss->lost_in_ring;
		if (m->loss->dropped_for_client)
			fprintf(stderr, "mtrace-cat: %" PRIu64 " events dropped: this client "
				"read too slowly\n", m->loss->dropped_for_client);
		break;
	case MTRACE__SERVER_MSG__MSG_STATS:
		sum.stats++;
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		sum.goodbye = true;
		break;
	default:
		break;
	}
	cat_other(stdout, o->fmt, m);
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
		if (o->no_events && o->count && sum.stats >= o->count)
			return 0;
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		fprintf(stderr, "mtrace-cat: mtraced said goodbye: %s\n",
			m->goodbye->reason ? m->goodbye->reason : "");
		return 0;
	case MTRACE__SERVER_MSG__MSG_ERROR:
		fprintf(stderr, "mtrace-cat: error from mtraced: %s\n",
			m->error->message ? m->error->message : "?");
		return -1;
	default:
		break;
	}
	return 1;
}

static int
run(const struct cat_opts *o, struct mtc *c)
{
	double deadline = o->seconds > 0 ? now_s() + o->seconds : 0;
	bool unflushed = false;
	char err[256];

	for (;;) {
		Mtrace__ServerMsg *m;
		const uint8_t *raw;
		size_t rlen;
		int timeout = -1, r;

		if (stop_signal)
			return 0;
		if (deadline > 0) {
			double left = deadline - now_s();
			if (left <= 0)
				return 0;
			timeout = (int)(left * 1000) + 1;
		}
		/* Write out when the socket runs dry, not per message: cheap at high rates,
		 * prompt at low ones. */
		r = mtc_next(c, unflushed ? 0 : timeout, &m, &raw, &rlen, err, sizeof(err));
		if (r == 0) {
			if (unflushed) {
				if (fflush(stdout) == EOF)
					return 0;	/* EPIPE: the reader went away */
				unflushed = false;
			}
			continue;
		}
		if (r < 0) {
			if (stop_signal)
				return 0;
			if (errno == 0)
				return 0;	/* EOF: the daemon went away */
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return -1;
		}
		r = handle(o, m, raw, rlen);
		mtc_msg_free(m);
		unflushed = true;
		if (ferror(stdout))
			return 0;
		if (r <= 0)
			return r;
	}
}

int
main(int argc, char **argv)
{
	static struct cat_opts o;
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	struct sigaction sa = { .sa_handler = on_signal };
	struct mtc *c;
	char err[512];
	int r;

	malloc_tune();
	if (parse_args(argc, argv, &o) < 0)
		return 2;
	/* Writes to a closed pipe fail with EPIPE and end the run cleanly. */
	signal(SIGPIPE, SIG_IGN);
	/* No SA_RESTART: the wait in mtc_next must return on ^C. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	c = mtc_connect(o.socket, "mtrace-cat " MTRACE_VERSION, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "mtrace-cat: %s\n", err);
		return 1;
	}
	sub.n_domids = o.n_domids;
	sub.domids = o.domids;
	sub.n_domain_names = o.n_names;
	sub.domain_names = o.names;
	sub.n_ops = o.n_ops;
	sub.ops = o.ops;
	sub.n_labels = o.n_labels;
	sub.labels = o.labels;
	sub.events = !o.no_events;
	sub.stats_interval_ms = o.stats_ms;
	sub.top_n = o.top_n;
	sub.sort = (Mtrace__SortKey)o.sort;
	sub.label_stats = o.label_stats;
	if (mtc_subscribe(c, &sub) < 0) {
		fprintf(stderr, "mtrace-cat: subscribe: %s\n", strerror(errno));
		mtc_close(c);
		return 1;
	}
	if (o.fmt == CAT_CHROME)
		cat_chrome_begin(stdout);
	r = run(&o, c);
	if (o.fmt == CAT_CHROME)
		cat_chrome_end(stdout);
	fflush(stdout);
	mtc_close(c);
	if (o.summary)
		print_summary();
	return r < 0 ? 1 : 0;
}
