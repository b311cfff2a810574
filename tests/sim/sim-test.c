/*
 * sim-test.c - cross-process tests of the simulated Xen, through xenif like mtrace.
 *
 * `sim-test CASE` is dom0 (a plain process connected to the broker) and starts guests
 * with `mtrace-simxen create -- sim-test guest MODE`, which run as their own domains.
 * Guests report through xenstore (data/...) since that is the only channel a domain
 * has.  run-sim.sh gives each case a fresh broker in a fresh directory.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "simxen-proto.h"
#include "xenif.h"

#define PAGE 4096

static const char *self;	/* argv[0], made absolute */

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Run mtrace-simxen with the given arguments; first line of its stdout into out. */
__attribute__((format(printf, 3, 4)))
static int cli(char *out, size_t outlen, const char *fmt, ...)
{
	char cmd[4096], args[3500];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "'%s' %s", getenv("SIMXEN"), args);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char line[256] = "";
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	char rest[256];
	while (fgets(rest, sizeof(rest), p))
		;
	int st = pclose(p);
	line[strcspn(line, "\n")] = '\0';
	if (out)
		snprintf(out, outlen, "%s", line);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static unsigned create_guest(const char *name, const char *flags, const char *mode)
{
	char out[64];
	int rc = cli(out, sizeof(out), "create --name %s %s --log %s.log -- '%s' guest %s", name,
		     flags, name, self, mode);
	REQUIRE(rc == 0 && atoi(out) > 0, "create %s: rc %d out '%s'", name, rc, out);
	return (unsigned)atoi(out);
}

static struct xenif *open_x(unsigned parts)
{
	char err[256];
	struct xenif *x = xenif_open("sim", NULL, parts, err, sizeof(err));
	REQUIRE(x, "xenif_open: %s", err);
	return x;
}

/* Wait for a xenstore node to exist (and, if want, to hold want). */
__attribute__((format(printf, 4, 5)))
static char *wait_xs(struct xenif *x, const char *want, long ms, const char *fmt, ...)
{
	char path[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	long end = now_ms() + ms;
	do {
		char *v = x->ops->xs_read(x, 0, path, NULL);
		if (v && (!want || !strcmp(v, want)))
			return v;
		free(v);
		sleep_ms(10);
	} while (now_ms() < end);
	return NULL;
}

static int parse_refs(const char *s, xenif_gref_t *refs, int max)
{
	int n = 0;
	char *end;
	while (n < max && *s) {
		refs[n++] = (xenif_gref_t)strtoul(s, &end, 10);
		if (end == s)
			return -1;
		s = end;
		while (*s == ' ')
			s++;
	}
	return n;
}

__attribute__((format(printf, 3, 4)))
static void xs_printf(struct xenif *x, const char *path, const char *fmt, ...)
{
	char v[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	if (x->ops->xs_write(x, 0, path, v, strlen(v)) < 0) {
		fprintf(stderr, "guest: xs_write %s: %s\n", path, strerror(errno));
		exit(3);
	}
}

/* Wait until fd is readable. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* ================= guest side ================= */

/* Shares pages, offers a port, then obeys data/cmd. */
static int guest_share(void)
{
	struct xenif *x = open_x(XENIF_GNTSHR | XENIF_EVTCHN | XENIF_XS);
	xenif_gref_t ro[2], rw[2], other[1];
	uint8_t *pro = x->ops->gntshr_share(x, 0, 2, ro, false);
	uint8_t *prw = x->ops->gntshr_share(x, 0, 2, rw, true);
	uint8_t *pot = x->ops->gntshr_share(x, 999, 1, other, true);
	if (!pro || !prw || !pot)
		return 2;
	for (int i = 0; i < 2; i++) {
		memset(pro + i * PAGE, 0xA0 + i, PAGE);
		memset(prw + i * PAGE, 0xB0 + i, PAGE);
	}
	memset(pot, 0xC0, PAGE);
	int port = x->ops->evtchn_bind_unbound(x, 0);
	if (port < 0)
		return 2;
	xs_printf(x, "data/ro", "%u %u", ro[0], ro[1]);
	xs_printf(x, "data/rw", "%u %u", rw[0], rw[1]);
	xs_printf(x, "data/other", "%u", other[0]);
	xs_printf(x, "data/port", "%d", port);
	xs_printf(x, "data/count", "0");
	if (x->ops->xs_watch(x, "data/cmd", "cmd") < 0)
		return 2;
	xs_printf(x, "data/ready", "1");
	unsigned events = 0;
	long end = now_ms() + 40000;
	while (now_ms() < end) {
		struct pollfd p[2] = { { .fd = x->ops->xs_fileno(x), .events = POLLIN },
				       { .fd = x->ops->evtchn_fd(x), .events = POLLIN } };
		poll(p, 2, 1000);
		int pp;
		while ((pp = x->ops->evtchn_pending(x)) >= 0) {
			events++;
			x->ops->evtchn_unmask(x, (xenif_port_t)pp);
		}
		struct xenif_xs_watch_event ev;
		while (x->ops->xs_read_watch(x, &ev) == 0) {
			char *cmd = x->ops->xs_read(x, 0, "data/cmd", NULL);
			if (!cmd)
				continue;
			if (!strcmp(cmd, "unshare-ro")) {
				int r = x->ops->gntshr_unshare(x, pro, 2);
				xs_printf(x, "data/ack", "unshare-ro %d", r);
			} else if (!strcmp(cmd, "check-rw")) {
				bool ok = !strcmp((char *)prw + PAGE, "dom0 was here");
				xs_printf(x, "data/ack", "check-rw %s", ok ? "ok" : "bad");
			} else if (!strncmp(cmd, "notify ", 7)) {
				int k = atoi(cmd + 7), r = 0;
				for (int i = 0; i < k; i++)
					r |= x->ops->evtchn_notify(x, (xenif_port_t)port);
				xs_printf(x, "data/ack", "notify %d %d", k, r);
			} else if (!strcmp(cmd, "count")) {
				/* Let deliveries in flight land first. */
				sleep_ms(100);
				while ((pp = x->ops->evtchn_pending(x)) >= 0) {
					events++;
					x->ops->evtchn_unmask(x, (xenif_port_t)pp);
				}
				xs_printf(x, "data/ack", "count %u", events);
			}
			free(cmd);
		}
	}
	return 0;
}

/* Everything a guest must not be able to do in xenstore, and what it may. */
static int guest_xsperm(void)
{
	struct xenif *x = open_x(XENIF_XS | XENIF_EVTCHN);
	xenif_domid_t me;
	char path[128], res[1024] = "";
	size_t rl = 0;
#define T(cond, what) do {						\
		if (!(cond))						\
			rl += (size_t)snprintf(res + rl, sizeof(res) - rl, "%s(errno %d);", what, errno); \
	} while (0)
	x->ops->xs_get_domid(x, &me);
	snprintf(path, sizeof(path), "/local/domain/%u/data/own", me);
	T(x->ops->xs_write(x, 0, path, "v", 1) == 0, "write-own");
	T(x->ops->xs_write(x, 0, "data/rel", "r", 1) == 0, "write-rel");
	char *v = x->ops->xs_read(x, 0, "data/rel", NULL);
	T(v && !strcmp(v, "r"), "read-rel");
	free(v);
	v = x->ops->xs_read(x, 0, "name", NULL);
	T(v != NULL, "read-name");
	free(v);
	errno = 0;
	T(x->ops->xs_write(x, 0, "/local/domain/0/evil", "x", 1) < 0 && errno == EACCES,
	  "write-dom0");
	errno = 0;
	T(x->ops->xs_write(x, 0, "/evil", "x", 1) < 0 && errno == EACCES, "write-root");
	snprintf(path, sizeof(path), "/local/domain/%u", me);
	errno = 0;
	T(x->ops->xs_write(x, 0, path, "x", 1) < 0 && errno == EACCES, "write-home-node");
	errno = 0;
	T(x->ops->xs_rm(x, 0, path) < 0 && errno == EACCES, "rm-home-node");
	errno = 0;
	v = x->ops->xs_read(x, 0, "/local/domain/0/name", NULL);
	T(!v && errno == EACCES, "read-dom0");
	free(v);
	errno = 0;
	unsigned n;
	char **d = x->ops->xs_directory(x, 0, "/local/domain", &n);
	T(!d && errno == EACCES, "list-all-domains");
	free(d);
	static char big[5000];
	memset(big, 'b', sizeof(big));
	errno = 0;
	T(x->ops->xs_write(x, 0, "data/big", big, 4097) < 0 && errno == E2BIG, "value-4097");
	T(x->ops->xs_write(x, 0, "data/big", big, 4096) == 0, "value-4096");
	errno = 0;
	T(x->ops->xs_write(x, 0, "data/bad path", "x", 1) < 0 && errno == EINVAL, "bad-chars");
	errno = 0;
	T(x->ops->xs_write(x, 0, "data//x", "x", 1) < 0 && errno == EINVAL, "double-slash");
	errno = 0;
	T(x->ops->xs_write(x, 0, "data/x/", "x", 1) < 0 && errno == EINVAL, "trailing-slash");
	/* A flood of nodes must hit the quota, not the broker's memory. */
	int i, last = 0;
	for (i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "data/flood/n%d", i);
		if (x->ops->xs_write(x, 0, path, "x", 1) < 0) {
			last = errno;
			break;
		}
	}
	errno = last;
	T(i < 1000 && last == EDQUOT, "flood-quota");
	/* Freed nodes can be written again. */
	T(x->ops->xs_rm(x, 0, "data/flood") == 0, "rm-flood");
	T(x->ops->xs_write(x, 0, "data/after", "x", 1) == 0, "write-after-rm");
	/* No xenctrl for a guest. */
	char err[128];
	struct xenif *c = xenif_open("sim", NULL, XENIF_CTRL, err, sizeof(err));
	T(!c && errno == EPERM, "no-ctrl");
	if (c)
		xenif_close(c);
	/* Nor may it pose as dom0 by connecting to the public socket. */
	char *saved = getenv(SIMXEN_ENV_FD) ? strdup(getenv(SIMXEN_ENV_FD)) : NULL;
	unsetenv(SIMXEN_ENV_FD);
	c = xenif_open("sim", NULL, XENIF_XS, err, sizeof(err));
	xenif_domid_t claimed = 12345;
	if (c)
		c->ops->xs_get_domid(c, &claimed);
	T(!c || claimed == me, "pose-as-dom0");
	if (c)
		xenif_close(c);
	if (saved)
		setenv(SIMXEN_ENV_FD, saved, 1);
	free(saved);
	/* Grants and ports for bad peers. */
	xenif_gref_t r;
	errno = 0;
	T(x->ops->gntshr_share(x, 0x7FF5, 1, &r, true) == NULL && errno == EINVAL, "grant-bad-domid");
	errno = 0;
	T(x->ops->evtchn_bind_interdomain(x, 0, 1) < 0, "bind-foreign-port");
	errno = 0;
	T(x->ops->evtchn_notify(x, 77) < 0 && errno == ENOTCONN, "notify-unbound");
	/* Relative watches: registered and reported relative to the home. */
	struct xenif_xs_watch_event ev = { 0 };
	T(x->ops->xs_watch(x, "data/w", "rel") == 0, "watch-rel");
	T(readable(x->ops->xs_fileno(x), 2000) && x->ops->xs_read_watch(x, &ev) == 0 &&
	  !strcmp(ev.path, "data/w") && !strcmp(ev.token, "rel"), "watch-rel-initial");
	T(x->ops->xs_write(x, 0, "data/w/x", "1", 1) == 0, "write-watched");
	T(readable(x->ops->xs_fileno(x), 2000) && x->ops->xs_read_watch(x, &ev) == 0 &&
	  !strcmp(ev.path, "data/w/x"), "watch-rel-event");
#undef T
	xs_printf(x, "data/result", "%s", rl ? res : "ok");
	pause();
	return 0;
}

/* A guest that shares one page (its domid in it), offers a port, then waits. */
static int guest_idle(void)
{
	struct xenif *x = open_x(XENIF_GNTSHR | XENIF_EVTCHN | XENIF_XS);
	xenif_domid_t me;
	xenif_gref_t ref;
	x->ops->xs_get_domid(x, &me);
	char *p = x->ops->gntshr_share(x, 0, 1, &ref, false);
	int port = x->ops->evtchn_bind_unbound(x, 0);
	if (!p || port < 0)
		return 2;
	snprintf(p, PAGE, "page of domain %u", me);
	xs_printf(x, "data/ref", "%u", ref);
	xs_printf(x, "data/port", "%d", port);
	if (x->ops->xs_watch(x, "data/cmd", "cmd") < 0)
		return 2;
	xs_printf(x, "data/ready", "1");
	/* Until told to power off (exit 0), which releases the domain. */
	long end = now_ms() + 60000;
	while (now_ms() < end) {
		struct xenif_xs_watch_event ev;
		readable(x->ops->xs_fileno(x), 1000);
		while (x->ops->xs_read_watch(x, &ev) == 0) {
			char *c = x->ops->xs_read(x, 0, "data/cmd", NULL);
			bool quit = c && !strcmp(c, "exit");
			free(c);
			if (quit) {
				x->ops->gntshr_unshare(x, p, 1);
				x->ops->evtchn_unbind(x, (xenif_port_t)port);
				xenif_close(x);
				/* _exit: twenty LeakSanitizer exit scans at once on a loaded
				 * machine outlast the test's bound; what matters here is the
				 * broker seeing a clean poweroff. */
				_exit(0);
			}
		}
	}
	return 0;
}

/* Opens connections until refused, then garbles its identity socket. */
static int guest_flood(void)
{
	struct xenif *x = open_x(XENIF_XS);
	struct xenif *h[200];
	char err[128], res[256] = "ok";
	int n, e = 0;
	for (n = 0; n < 200; n++) {
		h[n] = xenif_open("sim", NULL, XENIF_XS | XENIF_EVTCHN, err, sizeof(err));
		if (!h[n]) {
			e = errno;
			break;
		}
	}
	if (n == 200 || e != EMFILE)
		snprintf(res, sizeof(res), "opened %d, then errno %d", n, e);
	for (int i = 0; i < n; i++)
		xenif_close(h[i]);
	/* The broker sees the closes asynchronously: give it a moment. */
	struct xenif *again = NULL;
	for (int i = 0; i < 100 && !again; i++) {
		again = xenif_open("sim", NULL, XENIF_XS, err, sizeof(err));
		if (!again)
			sleep_ms(20);
	}
	if (!again && !strcmp(res, "ok"))
		snprintf(res, sizeof(res), "no connection after closing: %s", err);
	if (again)
		xenif_close(again);
	/* Garbage on the identity socket: it is dropped, our open connection stays. */
	int id = atoi(getenv(SIMXEN_ENV_FD));
	if (write(id, "garbage!", 8) != 8 && !strcmp(res, "ok"))
		snprintf(res, sizeof(res), "cannot write identity socket");
	sleep_ms(100);
	again = xenif_open("sim", NULL, XENIF_XS, err, sizeof(err));
	if (again && !strcmp(res, "ok"))
		snprintf(res, sizeof(res), "identity socket survived garbage");
	if (again)
		xenif_close(again);
	xs_printf(x, "data/result", "%s", res);
	pause();
	return 0;
}

static int guest_main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strcmp(argv[2], "share"))
		return guest_share();
	if (!strcmp(argv[2], "xsperm"))
		return guest_xsperm();
	if (!strcmp(argv[2], "idle"))
		return guest_idle();
	if (!strcmp(argv[2], "flood"))
		return guest_flood();
	if (!strcmp(argv[2], "exit"))
		return argc > 3 ? atoi(argv[3]) : 0;
	return 2;
}

/* ================= dom0 side ================= */

static sigjmp_buf segv_jmp;
static void on_segv(int sig)
{
	siglongjmp(segv_jmp, 1);
}

/* Does writing to p fault?  Checked in a child so a wrong answer cannot corrupt us. */
static bool write_faults(volatile uint8_t *p)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, on_segv);
		signal(SIGBUS, on_segv);
		if (sigsetjmp(segv_jmp, 1))
			_exit(42);
		p[0] = 0x55;
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 42;
}

static bool page_is(const uint8_t *p, uint8_t v)
{
	for (int i = 0; i < PAGE; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void cmd(struct xenif *x, unsigned dom, const char *c, const char *ack_prefix, char *ack,
		size_t acklen)
{
	char path[64];
	snprintf(path, sizeof(path), "/local/domain/%u/data/ack", dom);
	x->ops->xs_rm(x, 0, path);
	snprintf(path, sizeof(path), "/local/domain/%u/data/cmd", dom);
	x->ops->xs_write(x, 0, path, c, strlen(c));
	long end = now_ms() + 10000;
	ack[0] = '\0';
	while (now_ms() < end) {
		char *v = wait_xs(x, NULL, 50, "/local/domain/%u/data/ack", dom);
		if (v && !strncmp(v, ack_prefix, strlen(ack_prefix))) {
			snprintf(ack, acklen, "%s", v);
			free(v);
			return;
		}
		free(v);
	}
	REQUIRE(0, "domain %u: no ack for '%s'", dom, c);
}

static bool dominfo(struct xenif *x, unsigned domid, struct xenif_dominfo *out)
{
	struct xenif_dominfo info[64];
	int n = x->ops->ctrl_domain_list(x, 0, info, 64);
	for (int i = 0; i < n; i++)
		if (info[i].domid == domid) {
			*out = info[i];
			return true;
		}
	return false;
}

static int case_grants(void)
{
	struct xenif *x = open_x(XENIF_GNTTAB | XENIF_XS | XENIF_CTRL);
	unsigned g = create_guest("granter", "", "share");
	char *v = wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", g);
	REQUIRE(v, "guest never ready");
	free(v);
	xenif_gref_t ro[2], rw[2], other[1];
	v = wait_xs(x, NULL, 100, "/local/domain/%u/data/ro", g);
	REQUIRE(v && parse_refs(v, ro, 2) == 2, "ro refs");
	free(v);
	v = wait_xs(x, NULL, 100, "/local/domain/%u/data/rw", g);
	REQUIRE(v && parse_refs(v, rw, 2) == 2, "rw refs");
	free(v);
	v = wait_xs(x, NULL, 100, "/local/domain/%u/data/other", g);
	REQUIRE(v && parse_refs(v, other, 1) == 1, "other ref");
	free(v);

	/* Read-only grant: readable, one contiguous mapping of both refs. */
	uint8_t *m = x->ops->gnttab_map(x, g, 2, ro, PROT_READ);
	REQUIRE(m, "map ro grant read-only");
	CHECK(page_is(m, 0xA0) && page_is(m + PAGE, 0xA1), "ro pages contiguous with content");
	CHECK(write_faults(m), "a write through a read-only mapping must fault");
	CHECK(mprotect(m, PAGE, PROT_READ | PROT_WRITE) < 0, "mprotect RO grant mapping writable");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 2, ro, PROT_READ | PROT_WRITE) && errno == EINVAL,
	      "ro grant mapped writable must fail with EINVAL");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 1, &ro[1], PROT_READ | PROT_WRITE) && errno == EINVAL,
	      "ro grant (one ref) mapped writable");

	/* Read-write grant: our writes reach the guest. */
	uint8_t *w = x->ops->gnttab_map(x, g, 2, rw, PROT_READ | PROT_WRITE);
	REQUIRE(w, "map rw grant");
	CHECK(page_is(w, 0xB0) && page_is(w + PAGE, 0xB1), "rw pages content");
	strcpy((char *)w + PAGE, "dom0 was here");
	char ack[128];
	cmd(x, g, "check-rw", "check-rw", ack, sizeof(ack));
	CHECK(!strcmp(ack, "check-rw ok"), "guest sees dom0's write: %s", ack);
	/* Mixed refs in one contiguous map keep their order. */
	xenif_gref_t mix[3] = { rw[1], ro[0], rw[0] };
	uint8_t *mx = x->ops->gnttab_map(x, g, 3, mix, PROT_READ);
	CHECK(mx && !strcmp((char *)mx, "dom0 was here") && page_is(mx + PAGE, 0xA0) &&
	      page_is(mx + 2 * PAGE, 0xB0), "mixed refs map in order");
	if (mx)
		CHECK(x->ops->gnttab_unmap(x, mx, 3) == 0, "unmap mixed");

	/* Not the grantee, wrong granter, bad refs. */
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 1, other, PROT_READ) && errno == EINVAL,
	      "page granted to domain 999 mapped by dom0");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, 0, 1, ro, PROT_READ) && errno == EINVAL,
	      "ref mapped from the wrong granting domain");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, 4242, 1, ro, PROT_READ) && errno == EINVAL,
	      "map from a domain that does not exist");
	xenif_gref_t bad[4] = { 0, 7, 99999, 0xFFFFFFFFu };
	for (int i = 0; i < 4; i++) {
		errno = 0;
		CHECK(!x->ops->gnttab_map(x, g, 1, &bad[i], PROT_READ) && errno == EINVAL,
		      "bad ref %u", bad[i]);
	}
	xenif_gref_t half[2] = { ro[0], 99999 };
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 2, half, PROT_READ) && errno == EINVAL,
	      "one bad ref fails the whole map");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 0, ro, PROT_READ) && errno == EINVAL, "count 0");
	errno = 0;
	CHECK(x->ops->gnttab_unmap(x, (void *)0x10000, 1) < 0 && errno == EINVAL,
	      "unmap of something never mapped");

	/* Revocation: a new map fails, the existing mapping stays valid. */
	cmd(x, g, "unshare-ro", "unshare-ro", ack, sizeof(ack));
	CHECK(!strcmp(ack, "unshare-ro 0"), "guest unshared: %s", ack);
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 1, ro, PROT_READ) && errno == EINVAL, "revoked ref");
	CHECK(page_is(m, 0xA0), "existing mapping of a revoked grant still readable");
	CHECK(x->ops->gnttab_unmap(x, m, 2) == 0, "unmap ro");

	/* The granter dies: what we have mapped stays valid; nothing new can be mapped;
	 * like Xen, the domain stays dying until we unmap. */
	CHECK(cli(NULL, 0, "destroy %u", g) == 0, "destroy granter");
	struct xenif_dominfo di;
	CHECK(dominfo(x, g, &di) && di.dying, "destroyed domain still mapped: dying");
	CHECK(!strcmp((char *)w + PAGE, "dom0 was here") && page_is(w, 0xB0),
	      "dead domain's pages still readable");
	w[0] = 1;
	CHECK(w[0] == 1, "and writable");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 1, rw, PROT_READ) && errno == EINVAL,
	      "map from a destroyed domain");
	CHECK(x->ops->gnttab_unmap(x, w, 2) == 0, "unmap rw");
	long end = now_ms() + 5000;
	while (dominfo(x, g, &di) && now_ms() < end)
		sleep_ms(20);
	CHECK(!dominfo(x, g, &di), "gone once the last mapping went");

	/* Loopback, as xentest does on real Xen: dom0 grants to itself. */
	struct xenif *s = open_x(XENIF_GNTSHR);
	xenif_gref_t lr[4];
	uint8_t *sp = s->ops->gntshr_share(s, 0, 4, lr, true);
	REQUIRE(sp, "dom0 share to itself");
	for (int i = 0; i < 4; i++)
		memset(sp + i * PAGE, 0x10 + i, PAGE);
	uint8_t *lm = x->ops->gnttab_map(x, 0, 4, lr, PROT_READ | PROT_WRITE);
	REQUIRE(lm, "map own grants");
	CHECK(page_is(lm + 3 * PAGE, 0x13), "loopback content");
	lm[100] = 0x77;
	CHECK(sp[100] == 0x77, "loopback write visible to the sharer");
	CHECK(s->ops->gntshr_unshare(s, sp, 4) == 0, "unshare");
	errno = 0;
	CHECK(s->ops->gntshr_unshare(s, sp, 4) < 0 && errno == EINVAL, "double unshare");
	CHECK(lm[100] == 0x77, "mapping outlives unshare");
	/* Closing the sharing handle revokes what it still shares. */
	xenif_gref_t cr;
	CHECK(s->ops->gntshr_share(s, 0, 1, &cr, false) != NULL, "share before close");
	xenif_close(s);
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, 0, 1, &cr, PROT_READ) && errno == EINVAL,
	      "grant of a closed handle");
	xenif_close(x);
	return check_failures != 0;
}

/* Count what is pending now on handle h, unmasking each; waits ms first. */
static int drain(struct xenif *h, int ms, bool unmask)
{
	int n = 0, p;
	if (ms)
		readable(h->ops->evtchn_fd(h), ms);
	sleep_ms(20);
	while ((p = h->ops->evtchn_pending(h)) >= 0) {
		n++;
		if (unmask)
			h->ops->evtchn_unmask(h, (xenif_port_t)p);
	}
	return n;
}

static int case_evtchn(void)
{
	/* Loopback inside dom0: two handles, as two processes would have. */
	struct xenif *a = open_x(XENIF_EVTCHN), *b = open_x(XENIF_EVTCHN);
	errno = 0;
	CHECK(a->ops->evtchn_pending(a) < 0 && errno == EAGAIN, "nothing pending: EAGAIN");
	int pa = a->ops->evtchn_bind_unbound(a, 0);
	REQUIRE(pa > 0, "bind_unbound");
	int pb = b->ops->evtchn_bind_interdomain(b, 0, (xenif_port_t)pa);
	REQUIRE(pb > 0 && pb != pa, "bind_interdomain %d", pb);
	/* Xen marks the binder's new port pending once. */
	CHECK(drain(b, 1000, true) == 1, "initial event on the binding side");
	errno = 0;
	CHECK(b->ops->evtchn_bind_interdomain(b, 0, (xenif_port_t)pa) < 0 && errno == EINVAL,
	      "bind a port that is already connected");
	/* One notification, one delivery. */
	CHECK(a->ops->evtchn_notify(a, (xenif_port_t)pa) == 0, "notify");
	CHECK(readable(b->ops->evtchn_fd(b), 2000), "evtchn fd pollable");
	int got = b->ops->evtchn_pending(b);
	CHECK(got == pb, "pending returns the local port (%d, want %d)", got, pb);
	/* Masked now: a storm coalesces to one delivery after the unmask. */
	for (int i = 0; i < 1000; i++)
		a->ops->evtchn_notify(a, (xenif_port_t)pa);
	CHECK(drain(b, 0, false) == 0, "nothing delivered while masked");
	b->ops->evtchn_unmask(b, (xenif_port_t)pb);
	CHECK(drain(b, 1000, false) == 1, "1000 notifications while masked: one delivery");
	CHECK(drain(b, 100, false) == 0, "and only one");
	b->ops->evtchn_unmask(b, (xenif_port_t)pb);
	CHECK(drain(b, 100, false) == 0, "unmask with nothing pending delivers nothing");
	/* Unmasked and not yet read: still only one (the driver masks on delivery). */
	/* Unmasked: the first is delivered (and masks), the other 49 coalesce into one
	 * more delivery once that is unmasked, as the pending bit does on Xen. */
	for (int i = 0; i < 50; i++)
		a->ops->evtchn_notify(a, (xenif_port_t)pa);
	CHECK(drain(b, 1000, true) == 2, "burst while unmasked: two deliveries");
	CHECK(drain(b, 100, true) == 0, "burst left nothing pending after unmask");
	/* Both directions. */
	b->ops->evtchn_notify(b, (xenif_port_t)pb);
	CHECK(drain(a, 1000, true) == 1, "reverse direction");
	/* Ports of another handle. */
	errno = 0;
	CHECK(a->ops->evtchn_notify(a, (xenif_port_t)pb) < 0 && errno == ENOTCONN,
	      "notify a port of another handle");
	errno = 0;
	CHECK(a->ops->evtchn_unbind(a, (xenif_port_t)pb) < 0 && errno == ENOTCONN,
	      "unbind a port of another handle");
	errno = 0;
	CHECK(a->ops->evtchn_bind_interdomain(a, 4242, 1) < 0 && errno == ESRCH,
	      "bind to a domain that does not exist");
	errno = 0;
	CHECK(a->ops->evtchn_bind_interdomain(a, 0, 999) < 0 && errno == EINVAL, "bad remote port");
	/* Unbind: the peer's notifications go nowhere. */
	CHECK(b->ops->evtchn_unbind(b, (xenif_port_t)pb) == 0, "unbind");
	CHECK(a->ops->evtchn_notify(a, (xenif_port_t)pa) == 0, "notify an unbound peer is silent");
	CHECK(drain(b, 100, true) == 0, "unbound port gets nothing");
	/* The peer went back to unbound and can be bound again. */
	pb = b->ops->evtchn_bind_interdomain(b, 0, (xenif_port_t)pa);
	CHECK(pb > 0, "rebind after the peer unbound");
	CHECK(drain(b, 1000, true) == 1, "rebind initial event");
	/* Closing a handle closes its ports. */
	xenif_close(a);
	CHECK(b->ops->evtchn_notify(b, (xenif_port_t)pb) == 0, "notify peer of a closed handle");

	/* Across domains. */
	struct xenif *x = open_x(XENIF_EVTCHN | XENIF_XS | XENIF_CTRL);
	unsigned g = create_guest("evt", "", "share");
	char *v = wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", g);
	REQUIRE(v, "guest ready");
	free(v);
	v = wait_xs(x, NULL, 100, "/local/domain/%u/data/port", g);
	REQUIRE(v, "port");
	int gport = atoi(v);
	free(v);
	errno = 0;
	CHECK(b->ops->evtchn_bind_interdomain(b, g, 1000) < 0 && errno == EINVAL, "bad port of guest");
	int lp = x->ops->evtchn_bind_interdomain(x, g, (xenif_port_t)gport);
	REQUIRE(lp > 0, "bind to guest port");
	drain(x, 500, true);
	char ack[64];
	cmd(x, g, "notify 500", "notify", ack, sizeof(ack));
	CHECK(!strcmp(ack, "notify 500 0"), "guest notified: %s", ack);
	int n1 = drain(x, 1000, false);
	CHECK(n1 == 1, "guest's 500 notifications, masked: %d deliveries", n1);
	x->ops->evtchn_unmask(x, (xenif_port_t)lp);
	CHECK(drain(x, 1000, true) == 1, "pending one after unmask");
	/* Each notification is counted (and unmasked) by the guest before the next. */
	for (int i = 1; i <= 3; i++) {
		char want[32];
		x->ops->evtchn_notify(x, (xenif_port_t)lp);
		cmd(x, g, "count", "count", ack, sizeof(ack));
		snprintf(want, sizeof(want), "count %d", i);
		CHECK(!strcmp(ack, want), "guest received dom0's notification %d: %s", i, ack);
	}
	/* The guest is destroyed: our port falls back to unbound and gets nothing. */
	CHECK(cli(NULL, 0, "destroy %u", g) == 0, "destroy");
	CHECK(x->ops->evtchn_notify(x, (xenif_port_t)lp) == 0, "notify a dead peer: silent");
	CHECK(drain(x, 100, true) == 0, "nothing from a dead peer");
	errno = 0;
	CHECK(x->ops->evtchn_bind_interdomain(x, g, (xenif_port_t)gport) < 0 && errno == ESRCH,
	      "bind to a destroyed domain");
	xenif_close(b);
	xenif_close(x);
	return check_failures != 0;
}

static int next_watch(struct xenif *x, struct xenif_xs_watch_event *ev, int ms)
{
	if (x->ops->xs_read_watch(x, ev) == 0)
		return 0;
	if (!readable(x->ops->xs_fileno(x), ms))
		return -1;
	return x->ops->xs_read_watch(x, ev);
}

static bool expect_watch(struct xenif *x, const char *path, const char *token)
{
	struct xenif_xs_watch_event ev;
	if (next_watch(x, &ev, 2000) < 0) {
		fprintf(stderr, "  no watch event (want %s %s)\n", path, token);
		return false;
	}
	if (strcmp(ev.path, path) || strcmp(ev.token, token)) {
		fprintf(stderr, "  watch event %s %s (want %s %s)\n", ev.path, ev.token, path, token);
		return false;
	}
	return true;
}

static bool no_watch(struct xenif *x, int ms)
{
	struct xenif_xs_watch_event ev;
	if (next_watch(x, &ev, ms) == 0) {
		fprintf(stderr, "  unexpected watch event %s %s\n", ev.path, ev.token);
		return false;
	}
	return true;
}

static int case_xenstore(void)
{
	struct xenif *x = open_x(XENIF_XS), *y = open_x(XENIF_XS);
	size_t len;

	/* Basics. */
	CHECK(x->ops->xs_write(x, 0, "/t/a/b", "hello", 5) == 0, "write");
	char *v = x->ops->xs_read(x, 0, "/t/a/b", &len);
	CHECK(v && len == 5 && !strcmp(v, "hello"), "read back");
	free(v);
	v = x->ops->xs_read(x, 0, "/t/a", &len);
	CHECK(v && len == 0, "intermediate node exists, empty");
	free(v);
	CHECK(x->ops->xs_write(x, 0, "/t/a/c", "\0bin", 4) == 0, "binary value");
	v = x->ops->xs_read(x, 0, "/t/a/c", &len);
	CHECK(v && len == 4 && !memcmp(v, "\0bin", 4), "binary read back");
	free(v);
	unsigned n;
	char **d = x->ops->xs_directory(x, 0, "/t/a", &n);
	CHECK(d && n == 2 && ((!strcmp(d[0], "b") && !strcmp(d[1], "c")) ||
			      (!strcmp(d[0], "c") && !strcmp(d[1], "b"))), "directory");
	free(d);
	errno = 0;
	CHECK(!x->ops->xs_read(x, 0, "/t/none", NULL) && errno == ENOENT, "ENOENT");
	CHECK(x->ops->xs_rm(x, 0, "/t/a/none") == 0, "rm of a missing child of an existing node");
	errno = 0;
	CHECK(x->ops->xs_rm(x, 0, "/t/none/x") < 0 && errno == ENOENT, "rm under a missing node");
	errno = 0;
	CHECK(x->ops->xs_rm(x, 0, "/") < 0 && errno == EINVAL, "rm /");
	errno = 0;
	CHECK(!x->ops->xs_read(x, 0, "@releaseDomain", NULL) && errno == EINVAL, "read @special");
	static char big[5000];
	memset(big, 'v', sizeof(big));
	errno = 0;
	CHECK(x->ops->xs_write(x, 0, "/t/big", big, 4097) < 0 && errno == E2BIG, "value > 4096");
	char longp[3200] = "/t/";
	memset(longp + 3, 'p', sizeof(longp) - 4);
	errno = 0;
	CHECK(x->ops->xs_write(x, 0, longp, "x", 1) < 0 && errno == EINVAL, "path > 3072");

	/* Transactions: isolation, commit, abort, conflict. */
	uint32_t t = x->ops->xs_transaction_start(x);
	REQUIRE(t, "transaction start");
	CHECK(x->ops->xs_write(x, t, "/t/tx/one", "1", 1) == 0, "tx write");
	errno = 0;
	CHECK(!y->ops->xs_read(y, 0, "/t/tx/one", NULL) && errno == ENOENT, "tx write invisible");
	v = x->ops->xs_read(x, t, "/t/tx/one", NULL);
	CHECK(v && !strcmp(v, "1"), "tx reads its own write");
	free(v);
	CHECK(x->ops->xs_transaction_end(x, t, false) == 0, "commit");
	v = y->ops->xs_read(y, 0, "/t/tx/one", NULL);
	CHECK(v && !strcmp(v, "1"), "committed write visible");
	free(v);
	t = x->ops->xs_transaction_start(x);
	x->ops->xs_write(x, t, "/t/tx/two", "2", 1);
	x->ops->xs_rm(x, t, "/t/tx/one");
	CHECK(x->ops->xs_transaction_end(x, t, true) == 0, "abort");
	errno = 0;
	CHECK(!y->ops->xs_read(y, 0, "/t/tx/two", NULL) && errno == ENOENT, "aborted write gone");
	v = y->ops->xs_read(y, 0, "/t/tx/one", NULL);
	CHECK(v != NULL, "aborted rm undone");
	free(v);
	/* Conflict: something the transaction read changed under it. */
	t = x->ops->xs_transaction_start(x);
	v = x->ops->xs_read(x, t, "/t/tx/one", NULL);
	free(v);
	CHECK(y->ops->xs_write(y, 0, "/t/tx/one", "changed", 7) == 0, "concurrent write");
	x->ops->xs_write(x, t, "/t/tx/three", "3", 1);
	errno = 0;
	CHECK(x->ops->xs_transaction_end(x, t, false) < 0 && errno == EAGAIN, "conflict: EAGAIN");
	errno = 0;
	CHECK(!y->ops->xs_read(y, 0, "/t/tx/three", NULL) && errno == ENOENT,
	      "conflicting transaction applied nothing");
	/* No conflict with an unrelated write. */
	t = x->ops->xs_transaction_start(x);
	v = x->ops->xs_read(x, t, "/t/tx/one", NULL);
	free(v);
	y->ops->xs_write(y, 0, "/t/elsewhere", "x", 1);
	x->ops->xs_write(x, t, "/t/tx/four", "4", 1);
	CHECK(x->ops->xs_transaction_end(x, t, false) == 0, "unrelated write: no conflict");
	/* Removed subtree then rewritten inside one transaction. */
	t = x->ops->xs_transaction_start(x);
	x->ops->xs_rm(x, t, "/t/tx");
	errno = 0;
	CHECK(!x->ops->xs_read(x, t, "/t/tx/one", NULL) && errno == ENOENT, "tx sees its rm");
	x->ops->xs_write(x, t, "/t/tx/five", "5", 1);
	CHECK(x->ops->xs_transaction_end(x, t, false) == 0, "rm + write commit");
	d = y->ops->xs_directory(y, 0, "/t/tx", &n);
	CHECK(d && n == 1 && !strcmp(d[0], "five"), "subtree replaced");
	free(d);
	errno = 0;
	CHECK(x->ops->xs_transaction_end(x, 12345, false) < 0 && errno == ENOENT, "bad tx id");
	errno = 0;
	CHECK(!x->ops->xs_read(x, 12345, "/t", NULL) && errno == ENOENT, "op in a bad tx");

	/* Watches: fire at registration, for the path and below, on removal. */
	errno = 0;
	CHECK(x->ops->xs_read_watch(x, &(struct xenif_xs_watch_event){ 0 }) < 0 &&
	      errno == EAGAIN, "no event: EAGAIN");
	CHECK(x->ops->xs_watch(x, "/w", "tok1") == 0, "watch");
	CHECK(expect_watch(x, "/w", "tok1"), "initial watch event");
	errno = 0;
	CHECK(x->ops->xs_watch(x, "/w", "tok1") < 0 && errno == EEXIST, "duplicate watch");
	CHECK(x->ops->xs_watch(x, "/w/deep/node", "tok2") == 0, "watch deep");
	CHECK(expect_watch(x, "/w/deep/node", "tok2"), "initial deep event");
	y->ops->xs_write(y, 0, "/w/x", "1", 1);
	CHECK(expect_watch(x, "/w/x", "tok1"), "child write fires");
	y->ops->xs_write(y, 0, "/wx", "1", 1);
	y->ops->xs_write(y, 0, "/other", "1", 1);
	CHECK(no_watch(x, 200), "sibling with common prefix does not fire");
	y->ops->xs_rm(y, 0, "/w");
	struct xenif_xs_watch_event e1, e2;
	bool ok = next_watch(x, &e1, 2000) == 0 && next_watch(x, &e2, 2000) == 0;
	CHECK(ok && ((!strcmp(e1.path, "/w") && !strcmp(e2.path, "/w/deep/node")) ||
		     (!strcmp(e2.path, "/w") && !strcmp(e1.path, "/w/deep/node"))),
	      "rm fires the watch and the watch below");
	CHECK(x->ops->xs_unwatch(x, "/w", "tok1") == 0, "unwatch");
	errno = 0;
	CHECK(x->ops->xs_unwatch(x, "/w", "tok1") < 0 && errno == ENOENT, "unwatch twice");
	y->ops->xs_write(y, 0, "/w/y", "1", 1);
	CHECK(no_watch(x, 200), "no events after unwatch");
	/* Transactions fire on commit only. */
	CHECK(x->ops->xs_watch(x, "/c", "tc") == 0 && expect_watch(x, "/c", "tc"), "watch /c");
	t = y->ops->xs_transaction_start(y);
	y->ops->xs_write(y, t, "/c/1", "1", 1);
	CHECK(no_watch(x, 200), "uncommitted write does not fire");
	y->ops->xs_transaction_end(y, t, false);
	CHECK(expect_watch(x, "/c/1", "tc"), "commit fires");

	/* Domains come and go. */
	CHECK(x->ops->xs_watch(x, "@introduceDomain", "intro") == 0, "watch @introduceDomain");
	CHECK(expect_watch(x, "@introduceDomain", "intro"), "initial @introduceDomain");
	CHECK(x->ops->xs_watch(x, "@releaseDomain", "rel") == 0, "watch @releaseDomain");
	CHECK(expect_watch(x, "@releaseDomain", "rel"), "initial @releaseDomain");
	CHECK(x->ops->xs_watch(x, "/local/domain", "ld") == 0 &&
	      expect_watch(x, "/local/domain", "ld"), "watch /local/domain");
	unsigned g = create_guest("xsperm", "", "xsperm");
	/* Events: @introduceDomain and the toolstack's writes, in some order. */
	bool intro = false;
	struct xenif_xs_watch_event ev;
	for (int i = 0; i < 20 && !intro && next_watch(x, &ev, 2000) == 0; i++)
		intro = !strcmp(ev.token, "intro");
	CHECK(intro, "@introduceDomain fired on create");
	v = wait_xs(x, NULL, 10000, "/local/domain/%u/data/result", g);
	CHECK(v && !strcmp(v, "ok"), "guest xenstore permissions: %s", v ? v : "(no result)");
	free(v);
	v = x->ops->xs_read(x, 0, "/local/domain/0/evil", NULL);
	CHECK(!v, "guest's forbidden write did not land");
	free(v);
	while (next_watch(x, &ev, 100) == 0)
		;
	CHECK(cli(NULL, 0, "destroy %u", g) == 0, "destroy");
	bool rel = false, gone = false;
	char home[64];
	snprintf(home, sizeof(home), "/local/domain/%u", g);
	for (int i = 0; i < 200 && (!rel || !gone) && next_watch(x, &ev, 2000) == 0; i++) {
		rel |= !strcmp(ev.token, "rel");
		gone |= !strcmp(ev.token, "ld") && !strcmp(ev.path, home);
	}
	CHECK(rel, "@releaseDomain fired on destroy");
	CHECK(gone, "/local/domain/%u removal fired", g);
	errno = 0;
	CHECK(!x->ops->xs_read(x, 0, home, NULL) && errno == ENOENT, "home removed");

	xenif_close(x);
	xenif_close(y);
	return check_failures != 0;
}

static int case_domains(void)
{
	struct xenif *x = open_x(XENIF_CTRL | XENIF_XS | XENIF_GNTTAB | XENIF_EVTCHN);
	struct xenif_dominfo di;
	CHECK(dominfo(x, 0, &di) && !di.dying && !di.shutdown, "dom0 listed");
	xenif_domid_t me = 99;
	x->ops->xs_get_domid(x, &me);
	CHECK(me == 0, "a plain process is dom0");

	/* Crash with preserve: visible as shut down + crashed until destroyed. */
	unsigned c = create_guest("crashy", "--preserve-crash", "idle");
	free(wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", c));
	CHECK(dominfo(x, c, &di) && !di.shutdown && !di.crashed && !di.dying, "running flags");
	CHECK(cli(NULL, 0, "crash %u", c) == 0, "crash");
	CHECK(dominfo(x, c, &di) && di.shutdown && di.crashed && !di.dying, "crashed flags");
	char out[256];
	cli(out, sizeof(out), "list | grep '^%u '", c);
	CHECK(strstr(out, "crashy crashed"), "list shows crashed: %s", out);
	CHECK(cli(NULL, 0, "destroy %u", c) == 0 && !dominfo(x, c, &di), "destroy crashed");

	/* Poweroff with preserve: shut down, not crashed. */
	unsigned p = create_guest("quitter", "--preserve-poweroff", "exit 0");
	long end = now_ms() + 10000;
	while (now_ms() < end && !(dominfo(x, p, &di) && di.shutdown))
		sleep_ms(20);
	CHECK(dominfo(x, p, &di) && di.shutdown && !di.crashed, "poweroff flags");
	CHECK(cli(NULL, 0, "destroy %u", p) == 0 && !dominfo(x, p, &di), "destroy powered off");

	/* Default: a guest that exits or is killed is released. */
	unsigned q = create_guest("gone", "", "exit 3");
	end = now_ms() + 10000;
	while (now_ms() < end && dominfo(x, q, &di))
		sleep_ms(20);
	CHECK(!dominfo(x, q, &di), "exited guest released");
	unsigned k = create_guest("killed", "", "idle");
	free(wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", k));
	CHECK(cli(NULL, 0, "crash %u", k) == 0 && !dominfo(x, k, &di), "crashed guest released");
	CHECK(cli(NULL, 0, "destroy 4242") != 0, "destroy of a missing domain fails");
	CHECK(cli(NULL, 0, "destroy 0") != 0, "dom0 cannot be destroyed");
	unsigned fixed = create_guest("fixed", "--domid 77", "idle");
	CHECK(fixed == 77, "--domid honoured");
	CHECK(cli(NULL, 0, "create --name fixed2 --domid 77 -- true") != 0, "domid in use");
	CHECK(cli(NULL, 0, "create --name fixed -- true") != 0, "name in use");
	CHECK(cli(NULL, 0, "create --name 'bad/name' -- true") != 0, "bad name");
	CHECK(cli(NULL, 0, "create --name big --domid 40000 -- true") != 0, "domid too big");
	struct xenif_dominfo all[64];
	int nd = x->ops->ctrl_domain_list(x, 0, all, 64);
	CHECK(nd == 2 && all[0].domid == 0 && all[1].domid == 77, "dom0 and 77 listed: %d", nd);

	xenif_close(x);
	return check_failures != 0;
}

static int case_many(void)
{
	struct xenif *x = open_x(XENIF_CTRL | XENIF_XS | XENIF_GNTTAB | XENIF_EVTCHN);
	/* One guest besides the 20, so that "all gone" is not "nothing there". */
	unsigned fixed = create_guest("fixed", "--domid 77", "idle");
	CHECK(fixed == 77, "--domid honoured");

	/* 20 guests at once, each with a grant and a port; created in parallel. */
	enum { N = 20 };
	unsigned ids[N];
	char sh[1024];
	snprintf(sh, sizeof(sh),
		 "i=0; while [ $i -lt %d ]; do \"$SIMXEN\" create --domid $((200 + i)) "
		 "--name many$i --log many$i.log -- '%s' guest idle >/dev/null & i=$((i + 1)); "
		 "done; wait", N, self);
	CHECK(system(sh) == 0, "parallel create");
	for (int i = 0; i < N; i++)
		ids[i] = 200 + (unsigned)i;
	int lps[N];
	for (int i = 0; i < N; i++) {
		char *v = wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", ids[i]);
		CHECK(v, "guest %u ready", ids[i]);
		free(v);
		char *rs = wait_xs(x, NULL, 100, "/local/domain/%u/data/ref", ids[i]);
		char *ps = wait_xs(x, NULL, 100, "/local/domain/%u/data/port", ids[i]);
		REQUIRE(rs && ps, "guest %u announced", ids[i]);
		xenif_gref_t ref = (xenif_gref_t)atoi(rs);
		char *m = x->ops->gnttab_map(x, ids[i], 1, &ref, PROT_READ);
		char want[64];
		snprintf(want, sizeof(want), "page of domain %u", ids[i]);
		CHECK(m && !strcmp(m, want), "guest %u page", ids[i]);
		if (m)
			x->ops->gnttab_unmap(x, m, 1);
		lps[i] = x->ops->evtchn_bind_interdomain(x, ids[i], (xenif_port_t)atoi(ps));
		CHECK(lps[i] > 0, "bind guest %u", ids[i]);
		free(rs);
		free(ps);
	}
	/* Every bind leaves one event pending on its own port (Xen's bind semantics). */
	bool seen[N] = { false };
	int distinct = 0, p;
	long end = now_ms() + 5000;
	while (distinct < N && now_ms() < end) {
		readable(x->ops->evtchn_fd(x), 200);
		while ((p = x->ops->evtchn_pending(x)) >= 0) {
			for (int i = 0; i < N; i++)
				if (p == lps[i] && !seen[i]) {
					seen[i] = true;
					distinct++;
				}
			x->ops->evtchn_unmask(x, (xenif_port_t)p);
		}
	}
	CHECK(distinct == N, "one event per bound port: %d of %d", distinct, N);
	struct xenif_dominfo all[64];
	int nd = x->ops->ctrl_domain_list(x, 0, all, 64);
	CHECK(nd == N + 2, "domain list has dom0 + fixed + %d guests: %d", N, nd);
	nd = x->ops->ctrl_domain_list(x, ids[N / 2], all, 3);
	CHECK(nd == 3 && all[0].domid >= ids[N / 2], "list from a first domid, bounded");
	/* All power off at once; each is released when its process exits. */
	for (int i = 0; i < N; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/local/domain/%u/data/cmd", ids[i]);
		CHECK(x->ops->xs_write(x, 0, path, "exit", 4) == 0, "tell %u to exit", ids[i]);
	}
	end = now_ms() + 20000;
	while ((nd = x->ops->ctrl_domain_list(x, 0, all, 64)) > 2 && now_ms() < end)
		sleep_ms(50);
	CHECK(nd == 2, "after all powered off: %d domains", nd);
	unsigned nl;
	char **d = x->ops->xs_directory(x, 0, "/local/domain", &nl);
	CHECK(d && nl == 2, "xenstore has dom0 + fixed left: %u", nl);
	free(d);
	xenif_close(x);
	return check_failures != 0;
}

/* Garbage on the broker socket: every bad client is dropped, the broker carries on. */
static int case_garbage(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	REQUIRE((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s",
				 getenv("MTRACE_SIM_DIR"), SIMXEN_SOCK) < sizeof(sa.sun_path),
		"socket path too long");
	srand(42);
	static char buf[40000];
	for (int round = 0; round < 300; round++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		REQUIRE(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0,
			"connect round %d", round);
		size_t len;
		switch (round % 6) {
		case 0: len = (size_t)(rand() % 8); break;		/* short */
		case 1: len = 24 + (size_t)(rand() % 64); break;	/* header-sized */
		case 2: len = SIMXEN_MAX_MSG + 1 + (size_t)(rand() % 1000); break;
		default: len = (size_t)(rand() % 2000); break;
		}
		for (size_t i = 0; i < len; i++)
			buf[i] = (char)rand();
		if (round % 6 == 1) {	/* plausible op with absurd arguments */
			struct simxen_req r = { .op = (uint32_t)(1 + rand() % (SIMXEN_OP_MAX + 3)),
						.tx = (uint32_t)rand(),
						.a = { (uint32_t)rand(), (uint32_t)rand(),
						       (uint32_t)rand(), (uint32_t)rand() } };
			if (r.op == SIMXEN_TS_STOP)
				r.op = SIMXEN_TS_LIST;
			memcpy(buf, &r, sizeof(r));
		}
		if (round % 17 == 0) {	/* with a descriptor attached */
			union { struct cmsghdr c; char b[CMSG_SPACE(sizeof(int))]; } cm;
			struct iovec iov = { buf, len ? len : 1 };
			struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
					     .msg_controllen = sizeof(cm.b) };
			struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
			h->cmsg_level = SOL_SOCKET;
			h->cmsg_type = SCM_RIGHTS;
			h->cmsg_len = CMSG_LEN(sizeof(int));
			int zero = 0;
			memcpy(CMSG_DATA(h), &zero, sizeof(int));
			sendmsg(fd, &mh, MSG_NOSIGNAL);
		} else {
			send(fd, buf, len, MSG_NOSIGNAL);
		}
		/* Many requests without reading replies. */
		if (round % 50 == 3) {
			struct simxen_req r = { .op = SIMXEN_TS_LIST };
			for (int i = 0; i < 5000; i++)
				if (send(fd, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
					break;
		}
		close(fd);
	}
	/* A stream client is refused by the socket type. */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0, "stream connect refused");
	close(s);
	/* The broker must still work normally. */
	char out[128];
	CHECK(cli(out, sizeof(out), "list") == 0 && !strncmp(out, "0 Domain-0", 10),
	      "broker alive after garbage: %s", out);
	struct xenif *x = open_x(XENIF_XS | XENIF_EVTCHN | XENIF_GNTSHR | XENIF_GNTTAB);
	CHECK(x->ops->xs_write(x, 0, "/alive", "yes", 3) == 0, "xenstore works after garbage");
	unsigned g = create_guest("after", "", "idle");
	char *v = wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", g);
	CHECK(v, "a guest still starts after garbage");
	free(v);
	/* A guest opening connections without end, then garbling its identity socket. */
	g = create_guest("flood", "", "flood");
	v = wait_xs(x, NULL, 20000, "/local/domain/%u/data/result", g);
	CHECK(v && !strcmp(v, "ok"), "connection flood: %s", v ? v : "(no result)");
	free(v);
	CHECK(cli(out, sizeof(out), "list") == 0, "broker alive after the flood");
	xenif_close(x);
	return check_failures != 0;
}

int main(int argc, char **argv)
{
	static char abs[4096];
	if (argv[0][0] != '/' && realpath(argv[0], abs))
		self = abs;
	else
		self = argv[0];
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && !strcmp(argv[1], "guest"))
		return guest_main(argc, argv);
	if (argc != 2 || !getenv("SIMXEN") || !getenv("MTRACE_SIM_DIR")) {
		fprintf(stderr, "usage: SIMXEN=... MTRACE_SIM_DIR=... sim-test "
				"grants|evtchn|xenstore|domains|many|garbage\n");
		return 2;
	}
	alarm(55);	/* never outlive the meson timeout silently */
	int rc;
	if (!strcmp(argv[1], "grants"))
		rc = case_grants();
	else if (!strcmp(argv[1], "evtchn"))
		rc = case_evtchn();
	else if (!strcmp(argv[1], "xenstore"))
		rc = case_xenstore();
	else if (!strcmp(argv[1], "domains"))
		rc = case_domains();
	else if (!strcmp(argv[1], "many"))
		rc = case_many();
	else if (!strcmp(argv[1], "garbage"))
		rc = case_garbage();
	else
		return 2;
	printf("%s: %s (%d failures)\n", argv[1], rc ? "FAIL" : "PASS", check_failures);
	return rc;
}
