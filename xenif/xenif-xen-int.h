/*
 * xenif-xen-int.h - the real backend's handle, shared by xenif-xen.c (the libraries'
 * pass-through) and xenif-xen-tbuf.c (the hypervisor's trace buffers).
 */
#ifndef MTRACE_XENIF_XEN_INT_H
#define MTRACE_XENIF_XEN_INT_H

#include <errno.h>

#include <xenctrl.h>
#include <xenevtchn.h>
#include <xenforeignmemory.h>
#include <xengnttab.h>
#include <xenstore.h>

#include "xenif.h"

struct xen_tbuf;
struct xen_clock; /* xenif-xen-clock.h */

struct xen_priv {
	struct xenif x;
	xengnttab_handle *gt;
	xengntshr_handle *gs;
	xenevtchn_handle *eh;
	struct xs_handle *xs;
	xc_interface *xc;
	xenforeignmemory_handle *fm; /* XENIF_TBUF */
	struct xen_tbuf *tb;         /* the mapped trace buffers, NULL until tbuf_open */
	struct xen_clock *clock;     /* XENIF_CLOCK */
};

static inline struct xen_priv *P(struct xenif *x)
{
	return x->priv;
}

/* A part that was not requested at open: the caller's bug, reported, not a crash. */
#define NEED(h, ret)                   \
	do {                           \
		if (!(h)) {            \
			errno = EBADF; \
			return ret;    \
		}                      \
	} while (0)

/* xenif-xen-tbuf.c */
int xenif_xen_tbuf_open(
    struct xenif *x, uint32_t pages, uint32_t evt_mask, struct xenif_tbuf_info *info);
long xenif_xen_tbuf_read(struct xenif *x, uint32_t cpu, void *buf, size_t len);
void xenif_xen_tbuf_close(struct xenif *x);
int xenif_xen_sched_sample(struct xenif *x, xenif_domid_t domid, struct xenif_vcpu_sample *v,
    unsigned max, int64_t *realtime_ns, uint64_t *width_ns);

#endif
