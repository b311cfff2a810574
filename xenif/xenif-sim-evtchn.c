/*
 * xenif-sim-evtchn.c - the simulated backend's event channels.
 *
 * Deliveries come on a push-only socket of their own (evtchn_fd), one port number a
 * message; everything else is a call on the control connection.
 */
#include <errno.h>
#include <sys/socket.h>

#include "xenif-sim-int.h"

int xenif_sim_evtchn_fd(struct xenif *x)
{
	if (xenif_sim(x)->evt < 0) {
		errno = EBADF;
		return -1;
	}
	return xenif_sim(x)->evt;
}

static int port_call(struct xenif *x, uint32_t op, uint32_t a0, uint32_t a1)
{
	uint32_t port;
	if (xenif_sim(x)->evt < 0) {
		errno = EBADF;
		return -1;
	}
	if (xenif_sim_call(xenif_sim(x), op, 0, a0, a1, &port) < 0)
		return -1;
	return (int)port;
}

/* The handle's own ports (struct sim's bound): atomics, so that a notify from one thread
 * takes no lock that another thread's call to the broker holds while it waits. */
static bool port_is_bound(struct sim *s, uint32_t port)
{
	return port < SIMXEN_EVT_PORTS &&
	    (__atomic_load_n(&s->bound[port / 64], __ATOMIC_RELAXED) >> (port % 64) & 1);
}

static int port_mark(struct sim *s, int port, bool bound)
{
	if (port <= 0 || port >= SIMXEN_EVT_PORTS)
		return port;
	uint64_t bit = UINT64_C(1) << (port % 64);
	if (bound)
		__atomic_fetch_or(&s->bound[port / 64], bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&s->bound[port / 64], ~bit, __ATOMIC_RELAXED);
	return port;
}

int xenif_sim_evtchn_bind_unbound(struct xenif *x, xenif_domid_t remote)
{
	return port_mark(xenif_sim(x), port_call(x, SIMXEN_EVT_BIND_UNBOUND, remote, 0), true);
}

int xenif_sim_evtchn_bind_interdomain(struct xenif *x, xenif_domid_t remote, xenif_port_t rport)
{
	return port_mark(
	    xenif_sim(x), port_call(x, SIMXEN_EVT_BIND_INTERDOMAIN, remote, rport), true);
}

/* One datagram and no reply: what a hypercall costs a guest is its own CPU, not a wait
 * for the broker (another process) to run.  The seqpacket socket keeps it in order with
 * the calls that follow; a broker that falls behind blocks the send (its buffer). */
int xenif_sim_evtchn_notify(struct xenif *x, xenif_port_t port)
{
	struct sim *s = xenif_sim(x);
	struct simxen_req req = { .op = SIMXEN_EVT_NOTIFY, .a = { port } };
	ssize_t n;

	if (s->evt < 0) {
		errno = EBADF;
		return -1;
	}
	if (!port_is_bound(s, port)) {
		errno = ENOTCONN; /* the evtchn driver's answer for a port not bound here */
		return -1;
	}
	do
		n = send(s->ctl, &req, sizeof(req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -1 : 0;
}

int xenif_sim_evtchn_unmask(struct xenif *x, xenif_port_t port)
{
	return port_call(x, SIMXEN_EVT_UNMASK, port, 0) < 0 ? -1 : 0;
}

int xenif_sim_evtchn_unbind(struct xenif *x, xenif_port_t port)
{
	if (port_call(x, SIMXEN_EVT_UNBIND, port, 0) < 0)
		return -1;
	port_mark(xenif_sim(x), (int)port, false);
	return 0;
}

int xenif_sim_evtchn_pending(struct xenif *x)
{
	struct sim *s = xenif_sim(x);
	uint32_t port;
	if (s->evt < 0) {
		errno = EBADF;
		return -1;
	}
	ssize_t n;
	do
		n = recv(s->evt, &port, sizeof(port), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0) { /* broker gone: nothing will ever fire again */
		errno = ECONNRESET;
		return -1;
	}
	if (n != sizeof(port) || port > INT32_MAX) {
		errno = EPROTO;
		return -1;
	}
	return (int)port;
}

/* Needs no event-channel handle of ours: the broker answers dom0 about any domain. */
int xenif_sim_evtchn_status(
    struct xenif *x, xenif_domid_t domid, xenif_port_t port, struct xenif_evtchn_status *st)
{
	struct simxen_req req = { .op = SIMXEN_EVT_STATUS, .a = { domid, port } };
	struct simxen_rep rep;

	if (xenif_sim_rpc(xenif_sim(x), &req, NULL, 0, &rep, NULL, 0, NULL, NULL, 0, NULL) < 0)
		return -1;
	st->interdomain = rep.a[0] == SIMXEN_EVT_STAT_INTER;
	st->remote_domid = st->interdomain ? rep.a[1] : 0;
	st->remote_port = st->interdomain ? rep.a[2] : 0;
	return 0;
}
