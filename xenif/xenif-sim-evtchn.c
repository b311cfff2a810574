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

int xenif_sim_evtchn_bind_unbound(struct xenif *x, xenif_domid_t remote)
{
	return port_call(x, SIMXEN_EVT_BIND_UNBOUND, remote, 0);
}

int xenif_sim_evtchn_bind_interdomain(struct xenif *x, xenif_domid_t remote, xenif_port_t rport)
{
	return port_call(x, SIMXEN_EVT_BIND_INTERDOMAIN, remote, rport);
}

int xenif_sim_evtchn_notify(struct xenif *x, xenif_port_t port)
{
	return port_call(x, SIMXEN_EVT_NOTIFY, port, 0) < 0 ? -1 : 0;
}

int xenif_sim_evtchn_unmask(struct xenif *x, xenif_port_t port)
{
	return port_call(x, SIMXEN_EVT_UNMASK, port, 0) < 0 ? -1 : 0;
}

int xenif_sim_evtchn_unbind(struct xenif *x, xenif_port_t port)
{
	return port_call(x, SIMXEN_EVT_UNBIND, port, 0) < 0 ? -1 : 0;
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
