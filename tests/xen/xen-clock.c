/*
 * xen-clock - Xen system time as xenif reads it, and a dom0 witness of a guest's
 * timeline (tests/xen/clock-tests.sh; the simulation runs it too, tests/sim).
 *
 *   xen-clock sample N [realtime|monotonic]
 *       N pairs of Xen system time and the clock (default realtime: clock_sample's),
 *       one a line: "sample XEN_NS CLOCK_NS WIDTH_NS HOW".  Exit 3 (and "unsupported:
 *       ...") where no source of Xen time is open to this process.
 *   xen-clock witness DOMID N [TIMEOUT_S [HOLD_S]]
 *       dom0's end of a domain's --pingpong (mtrace-load): offer a port to DOMID,
 *       print "port P", answer N round trips, and print for each "rt K RECV_NS SEND_NS":
 *       CLOCK_REALTIME just after the guest's notification arrived and just before the
 *       answer went.  The guest's send must lie before RECV_NS on the host timeline and
 *       its receive after SEND_NS: an independent bound on how far the timeline is from
 *       dom0's wall clock.  A sample line before and after, then "done".  The port stays
 *       bound HOLD_S seconds more (default 0): mtraced learns a channel's other end by
 *       asking Xen when it reads the guest's events, and a closed end has none to tell.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pingpong.h"
#include "xenif.h"

#define MAX_RT 100000

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int sample(struct xenif *x, clockid_t clk)
{
	struct xenif_clock_pair p;

	if (x->ops->clock_pair(x, clk, &p) < 0) {
		if (errno == ENOTSUP) {
			printf("unsupported: no source of Xen system time here\n");
			return 3;
		}
		fprintf(stderr, "xen-clock: clock_pair: %s\n", strerror(errno));
		return 1;
	}
	printf("sample %" PRIu64 " %" PRId64 " %" PRIu64 " %s\n", p.xen_ns, p.clk_ns, p.width_ns,
	    p.how);
	fflush(stdout);
	return 0;
}

struct witness {
	unsigned k;
	int64_t recv[MAX_RT], send[MAX_RT];
};

static void w_received(void *arg, uint32_t port)
{
	struct witness *w = arg;

	(void)port;
	if (w->k < MAX_RT)
		w->recv[w->k] = realtime_ns();
}

static void w_sent(void *arg, uint32_t port)
{
	struct witness *w = arg;

	(void)port;
	if (w->k < MAX_RT)
		w->send[w->k] = realtime_ns();
	w->k++;
}

static void hold_for(double seconds)
{
	struct timespec left = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };

	while (nanosleep(&left, &left) != 0 && errno == EINTR)
		;
}

static int witness(struct xenif *x, unsigned domid, unsigned n, double timeout, double hold)
{
	static struct witness w;
	struct pingpong_hooks h = { w_sent, w_received, &w };
	char err[160] = "";
	int rc = sample(x, CLOCK_REALTIME);
	int port = pingpong_offer(x, domid);

	if (rc != 0 && rc != 3)
		return rc;
	if (port < 0) {
		fprintf(
		    stderr, "xen-clock: offering a port to dom%u: %s\n", domid, strerror(errno));
		return 1;
	}
	printf("port %d\n", port);
	fflush(stdout);
	unsigned done = pingpong_run(x, (uint32_t)port, 0, n, timeout, &h, err, sizeof(err));
	for (unsigned k = 0; k < done && k < MAX_RT; k++)
		printf("rt %u %" PRId64 " %" PRId64 "\n", k, w.recv[k], w.send[k]);
	if (rc == 0)
		rc = sample(x, CLOCK_REALTIME);
	printf("done\n");
	fflush(stdout);
	if (hold > 0)
		hold_for(hold);
	x->ops->evtchn_unbind(x, (xenif_port_t)port);
	if (done < n) {
		fprintf(stderr, "xen-clock: witness: %u of %u round trips: %s\n", done, n, err);
		return 1;
	}
	return rc == 3 ? 0 : rc;
}

int main(int argc, char **argv)
{
	char err[256];
	struct xenif *x;
	int rc;

	if (argc < 3 || (strcmp(argv[1], "sample") && strcmp(argv[1], "witness")) ||
	    (!strcmp(argv[1], "witness") && argc < 4)) {
		fprintf(stderr,
		    "usage: xen-clock sample N [realtime|monotonic]\n"
		    "       xen-clock witness DOMID N [TIMEOUT_S [HOLD_S]]\n");
		return 2;
	}
	/* sample needs nothing but the clock: an unprivileged process gets that far */
	x = xenif_open(NULL, NULL,
	    XENIF_CLOCK | (strcmp(argv[1], "sample") ? XENIF_EVTCHN | XENIF_XS : 0), err,
	    sizeof(err));
	if (!x) {
		fprintf(stderr, "xen-clock: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "sample")) {
		clockid_t clk =
		    argc > 3 && !strcmp(argv[3], "monotonic") ? CLOCK_MONOTONIC : CLOCK_REALTIME;
		unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
		rc = 0;
		for (unsigned i = 0; i < n && rc == 0; i++)
			rc = sample(x, clk);
	} else {
		unsigned n = (unsigned)strtoul(argv[3], NULL, 10);
		double timeout = argc > 4 ? strtod(argv[4], NULL) : 60;
		double hold = argc > 5 ? strtod(argv[5], NULL) : 0;
		rc = witness(x, (unsigned)strtoul(argv[2], NULL, 10), n ? n : 1, timeout, hold);
	}
	xenif_close(x);
	return rc;
}
