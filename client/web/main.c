/*
 * mtrace-web - the live causality timeline of every traced Xen guest, in a browser:
 * a thin client of mtraced serving its own page, /api/state and the /events feed; with
 * -i, of a recording; with --nats, of the fleet stream in NATS JetStream: many hosts on
 * one page.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "malloc-tune.h"
#include "web.h"

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: mtrace-web [options]\n"
	    "Serve the live timeline of the traced Xen guests to browsers.\n"
	    "\n"
	    "  -s, --socket PATH       mtraced socket (default $MTRACE_SOCKET or %s)\n"
	    "  -i, --input FILE        serve a recording (mtrace-cat -w or -f proto; - for\n"
	    "                          stdin) instead of mtraced\n"
	    "  -l, --listen ADDR:PORT  where to listen (default %s); an address other\n"
	    "                          than loopback needs --token-file; unix:/PATH is\n"
	    "                          a Unix socket of mode 0660 (group mtrace)\n"
	    "  -T, --token-file FILE   every request must carry the token in FILE\n"
	    "      --no-token          on loopback, serve without a token: every local\n"
	    "                          user can read the traces (one of the three\n"
	    "                          choices a TCP loopback address needs: a token,\n"
	    "                          a unix:/PATH socket, or this)\n"
	    "      --assets DIR        the page's files (default: installed, or the\n"
	    "                          source tree when run from the build tree)\n"
	    "      --history MIB       feed history kept for browsers (default 32)\n"
	    "      --queue MIB         how far one browser may fall behind before its\n"
	    "                          events are dropped (default 4)\n"
	    "      --max-connections N HTTP connections at once (default 512)\n"
	    "      --max-per-source N  of them from one address or IPv6 /64 (default 64)\n"
	    "      --request-timeout S a request must arrive and its answer be sent\n"
	    "                          within S seconds; a kept-alive connection idle\n"
	    "                          for S is closed (default 10; --header-timeout)\n"
	    "      --stats MS          statistics interval asked of mtraced (default 1000)\n"
	    "\n"
	    "The fleet (docs/fleet.md): instead of mtraced's socket, the stream MTRACE that\n"
	    "mtrace-ship fills on every host, each host above its domains on the page:\n"
	    "      --nats URL          NATS server(s), comma separated (nats://host:4222)\n"
	    "      --host H            only host H (again for more; default: every host)\n"
	    "      --since TIME        start at TIME (Unix seconds, or YYYY-MM-DDTHH:MM:SSZ)\n"
	    "      --from-start        start with all that the stream holds\n"
	    "                          (default: only what comes from now on)\n"
	    "      --creds FILE        NATS user credentials\n"
	    "\n"
	    "  -h, --help              this text\n"
	    "  -V, --version           version\n"
	    "\n"
	    "The old spelling -t (--token-file, now -T) still works, with a warning: across\n"
	    "mtrace -t is --tree (docs/HACKING.md).\n",
	    MTRACE_DEFAULT_SOCKET, WEB_DEFAULT_LISTEN);
}

static unsigned long parse_num(
    const char *s, const char *what, unsigned long min, unsigned long max)
{
	return mtc_parse_num("mtrace-web", s, what, min, max);
}

/* Uninstalled (run from the build tree): the page comes from the source tree. */
static const char *default_assets(void)
{
	static char exe[PATH_MAX];
	const char *env = getenv("MTRACE_WEB_ASSETS");
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		if (!strncmp(exe, MTRACE_BUILD_ROOT "/", strlen(MTRACE_BUILD_ROOT) + 1))
			return MTRACE_WEB_SOURCE_ASSETS;
	}
	return MTRACE_WEB_INSTALLED_ASSETS;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopexit(arg, NULL);
}

int main(int argc, char **argv)
{
	enum {
		O_ASSETS = 256,
		O_HISTORY,
		O_QUEUE,
		O_MAXC,
		O_STATS,
		O_REQT,
		O_PERSRC,
		O_NOTOKEN,
	};
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "no-token", no_argument, NULL, O_NOTOKEN },
		{ "assets", required_argument, NULL, O_ASSETS },
		{ "history", required_argument, NULL, O_HISTORY },
		{ "queue", required_argument, NULL, O_QUEUE },
		{ "max-connections", required_argument, NULL, O_MAXC },
		{ "stats", required_argument, NULL, O_STATS },
		{ "max-per-source", required_argument, NULL, O_PERSRC },
		{ "request-timeout", required_argument, NULL, O_REQT },
		{ "header-timeout", required_argument, NULL, O_REQT }, /* its old name */
		{ "input", required_argument, NULL, 'i' },
		{ "nats", required_argument, NULL, MTC_OPT_NATS },
		{ "host", required_argument, NULL, MTC_OPT_HOST },
		{ "since", required_argument, NULL, MTC_OPT_SINCE },
		{ "from-start", no_argument, NULL, MTC_OPT_FROM_START },
		{ "creds", required_argument, NULL, MTC_OPT_CREDS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct web_opts o = {
		/* a viewer waits for NATS while it serves the page */
		.src = { .prog = "mtrace-web",
		    .software = "mtrace-web " MTRACE_VERSION,
		    .background = true },
		.listen = WEB_DEFAULT_LISTEN,
		.history_bytes = 32u << 20,
		.queue_bytes = 4u << 20,
		.max_conns = 512,
		.max_per_source = 64,
		.request_timeout_s = 10,
		.stats_ms = 1000,
		.top_n = 200,
	};
	struct hf_listen la;
	struct hf_token tok = { .len = 0 };
	bool no_token = false;
	struct event_base *base;
	struct event *sigint, *sigterm;
	uint64_t instance = 0;
	char err[512];
	int c;

	malloc_tune();
	while ((c = getopt_long(argc, argv, "s:i:l:T:t:hV", lo, NULL)) != -1) {
		int r = mtc_source_opt(&o.src, c, optarg);

		if (r != 0) {
			if (r < 0)
				return 2;
			continue;
		}
		switch (c) {
		case O_NOTOKEN:
			no_token = true;
			break;
		case 's':
			o.src.socket = optarg;
			break;
		case 'i':
			o.src.input = optarg;
			break;
		case 'l':
			o.listen = optarg;
			break;
		case 't':
			fprintf(
			    stderr, "mtrace-web: -t is an old spelling; use -T (--token-file)\n");
			__attribute__((fallthrough));
		case 'T':
			o.token_file = optarg;
			break;
		case O_ASSETS:
			o.assets = optarg;
			break;
		case O_HISTORY:
			o.history_bytes = parse_num(optarg, "--history", 1, 4096) << 20;
			break;
		case O_QUEUE:
			o.queue_bytes = parse_num(optarg, "--queue", 1, 1024) << 20;
			break;
		case O_MAXC:
			o.max_conns = (unsigned)parse_num(optarg, "--max-connections", 1, 100000);
			break;
		case O_REQT:
			o.request_timeout_s =
			    (unsigned)parse_num(optarg, "--request-timeout", 1, 3600);
			break;
		case O_PERSRC:
			o.max_per_source =
			    (unsigned)parse_num(optarg, "--max-per-source", 1, 100000);
			break;
		case O_STATS:
			o.stats_ms = (unsigned)parse_num(optarg, "--stats", 100, 3600000);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mtrace-web %s\n", MTRACE_VERSION);
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
		fprintf(stderr, "mtrace-web: %s\n", err);
		return 2;
	}
	/* a viewer follows the fleet: --since and --from-start only say where it starts */
	o.src.follow = o.src.nats != NULL;
	if (hf_parse_listen(o.listen, &la, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-web: %s\n", err);
		return 2;
	}
	if (!la.loopback && !la.unix_socket && !o.token_file) {
		fprintf(stderr,
		    "mtrace-web: refusing to listen on %s without a token: traces carry guest "
		    "data.  Give --token-file FILE, or keep the default 127.0.0.1 and use an "
		    "SSH tunnel (mtrace-web(1))\n",
		    o.listen);
		return 2;
	}
	if (o.token_file && hf_token_load(&tok, o.token_file, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-web: %s\n", err);
		return 2;
	}
	/* mtraced's socket is for group mtrace only; a TCP port on loopback is for every
	 * local user, so serving one without a token is the admin's explicit choice */
	if (!o.token_file && !la.unix_socket && !no_token) {
		fprintf(stderr,
		    "mtrace-web: %s would show every trace to every local user, although "
		    "mtraced's socket is for group mtrace only.  Choose: --token-file FILE, "
		    "--listen unix:/PATH (mode 0660, group mtrace), or --no-token to allow it "
		    "(mtrace-web(1), ACCESS)\n",
		    o.listen);
		return 2;
	}
	if (no_token && o.token_file) {
		fprintf(stderr, "mtrace-web: --no-token and --token-file contradict each other\n");
		return 2;
	}
	if (no_token && !la.unix_socket)
		fprintf(stderr,
		    "mtrace-web: --no-token: every local user can read the traces through %s\n",
		    o.listen);
	if (!o.assets)
		o.assets = default_assets();
	if (getrandom(&instance, sizeof(instance), GRND_NONBLOCK) != sizeof(instance))
		instance = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	signal(SIGPIPE, SIG_IGN);

	base = event_base_new();
	if (!base) {
		fprintf(stderr, "mtrace-web: cannot create the event loop\n");
		return 1;
	}
	hist_init(o.history_bytes, instance);
	sse_init(base, o.queue_bytes);
	if (http_start(base, &o, &la, &tok, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-web: %s\n", err);
		return 1;
	}
	if (feed_start(base, &o, sse_pump_all, err, sizeof(err)) < 0) {
		if (o.src.input) {
			fprintf(stderr, "mtrace-web: %s\n", err);
			return 1;
		}
		/* The page says so and the link is retried: the server need not wait. */
		fprintf(stderr, "mtrace-web: %s; trying again\n", err);
		feed_retry_soon();
	}
	sigint = evsignal_new(base, SIGINT, on_signal, base);
	sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	event_add(sigint, NULL);
	event_add(sigterm, NULL);

	if (la.unix_socket)
		printf("mtrace-web: serving unix:%s (HTTP on a Unix socket, mode 0660)\n", la.host);
	else if (la.ss.ss_family == AF_INET6)
		printf("mtrace-web: serving http://[%s]:%u/%s\n", la.host, http_bound_port(),
		    o.token_file ? "?token=<the token in the file>" : "");
	else
		printf("mtrace-web: serving http://%s:%u/%s\n", la.host, http_bound_port(),
		    o.token_file ? "?token=<the token in the file>" : "");
	fflush(stdout);
	sd_notify(0, "READY=1");

	event_base_dispatch(base);

	sse_close_all();
	http_stop();
	feed_stop();
	hist_free();
	event_free(sigint);
	event_free(sigterm);
	event_base_free(base);
	return 0;
}
