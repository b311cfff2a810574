/*
 * mtrace-cat - subscribe to mtraced (or read a recording) and print events and
 * statistics as text, JSON lines, Chrome trace events, a CTF trace, or a recording
 * (the delimited ServerMsg frames behind a small header, docs/recording.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cat-chrome.h"
#include "cat-ctf.h"
#include "cat-filter.h"
#include "clock.h"
#include "cat-folded.h"
#include "cat-format.h"
#include "frame.h"
#include "malloc-tune.h"
#include "mtrace-client.h"
#include "session.h"
#include "recording.h"
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
	bool label_stats, site_stats, finished;
	enum folded_frames frames;
	enum folded_weight weight;
	uint64_t count; /* 0: unlimited */
	double seconds; /* 0: unlimited */
	bool summary;
	const char *input;  /* -i: a recording instead of the daemon ("-": stdin) */
	const char *record; /* -w: also save what is received */
	const char *output; /* -O: file (directory for ctf) instead of stdout */
	bool reconnect;     /* mtraced went away: wait for it, subscribe again */
};

/* Where recordings go (-f proto's output, -w's file) and the -i filters. */
static FILE *sinks[2];
static size_t n_sinks;
static struct cat_filter filt;
static bool filtering, reached_count;
static FILE *out;

/* What --summary reports at exit (tests compare it with what the guest wrote). */
static struct {
	uint64_t events, batches, messages, stats, dropped, lost_in_ring, bytes;
	uint64_t by_op[256];
	bool goodbye;
} sum;

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: mtrace-cat [options]\n"
	    "Print what mtraced streams: events and statistics of the traced Xen guests.\n"
	    "\n"
	    "  -s, --socket PATH     daemon socket (default $MTRACE_SOCKET or %s)\n"
	    "  -i, --input FILE      read a recording (from -f proto or -w; - for stdin)\n"
	    "                        instead of the daemon; filters and formats as live\n"
	    "  -f, --format FMT      text (default), json (JSON lines), proto (a recording:\n"
	    "                        delimited mtrace.ServerMsg frames behind a header),\n"
	    "                        chrome (trace-event JSON for Perfetto UI), ctf (a CTF\n"
	    "                        trace directory, needs -O DIR), count (print nothing),\n"
	    "                        folded (creation stacks for flame graphs, at exit)\n"
	    "  -O, --output PATH     write to PATH instead of stdout (ctf: the directory)\n"
	    "  -w, --write FILE      also save a recording of what is received in FILE\n"
	    "  -d, --domain D        only domain D (id or name); repeatable\n"
	    "  -o, --ops LIST        only these ops (names or numbers, comma separated)\n"
	    "      --label PREFIX    only events of threads whose label starts with PREFIX;\n"
	    "                        repeatable (old spelling -l: still works, with a\n"
	    "                        warning; across mtrace -l is --listen)\n"
	    "      --stats MS        statistics every MS milliseconds (>= 100)\n"
	    "      --threads N       the N busiest threads in statistics (--top is the same)\n"
	    "      --sort KEY        events|running|pending|age|children|reads|resolves|id\n"
	    "      --label-stats     per-label aggregates in statistics\n"
	    "      --site-stats      per-creation-site aggregates and the graph between sites\n"
	    "      --finished        top threads include resolved ones\n"
	    "      --frames KIND     folded: auto (label, else @site), label or site\n"
	    "      --weight KIND     folded: count (threads), pending or running (ns)\n"
	    "      --no-events       statistics only\n"
	    "  -n, --count N         exit after N events (N statistics with --no-events)\n"
	    "  -t, --time SECONDS    exit after SECONDS\n"
	    "      --summary         print a JSON summary of what was received on stderr at exit\n"
	    "      --reconnect       when mtraced goes away, wait for it and carry on (default:\n"
	    "                        exit, status 0 after a Goodbye or end of file)\n"
	    "  -h, --help            this text\n"
	    "  -V, --version         version\n",
	    MTRACE_DEFAULT_SOCKET);
}

static const char *const sort_names[] = {
	"events",
	"running",
	"pending",
	"age",
	"children",
	"reads",
	"resolves",
	"id",
};

static int parse_ops(struct cat_opts *o, char *list)
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

static int parse_args(int argc, char **argv, struct cat_opts *o)
{
	enum {
		O_STATS = 256,
		O_TOP,
		O_SORT,
		O_NOEV,
		O_SUMMARY,
		O_LSTATS,
		O_RECONNECT,
		O_SSTATS,
		O_FINISHED,
		O_FRAMES,
		O_WEIGHT,
		O_LABEL
	};
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'O' },
		{ "write", required_argument, NULL, 'w' },
		{ "format", required_argument, NULL, 'f' },
		{ "domain", required_argument, NULL, 'd' },
		{ "ops", required_argument, NULL, 'o' },
		{ "label", required_argument, NULL, O_LABEL },
		{ "count", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, 't' },
		{ "stats", required_argument, NULL, O_STATS },
		{ "threads", required_argument, NULL, O_TOP },
		{ "top", required_argument, NULL, O_TOP },
		{ "sort", required_argument, NULL, O_SORT },
		{ "label-stats", no_argument, NULL, O_LSTATS },
		{ "site-stats", no_argument, NULL, O_SSTATS },
		{ "finished", no_argument, NULL, O_FINISHED },
		{ "frames", required_argument, NULL, O_FRAMES },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "no-events", no_argument, NULL, O_NOEV },
		{ "summary", no_argument, NULL, O_SUMMARY },
		{ "reconnect", no_argument, NULL, O_RECONNECT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool live_only = false;
	int ch;

	while ((ch = getopt_long(argc, argv, "s:i:O:w:f:d:o:l:n:t:hV", lo, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (ch) {
		case 's':
			o->socket = optarg;
			break;
		case 'i':
			o->input = optarg;
			break;
		case 'O':
			o->output = optarg;
			break;
		case 'w':
			o->record = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				o->fmt = CAT_TEXT;
			else if (!strcmp(optarg, "json"))
				o->fmt = CAT_JSON;
			else if (!strcmp(optarg, "proto"))
				o->fmt = CAT_PROTO;
			else if (!strcmp(optarg, "chrome"))
				o->fmt = CAT_CHROME;
			else if (!strcmp(optarg, "count"))
				o->fmt = CAT_COUNT;
			else if (!strcmp(optarg, "ctf"))
				o->fmt = CAT_CTF;
			else if (!strcmp(optarg, "folded"))
				o->fmt = CAT_FOLDED;
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
			/* -l is --listen across mtrace; scripts with the old spelling work */
			fprintf(stderr, "mtrace-cat: -l is an old spelling; use --label\n");
			/* fall through */
		case O_LABEL:
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
			live_only = true;
			v = strtoul(optarg, &end, 10);
			if (*end || v < 100 || v > 3600000) {
				fprintf(stderr, "mtrace-cat: --stats needs 100..3600000 ms\n");
				return -1;
			}
			o->stats_ms = (unsigned)v;
			break;
		case O_TOP:
			live_only = true;
			v = strtoul(optarg, &end, 10);
			if (*end || v > 100000) {
				fprintf(stderr, "mtrace-cat: bad --threads '%s'\n", optarg);
				return -1;
			}
			o->top_n = (unsigned)v;
			break;
		case O_SORT:
			live_only = true;
			for (o->sort = 0; o->sort < 8; o->sort++)
				if (!strcmp(sort_names[o->sort], optarg))
					break;
			if (o->sort == 8) {
				fprintf(stderr, "mtrace-cat: unknown sort key '%s'\n", optarg);
				return -1;
			}
			break;
		case O_LSTATS:
			live_only = true;
			o->label_stats = true;
			break;
		case O_SSTATS:
			live_only = true;
			o->site_stats = true;
			break;
		case O_FINISHED:
			live_only = true;
			o->finished = true;
			break;
		case O_FRAMES:
			if (!strcmp(optarg, "auto"))
				o->frames = FOLDED_AUTO;
			else if (!strcmp(optarg, "label"))
				o->frames = FOLDED_LABEL;
			else if (!strcmp(optarg, "site"))
				o->frames = FOLDED_SITE;
			else {
				fprintf(stderr, "mtrace-cat: --frames: auto, label or site\n");
				return -1;
			}
			break;
		case O_WEIGHT:
			if (!strcmp(optarg, "count"))
				o->weight = FOLDED_COUNT;
			else if (!strcmp(optarg, "pending"))
				o->weight = FOLDED_PENDING;
			else if (!strcmp(optarg, "running"))
				o->weight = FOLDED_RUNNING;
			else {
				fprintf(
				    stderr, "mtrace-cat: --weight: count, pending or running\n");
				return -1;
			}
			break;
		case O_NOEV:
			o->no_events = true;
			break;
		case O_SUMMARY:
			o->summary = true;
			break;
		case O_RECONNECT:
			o->reconnect = true;
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
	if (o->input && live_only) {
		fprintf(stderr,
		    "mtrace-cat: --stats, --top, --sort and --label-stats are chosen "
		    "when recording; -i prints what the recording holds\n");
		return -1;
	}
	if (o->input && o->record) {
		fprintf(stderr,
		    "mtrace-cat: -w records a live stream; to filter a recording "
		    "into another use -i FILE -f proto -O NEW\n");
		return -1;
	}
	if (o->fmt == CAT_CTF && !o->output) {
		fprintf(stderr, "mtrace-cat: -f ctf writes a directory: give it with -O DIR\n");
		return -1;
	}
	if (o->no_events && !o->stats_ms && !o->input) {
		fprintf(stderr, "mtrace-cat: --no-events without --stats would print nothing\n");
		return -1;
	}
	return 0;
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

static double now_s(void)
{
	return clock_mono_s();
}

/* Print a batch's events; returns false once the -n count is reached. */
static bool print_batch(const struct cat_opts *o, const Mtrace__EventBatch *b)
{
	size_t n = b->n_op, si = 0, i;
	uint64_t ts = b->base_ts;

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
		if (o->fmt == CAT_FOLDED)
			folded_event(b->domid, (uint8_t)b->op[i],
			    n == b->n_type ? (uint8_t)b->type[i] : 0, ts, b->thread[i], b->arg[i],
			    str);
		else
			cat_event(out, o->fmt, b, i, ts, str);
		if (o->count && !o->no_events && sum.events >= o->count)
			return false;
	}
	return true;
}

static void sink_raw(const uint8_t *raw, size_t len)
{
	for (size_t i = 0; i < n_sinks; i++)
		recording_write_frame(sinks[i], raw, len);
}

/* A message of ours (a filtered piece of a recording) to the recording sinks. */
static void sink_msg(const Mtrace__ServerMsg *m)
{
	size_t len, hl;
	uint8_t *buf;

	if (!n_sinks)
		return;
	len = mtrace__server_msg__get_packed_size(m);
	buf = malloc(len + FRAME_VARINT_MAX);
	if (!buf)
		return;
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(m, buf + hl);
	sink_raw(buf, hl + len);
	free(buf);
}

static void filtered_part(const Mtrace__EventBatch *part, void *arg)
{
	const struct cat_opts *o = arg;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;

	if (reached_count)
		return;
	m.msg_case = MTRACE__SERVER_MSG__MSG_EVENTS;
	m.events = (Mtrace__EventBatch *)part;
	sink_msg(&m);
	if (!print_batch(o, part))
		reached_count = true;
}

/* Messages about one domain that the -i filters leave out. */
static bool filtered_out(const Mtrace__ServerMsg *m)
{
	if (!filtering)
		return false;
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		return !cat_filter_domain(&filt, m->domain_up->domid);
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		return !cat_filter_domain(&filt, m->domain_down->domid);
	case MTRACE__SERVER_MSG__MSG_LOSS:
		/* domid 0 ring 0 is this client's own loss: always shown */
		return (m->loss->domid || m->loss->ring) &&
		    !cat_filter_domain(&filt, m->loss->domid);
	default:
		return false;
	}
}

static int handle_events(
    const struct cat_opts *o, const Mtrace__EventBatch *b, const uint8_t *raw, size_t rlen)
{
	size_t n = b->n_op;

	/* Columns of unequal length come from a broken or hostile peer: refuse them. */
	if (b->n_ts_delta != n || b->n_thread != n || b->n_arg != n ||
	    (b->n_type != n && b->n_type != 0)) {
		fprintf(stderr, "mtrace-cat: malformed event batch (column lengths differ)\n");
		return 1;
	}
	if (o->input && o->no_events)
		return 1;
	if (!filtering) {
		sink_raw(raw, rlen);
		return print_batch(o, b) ? 1 : 0;
	}
	if (cat_filter_batch(&filt, b, filtered_part, (void *)o) < 0) {
		fprintf(stderr, "mtrace-cat: out of memory\n");
		return -1;
	}
	return reached_count ? 0 : 1;
}

/* Returns 1 to go on, 0 to stop cleanly, -1 on error. */
static int handle(
    const struct cat_opts *o, const Mtrace__ServerMsg *m, const uint8_t *raw, size_t rlen)
{
	struct cat_stats_view view;
	const Mtrace__ServerMsg *shown = m;
	Mtrace__ServerMsg vm;

	if (m->msg_case == MTRACE__SERVER_MSG__MSG_HELLO) {
		/* a recording's first frame: the daemon it came from */
		cat_ctf_hello(m->hello);
		sink_raw(raw, rlen);
		return 1;
	}
	sum.messages++;
	sum.bytes += rlen;
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_UP)
		cat_names_note(m->domain_up->domid, m->domain_up->name);
	if (filtered_out(m))
		return 1;
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		return handle_events(o, m->events, raw, rlen);
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		if (o->fmt == CAT_CHROME)
			cat_chrome_domain_up(out, m->domain_up->domid, m->domain_up->name);
		if (o->fmt == CAT_CTF)
			cat_ctf_domain_up(
			    m->domain_up->domid, m->domain_up->name, m->domain_up->clock);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		if (o->fmt == CAT_CHROME)
			cat_chrome_domain_down(out, m->domain_down->domid);
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		sum.dropped += m->loss->dropped_for_client;
		sum.lost_in_ring += m->loss->lost_in_ring;
		if (m->loss->dropped_for_client)
			fprintf(stderr,
			    "mtrace-cat: %" PRIu64 " events dropped: this client "
			    "read too slowly\n",
			    m->loss->dropped_for_client);
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
	if (filtering && m->msg_case == MTRACE__SERVER_MSG__MSG_STATS) {
		if (cat_filter_stats(&filt, m->stats, &view) < 0)
			return -1;
		vm = *m;
		vm.stats = &view.s;
		shown = &vm;
		sink_msg(shown);
	} else {
		sink_raw(raw, rlen);
	}
	if (o->fmt == CAT_FOLDED) {
		/* nothing printed before the end; the statistics name the sites */
		if (shown->msg_case == MTRACE__SERVER_MSG__MSG_STATS)
			folded_stats(shown->stats);
	} else {
		cat_other(out, o->fmt, shown);
	}
	if (shown != m)
		cat_filter_stats_free(&view);
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
		if (o->no_events && o->count && sum.stats >= o->count)
			return 0;
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		if (!o->input)
			fprintf(stderr, "mtrace-cat: mtraced said goodbye: %s\n",
			    m->goodbye->reason ? m->goodbye->reason : "");
		/* 2: mtraced went away, and we wait for it (--reconnect) */
		return o->input ? 1 : o->reconnect ? 2 : 0;
	case MTRACE__SERVER_MSG__MSG_ERROR:
		fprintf(stderr, "mtrace-cat: error from mtraced: %s\n",
		    m->error->message ? m->error->message : "?");
		return o->input ? 1 : -1;
	default:
		break;
	}
	return 1;
}

static void print_summary(void)
{
	fprintf(stderr,
	    "{\"events\":%" PRIu64 ",\"batches\":%" PRIu64 ",\"messages\":%" PRIu64
	    ",\"stats\":%" PRIu64 ",\"dropped_for_client\":%" PRIu64 ",\"lost_in_ring\":%" PRIu64
	    ",\"bytes\":%" PRIu64 ",\"goodbye\":%s,\"by_op\":{",
	    sum.events, sum.batches, sum.messages, sum.stats, sum.dropped, sum.lost_in_ring,
	    sum.bytes, sum.goodbye ? "true" : "false");
	for (unsigned op = 0, first = 1; op < 256; op++) {
		if (!sum.by_op[op])
			continue;
		fprintf(stderr, "%s\"%u\":%" PRIu64, first ? "" : ",", op, sum.by_op[op]);
		first = 0;
	}
	fprintf(stderr, "}}\n");
}

/* The next message from the daemon or the recording (mtc_next's contract). */
static int next_msg(struct mtc *c, struct recording *rec, int timeout, Mtrace__ServerMsg **m,
    const uint8_t **raw, size_t *rlen, char *err, size_t errlen)
{
	int r;

	if (c)
		return mtc_next(c, timeout, m, raw, rlen, err, errlen);
	r = recording_next(rec, m, raw, rlen, err, errlen);
	if (r <= 0)
		errno = r == 0 ? 0 : EPROTO; /* 0: the end of the file, as EOF from the daemon */
	return r == 0 ? -1 : r;
}

static double deadline; /* -t: for the whole run, across reconnections */

/* 1 to go on, 0 to stop, -1 on error, 2 when mtraced went away (--reconnect). */
static int run(const struct cat_opts *o, struct mtc *c, struct recording *rec)
{
	bool unflushed = false;
	char err[512];

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
		r = next_msg(c, rec, unflushed ? 0 : timeout, &m, &raw, &rlen, err, sizeof(err));
		if (r == 0) {
			if (unflushed) {
				if (fflush(out) == EOF)
					return 0; /* EPIPE: the reader went away */
				for (size_t i = 0; i < n_sinks; i++)
					fflush(sinks[i]);
				unflushed = false;
			}
			continue;
		}
		if (r < 0) {
			if (stop_signal)
				return 0;
			if (c && o->reconnect) {
				fflush(out);
				return 2; /* the daemon went away (EOF or a reset): wait for it */
			}
			if (errno == 0)
				return 0; /* EOF: the daemon went away, the file ended */
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return -1;
		}
		r = handle(o, m, raw, rlen);
		mtc_msg_free(m);
		unflushed = true;
		if (ferror(out))
			return 0;
		if (r <= 0)
			return r;
	}
}

static void filter_from_opts(const struct cat_opts *o)
{
	filt.domids = o->domids;
	filt.n_domids = o->n_domids;
	filt.names = o->names;
	filt.n_names = o->n_names;
	filt.labels = (const char *const *)o->labels;
	filt.n_labels = o->n_labels;
	filt.all_ops = o->n_ops == 0;
	for (size_t i = 0; i < o->n_ops; i++)
		filt.ops[o->ops[i] >> 3] |= (uint8_t)(1u << (o->ops[i] & 7));
	filtering = cat_filter_active(&filt);
}

static int subscribe(struct mtc *c, void *arg)
{
	const struct cat_opts *o = arg;
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;

	sub.n_domids = o->n_domids;
	sub.domids = (uint32_t *)o->domids;
	sub.n_domain_names = o->n_names;
	sub.domain_names = (char **)o->names;
	sub.n_ops = o->n_ops;
	sub.ops = (uint32_t *)o->ops;
	sub.n_labels = o->n_labels;
	sub.labels = (char **)o->labels;
	sub.events = !o->no_events;
	sub.stats_interval_ms = o->stats_ms;
	sub.top_n = o->top_n;
	sub.sort = (Mtrace__SortKey)o->sort;
	sub.label_stats = o->label_stats;
	sub.site_stats = o->site_stats;
	sub.include_finished = o->finished;
	if (o->fmt == CAT_FOLDED) {
		/* the sites' names come with the statistics */
		sub.site_stats = true;
		if (!sub.stats_interval_ms)
			sub.stats_interval_ms = 250;
	}
	return mtc_subscribe(c, &sub);
}

static struct mtc *connect_live(const struct cat_opts *o)
{
	char err[512];
	struct mtc *c = mtc_open(
	    o->socket, "mtrace-cat " MTRACE_VERSION, subscribe, (void *)o, err, sizeof(err));

	if (!c)
		fprintf(stderr, "mtrace-cat: %s\n", err);
	return c;
}

/* -t and signals end the wait for mtraced too. */
static bool give_up(void *arg)
{
	(void)arg;
	return stop_signal || (deadline > 0 && now_s() >= deadline);
}

int main(int argc, char **argv)
{
	static struct cat_opts o;
	struct sigaction sa = { .sa_handler = on_signal };
	struct recording *rec = NULL;
	struct mtc *c = NULL;
	FILE *in = NULL, *wfile = NULL;
	char err[512];
	int r, status = 0;

	malloc_tune();
	if (parse_args(argc, argv, &o) < 0)
		return 2;
	/* Writes to a closed pipe fail with EPIPE and end the run cleanly. */
	signal(SIGPIPE, SIG_IGN);
	/* No SA_RESTART: the wait in mtc_next must return on ^C. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	out = stdout;
	if (o.input) {
		in = strcmp(o.input, "-") ? fopen(o.input, "rb") : stdin;
		if (!in) {
			fprintf(
			    stderr, "mtrace-cat: cannot open %s: %s\n", o.input, strerror(errno));
			return 1;
		}
		rec =
		    recording_open(in, strcmp(o.input, "-") ? o.input : "stdin", err, sizeof(err));
		if (!rec) {
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return 1;
		}
		filter_from_opts(&o);
	} else if (!(c = connect_live(&o))) {
		return 1;
	}
	if (o.fmt == CAT_CTF) {
		if (cat_ctf_open(o.output, err, sizeof(err)) < 0) {
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return 1;
		}
		if (c)
			cat_ctf_hello(mtc_server_hello(c));
	} else if (o.output && !(out = fopen(o.output, "wb"))) {
		fprintf(stderr, "mtrace-cat: cannot create %s: %s\n", o.output, strerror(errno));
		return 1;
	}
	/* One thread writes: stdio need not lock per call (a third of the converters' time) */
	__fsetlocking(out, FSETLOCKING_BYCALLER);
	if (o.fmt == CAT_PROTO)
		sinks[n_sinks++] = out;
	if (o.record) {
		if (!(wfile = fopen(o.record, "wb"))) {
			fprintf(stderr, "mtrace-cat: cannot create %s: %s\n", o.record,
			    strerror(errno));
			return 1;
		}
		sinks[n_sinks++] = wfile;
	}
	/* Live, the daemon's Hello went to the client library: it opens the recording.
	 * From a file, its own Hello frame is copied through. */
	for (size_t i = 0; i < n_sinks; i++)
		recording_write_header(sinks[i], c ? mtc_server_hello(c) : NULL);
	if (o.fmt == CAT_CHROME)
		cat_chrome_begin(out);
	if (o.fmt == CAT_FOLDED)
		folded_init(o.frames, o.weight);
	deadline = o.seconds > 0 ? now_s() + o.seconds : 0;
	while ((r = run(&o, c, rec)) == 2) {
		mtc_close(c);
		fprintf(stderr, "mtrace-cat: mtraced went away; waiting for it\n");
		/* every failed try is not news: quiet until it is back */
		c = mtc_open_wait(o.socket, "mtrace-cat " MTRACE_VERSION, subscribe, give_up, &o);
		if (!c) {
			r = 0;
			break;
		}
		fprintf(stderr, "mtrace-cat: reconnected to mtraced\n");
	}
	if (o.fmt == CAT_CHROME)
		cat_chrome_end(out);
	if (o.fmt == CAT_FOLDED)
		folded_print(out);
	if (o.fmt == CAT_CTF && cat_ctf_close(err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-cat: %s\n", err);
		status = 1;
	}
	if (fflush(out) == EOF && errno != EPIPE) {
		fprintf(stderr, "mtrace-cat: writing output: %s\n", strerror(errno));
		status = 1;
	}
	if (wfile && fclose(wfile) != 0) {
		fprintf(stderr, "mtrace-cat: writing %s: %s\n", o.record, strerror(errno));
		status = 1;
	}
	if (out != stdout && fclose(out) != 0) {
		fprintf(stderr, "mtrace-cat: writing %s: %s\n", o.output, strerror(errno));
		status = 1;
	}
	mtc_close(c);
	recording_close(rec);
	if (in && in != stdin)
		fclose(in);
	cat_filter_free(&filt);
	if (o.summary)
		print_summary();
	return r < 0 ? 1 : status;
}
