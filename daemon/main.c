/*
 * main.c - mtraced: flags and configuration, the libevent loop, signals.
 *
 * Start-up order matters to clients and systemd: the client socket listens and every
 * existing guest has been discovered before READY=1, so a client connecting after
 * READY sees all guests.  SIGTERM/SIGINT drain every ring a last time before Goodbye;
 * SIGHUP re-reads the config file and keeps guests and clients.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clockmap.h"
#include "config.h"
#include "guests.h"
#include "log.h"
#include "malloc-tune.h"
#include "service.h"
#include "state.h"
#include "stream.h"
#include "vcpu-source.h"
#include "xenif.h"

#define MAX_OVERRIDES 64

/* The process's command line and configuration: one of each per process, so file-scope
 * rather than passed around; what runs (the loop, the stream server, the guests) is in
 * struct mtraced, handed to the signal callbacks. */
static struct mtraced_config cfg;
static bool config_given;

struct mtraced {
	struct event_base *base;
	struct stream *stream;
	struct guests_ctx *guests;
	struct vcpu_source *vcpu; /* the hypervisor source, NULL when off */
};

/* Command-line settings win over the file, at start-up and on every reload. */
static struct {
	char key[64];
	char val[256];
} overrides[MAX_OVERRIDES];
static unsigned noverrides;

static void usage(FILE *f)
{
	fprintf(f,
	    "Usage: mtraced [OPTION]...\n"
	    "Trace Xen guests live: map their trace rings, decode them and serve clients.\n"
	    "\n"
	    "  -c, --config FILE     configuration file (default " MTRACED_DEFAULT_CONFIG ")\n"
	    "  -s, --socket PATH     client socket (default /run/mtrace/mtraced.sock)\n"
	    "  -B, --backend B       xen, sim or auto (sim when --sim-dir or $MTRACE_SIM_DIR is set)\n"
	    "      --sim-dir DIR     state directory of the simulated Xen (mtrace-simxen)\n"
	    "      --set KEY=VALUE   set any configuration key (see mtraced(8))\n"
	    "      --vcpu-source     read the hypervisor's scheduling of the vCPUs (vcpu_source)\n"
	    "  -v, --verbose         debug log\n"
	    "  -q, --quiet           errors only\n"
	    "      --foreground      do not detach (implied under systemd)\n"
	    "  -h, --help            this text\n"
	    "  -V, --version         print the version\n"
	    "\n"
	    "The old spellings -o (--set) and -f (--foreground) still work, with a warning:\n"
	    "across mtrace -o is --ops and -f is --format (docs/HACKING.md).\n"
	    "\n"
	    "Signals: SIGHUP reloads the configuration, SIGTERM/SIGINT drain and stop.\n");
}

static int add_override(const char *key, const char *val)
{
	char err[300];

	if (noverrides == MAX_OVERRIDES || strlen(key) >= sizeof(overrides[0].key) ||
	    strlen(val) >= sizeof(overrides[0].val)) {
		fprintf(stderr, "mtraced: too many or too long settings on the command line\n");
		return -1;
	}
	if (config_set(&cfg, key, val, err, sizeof(err)) < 0) { /* check it now */
		fprintf(stderr, "mtraced: %s\n", err);
		return -1;
	}
	snprintf(overrides[noverrides].key, sizeof(overrides[0].key), "%s", key);
	snprintf(overrides[noverrides].val, sizeof(overrides[0].val), "%s", val);
	noverrides++;
	return 0;
}

/* Defaults, then the file, then the command line.  0 or -1 with err. */
static int build_config(struct mtraced_config *c, const char *path, char *err, size_t errlen)
{
	config_defaults(c);
	snprintf(c->config_path, sizeof(c->config_path), "%s", path);
	if (config_given || access(path, F_OK) == 0) {
		if (config_load_file(c, path, err, errlen) < 0)
			return -1;
	}
	for (unsigned i = 0; i < noverrides; i++)
		if (config_set(c, overrides[i].key, overrides[i].val, err, errlen) < 0)
			return -1;
	return 0;
}

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
	struct mtraced *d = arg;

	(void)what;
	log_info("signal %d: draining and stopping", (int)sig);
	service_stopping();
	guests_drain_all(d->guests);
	stream_shutdown(d->stream, "daemon stopping");
	event_base_loopexit(d->base, NULL);
}

static void on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct mtraced *d = arg;
	struct mtraced_config n;
	char err[512];

	(void)sig;
	(void)what;
	service_reloading();
	if (build_config(&n, cfg.config_path, err, sizeof(err)) < 0) {
		log_err("reload: %s (keeping the running configuration)", err);
		service_ready();
		return;
	}
	/* what start-up opened stays as it was */
#define KEEP(f)                                                              \
	do {                                                                 \
		if (strcmp(n.f, cfg.f))                                      \
			log_warnx("reload: " #f " changes only on restart"); \
		memcpy(n.f, cfg.f, sizeof(n.f));                             \
	} while (0)
	KEEP(backend);
	KEEP(sim_dir);
	KEEP(socket_path);
	KEEP(socket_group);
#undef KEEP
	if (n.vcpu_source != cfg.vcpu_source || n.vcpu_max != cfg.vcpu_max)
		log_warnx("reload: vcpu_source and vcpu_max change only on restart");
	n.vcpu_source = cfg.vcpu_source;
	n.vcpu_max = cfg.vcpu_max;
	if (n.drop_privileges != cfg.drop_privileges)
		log_warnx("reload: drop_privileges changes only on restart");
	n.drop_privileges = cfg.drop_privileges;
	cfg = n;
	log_set_level(cfg.log_level);
	state_reconfigure(&cfg);
	stream_reconfigure(d->stream, &cfg);
	guests_reconfigure(d->guests, &cfg);
	vcpu_source_reconfigure(d->vcpu, &cfg);
	service_reconfigure(&cfg);
	log_info("configuration reloaded from %s", cfg.config_path);
	service_ready();
}

/* Letters this program once used for something the shared table gives another
 * meaning: they still work for old scripts, and say what to write now. */
static void old_spelling(char c, const char *now)
{
	fprintf(stderr, "mtraced: -%c is an old spelling; use %s\n", c, now);
}

enum {
	OPT_SIM_DIR = 256,
	OPT_SET,
	OPT_FOREGROUND,
	OPT_VCPU_SOURCE
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "backend", required_argument, NULL, 'B' },
		{ "sim-dir", required_argument, NULL, OPT_SIM_DIR },
		{ "set", required_argument, NULL, OPT_SET },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "foreground", no_argument, NULL, OPT_FOREGROUND },
		{ "vcpu-source", no_argument, NULL, OPT_VCPU_SOURCE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = MTRACED_DEFAULT_CONFIG;
	struct event *sig_term, *sig_int, *sig_hup;
	bool foreground = false;
	int verbose = 0, quiet = 0, c;
	char err[512];
	struct xenif *x;
	struct mtraced d = { 0 };
	bool host_lost = false;

	malloc_tune();
	config_defaults(&cfg);
	while ((c = getopt_long(argc, argv, "c:s:B:o:vqfhV", opts, NULL)) != -1) {
		char *eq;

		switch (c) {
		case 'c':
			config_path = optarg;
			config_given = true;
			break;
		case 's':
			if (add_override("socket_path", optarg) < 0)
				return 2;
			break;
		case 'B':
			if (add_override("backend", optarg) < 0)
				return 2;
			break;
		case OPT_SIM_DIR:
			if (add_override("sim_dir", optarg) < 0)
				return 2;
			break;
		case 'o':
			old_spelling('o', "--set");
			__attribute__((fallthrough));
		case OPT_SET:
			eq = strchr(optarg, '=');
			if (!eq) {
				fprintf(
				    stderr, "mtraced: --set wants KEY=VALUE, got \"%s\"\n", optarg);
				return 2;
			}
			*eq = 0;
			if (add_override(optarg, eq + 1) < 0)
				return 2;
			break;
		case 'v':
			verbose++;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'f':
			old_spelling('f', "--foreground");
			__attribute__((fallthrough));
		case OPT_FOREGROUND:
			foreground = true;
			break;
		case OPT_VCPU_SOURCE:
			if (add_override("vcpu_source", "on") < 0)
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mtraced %s\n", MTRACE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mtraced: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	/* the default is info; -v adds debug, -q keeps errors only */
	if ((verbose || quiet) && add_override("log_level", quiet ? "0" : "3") < 0)
		return 2;
	if (getenv("JOURNAL_STREAM"))
		log_set_journal(1);
	if (build_config(&cfg, config_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtraced: %s\n", err);
		return 1;
	}
	log_set_level(cfg.log_level);

	if (!foreground && !getenv("NOTIFY_SOCKET") && daemon(0, 1) < 0) {
		log_err("daemon: %s", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);

	x = xenif_open(cfg.backend, cfg.sim_dir[0] ? cfg.sim_dir : NULL,
	    XENIF_GNTTAB | XENIF_EVTCHN | XENIF_XS | XENIF_CTRL | XENIF_CLOCK | XENIF_CLOCK_KEEP |
	        (cfg.vcpu_source ? XENIF_TBUF : 0),
	    err, sizeof(err));
	if (!x) {
		log_err("cannot open the %s backend: %s", cfg.backend, err);
		return 1;
	}
	/*
	 * Precise timers: libevent otherwise reads CLOCK_MONOTONIC_COARSE, whose jiffy
	 * steps (4 ms) would stretch the sub-millisecond poll of busy guests.
	 */
	struct event_config *ecfg = event_config_new();
	if (ecfg) {
		event_config_set_flag(ecfg, EVENT_BASE_FLAG_PRECISE_TIMER);
		d.base = event_base_new_with_config(ecfg);
		event_config_free(ecfg);
	}
	if (!d.base)
		d.base = event_base_new();
	if (!d.base) {
		log_err("cannot create the event loop");
		return 1;
	}
	state_init(&cfg);
	if (!(d.stream = stream_new(d.base, &cfg, err, sizeof(err)))) {
		log_err("%s", err);
		return 1;
	}
	if (!(d.guests = guests_init(d.base, x, &cfg, d.stream, err, sizeof(err)))) {
		log_err("%s", err);
		return 1;
	}
	/* the hypervisor source is an addition: without it, mtraced still traces */
	if (cfg.vcpu_source &&
	    !(d.vcpu = vcpu_source_new(d.base, x, &cfg, d.stream, err, sizeof(err))))
		log_err("%s: running without it", err);
	sig_term = evsignal_new(d.base, SIGTERM, on_stop, &d);
	sig_int = evsignal_new(d.base, SIGINT, on_stop, &d);
	sig_hup = evsignal_new(d.base, SIGHUP, on_reload, &d);
	if (!sig_term || !sig_int || !sig_hup || event_add(sig_term, NULL) < 0 ||
	    event_add(sig_int, NULL) < 0 || event_add(sig_hup, NULL) < 0 ||
	    service_init(d.base, &cfg, d.stream) < 0) {
		log_err("cannot set up signal handling");
		return 1;
	}
	guests_scan(d.guests);
	service_boost_priority(cfg.priority_boost);
	if (cfg.drop_privileges)
		service_drop_privileges();
	log_info("ready: %s backend, socket %s, %u guests", x->ops->name, cfg.socket_path,
	    state_guest_count());
	service_ready();

	event_base_dispatch(d.base);
	host_lost = guests_host_lost(d.guests) != NULL;

	/* (after a SIGTERM the clients were told already: this is then nothing) */
	stream_shutdown(d.stream, host_lost ? "the host went away" : "daemon stopping");
	vcpu_source_free(d.vcpu);
	guests_fini(d.guests);
	service_fini();
	stream_free(d.stream);
	event_free(sig_term);
	event_free(sig_int);
	event_free(sig_hup);
	state_fini();
	clockmap_fini();
	xenif_close(x);
	event_base_free(d.base);
	if (host_lost) {
		log_info("stopped: the host went away");
		return 1;
	}
	log_info("stopped");
	return 0;
}
