/*
 * sim-guest.c - the guest side of sim-test (`sim-test guest MODE`), run as a domain of
 * the simulated Xen: it shares pages, offers ports, probes what xenstore lets a guest do,
 * idles or floods the broker, and reports through xenstore (data/...), the one channel a
 * domain has.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
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
#include "sim-test.h"
#include "simxen-proto.h"
#include "xenif.h"

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
#define T(cond, what)                                                                  \
	do {                                                                           \
		if (!(cond))                                                           \
			rl += (size_t)snprintf(                                        \
			    res + rl, sizeof(res) - rl, "%s(errno %d);", what, errno); \
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
	T(x->ops->gntshr_share(x, 0x7FF5, 1, &r, true) == NULL && errno == EINVAL,
	    "grant-bad-domid");
	errno = 0;
	T(x->ops->evtchn_bind_interdomain(x, 0, 1) < 0, "bind-foreign-port");
	errno = 0;
	T(x->ops->evtchn_notify(x, 77) < 0 && errno == ENOTCONN, "notify-unbound");
	/* Relative watches: registered and reported relative to the home. */
	struct xenif_xs_watch_event ev = { 0 };
	T(x->ops->xs_watch(x, "data/w", "rel") == 0, "watch-rel");
	T(readable(x->ops->xs_fileno(x), 2000) && x->ops->xs_read_watch(x, &ev) == 0 &&
	        !strcmp(ev.path, "data/w") && !strcmp(ev.token, "rel"),
	    "watch-rel-initial");
	T(x->ops->xs_write(x, 0, "data/w/x", "1", 1) == 0, "write-watched");
	T(readable(x->ops->xs_fileno(x), 2000) && x->ops->xs_read_watch(x, &ev) == 0 &&
	        !strcmp(ev.path, "data/w/x"),
	    "watch-rel-event");
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

/* A vCPU that never sleeps (a second task) beside one that always does (the main one):
 * what the simulated scheduling must tell apart (case_sched). */
static void *spin_main(void *arg)
{
	volatile uint64_t *n = arg;
	for (;;)
		(*n)++;
	return NULL;
}

static int guest_spin(void)
{
	static volatile uint64_t n;
	struct xenif *x = open_x(XENIF_XS);
	pthread_t t;
	if (pthread_create(&t, NULL, spin_main, (void *)&n) != 0)
		return 2;
	xs_printf(x, "data/ready", "1");
	for (;;)
		pause();
	return 0;
}

int guest_main(int argc, char **argv)
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
	if (!strcmp(argv[2], "spin"))
		return guest_spin();
	if (!strcmp(argv[2], "exit"))
		return argc > 3 ? atoi(argv[3]) : 0;
	return 2;
}
