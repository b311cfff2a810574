/*
 * evtchn.c - simulated event channels, with the Linux evtchn driver on top.
 *
 * Ports are per domain, as in Xen; each bound port belongs to one handle (one client
 * evtchn fd).  Delivery follows the driver: a fired, unmasked port is queued for
 * read() once and masked; firing it again while masked only sets pending; unmasking a
 * pending port delivers it once more.  So any number of notifications between two
 * unmasks coalesce into one wake-up, and the delivery queue of a handle holds each
 * port at most once per unmask, which bounds it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker.h"

#define DOMID_SELF 0x7FF0u

enum {
	PORT_FREE,
	PORT_UNBOUND,
	PORT_INTER
};

struct evt_port {
	uint8_t state;
	bool pending, masked;
	uint32_t remote_dom, remote_port;
	struct evt_handle *owner;
};

struct evt_handle {
	struct broker *b;
	uint32_t domid;
	int fd;
	struct event *wev;
	uint32_t q[EVT_QUEUE_CAP];
	unsigned qh, qn;
};

static void flush(struct evt_handle *h)
{
	while (h->qn) {
		ssize_t n =
		    send(h->fd, &h->q[h->qh], sizeof(uint32_t), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			event_add(h->wev, NULL);
			return;
		}
		if (n < 0) { /* client closed its end: nobody to deliver to */
			h->qn = 0;
			return;
		}
		h->qh = (h->qh + 1) % EVT_QUEUE_CAP;
		h->qn--;
	}
}

static void write_cb(evutil_socket_t fd, short what, void *arg)
{
	flush(arg);
}

static void deliver(struct evt_handle *h, uint32_t port)
{
	if (h->qn == EVT_QUEUE_CAP) { /* only if ports were rebound in a loop */
		blog("domain %u: event queue full, port %u dropped", h->domid, port);
		return;
	}
	h->q[(h->qh + h->qn) % EVT_QUEUE_CAP] = port;
	h->qn++;
	if (h->qn == 1)
		flush(h);
}

static struct evt_port *get_port(struct domain *d, uint32_t port)
{
	if (!d || !d->ports || port == 0 || port >= EVT_MAX_PORTS)
		return NULL;
	return &d->ports[port];
}

static void fire(struct domain *d, uint32_t port)
{
	struct evt_port *p = get_port(d, port);
	if (!p || p->state != PORT_INTER || !p->owner)
		return;
	if (p->masked) {
		p->pending = true;
		return;
	}
	p->masked = true;
	deliver(p->owner, port);
}

static int alloc_port(struct domain *d, uint32_t *port)
{
	if (!d->ports) {
		d->ports = calloc(EVT_MAX_PORTS, sizeof(*d->ports));
		if (!d->ports)
			return ENOMEM;
	}
	for (uint32_t i = 1; i < EVT_MAX_PORTS; i++) {
		if (d->ports[i].state == PORT_FREE) {
			*port = i;
			return 0;
		}
	}
	return ENOSPC;
}

/* Close a port as EVTCHNOP_close does: an interdomain peer falls back to unbound. */
static void close_port(struct broker *b, struct domain *d, uint32_t port)
{
	struct evt_port *p = &d->ports[port];
	if (p->state == PORT_INTER) {
		struct domain *rd = dom_get(b, p->remote_dom);
		struct evt_port *rp = get_port(rd, p->remote_port);
		if (rp && rp->state == PORT_INTER && rp->remote_dom == d->domid &&
		    rp->remote_port == port) {
			rp->state = PORT_UNBOUND;
			rp->remote_dom = d->domid;
			rp->remote_port = 0;
		}
	}
	memset(p, 0, sizeof(*p));
}

struct evt_handle *evt_open(struct broker *b, struct conn *c, int *client_fd)
{
	struct evt_handle *h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->b = b;
	h->domid = conn_domid(c);
	h->fd = conn_push_pair(b, write_cb, h, &h->wev, client_fd);
	if (h->fd < 0) {
		int e = errno;
		free(h);
		errno = e;
		return NULL;
	}
	return h;
}

void evt_close(struct broker *b, struct conn *c, struct evt_handle *h)
{
	struct domain *d = dom_get(b, h->domid);
	if (d && d->ports)
		for (uint32_t i = 1; i < EVT_MAX_PORTS; i++)
			if (d->ports[i].state != PORT_FREE && d->ports[i].owner == h)
				close_port(b, d, i);
	event_free(h->wev);
	close(h->fd);
	free(h);
}

int evt_bind_unbound(
    struct broker *b, struct conn *c, struct evt_handle *h, uint32_t remote, uint32_t *port)
{
	struct domain *d = conn_domain(c);
	if (!d)
		return ESRCH;
	if (remote == DOMID_SELF)
		remote = d->domid;
	if (remote > MAX_DOMID)
		return EINVAL;
	int err = alloc_port(d, port);
	if (err)
		return err;
	d->ports[*port] =
	    (struct evt_port){ .state = PORT_UNBOUND, .remote_dom = remote, .owner = h };
	return 0;
}

int evt_bind_interdomain(struct broker *b, struct conn *c, struct evt_handle *h, uint32_t remote,
    uint32_t rport, uint32_t *port)
{
	struct domain *d = conn_domain(c);
	if (!d)
		return ESRCH;
	if (remote == DOMID_SELF)
		remote = d->domid;
	struct domain *rd = dom_get(b, remote);
	if (!rd || rd->state == DOM_DYING)
		return ESRCH;
	struct evt_port *rp = get_port(rd, rport);
	if (!rp || rp->state != PORT_UNBOUND || rp->remote_dom != d->domid)
		return EINVAL;
	int err = alloc_port(d, port);
	if (err)
		return err;
	rp = &rd->ports[rport]; /* d may be rd: alloc_port may have just made the array */
	d->ports[*port] = (struct evt_port){
		.state = PORT_INTER, .remote_dom = remote, .remote_port = rport, .owner = h
	};
	rp->state = PORT_INTER;
	rp->remote_dom = d->domid;
	rp->remote_port = *port;
	/* Xen sets the new local port pending: notifications sent to the unbound remote
	 * port were lost, so the binder must look once. */
	fire(d, *port);
	return 0;
}

static struct evt_port *owned(struct conn *c, struct evt_handle *h, uint32_t port)
{
	struct evt_port *p = get_port(conn_domain(c), port);
	return p && p->state != PORT_FREE && p->owner == h ? p : NULL;
}

int evt_notify(struct broker *b, struct conn *c, struct evt_handle *h, uint32_t port)
{
	struct evt_port *p = owned(c, h, port);
	if (!p)
		return ENOTCONN; /* the evtchn driver's answer for a port not bound here */
	if (p->state == PORT_INTER)
		fire(dom_get(b, p->remote_dom), p->remote_port);
	return 0; /* unbound: Xen drops it silently */
}

int evt_unmask(struct broker *b, struct conn *c, struct evt_handle *h, uint32_t port)
{
	struct evt_port *p = owned(c, h, port);
	if (!p)
		return 0; /* the driver ignores unmasks of foreign ports */
	p->masked = false;
	if (p->pending) {
		p->pending = false;
		fire(conn_domain(c), port);
	}
	return 0;
}

int evt_unbind(struct broker *b, struct conn *c, struct evt_handle *h, uint32_t port)
{
	if (!owned(c, h, port))
		return ENOTCONN;
	close_port(b, conn_domain(c), port);
	return 0;
}

int evt_status(struct broker *b, uint32_t domid, uint32_t port, uint32_t out[3])
{
	struct domain *d = dom_get(b, domid);
	struct evt_port *p;

	if (!d)
		return ESRCH;
	if (port == 0 || port >= EVT_MAX_PORTS)
		return EINVAL; /* Xen: -EINVAL for a port beyond the domain's */
	p = get_port(d, port);
	out[0] = !p || p->state == PORT_FREE ? SIMXEN_EVT_STAT_CLOSED
	    : p->state == PORT_UNBOUND       ? SIMXEN_EVT_STAT_UNBOUND
	                                     : SIMXEN_EVT_STAT_INTER;
	out[1] = p ? p->remote_dom : 0;
	out[2] = p && p->state == PORT_INTER ? p->remote_port : 0;
	return 0;
}

void evt_domain_gone(struct broker *b, struct domain *d)
{
	if (!d->ports)
		return;
	for (uint32_t i = 1; i < EVT_MAX_PORTS; i++)
		if (d->ports[i].state != PORT_FREE)
			close_port(b, d, i);
	free(d->ports);
	d->ports = NULL;
}
