/*
 * ship-args.h - mtrace-ship's command line (ship-args.c): the options, checked.
 */
#ifndef MTRACE_SHIP_ARGS_H
#define MTRACE_SHIP_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_FILTER 256
#define MAX_CA     8

struct ship_opts {
	const char *socket, *nats, *creds, *spool_dir, *host, *metrics, *inbox_prefix;
	const char *ca[MAX_CA];
	size_t n_ca;
	uint64_t spool_max, queue_max;
	uint32_t domids[MAX_FILTER];
	char *names[MAX_FILTER], *labels[MAX_FILTER];
	size_t n_domids, n_names, n_labels;
	unsigned stats_ms, log_s, replicas, ack_ms, retry_ms, max_pending;
	bool no_stream;
};

/* o filled from argv with the defaults; 0, or -1 after a message (--help, --version exit). */
int ship_parse_args(int argc, char **argv, struct ship_opts *o);

#endif
