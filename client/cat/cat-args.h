/*
 * cat-args.h - mtrace-cat's command line: the options and their parser.
 */
#ifndef MTRACE_CAT_ARGS_H
#define MTRACE_CAT_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cat-folded.h"
#include "cat-format.h"
#include "source.h"

#define MAX_FILTER 256

struct cat_opts {
	/* mtraced (-s), a recording (-i) or the fleet stream (--nats ...): source.h */
	struct mtc_source_spec src;
	enum cat_format fmt;
	uint32_t domids[MAX_FILTER];
	char *names[MAX_FILTER];
	uint32_t ops[MAX_FILTER];
	char *labels[MAX_FILTER];
	size_t n_domids, n_names, n_ops, n_labels;
	bool no_events;
	bool shared_memory; /* Subscribe.shared_memory */
	unsigned stats_ms, top_n, sort;
	bool label_stats, site_stats, finished;
	enum folded_frames frames;
	enum folded_weight weight;
	uint64_t count; /* 0: unlimited */
	double seconds; /* 0: unlimited */
	bool summary;
	const char *record; /* -w: also save what is received */
	const char *output; /* -O: file (directory for ctf) instead of stdout */
	bool reconnect;     /* mtraced went away: wait for it, subscribe again */
	bool stored;        /* -i or --nats: what was received, not a live subscription */
};

/* Fill o from the command line: 0, or -1 on a usage error (said on stderr; exit 2).
 * --help and --version are answered here, and exit 0. */
int cat_parse_args(int argc, char **argv, struct cat_opts *o);

#endif
