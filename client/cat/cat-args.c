/*
 * cat-args.c - mtrace-cat's command line: usage, the option table and its checks.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cat-args.h"
#include "mtrace-client.h"
#include "source.h"
#include "ops.h"

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: mtrace-cat [options]\n"
	    "Print what mtraced streams: events and statistics of the traced Xen guests.\n"
	    "\n"
	    "  -s, --socket PATH     daemon socket (default $MTRACE_SOCKET or %s)\n"
	    "  -i, --input FILE      read a recording (from -f proto or -w; - for stdin)\n"
	    "                        instead of the daemon; filters and formats as live\n"
	    "      --nats URL        read the fleet stream from NATS JetStream instead (the\n"
	    "                        stream MTRACE of mtrace-ship; filters and formats as -i)\n"
	    "      --host H          --nats: only host H, again for more (default: all)\n"
	    "      --from-start      --nats: all that the stream holds (default), then exit\n"
	    "      --since TIME      --nats: from TIME (Unix seconds, or YYYY-MM-DDTHH:MM:SSZ)\n"
	    "      --follow          --nats: keep waiting for new messages (alone: only new)\n"
	    "      --creds FILE      --nats: NATS user credentials\n"
	    "  -f, --format FMT      text (default), json (JSON lines), proto (a recording:\n"
	    "                        delimited mtrace.ServerMsg frames behind a header),\n"
	    "                        chrome (trace-event JSON for Perfetto UI), ctf (a CTF\n"
	    "                        trace directory, needs -O DIR), count (print nothing),\n"
	    "                        folded (creation stacks for flame graphs, at exit)\n"
	    "  -O, --output PATH     write to PATH instead of stdout (ctf: the directory)\n"
	    "  -w, --write FILE      also save a recording of what is received in FILE\n"
	    "  -D, --domain D        only domain D (id or name); repeatable\n"
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
	    "      --shared-memory   events through shared memory (a local mtraced)\n"
	    "  -n, --count N         exit after N events (N statistics with --no-events)\n"
	    "      --time SECONDS    exit after SECONDS\n"
	    "      --summary         print a JSON summary of what was received on stderr at exit\n"
	    "      --reconnect       when mtraced goes away, wait for it and carry on (default:\n"
	    "                        exit, status 0 after a Goodbye or end of file)\n"
	    "  -h, --help            this text\n"
	    "  -V, --version         version\n"
	    "\n"
	    "The old spellings -d (--domain) and -t (--time) still work, with a warning:\n"
	    "across mtrace -d is --delay and -t is --tree (docs/HACKING.md).\n",
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

int cat_parse_args(int argc, char **argv, struct cat_opts *o)
{
	enum {
		O_STATS = 256,
		O_TOP,
		O_SORT,
		O_NOEV,
		O_SHM,
		O_SUMMARY,
		O_LSTATS,
		O_RECONNECT,
		O_SSTATS,
		O_FINISHED,
		O_FRAMES,
		O_WEIGHT,
		O_LABEL,
		O_TIME,
	};
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'O' },
		{ "write", required_argument, NULL, 'w' },
		{ "format", required_argument, NULL, 'f' },
		{ "domain", required_argument, NULL, 'D' },
		{ "ops", required_argument, NULL, 'o' },
		{ "label", required_argument, NULL, O_LABEL },
		{ "count", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, O_TIME },
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
		{ "shared-memory", no_argument, NULL, O_SHM },
		{ "nats", required_argument, NULL, MTC_OPT_NATS },
		{ "host", required_argument, NULL, MTC_OPT_HOST },
		{ "from-start", no_argument, NULL, MTC_OPT_FROM_START },
		{ "since", required_argument, NULL, MTC_OPT_SINCE },
		{ "follow", no_argument, NULL, MTC_OPT_FOLLOW },
		{ "creds", required_argument, NULL, MTC_OPT_CREDS },
		{ "summary", no_argument, NULL, O_SUMMARY },
		{ "reconnect", no_argument, NULL, O_RECONNECT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool live_only = false;
	char err[256];
	int ch;

	while ((ch = getopt_long(argc, argv, "s:i:O:w:f:D:d:o:l:n:t:hV", lo, NULL)) != -1) {
		char *end;
		unsigned long v;

		int r;

		if ((r = mtc_source_opt(&o->src, ch, optarg)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}
		switch (ch) {
		case 's':
			o->src.socket = optarg;
			break;
		case 'i':
			o->src.input = optarg;
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
			fprintf(stderr, "mtrace-cat: -d is an old spelling; use -D (--domain)\n");
			__attribute__((fallthrough));
		case 'D':
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
			__attribute__((fallthrough));
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
			fprintf(stderr, "mtrace-cat: -t is an old spelling; use --time\n");
			__attribute__((fallthrough));
		case O_TIME:
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
		case O_SHM:
			o->shared_memory = true;
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
	if (mtc_source_spec_check(&o->src, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-cat: %s\n", err);
		return -1;
	}
	o->stored = o->src.input || o->src.nats;
	if (o->stored && live_only) {
		fprintf(stderr,
		    "mtrace-cat: --stats, --top, --sort and --label-stats are chosen "
		    "when recording; -i prints what the recording holds\n");
		return -1;
	}
	if (o->stored && o->record) {
		fprintf(stderr,
		    "mtrace-cat: -w records a live stream; to filter a recording "
		    "into another use -i FILE -f proto -O NEW\n");
		return -1;
	}
	if (o->fmt == CAT_CTF && !o->output) {
		fprintf(stderr, "mtrace-cat: -f ctf writes a directory: give it with -O DIR\n");
		return -1;
	}
	if (o->no_events && !o->stats_ms && !o->stored) {
		fprintf(stderr, "mtrace-cat: --no-events without --stats would print nothing\n");
		return -1;
	}
	return 0;
}
