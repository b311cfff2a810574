/*
 * simxen.c - mtrace-simxen: start the simulated Xen host, and act as its toolstack.
 *
 * The CLI is dom0: toolstack requests go over the broker socket as raw protocol
 * messages, xenstore requests through xenif like any other dom0 program.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "simxen-broker.h"
#include "simxen-proto.h"
#include "xenif.h"

#define WAIT_MS 10000 /* destroy/crash/stop wait this long for the broker to finish */

static const char *dir;

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: mtrace-simxen [--dir DIR] COMMAND [ARGS]\n"
	    "A simulated Xen host (hypervisor, xenstored and toolstack) for mtrace; all state\n"
	    "lives under DIR (default $MTRACE_SIM_DIR).\n"
	    "\n"
	    "  start [--foreground]          start the broker (background unless --foreground)\n"
	    "  stop                          kill every guest and stop the broker\n"
	    "  create [-D|--domid N] --name NAME [--log FILE] [--preserve-crash]\n"
	    "         [--preserve-poweroff] -- PROG ARGS...\n"
	    "                                create a domain running PROG; prints its domid;\n"
	    "                                PROG's output goes to FILE, else where create's\n"
	    "                                own goes, but for a pipe or socket: to\n"
	    "                                DIR/console/guest-NAME.log (create says so)\n"
	    "  destroy DOMID                 shut the domain down, kill it, release it\n"
	    "  crash DOMID                   kill the domain's process (shutdown reason: crash)\n"
	    "  pause DOMID | unpause DOMID   stop / continue the domain's process\n"
	    "  list                          domid name state pid, one domain a line\n"
	    "  xs-read PATH | xs-write PATH VALUE | xs-ls PATH | xs-rm PATH\n"
	    "                                xenstore access as dom0\n"
	    "\n"
	    "      --dir DIR   state directory\n"
	    "  -h, --help      this text\n"
	    "  -V, --version   print the version\n"
	    "\n"
	    "The old spelling -d (--dir) still works, with a warning: across mtrace -d is\n"
	    "--delay (docs/HACKING.md).\n");
}

static int connect_broker(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, SIMXEN_SOCK) >=
	    sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* One toolstack request, with descriptors (SIMXEN_TS_CREATE's two) if fds is not NULL;
 * the reply payload (if any) lands in out. */
static int ts_call_fds(const struct simxen_req *req, const void *pl, size_t len, const int *fds,
    struct simxen_rep *rep, char *out, size_t outmax, size_t *outlen)
{
	static char buf[SIMXEN_MAX_MSG];
	int fd = connect_broker();
	if (fd < 0) {
		fprintf(stderr, "mtrace-simxen: no broker in %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (sizeof(*req) + len > sizeof(buf)) {
		fprintf(stderr, "mtrace-simxen: request too long\n");
		close(fd);
		return -1;
	}
	memcpy(buf, req, sizeof(*req));
	if (len)
		memcpy(buf + sizeof(*req), pl, len);
	struct iovec iov = { buf, sizeof(*req) + len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(sizeof(int) * SIMXEN_REQ_FDS)];
	} cm;
	if (fds) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = sizeof(cm.b);
		struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int) * SIMXEN_REQ_FDS);
		memcpy(CMSG_DATA(h), fds, sizeof(int) * SIMXEN_REQ_FDS);
	}
	ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (n >= 0 && poll(&p, 1, WAIT_MS) == 1)
		n = recv(fd, buf, sizeof(buf), 0);
	else if (n >= 0)
		n = -1, errno = ETIMEDOUT;
	close(fd);
	if (n < (ssize_t)sizeof(*rep)) {
		fprintf(
		    stderr, "mtrace-simxen: broker: %s\n", n < 0 ? strerror(errno) : "bad reply");
		return -1;
	}
	memcpy(rep, buf, sizeof(*rep));
	size_t pl_len = (size_t)n - sizeof(*rep);
	if (out) {
		if (pl_len >= outmax)
			pl_len = outmax - 1;
		memcpy(out, buf + sizeof(*rep), pl_len);
		out[pl_len] = '\0';
		*outlen = pl_len;
	}
	if (rep->err) {
		errno = rep->err;
		return -1;
	}
	return 0;
}

static int ts_call(const struct simxen_req *req, const void *pl, size_t len, struct simxen_rep *rep,
    char *out, size_t outmax, size_t *outlen)
{
	return ts_call_fds(req, pl, len, NULL, rep, out, outmax, outlen);
}

static int simple(uint32_t op, uint32_t a0, const char *what)
{
	struct simxen_req req = { .op = op, .a = { a0 } };
	struct simxen_rep rep = { 0 };
	if (ts_call(&req, NULL, 0, &rep, NULL, 0, NULL) < 0) {
		if (rep.err)
			fprintf(stderr, "mtrace-simxen: %s: %s\n", what, strerror(rep.err));
		return -1;
	}
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Poll the domain list until the domain is gone (or, if shut_ok, shut down). */
static int wait_domain(uint32_t domid, bool shut_ok)
{
	for (int t = 0; t < WAIT_MS; t += 20) {
		struct simxen_req req = { .op = SIMXEN_CTRL_LIST, .a = { domid, 1 } };
		struct simxen_rep rep;
		struct simxen_dominfo info[2];
		char out[sizeof(info) + 1];
		size_t n;
		if (ts_call(&req, NULL, 0, &rep, out, sizeof(out), &n) < 0)
			return -1;
		memcpy(info, out, n < sizeof(info) ? n : sizeof(info));
		if (n < sizeof(info[0]) || info[0].domid != domid)
			return 0;
		if (shut_ok && (info[0].flags & SIMXEN_DOM_SHUTDOWN))
			return 0;
		/* Released but still mapped by someone: dying until unmapped, as after
		 * `xl destroy`; waiting longer would wait for the mapper. */
		if (info[0].flags & SIMXEN_DOM_RELEASED)
			return 0;
		sleep_ms(20);
	}
	fprintf(stderr, "mtrace-simxen: domain %u still there after %d ms\n", domid, WAIT_MS);
	return -1;
}

static int parse_domid(const char *s, uint32_t *d)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v > SIMXEN_MAX_DOMID) {
		fprintf(stderr, "mtrace-simxen: bad domid '%s'\n", s);
		return -1;
	}
	*d = (uint32_t)v;
	return 0;
}

static int cmd_start(int argc, char **argv)
{
	bool fg = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--foreground") || !strcmp(argv[i], "-f"))
			fg = true;
		else {
			usage(stderr);
			return 2;
		}
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "mtrace-simxen: mkdir %s: %s\n", dir, strerror(errno));
		return 1;
	}
	int fd = connect_broker();
	if (fd >= 0) {
		close(fd);
		fprintf(stderr, "mtrace-simxen: a broker is already running in %s\n", dir);
		return 1;
	}
	if (fg)
		return broker_run(dir, -1);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(p[0]);
		setsid();
		char log[4200];
		snprintf(log, sizeof(log), "%s/broker.log", dir);
		int nul = open("/dev/null", O_RDWR);
		int lf = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (nul >= 0)
			dup2(nul, 0);
		if (lf >= 0) {
			dup2(lf, 1);
			dup2(lf, 2);
		}
		_exit(broker_run(dir, p[1]));
	}
	close(p[1]);
	char c;
	ssize_t n;
	do
		n = read(p[0], &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		fprintf(stderr, "mtrace-simxen: broker failed to start, see %s/broker.log\n", dir);
		return 1;
	}
	printf("%d\n", (int)pid);
	return 0;
}

/* A stream of create's own the domain may write to: not a pipe or socket, whose reader
 * (as in `domid=$(mtrace-simxen create ...)`) would wait for the domain's end. */
static bool hand_over(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode);
}

/*
 * The domain's stdout and stderr (mtrace-simxen(1), create): --log FILE for both, else
 * create's own where they can be handed over, else its console log
 * DIR/console/guest-NAME.log (as xenconsoled's guest-NAME.log); *to_console says which
 * streams went there (1 stdout, 2 stderr).  The descriptors are create's (0..2) or
 * opened here.
 */
static int domain_output(const char *name, const char *log, int stdio[2], char *console, size_t len,
    unsigned *to_console)
{
	if (*log) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(
			    stderr, "mtrace-simxen: create: --log %s: %s\n", log, strerror(errno));
			return -1;
		}
		stdio[0] = stdio[1] = fd;
		return 0;
	}
	int cons = -1;
	for (int i = 0; i < 2; i++) {
		stdio[i] = i + 1;
		if (hand_over(i + 1))
			continue;
		if (cons < 0) {
			snprintf(console, len, "%s/console", dir);
			if (mkdir(console, 0700) < 0 && errno != EEXIST) {
				fprintf(stderr, "mtrace-simxen: create: mkdir %s: %s\n", console,
				    strerror(errno));
				return -1;
			}
			snprintf(console, len, "%s/console/guest-%s.log", dir, name);
			cons = open(console, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
			if (cons < 0) {
				fprintf(stderr, "mtrace-simxen: create: %s: %s\n", console,
				    strerror(errno));
				return -1;
			}
		}
		stdio[i] = cons;
		*to_console |= 1u << i;
	}
	return 0;
}

static int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "domid", required_argument, NULL, 'D' },
		{ "name", required_argument, NULL, 'n' },
		{ "log", required_argument, NULL, 'l' },
		{ "preserve-crash", no_argument, NULL, 'C' },
		{ "preserve-poweroff", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t domid = 0, flags = 0;
	const char *name = NULL, *log = "";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+D:", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			if (parse_domid(optarg, &domid) < 0)
				return 2;
			break;
		case 'n':
			name = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'C':
			flags |= SIMXEN_CREATE_PRESERVE_CRASH;
			break;
		case 'P':
			flags |= SIMXEN_CREATE_PRESERVE_POWEROFF;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!name || optind >= argc) {
		fprintf(stderr, "mtrace-simxen: create needs --name NAME -- PROG [ARGS]\n");
		return 2;
	}
	if (!simxen_name_ok(name)) {
		fputs("mtrace-simxen: create: bad --name '", stderr);
		for (const unsigned char *p = (const unsigned char *)name; *p; p++)
			fprintf(stderr, *p < ' ' || *p > '~' || *p == '\\' ? "\\x%02x" : "%c", *p);
		fputs("': a domain name is " SIMXEN_NAME_RULE "\n", stderr);
		return 2;
	}
	static char pl[SIMXEN_MAX_MSG];
	char cwd[4096];
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	size_t off = 0;
	const char *parts[2] = { name, cwd };
	int argn = argc - optind;
	for (int i = 0; i < 2 + argn; i++) {
		const char *s = i < 2 ? parts[i] : argv[optind + i - 2];
		size_t l = strlen(s) + 1;
		if (off + l > sizeof(pl) - sizeof(struct simxen_req)) {
			fprintf(stderr, "mtrace-simxen: command line too long\n");
			return 2;
		}
		memcpy(pl + off, s, l);
		off += l;
	}
	int stdio[2];
	char console[4200];
	unsigned to_console = 0;
	if (domain_output(name, log, stdio, console, sizeof(console), &to_console) < 0)
		return 1;
	struct simxen_req req = { .op = SIMXEN_TS_CREATE, .a = { domid, flags, (uint32_t)argn } };
	struct simxen_rep rep = { 0 };
	int rc = ts_call_fds(&req, pl, off, stdio, &rep, NULL, 0, NULL);
	for (int i = 0; i < 2; i++)
		if (stdio[i] > 2 && (i == 0 || stdio[1] != stdio[0]))
			close(stdio[i]);
	if (rc < 0) {
		if (rep.err)
			fprintf(stderr, "mtrace-simxen: create %s: %s\n", name, strerror(rep.err));
		return 1;
	}
	printf("%u\n", rep.a[0]);
	fflush(stdout);
	if (to_console)
		fprintf(stderr, "mtrace-simxen: domain %u (%s): its standard %s to %s\n", rep.a[0],
		    name,
		    to_console == 3       ? "output and error go"
		        : to_console == 1 ? "output goes"
		                          : "error goes",
		    console);
	return 0;
}

static int cmd_xs(const char *cmd, int argc, char **argv)
{
	char err[256];
	int need = !strcmp(cmd, "xs-write") ? 3 : 2;
	if (argc != need) {
		usage(stderr);
		return 2;
	}
	struct xenif *x = xenif_sim_open(dir, XENIF_XS, err, sizeof(err));
	if (!x) {
		fprintf(stderr, "mtrace-simxen: %s\n", err);
		return 1;
	}
	int rc = 0;
	const char *path = argv[1];
	if (!strcmp(cmd, "xs-read")) {
		size_t len;
		char *v = x->ops->xs_read(x, 0, path, &len);
		if (!v)
			rc = 1;
		else {
			fwrite(v, 1, len, stdout);
			putchar('\n');
			free(v);
		}
	} else if (!strcmp(cmd, "xs-write")) {
		rc = x->ops->xs_write(x, 0, path, argv[2], strlen(argv[2])) < 0;
	} else if (!strcmp(cmd, "xs-rm")) {
		rc = x->ops->xs_rm(x, 0, path) < 0;
	} else {
		unsigned n;
		char **v = x->ops->xs_directory(x, 0, path, &n);
		if (!v)
			rc = 1;
		else {
			for (unsigned i = 0; i < n; i++)
				puts(v[i]);
			free(v);
		}
	}
	if (rc)
		fprintf(stderr, "mtrace-simxen: %s %s: %s\n", cmd, path, strerror(errno));
	xenif_close(x);
	return rc;
}

static int cmd_stop(void)
{
	char pidpath[4200], buf[32] = "";
	snprintf(pidpath, sizeof(pidpath), "%s/%s", dir, SIMXEN_PIDFILE);
	FILE *f = fopen(pidpath, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	pid_t pid = (pid_t)atoi(buf);
	if (simple(SIMXEN_TS_STOP, 0, "stop") < 0)
		return 1;
	for (int t = 0; pid > 0 && t < WAIT_MS && kill(pid, 0) == 0; t += 20)
		sleep_ms(20);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' + 256 },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	dir = getenv(SIMXEN_ENV_DIR);
	while ((c = getopt_long(argc, argv, "+d:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			fprintf(stderr, "mtrace-simxen: -d is an old spelling; use --dir\n");
			__attribute__((fallthrough));
		case 'd' + 256:
			dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mtrace-simxen %s\n", MTRACE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!dir || !*dir) {
		fprintf(stderr, "mtrace-simxen: no state directory (--dir DIR or %s)\n",
		    SIMXEN_ENV_DIR);
		return 2;
	}
	argc -= optind;
	argv += optind;
	const char *cmd = argv[0];
	uint32_t domid;

	if (!strcmp(cmd, "start"))
		return cmd_start(argc, argv);
	if (!strcmp(cmd, "stop"))
		return cmd_stop();
	if (!strcmp(cmd, "create"))
		return cmd_create(argc, argv);
	if (!strncmp(cmd, "xs-", 3) &&
	    (!strcmp(cmd, "xs-read") || !strcmp(cmd, "xs-write") || !strcmp(cmd, "xs-ls") ||
	        !strcmp(cmd, "xs-rm")))
		return cmd_xs(cmd, argc, argv);
	if (!strcmp(cmd, "list")) {
		struct simxen_req req = { .op = SIMXEN_TS_LIST };
		struct simxen_rep rep;
		static char out[SIMXEN_MAX_MSG];
		size_t n;
		if (ts_call(&req, NULL, 0, &rep, out, sizeof(out), &n) < 0)
			return 1;
		fwrite(out, 1, n, stdout);
		return 0;
	}
	if (!strcmp(cmd, "destroy") || !strcmp(cmd, "crash") || !strcmp(cmd, "pause") ||
	    !strcmp(cmd, "unpause")) {
		if (argc != 2) {
			usage(stderr);
			return 2;
		}
		if (parse_domid(argv[1], &domid) < 0)
			return 2;
		uint32_t op = !strcmp(cmd, "destroy") ? SIMXEN_TS_DESTROY
		    : !strcmp(cmd, "crash")           ? SIMXEN_TS_CRASH
		    : !strcmp(cmd, "pause")           ? SIMXEN_TS_PAUSE
		                                      : SIMXEN_TS_UNPAUSE;
		if (simple(op, domid, cmd) < 0)
			return 1;
		if (op == SIMXEN_TS_DESTROY)
			return wait_domain(domid, false) < 0;
		if (op == SIMXEN_TS_CRASH)
			return wait_domain(domid, true) < 0;
		return 0;
	}
	fprintf(stderr, "mtrace-simxen: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
