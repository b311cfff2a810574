/*
 * xenif-sim.c - the simulated Xen backend, client side.
 *
 * Every call is one request/reply on a control connection to the broker
 * (mtrace-simxen); grants arrive as file descriptors and are mmap'd here, so mapped
 * pages are real shared memory.  Event-channel deliveries and watch events come on
 * separate push-only sockets, which is what makes evtchn_fd/xs_fileno pollable.
 * Protocol: simxen-proto.h.
 *
 * This file: connecting, the domain list and the ops table; the transport is
 * xenif-sim-rpc.c, grants xenif-sim-gnt.c, event channels xenif-sim-evtchn.c, the
 * xenstore client xenif-sim-xs.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "xenif-sim-int.h"

/* ---- domain list ---- */

static int sim_ctrl_domain_list(
    struct xenif *x, xenif_domid_t first, struct xenif_dominfo *info, unsigned max)
{
	static __thread struct simxen_dominfo
	    d[(SIMXEN_MAX_MSG - sizeof(struct simxen_rep)) / sizeof(struct simxen_dominfo)];
	unsigned got = 0;
	while (got < max) {
		unsigned want = max - got;
		if (want > sizeof(d) / sizeof(d[0]))
			want = sizeof(d) / sizeof(d[0]);
		struct simxen_req req = { .op = SIMXEN_CTRL_LIST, .a = { first, want } };
		struct simxen_rep rep;
		size_t n;
		if (xenif_sim_rpc(
		        xenif_sim(x), &req, NULL, 0, &rep, d, sizeof(d), &n, NULL, 0, NULL) < 0)
			return -1;
		unsigned k = (unsigned)(n / sizeof(d[0]));
		if (k > want) {
			errno = EPROTO;
			return -1;
		}
		for (unsigned i = 0; i < k; i++) {
			info[got + i] = (struct xenif_dominfo){
				.domid = d[i].domid,
				.dying = d[i].flags & SIMXEN_DOM_DYING,
				.shutdown = d[i].flags & SIMXEN_DOM_SHUTDOWN,
				.crashed = d[i].flags & SIMXEN_DOM_CRASHED,
			};
		}
		got += k;
		if (k < want || k == 0)
			break;
		first = d[k - 1].domid + 1;
	}
	return (int)got;
}

/*
 * Xen system time against clk.  The simulated Xen's system time IS dom0's
 * CLOCK_MONOTONIC (the guests read it as their "xen" clock), so a monotonic clock pairs
 * with it exactly (the same read, width 0); any other is read around it, the narrowest
 * bracket of a few tries, so that a preemption in one try costs nothing.
 */
static int sim_clock_pair(struct xenif *x, clockid_t clk, struct xenif_clock_pair *p)
{
	struct timespec a, m, b;
	uint64_t best = UINT64_MAX;

	if (!(xenif_sim(x)->parts & XENIF_CLOCK)) {
		errno = EBADF;
		return -1;
	}
	p->how = "sim";
	if (clk == CLOCK_MONOTONIC) {
		clock_gettime(CLOCK_MONOTONIC, &m);
		p->xen_ns = (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
		p->clk_ns = (int64_t)p->xen_ns;
		p->width_ns = 0;
		return 0;
	}
	for (int i = 0; i < 5; i++) {
		clock_gettime(clk, &a);
		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(clk, &b);
		int64_t ca = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec;
		int64_t cb = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
		if (cb < ca || (uint64_t)(cb - ca) >= best)
			continue; /* a step between the reads: not a bracket */
		best = (uint64_t)(cb - ca);
		p->xen_ns = (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
		p->clk_ns = ca + (cb - ca) / 2;
		p->width_ns = best;
	}
	if (best == UINT64_MAX) {
		errno = EAGAIN;
		return -1;
	}
	return 0;
}

/* Xen system time against CLOCK_REALTIME: the pair above for that clock. */
static int sim_clock_sample(struct xenif *x, struct xenif_clock_sample *s)
{
	struct xenif_clock_pair p;

	if (sim_clock_pair(x, CLOCK_REALTIME, &p) < 0)
		return -1;
	s->xen_ns = p.xen_ns;
	s->realtime_ns = p.clk_ns;
	s->width_ns = p.width_ns;
	return 0;
}

static void sim_close(struct xenif *x)
{
	struct sim *s = xenif_sim(x);
	xenif_sim_gnt_forget(s);
	if (s->evt >= 0)
		close(s->evt);
	if (s->xsw >= 0)
		close(s->xsw);
	if (s->ctl >= 0)
		close(s->ctl);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static const struct xenif_ops sim_ops = {
	.name = "sim",
	.gnttab_map = xenif_sim_gnttab_map,
	.gnttab_unmap = xenif_sim_gnttab_unmap,
	.gntshr_share = xenif_sim_gntshr_share,
	.gntshr_unshare = xenif_sim_gntshr_unshare,
	.evtchn_fd = xenif_sim_evtchn_fd,
	.evtchn_bind_unbound = xenif_sim_evtchn_bind_unbound,
	.evtchn_bind_interdomain = xenif_sim_evtchn_bind_interdomain,
	.evtchn_notify = xenif_sim_evtchn_notify,
	.evtchn_pending = xenif_sim_evtchn_pending,
	.evtchn_unmask = xenif_sim_evtchn_unmask,
	.evtchn_unbind = xenif_sim_evtchn_unbind,
	.xs_read = xenif_sim_xs_read,
	.xs_write = xenif_sim_xs_write,
	.xs_rm = xenif_sim_xs_rm,
	.xs_directory = xenif_sim_xs_directory,
	.xs_transaction_start = xenif_sim_xs_transaction_start,
	.xs_transaction_end = xenif_sim_xs_transaction_end,
	.xs_watch = xenif_sim_xs_watch,
	.xs_unwatch = xenif_sim_xs_unwatch,
	.xs_fileno = xenif_sim_xs_fileno,
	.xs_read_watch = xenif_sim_xs_read_watch,
	.xs_get_domid = xenif_sim_xs_get_domid,
	.xs_get_perms = xenif_sim_xs_get_perms,
	.ctrl_domain_list = sim_ctrl_domain_list,
	.clock_sample = sim_clock_sample,
	.clock_pair = sim_clock_pair,
	.evtchn_status = xenif_sim_evtchn_status,
	.tbuf_open = xenif_sim_tbuf_open,
	.tbuf_read = xenif_sim_tbuf_read,
	.tbuf_close = xenif_sim_tbuf_close,
	.sched_sample = xenif_sim_sched_sample,
	.close = sim_close,
};

/*
 * A guest (started by the broker) holds an identity socket and asks it for a fresh
 * control connection; anyone else is dom0 and connects to the public socket.  The
 * identity socket may be shared by several threads or forked children: every reply
 * is an equivalent connection of the same domain, so crossed replies do no harm.
 */
static int connect_ctl(const char *dir, char *err, size_t errlen)
{
	const char *idfd = getenv(SIMXEN_ENV_FD);
	if (idfd && *idfd) {
		char *end;
		long id = strtol(idfd, &end, 10);
		if (*end || id < 0 || id > 65535 || fcntl((int)id, F_GETFD) < 0) {
			snprintf(err, errlen, "%s=%s is not an open identity socket", SIMXEN_ENV_FD,
			    idfd);
			errno = EBADF;
			return -1;
		}
		struct simxen_req req = { .op = SIMXEN_NEWCONN };
		struct simxen_rep rep;
		int fd;
		unsigned n;
		static pthread_mutex_t idlock = PTHREAD_MUTEX_INITIALIZER;
		pthread_mutex_lock(&idlock);
		int r = xenif_sim_rpc_fd(
		    (int)id, &req, NULL, 0, &rep, NULL, 0, NULL, &fd, 1, &n, false);
		int e = errno;
		pthread_mutex_unlock(&idlock);
		if (r < 0 || n != 1) {
			snprintf(err, errlen, "simulated Xen: identity socket: %s",
			    strerror(r < 0 ? e : EPROTO));
			errno = r < 0 ? e : EPROTO;
			return -1;
		}
		return fd;
	}
	if (!dir || !*dir)
		dir = getenv(SIMXEN_ENV_DIR);
	if (!dir || !*dir) {
		snprintf(err, errlen, "simulated Xen: no state directory (set %s)", SIMXEN_ENV_DIR);
		errno = EINVAL;
		return -1;
	}
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, SIMXEN_SOCK) >=
	    sizeof(sa.sun_path)) {
		snprintf(err, errlen, "simulated Xen: state directory path too long");
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		snprintf(err, errlen, "simulated Xen: connect %s: %s (is mtrace-simxen running?)",
		    sa.sun_path, strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int open_push(struct sim *s, uint32_t op)
{
	struct simxen_req req = { .op = op };
	struct simxen_rep rep;
	int fd;
	unsigned n;
	if (xenif_sim_rpc(s, &req, NULL, 0, &rep, NULL, 0, NULL, &fd, 1, &n) < 0)
		return -1;
	if (n != 1) {
		errno = EPROTO;
		return -1;
	}
	/* pending()/read_watch() must never block, as the Xen handles promise. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

struct xenif *xenif_sim_open(const char *sim_dir, unsigned parts, char *err, size_t errlen)
{
	char dummy[8];
	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	struct sim *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->x.ops = &sim_ops;
	s->x.priv = s;
	s->evt = s->xsw = -1;
	s->parts = parts;
	pthread_mutex_init(&s->lock, NULL);
	s->ctl = connect_ctl(sim_dir, err, errlen);
	if (s->ctl < 0)
		goto fail;
	uint32_t domid;
	if (xenif_sim_call(s, SIMXEN_HELLO, 0, 0, 0, &domid) < 0) {
		snprintf(err, errlen, "simulated Xen: hello: %s", strerror(errno));
		goto fail;
	}
	s->domid = domid;
	if ((parts & XENIF_EVTCHN) && (s->evt = open_push(s, SIMXEN_EVT_OPEN)) < 0) {
		snprintf(err, errlen, "simulated Xen: event channel: %s", strerror(errno));
		goto fail;
	}
	if ((parts & XENIF_XS) && (s->xsw = open_push(s, SIMXEN_XS_OPEN)) < 0) {
		snprintf(err, errlen, "simulated Xen: xenstore: %s", strerror(errno));
		goto fail;
	}
	if ((parts & (XENIF_CTRL | XENIF_TBUF)) && domid != 0) {
		snprintf(err, errlen, "simulated Xen: domain %u has no xenctrl (not dom0)", domid);
		errno = EPERM;
		goto fail;
	}
	return &s->x;
fail:;
	int e = errno;
	sim_close(&s->x);
	errno = e;
	return NULL;
}
