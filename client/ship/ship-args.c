/*
 * ship-args.c - mtrace-ship's command line: options, their checks, the usage text.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtrace-client.h"
#include "ship-args.h"

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: mtrace-ship --nats URL [options]\n"
	    "Publish what mtraced streams to NATS JetStream (docs/fleet.md).\n"
	    "\n"
	    "  -s, --socket PATH     daemon socket (default $MTRACE_SOCKET or %s)\n"
	    "      --nats URL        NATS server(s), comma separated (nats://host:4222)\n"
	    "      --creds FILE      NATS user credentials (JWT and NKey seed)\n"
	    "      --tls-ca FILE     trust this CA for TLS to NATS (repeatable)\n"
	    "      --inbox-prefix P  reply subjects (acknowledgements) under P (default _INBOX)\n"
	    "      --host NAME       the host token of the subjects (default: mtraced's)\n"
	    "      --spool DIR       keep what NATS cannot take in DIR while it is away\n"
	    "      --spool-max BYTES at most this much spooled (default 256 MiB)\n"
	    "      --replicas N      replicas of the MTRACE stream when it is created (1)\n"
	    "      --no-stream       do not create or check the stream (no rights to)\n"
	    "      --ack-ms MS       wait this long for a publish acknowledgement (2000)\n"
	    "      --retry-ms MS     a publish the cluster refuses for now (a leader election)\n"
	    "                        is sent again with its id for up to MS before spooling (2000)\n"
	    "      --max-pending N   at most N publishes waiting for their acknowledgement (256)\n"
	    "      --queue-max BYTES at most this much waiting in memory (default 64 MiB)\n"
	    "  -D, --domain D        only domain D (id or name); repeatable\n"
	    "      --label PREFIX    only threads whose label starts with PREFIX; repeatable\n"
	    "      --stats MS        statistics every MS milliseconds (default 1000, 0: none)\n"
	    "      --log-every S     the figures in the log every S seconds (default 10)\n"
	    "      --metrics ADDR    serve the figures at http://ADDR/metrics (Prometheus; off)\n"
	    "  -h, --help            this text\n"
	    "  -V, --version         version\n",
	    MTRACE_DEFAULT_SOCKET);
}

int ship_parse_args(int argc, char **argv, struct ship_opts *o)
{
	*o = (struct ship_opts){
		.spool_max = 256ull << 20,
		.stats_ms = 1000,
		.log_s = 10,
		.replicas = 1,
		.ack_ms = 2000,
		.retry_ms = 2000,
		.max_pending = 256,
		.queue_max = 64ull << 20,
	};
	enum {
		O_NATS = 256,
		O_CREDS,
		O_CA,
		O_INBOX,
		O_HOST,
		O_SPOOL,
		O_SPOOL_MAX,
		O_REPLICAS,
		O_NO_STREAM,
		O_ACK,
		O_RETRY,
		O_MAX_PENDING,
		O_QUEUE_MAX,
		O_LABEL,
		O_STATS,
		O_LOG,
		O_METRICS,
	};
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "nats", required_argument, NULL, O_NATS },
		{ "creds", required_argument, NULL, O_CREDS },
		{ "tls-ca", required_argument, NULL, O_CA },
		{ "inbox-prefix", required_argument, NULL, O_INBOX },
		{ "host", required_argument, NULL, O_HOST },
		{ "spool", required_argument, NULL, O_SPOOL },
		{ "spool-max", required_argument, NULL, O_SPOOL_MAX },
		{ "replicas", required_argument, NULL, O_REPLICAS },
		{ "no-stream", no_argument, NULL, O_NO_STREAM },
		{ "ack-ms", required_argument, NULL, O_ACK },
		{ "retry-ms", required_argument, NULL, O_RETRY },
		{ "max-pending", required_argument, NULL, O_MAX_PENDING },
		{ "queue-max", required_argument, NULL, O_QUEUE_MAX },
		{ "domain", required_argument, NULL, 'D' },
		{ "label", required_argument, NULL, O_LABEL },
		{ "stats", required_argument, NULL, O_STATS },
		{ "log-every", required_argument, NULL, O_LOG },
		{ "metrics", required_argument, NULL, O_METRICS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "s:D:hV", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case O_NATS:
			o->nats = optarg;
			break;
		case O_CREDS:
			o->creds = optarg;
			break;
		case O_CA:
			if (o->n_ca == MAX_CA)
				goto bad;
			o->ca[o->n_ca++] = optarg;
			break;
		case O_INBOX:
			o->inbox_prefix = optarg;
			break;
		case O_HOST:
			o->host = optarg;
			break;
		case O_SPOOL:
			o->spool_dir = optarg;
			break;
		case O_SPOOL_MAX:
			o->spool_max = strtoull(optarg, &end, 10);
			if (*end || !*optarg)
				goto bad;
			break;
		case O_REPLICAS:
			o->replicas = (unsigned)strtoul(optarg, &end, 10);
			if (*end || o->replicas < 1 || o->replicas > 5)
				goto bad;
			break;
		case O_NO_STREAM:
			o->no_stream = true;
			break;
		case O_ACK:
			o->ack_ms = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !o->ack_ms)
				goto bad;
			break;
		case O_RETRY:
			o->retry_ms = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !*optarg)
				goto bad;
			break;
		case O_MAX_PENDING:
			o->max_pending = (unsigned)strtoul(optarg, &end, 10);
			if (*end || o->max_pending < 1 || o->max_pending > 65536)
				goto bad;
			break;
		case O_QUEUE_MAX:
			o->queue_max = strtoull(optarg, &end, 10);
			if (*end || !*optarg || o->queue_max < 65536)
				goto bad;
			break;
		case 'D': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*optarg && !*end) {
				if (o->n_domids == MAX_FILTER)
					goto bad;
				o->domids[o->n_domids++] = (uint32_t)v;
			} else {
				if (o->n_names == MAX_FILTER)
					goto bad;
				o->names[o->n_names++] = optarg;
			}
			break;
		}
		case O_LABEL:
			if (o->n_labels == MAX_FILTER)
				goto bad;
			o->labels[o->n_labels++] = optarg;
			break;
		case O_STATS:
			o->stats_ms = (unsigned)strtoul(optarg, &end, 10);
			if (*end || (o->stats_ms && o->stats_ms < 100))
				goto bad;
			break;
		case O_LOG:
			o->log_s = (unsigned)strtoul(optarg, &end, 10);
			if (*end)
				goto bad;
			break;
		case O_METRICS:
			o->metrics = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("mtrace-ship %s\n", MTRACE_VERSION);
			exit(0);
		default:
			goto bad;
		}
	}
	if (optind < argc || !o->nats) {
		fprintf(stderr, "mtrace-ship: %s\n",
		    o->nats ? "unexpected arguments" : "--nats URL is required");
		usage(stderr);
		return -1;
	}
	return 0;
bad:
	if (optarg)
		fprintf(stderr, "mtrace-ship: bad argument '%s'\n", optarg);
	usage(stderr);
	return -1;
}
