/*
 * mtrace-top - top for the cooperative threads inside Xen guests: a thin client of
 * mtraced's statistics stream, or of the statistics in a recording or the fleet stream
 * (client/lib/source.h).  Interactive on a terminal, batch (-b) otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "malloc-tune.h"
#include "mtrace-client.h"
#include "top.h"

#define DEFAULT_TOP_N_SCREEN 500
#define DEFAULT_TOP_N_BATCH  100

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: mtrace-top [options]\n"
	    "Show the threads of traced Xen guests, busiest first (keys: h on the screen).\n"
	    "\n"
	    "  -b, --batch           plain text, one block per update (default when stdout\n"
	    "                        is not a terminal)\n"
	    "  -n, --iterations N    stop after N updates\n"
	    "  -d, --delay SECONDS   update interval (default 1, minimum 0.1)\n"
	    "  -s, --socket PATH     mtraced socket (default $MTRACE_SOCKET or %s);\n"
	    "                        -S is the same\n"
	    "  -i, --input FILE      the statistics of a recording (mtrace-cat -w or -f\n"
	    "                        proto; - for stdin) instead of mtraced, then exit (batch)\n"
	    "      --nats URL        one host of the fleet stream in NATS JetStream instead\n"
	    "      --host H          --nats: the host (needed: a view is one host's)\n"
	    "      --from-start      --nats: all that the stream holds (default), then exit\n"
	    "      --since TIME      --nats: from TIME (Unix seconds, or YYYY-MM-DDTHH:MM:SSZ)\n"
	    "      --follow          --nats: keep waiting for new statistics (alone: only new)\n"
	    "      --creds FILE      --nats: NATS user credentials\n"
	    "      --sort COLUMN     sort by column title or letter (e.g. READS, R)\n"
	    "  -r, --reverse         reverse the sort order\n"
	    "  -t, --tree            tree view (children under parents, becomes folded)\n"
	    "  -g, --labels          group by label: count, live, new/s, lifetime p50/p99,\n"
	    "                        the steal and blocked time of its threads' waits\n"
	    "  -x, --sites           group by creation site: count, live, new/s, lifetime\n"
	    "                        p50/p99, pending p99, waits' steal and blocked time,\n"
	    "                        the site and its inlined frames\n"
	    "  -X, --site-tree       the creation tree by site: which site's threads create\n"
	    "                        which (MADE), with each site's figures; a site met\n"
	    "                        again is marked [above], its own ancestor [cycle]\n"
	    "  -L, --depth N         site tree: N levels below the root sites (0: all)\n"
	    "      --finished        include resolved and failed threads\n"
	    "  -F, --filter TEXT     only labels or domain names containing TEXT\n"
	    "  -D, --domain ID|NAME  only this domain\n"
	    "  -N, --threads N       threads asked of the daemon (default %d, batch %d)\n"
	    "  -R, --no-reconnect    exit when mtraced goes away (default: wait for it and\n"
	    "                        carry on, retrying every 0.25 s up to every 5 s)\n"
	    "  -h, --help            this text\n"
	    "  -V, --version         version\n"
	    "\n"
	    "The old spellings -o (--sort), -c (--site-tree, now -X) and -f (--finished)\n"
	    "still work, with a warning: across mtrace -o is --ops, -c is --config and -f\n"
	    "is --format (docs/HACKING.md).\n",
	    MTRACE_DEFAULT_SOCKET, DEFAULT_TOP_N_SCREEN, DEFAULT_TOP_N_BATCH);
}

static long parse_long(const char *s, const char *what, long min, long max)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || !*s || v < min || v > max) {
		fprintf(stderr, "mtrace-top: bad %s '%s' (%ld..%ld)\n", what, s, min, max);
		exit(2);
	}
	return v;
}

/* Letters this program once used for something the shared table gives another
 * meaning: they still work for old scripts, and say what to write now. */
static void old_spelling(char c, const char *now)
{
	fprintf(stderr, "mtrace-top: -%c is an old spelling; use %s\n", c, now);
}

enum {
	OPT_SORT = 256,
	OPT_FINISHED
};

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "delay", required_argument, NULL, 'd' },
		{ "socket", required_argument, NULL, 's' },
		{ "input", required_argument, NULL, 'i' },
		{ "nats", required_argument, NULL, MTC_OPT_NATS },
		{ "host", required_argument, NULL, MTC_OPT_HOST },
		{ "from-start", no_argument, NULL, MTC_OPT_FROM_START },
		{ "since", required_argument, NULL, MTC_OPT_SINCE },
		{ "follow", no_argument, NULL, MTC_OPT_FOLLOW },
		{ "creds", required_argument, NULL, MTC_OPT_CREDS },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "reverse", no_argument, NULL, 'r' },
		{ "tree", no_argument, NULL, 't' },
		{ "labels", no_argument, NULL, 'g' },
		{ "sites", no_argument, NULL, 'x' },
		{ "site-tree", no_argument, NULL, 'X' },
		{ "depth", required_argument, NULL, 'L' },
		{ "finished", no_argument, NULL, OPT_FINISHED },
		{ "filter", required_argument, NULL, 'F' },
		{ "domain", required_argument, NULL, 'D' },
		{ "threads", required_argument, NULL, 'N' },
		{ "no-reconnect", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct top_opts o = { .view = VIEW_THREADS,
		.domid = -1,
		.delay_ms = 1000,
		.src = { .prog = "mtrace-top", .software = "mtrace-top " MTRACE_VERSION } };
	bool batch = false;
	long iterations = -1, top_n = -1;
	const char *sort = NULL;
	int c, r;
	char *end, err[256];

	malloc_tune();
	while ((c = getopt_long(argc, argv, "bn:d:s:S:i:o:rtgxXcL:fF:D:N:RhV", lo, NULL)) != -1) {
		if ((r = mtc_source_opt(&o.src, c, optarg)) != 0) {
			if (r < 0)
				return 2;
			continue;
		}
		switch (c) {
		case 'b':
			batch = true;
			break;
		case 'n':
			iterations = parse_long(optarg, "--iterations", 1, 1000000000);
			break;
		case 'd': {
			double d = strtod(optarg, &end);
			if (*end || !(d >= 0.1) || d > 3600) {
				fprintf(
				    stderr, "mtrace-top: bad --delay '%s' (0.1..3600 s)\n", optarg);
				return 2;
			}
			o.delay_ms = (unsigned)(d * 1000 + 0.5);
			break;
		}
		case 's':
		case 'S':
			o.src.socket = optarg;
			break;
		case 'i':
			o.src.input = optarg;
			break;
		case 'o':
			old_spelling('o', "--sort");
			__attribute__((fallthrough));
		case OPT_SORT:
			sort = optarg;
			break;
		case 'r':
			o.reverse = true;
			break;
		case 't':
			o.view = VIEW_TREE;
			break;
		case 'g':
			o.view = VIEW_LABELS;
			break;
		case 'x':
			o.view = VIEW_SITES;
			break;
		case 'c':
			old_spelling('c', "-X (--site-tree)");
			__attribute__((fallthrough));
		case 'X':
			o.view = VIEW_SITE_TREE;
			break;
		case 'L':
			o.tree_depth = (unsigned)parse_long(optarg, "--depth", 0, 1000000);
			break;
		case 'f':
			old_spelling('f', "--finished");
			__attribute__((fallthrough));
		case OPT_FINISHED:
			o.finished = true;
			break;
		case 'F':
			snprintf(o.filter, sizeof(o.filter), "%s", optarg);
			break;
		case 'D': {
			long v = strtol(optarg, &end, 10);
			if (!*end && *optarg && v >= 0)
				o.domid = v;
			else
				snprintf(o.domname, sizeof(o.domname), "%s", optarg);
			break;
		}
		case 'N':
			top_n = parse_long(optarg, "--threads", 0, 1000000);
			break;
		case 'R':
			o.no_reconnect = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mtrace-top %s\n", MTRACE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (mtc_source_spec_check(&o.src, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-top: %s\n", err);
		return 2;
	}
	if (o.src.nats && o.src.n_hosts != 1) {
		fprintf(stderr, "mtrace-top: --nats needs one --host: a view is one host's\n");
		return 2;
	}
	/* Like top and xentop: no terminal to draw on, so print text. */
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
		batch = true;
	for (int v = 0; v < VIEW_COUNT; v++)
		o.sort[v] = (int)fields_table((enum top_view)v)->default_sort;
	if (sort) {
		int f = fields_find(fields_table(o.view), sort);
		if (f < 0) {
			fprintf(stderr, "mtrace-top: no column '%s' in the %s view\n", sort,
			    fields_table(o.view)->name);
			return 2;
		}
		o.sort[o.view] = f;
	}
	o.top_n = (unsigned)(top_n >= 0 ? top_n
	        : batch                 ? DEFAULT_TOP_N_BATCH
	                                : DEFAULT_TOP_N_SCREEN);

	return batch ? batch_run(&o, iterations) : screen_run(&o, iterations);
}
