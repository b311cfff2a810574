/*
 * pingpong.c - round trips over an interdomain event channel (pingpong.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "pingpong.h"

/* The next event on port: 0, or -1 (timeout or error, in err). */
static int wait_event(struct xenif *x, uint32_t port, double timeout_s, char *err, size_t errlen)
{
	double end = clock_mono_s() + timeout_s;
	int fd = x->ops->evtchn_fd(x);

	for (;;) {
		int p = x->ops->evtchn_pending(x);
		if (p >= 0) {
			x->ops->evtchn_unmask(x, (xenif_port_t)p);
			if ((uint32_t)p == port)
				return 0;
			continue; /* another port of this handle: not ours to count */
		}
		if (errno != EAGAIN) {
			snprintf(err, errlen, "evtchn pending: %s", strerror(errno));
			return -1;
		}
		double left = end - clock_mono_s();
		if (left <= 0) {
			snprintf(err, errlen, "no event on port %u in %.1f s", port, timeout_s);
			return -1;
		}
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return -1;
		}
	}
}

int pingpong_offer(struct xenif *x, uint32_t domid)
{
	return x->ops->evtchn_bind_unbound(x, domid);
}

int pingpong_connect(
    struct xenif *x, uint32_t domid, uint32_t port, double timeout_s, char *err, size_t errlen)
{
	int p = x->ops->evtchn_bind_interdomain(x, domid, port);

	if (p < 0) {
		snprintf(err, errlen, "bind_interdomain dom%u port %u: %s", domid, port,
		    strerror(errno));
		return -1;
	}
	/* Xen's own event on a fresh binding: not the other side's, and not counted */
	if (wait_event(x, (uint32_t)p, timeout_s, err, errlen) < 0)
		return -1;
	return p;
}

unsigned pingpong_run(struct xenif *x, uint32_t port, int starts, unsigned n, double timeout_s,
    const struct pingpong_hooks *h, char *err, size_t errlen)
{
	unsigned done = 0;

	while (done < n) {
		if (!starts && wait_event(x, port, timeout_s, err, errlen) < 0)
			return done;
		if (!starts)
			h->received(h->arg, port);
		h->sent(h->arg, port);
		if (x->ops->evtchn_notify(x, port) < 0) {
			snprintf(err, errlen, "notify port %u: %s", port, strerror(errno));
			return done;
		}
		if (starts) {
			if (wait_event(x, port, timeout_s, err, errlen) < 0)
				return done;
			h->received(h->arg, port);
		}
		done++;
	}
	return done;
}

char *pingpong_wait_key(struct xenif *x, const char *path, double timeout_s)
{
	double end = clock_mono_s() + timeout_s;
	char *v = NULL;
	int fd = x->ops->xs_fileno(x);

	if (x->ops->xs_watch(x, path, "pingpong") < 0)
		return NULL;
	while (!(v = x->ops->xs_read(x, 0, path, NULL))) {
		struct xenif_xs_watch_event ev;
		double left = end - clock_mono_s();
		if (left <= 0)
			break;
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		while (x->ops->xs_read_watch(x, &ev) == 0)
			;
	}
	x->ops->xs_unwatch(x, path, "pingpong");
	return v;
}
