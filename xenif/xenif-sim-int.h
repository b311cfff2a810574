/*
 * xenif-sim-int.h - internals of the simulated Xen backend, client side: the handle,
 * the transport to the broker (xenif-sim-rpc.c) and the ops each part fills in (grants
 * xenif-sim-gnt.c, event channels xenif-sim-evtchn.c, xenstore xenif-sim-xs.c); the
 * table itself and opening are xenif-sim.c.
 */
#ifndef MTRACE_XENIF_SIM_INT_H
#define MTRACE_XENIF_SIM_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simxen-proto.h"
#include "xenif.h"

struct region { /* a share or a mapping made through this handle */
	struct region *next;
	void *addr;
	uint32_t count;
	xenif_domid_t domid; /* maps only: the granting domain */
	xenif_gref_t *refs;  /* shares only */
};

struct sim {
	struct xenif x;
	pthread_mutex_t lock; /* guest producer threads kick concurrently */
	int ctl, evt, xsw;
	xenif_domid_t domid;
	unsigned parts; /* XENIF_* asked for at open */
	struct region *shares, *maps;
	/* the ports bound on this handle, as the evtchn driver keeps them: a notify of any
	 * other is refused here (ENOTCONN) and the rest go one way (SIMXEN_EVT_NOTIFY) */
	uint64_t bound[SIMXEN_EVT_PORTS / 64];
};

static inline struct sim *xenif_sim(struct xenif *x)
{
	return (struct sim *)x->priv;
}

/* xenif-sim-rpc.c: the transport.  One request, one reply on the control connection:
 * 0 with rep/out/fds filled, or -1 with errno (the broker's answer or a transport
 * error); fds received beyond maxfds are closed. */
int xenif_sim_rpc(struct sim *s, const struct simxen_req *req, const void *pl, size_t pllen,
    struct simxen_rep *rep, void *out, size_t outmax, size_t *outlen, int *fds, unsigned maxfds,
    unsigned *nfds);
/* A simple call: args in, a[0] out. */
int xenif_sim_call(
    struct sim *s, uint32_t op, uint32_t tx, uint32_t a0, uint32_t a1, uint32_t *res);
void xenif_sim_close_fds(int *fds, unsigned n);
/* The same on any socket fd.  With match_seq, a reply to an earlier request that timed
 * out is skipped; without (the identity socket), any reply is taken. */
int xenif_sim_rpc_fd(int fd, const struct simxen_req *req0, const void *pl, size_t pllen,
    struct simxen_rep *rep, void *out, size_t outmax, size_t *outlen, int *fds, unsigned maxfds,
    unsigned *nfds, bool match_seq);

/* xenif-sim-gnt.c */
void *xenif_sim_gnttab_map(
    struct xenif *x, xenif_domid_t domid, uint32_t count, const xenif_gref_t *refs, int prot);
int xenif_sim_gnttab_unmap(struct xenif *x, void *addr, uint32_t count);
void *xenif_sim_gntshr_share(
    struct xenif *x, xenif_domid_t domid, uint32_t count, xenif_gref_t *refs, bool writable);
int xenif_sim_gntshr_unshare(struct xenif *x, void *addr, uint32_t count);
void xenif_sim_gnt_forget(struct sim *s); /* at close: the bookkeeping, not the pages */

/* xenif-sim-evtchn.c */
int xenif_sim_evtchn_fd(struct xenif *x);
int xenif_sim_evtchn_bind_unbound(struct xenif *x, xenif_domid_t remote);
int xenif_sim_evtchn_bind_interdomain(struct xenif *x, xenif_domid_t remote, xenif_port_t rport);
int xenif_sim_evtchn_notify(struct xenif *x, xenif_port_t port);
int xenif_sim_evtchn_unmask(struct xenif *x, xenif_port_t port);
int xenif_sim_evtchn_unbind(struct xenif *x, xenif_port_t port);
int xenif_sim_evtchn_pending(struct xenif *x);
int xenif_sim_evtchn_status(
    struct xenif *x, xenif_domid_t domid, xenif_port_t port, struct xenif_evtchn_status *st);

/* xenif-sim-xs.c */
char *xenif_sim_xs_read(struct xenif *x, uint32_t tx, const char *path, size_t *len);
int xenif_sim_xs_write(struct xenif *x, uint32_t tx, const char *path, const void *val, size_t len);
int xenif_sim_xs_rm(struct xenif *x, uint32_t tx, const char *path);
char **xenif_sim_xs_directory(struct xenif *x, uint32_t tx, const char *path, unsigned *num);
uint32_t xenif_sim_xs_transaction_start(struct xenif *x);
int xenif_sim_xs_transaction_end(struct xenif *x, uint32_t tx, bool abort);
int xenif_sim_xs_watch(struct xenif *x, const char *path, const char *token);
int xenif_sim_xs_unwatch(struct xenif *x, const char *path, const char *token);
int xenif_sim_xs_fileno(struct xenif *x);
int xenif_sim_xs_read_watch(struct xenif *x, struct xenif_xs_watch_event *ev);
struct xenif_xs_perm *xenif_sim_xs_get_perms(
    struct xenif *x, uint32_t tx, const char *path, unsigned *num);
int xenif_sim_xs_get_domid(struct xenif *x, xenif_domid_t *domid);

/* xenif-sim-tbuf.c */
int xenif_sim_tbuf_open(
    struct xenif *x, uint32_t pages, uint32_t evt_mask, struct xenif_tbuf_info *info);
long xenif_sim_tbuf_read(struct xenif *x, uint32_t cpu, void *buf, size_t len);
void xenif_sim_tbuf_close(struct xenif *x);
int xenif_sim_sched_sample(struct xenif *x, xenif_domid_t domid, struct xenif_vcpu_sample *v,
    unsigned max, int64_t *realtime_ns, uint64_t *width_ns);

#endif
