/*
 * pingpong.h - round trips over an interdomain event channel between two domains,
 * through xenif (so on real Xen and on the simulated Xen alike): mtrace-load's
 * --pingpong, and the dom0 witness of tests/xen (xen-clock).
 *
 * One side offers (bind_unbound for the other's domid, and says its port), the other
 * connects (bind_interdomain to that port) and starts: it notifies, the offerer answers
 * each notification with one of its own, N times.  Strict alternation: no notification
 * is sent before the last one was received, so none coalesces and the k-th send of one
 * side is the k-th receive of the other.  Xen marks the connector's new port pending at
 * once (tests/xen/README.md): that event is waited for and dropped before the first send.
 */
#ifndef MTRACE_PINGPONG_H
#define MTRACE_PINGPONG_H

#include <stddef.h>
#include <stdint.h>

#include "xenif.h"

/* Called just before each notify and just after each event taken (port: the local one). */
struct pingpong_hooks {
	void (*sent)(void *arg, uint32_t port);
	void (*received)(void *arg, uint32_t port);
	void *arg;
};

/* The offering side: a port bound unbound for domid (-1 with errno). */
int pingpong_offer(struct xenif *x, uint32_t domid);

/* The connecting side: the local port bound to (domid, port), its own first event taken;
 * -1 with a message in err. */
int pingpong_connect(
    struct xenif *x, uint32_t domid, uint32_t port, double timeout_s, char *err, size_t errlen);

/*
 * n round trips on the local port: the connector (starts != 0) notifies first.  Each
 * wait for the other side gives up after timeout_s.  Returns the round trips completed
 * (n unless an error or a timeout, said in err).
 */
unsigned pingpong_run(struct xenif *x, uint32_t port, int starts, unsigned n, double timeout_s,
    const struct pingpong_hooks *h, char *err, size_t errlen);

/* Wait up to timeout_s for xenstore key path to exist (by watch); its value (malloc'd),
 * or NULL. */
char *pingpong_wait_key(struct xenif *x, const char *path, double timeout_s);

#endif
