/*
 * xenif-sim.c - the simulated Xen backend, client side.
 *
 * Every call is one request/reply on a control connection to the broker
 * (mtrace-simxen); grants arrive as file descriptors and are mmap'd here, so mapped
 * pages are real shared memory.  Event-channel deliveries and watch events come on
 * separate push-only sockets, which is what makes evtchn_fd/xs_fileno pollable.
 * Protocol: sim/simxen-proto.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "simxen-proto.h"
#include "xenif.h"

#define RPC_TIMEOUT_MS	20000	/* the broker answers at once; this only catches a wedged one */
#define MAX_SHARE	1024	/* pages per share call: refs must fit one reply */
#define MAX_MAP		65536

struct region {			/* a share or a mapping made through this handle */
	struct region *next;
	void *addr;
	uint32_t count;
	xenif_domid_t domid;	/* maps only: the granting domain */
	xenif_gref_t *refs;	/* shares only */
};

struct sim {
	struct xenif x;
	pthread_mutex_t lock;	/* guest producer threads kick concurrently */
	int ctl, evt, xsw;
	xenif_domid_t domid;
	struct region *shares, *maps;
};

static struct sim *S(struct xenif *x)
{
	return (struct sim *)x->priv;
}

static void close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * One request, one reply.  Returns 0 and fills rep/out/fds, or -1 with errno (either the
 * broker's answer or a transport error).  fds received beyond maxfds are closed.
 * With match_seq, a reply to an earlier request that timed out is skipped rather than
 * taken for this one's; the identity socket, which forked children may share, takes
 * any reply since all its replies are equivalent.
 */
static int rpc_fd(int fd, const struct simxen_req *req0, const void *pl, size_t pllen,
		  struct simxen_rep *rep, void *out, size_t outmax, size_t *outlen,
		  int *fds, unsigned maxfds, unsigned *nfds, bool match_seq)
{
	static __thread char buf[SIMXEN_MAX_MSG];
	static uint32_t seq_counter;
	struct simxen_req req = *req0;
	struct iovec iov[2] = { { &req, sizeof(req) }, { (void *)pl, pllen } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = pllen ? 2 : 1 };
	union { struct cmsghdr c; char b[CMSG_SPACE(sizeof(int) * SIMXEN_MAX_FDS)]; } cm;
	ssize_t n;

	if (nfds)
		*nfds = 0;
	if (sizeof(req) + pllen > SIMXEN_MAX_MSG) {
		errno = E2BIG;
		return -1;
	}
	do
		req.seq = __atomic_add_fetch(&seq_counter, 1, __ATOMIC_RELAXED);
	while (req.seq == 0);
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;

	uint64_t t0 = clock_mono_ns();
	int got[SIMXEN_MAX_FDS];
	unsigned ngot;
	for (;;) {
		long left = RPC_TIMEOUT_MS - (long)((clock_mono_ns() - t0) / 1000000u);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		iov[0] = (struct iovec){ buf, sizeof(buf) };
		mh = (struct msghdr){ .msg_iov = iov, .msg_iovlen = 1,
				      .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
		do
			n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		ngot = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			unsigned k = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (unsigned i = 0; i < k && ngot < SIMXEN_MAX_FDS; i++)
				memcpy(&got[ngot++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
		if ((size_t)n < sizeof(*rep) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
			close_fds(got, ngot);
			errno = EPROTO;
			return -1;
		}
		memcpy(rep, buf, sizeof(*rep));
		if (!match_seq || rep->seq == req.seq || rep->seq == 0)
			break;
		close_fds(got, ngot);	/* a late answer to a request that gave up */
	}
	if (rep->err) {
		close_fds(got, ngot);
		errno = rep->err > 0 && rep->err < 4096 ? rep->err : EPROTO;
		return -1;
	}
	size_t len = (size_t)n - sizeof(*rep);
	if (len > outmax) {
		close_fds(got, ngot);
		errno = EPROTO;
		return -1;
	}
	if (len)
		memcpy(out, buf + sizeof(*rep), len);
	if (outlen)
		*outlen = len;
	for (unsigned i = 0; i < ngot; i++) {
		if (fds && i < maxfds)
			fds[i] = got[i];
		else
			close(got[i]);
	}
	if (nfds)
		*nfds = ngot < maxfds ? ngot : maxfds;
	return 0;
}

static int rpc(struct sim *s, const struct simxen_req *req, const void *pl, size_t pllen,
	       struct simxen_rep *rep, void *out, size_t outmax, size_t *outlen,
	       int *fds, unsigned maxfds, unsigned *nfds)
{
	pthread_mutex_lock(&s->lock);
	int r = rpc_fd(s->ctl, req, pl, pllen, rep, out, outmax, outlen, fds, maxfds, nfds,
		       true);
	int e = errno;
	pthread_mutex_unlock(&s->lock);
	errno = e;
	return r;
}

/* A simple call: args in, a[0] out. */
static int call(struct sim *s, uint32_t op, uint32_t tx, uint32_t a0, uint32_t a1,
		uint32_t *res)
{
	struct simxen_req req = { .op = op, .tx = tx, .a = { a0, a1 } };
	struct simxen_rep rep;
	if (rpc(s, &req, NULL, 0, &rep, NULL, 0, NULL, NULL, 0, NULL) < 0)
		return -1;
	if (res)
		*res = rep.a[0];
	return 0;
}

/* ---- grants ---- */

static void *sim_gnttab_map(struct xenif *x, xenif_domid_t domid, uint32_t count,
			    const xenif_gref_t *refs, int prot)
{
	struct sim *s = S(x);
	if (count == 0 || count > MAX_MAP || !refs ||
	    (prot != PROT_READ && prot != (PROT_READ | PROT_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	struct region *rg = calloc(1, sizeof(*rg));
	if (!rg)
		return NULL;
	/* Reserve the whole range first: the refs must end up contiguous, as with gntdev. */
	uint8_t *base = mmap(NULL, (size_t)count * SIMXEN_PAGE, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		free(rg);
		return NULL;
	}
	uint32_t done = 0;
	while (done < count) {
		uint32_t n = count - done < SIMXEN_MAP_CHUNK ? count - done : SIMXEN_MAP_CHUNK;
		struct simxen_req req = { .op = SIMXEN_GNT_MAP, .a = { domid, n, (uint32_t)prot } };
		struct simxen_rep rep;
		struct simxen_map_ent ent[SIMXEN_MAP_CHUNK];
		int fds[SIMXEN_MAX_FDS];
		unsigned nfds;
		size_t len;
		if (rpc(s, &req, refs + done, n * sizeof(*refs), &rep, ent, sizeof(ent), &len,
			fds, SIMXEN_MAX_FDS, &nfds) < 0)
			goto fail;
		int err = 0;
		if (len != n * sizeof(ent[0]))
			err = EPROTO;
		for (uint32_t i = 0; i < n && !err; i++) {
			if (ent[i].fd_index >= nfds) {
				err = EPROTO;
				break;
			}
			void *p = mmap(base + (size_t)(done + i) * SIMXEN_PAGE, SIMXEN_PAGE, prot,
				       MAP_SHARED | MAP_FIXED, fds[ent[i].fd_index],
				       (off_t)ent[i].page * SIMXEN_PAGE);
			if (p == MAP_FAILED)
				err = errno;
		}
		close_fds(fds, nfds);
		done += n;
		if (err) {
			errno = err;
			goto fail;
		}
	}
	rg->addr = base;
	rg->count = count;
	rg->domid = domid;
	pthread_mutex_lock(&s->lock);
	rg->next = s->maps;
	s->maps = rg;
	pthread_mutex_unlock(&s->lock);
	return base;
fail:;
	int e = errno;
	munmap(base, (size_t)count * SIMXEN_PAGE);
	if (done) {		/* the broker counted the chunks that worked */
		struct simxen_req un = { .op = SIMXEN_GNT_UNMAP, .a = { domid, done } };
		struct simxen_rep rep;
		rpc(s, &un, NULL, 0, &rep, NULL, 0, NULL, NULL, 0, NULL);
	}
	free(rg);
	errno = e;
	return NULL;
}

/* Unlink the region at addr/count from a list; NULL (EINVAL) if this handle did not make it. */
static struct region *take_region(struct sim *s, struct region **list, void *addr, uint32_t count)
{
	pthread_mutex_lock(&s->lock);
	for (struct region **p = list; *p; p = &(*p)->next) {
		if ((*p)->addr == addr && (*p)->count == count) {
			struct region *rg = *p;
			*p = rg->next;
			pthread_mutex_unlock(&s->lock);
			return rg;
		}
	}
	pthread_mutex_unlock(&s->lock);
	errno = EINVAL;
	return NULL;
}

static int sim_gnttab_unmap(struct xenif *x, void *addr, uint32_t count)
{
	struct region *rg = take_region(S(x), &S(x)->maps, addr, count);
	if (!rg)
		return -1;
	munmap(rg->addr, (size_t)rg->count * SIMXEN_PAGE);
	/* Tell the broker: a destroyed granter stays dying until nobody maps it. */
	struct simxen_req req = { .op = SIMXEN_GNT_UNMAP, .a = { rg->domid, rg->count } };
	struct simxen_rep rep;
	rpc(S(x), &req, NULL, 0, &rep, NULL, 0, NULL, NULL, 0, NULL);	/* best effort */
	free(rg);
	return 0;
}

static void *sim_gntshr_share(struct xenif *x, xenif_domid_t domid, uint32_t count,
			      xenif_gref_t *refs, bool writable)
{
	struct sim *s = S(x);
	if (count == 0 || count > MAX_SHARE || !refs) {
		errno = EINVAL;
		return NULL;
	}
	struct region *rg = calloc(1, sizeof(*rg));
	xenif_gref_t *copy = calloc(count, sizeof(*copy));
	if (!rg || !copy) {
		free(rg);
		free(copy);
		errno = ENOMEM;
		return NULL;
	}
	struct simxen_req req = { .op = SIMXEN_GNT_SHARE, .a = { domid, count, writable } };
	struct simxen_rep rep;
	int fd = -1;
	unsigned nfds;
	size_t len;
	if (rpc(s, &req, NULL, 0, &rep, copy, count * sizeof(*copy), &len, &fd, 1, &nfds) < 0)
		goto fail;
	if (nfds != 1 || len != count * sizeof(*copy)) {
		if (nfds)
			close(fd);
		errno = EPROTO;
		goto fail;	/* the grants die with the connection or domain */
	}
	void *p = mmap(NULL, (size_t)count * SIMXEN_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		struct simxen_req un = { .op = SIMXEN_GNT_UNSHARE };
		rpc(s, &un, copy, count * sizeof(*copy), &rep, NULL, 0, NULL, NULL, 0, NULL);
		errno = e;
		goto fail;
	}
	memcpy(refs, copy, count * sizeof(*copy));
	rg->addr = p;
	rg->count = count;
	rg->refs = copy;
	pthread_mutex_lock(&s->lock);
	rg->next = s->shares;
	s->shares = rg;
	pthread_mutex_unlock(&s->lock);
	return p;
fail:
	e = errno;
	free(rg);
	free(copy);
	errno = e;
	return NULL;
}

static int sim_gntshr_unshare(struct xenif *x, void *addr, uint32_t count)
{
	struct sim *s = S(x);
	struct region *rg = take_region(s, &s->shares, addr, count);
	if (!rg)
		return -1;
	struct simxen_req req = { .op = SIMXEN_GNT_UNSHARE };
	struct simxen_rep rep;
	int r = rpc(s, &req, rg->refs, rg->count * sizeof(*rg->refs), &rep, NULL, 0, NULL,
		    NULL, 0, NULL);
	int e = errno;
	munmap(rg->addr, (size_t)rg->count * SIMXEN_PAGE);
	free(rg->refs);
	free(rg);
	errno = e;
	return r;
}

/* ---- event channels ---- */

static int sim_evtchn_fd(struct xenif *x)
{
	if (S(x)->evt < 0) {
		errno = EBADF;
		return -1;
	}
	return S(x)->evt;
}

static int port_call(struct xenif *x, uint32_t op, uint32_t a0, uint32_t a1)
{
	uint32_t port;
	if (S(x)->evt < 0) {
		errno = EBADF;
		return -1;
	}
	if (call(S(x), op, 0, a0, a1, &port) < 0)
		return -1;
	return (int)port;
}

static int sim_evtchn_bind_unbound(struct xenif *x, xenif_domid_t remote)
{
	return port_call(x, SIMXEN_EVT_BIND_UNBOUND, remote, 0);
}

static int sim_evtchn_bind_interdomain(struct xenif *x, xenif_domid_t remote, xenif_port_t rport)
{
	return port_call(x, SIMXEN_EVT_BIND_INTERDOMAIN, remote, rport);
}

static int sim_evtchn_notify(struct xenif *x, xenif_port_t port)
{
	return port_call(x, SIMXEN_EVT_NOTIFY, port, 0) < 0 ? -1 : 0;
}

static int sim_evtchn_unmask(struct xenif *x, xenif_port_t port)
{
	return port_call(x, SIMXEN_EVT_UNMASK, port, 0) < 0 ? -1 : 0;
}

static int sim_evtchn_unbind(struct xenif *x, xenif_port_t port)
{
	return port_call(x, SIMXEN_EVT_UNBIND, port, 0) < 0 ? -1 : 0;
}

static int sim_evtchn_pending(struct xenif *x)
{
	struct sim *s = S(x);
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
	if (n == 0) {		/* broker gone: nothing will ever fire again */
		errno = ECONNRESET;
		return -1;
	}
	if (n != sizeof(port) || port > INT32_MAX) {
		errno = EPROTO;
		return -1;
	}
	return (int)port;
}

/* ---- xenstore ---- */

static char *sim_xs_read(struct xenif *x, uint32_t tx, const char *path, size_t *len)
{
	static __thread char out[SIMXEN_MAX_MSG];
	struct simxen_req req = { .op = SIMXEN_XS_READ, .tx = tx };
	struct simxen_rep rep;
	size_t n;
	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	if (rpc(S(x), &req, path, strlen(path) + 1, &rep, out, sizeof(out), &n, NULL, 0, NULL) < 0)
		return NULL;
	char *v = malloc(n + 1);
	if (!v)
		return NULL;
	memcpy(v, out, n);
	v[n] = '\0';		/* libxenstore terminates values too */
	if (len)
		*len = n;
	return v;
}

static int sim_xs_write(struct xenif *x, uint32_t tx, const char *path, const void *val,
			size_t len)
{
	static __thread char pl[SIMXEN_MAX_MSG];
	struct simxen_req req = { .op = SIMXEN_XS_WRITE, .tx = tx };
	struct simxen_rep rep;
	if (!path || (len && !val)) {
		errno = EINVAL;
		return -1;
	}
	size_t pn = strlen(path) + 1;
	if (pn + len > sizeof(pl) - sizeof(req)) {
		errno = E2BIG;
		return -1;
	}
	memcpy(pl, path, pn);
	if (len)
		memcpy(pl + pn, val, len);
	return rpc(S(x), &req, pl, pn + len, &rep, NULL, 0, NULL, NULL, 0, NULL);
}

static int sim_xs_rm(struct xenif *x, uint32_t tx, const char *path)
{
	struct simxen_req req = { .op = SIMXEN_XS_RM, .tx = tx };
	struct simxen_rep rep;
	if (!path) {
		errno = EINVAL;
		return -1;
	}
	return rpc(S(x), &req, path, strlen(path) + 1, &rep, NULL, 0, NULL, NULL, 0, NULL);
}

/* One malloc block holding the pointer array and the names, as xs_directory returns. */
static char **sim_xs_directory(struct xenif *x, uint32_t tx, const char *path, unsigned *num)
{
	static __thread char out[SIMXEN_MAX_MSG];
	struct simxen_req req = { .op = SIMXEN_XS_DIRECTORY, .tx = tx };
	struct simxen_rep rep;
	size_t n;
	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	if (rpc(S(x), &req, path, strlen(path) + 1, &rep, out, sizeof(out), &n, NULL, 0, NULL) < 0)
		return NULL;
	if (n && out[n - 1] != '\0') {
		errno = EPROTO;
		return NULL;
	}
	unsigned cnt = 0;
	for (size_t i = 0; i < n; i++)
		cnt += out[i] == '\0';
	char **v = malloc((cnt + 1) * sizeof(char *) + n);
	if (!v)
		return NULL;
	char *str = (char *)(v + cnt + 1);
	memcpy(str, out, n);
	for (unsigned i = 0; i < cnt; i++) {
		v[i] = str;
		str += strlen(str) + 1;
	}
	v[cnt] = NULL;
	if (num)
		*num = cnt;
	return v;
}

static uint32_t sim_xs_transaction_start(struct xenif *x)
{
	uint32_t tx;
	if (call(S(x), SIMXEN_XS_TX_START, 0, 0, 0, &tx) < 0)
		return 0;
	return tx;
}

static int sim_xs_transaction_end(struct xenif *x, uint32_t tx, bool abort)
{
	return call(S(x), SIMXEN_XS_TX_END, tx, abort, 0, NULL);
}

static int watch_call(struct xenif *x, uint32_t op, const char *path, const char *token)
{
	char pl[SIMXEN_MAX_MSG - sizeof(struct simxen_req)];
	struct simxen_req req = { .op = op };
	struct simxen_rep rep;
	if (!path || !token) {
		errno = EINVAL;
		return -1;
	}
	size_t pn = strlen(path) + 1, tn = strlen(token) + 1;
	if (pn + tn > sizeof(pl)) {
		errno = E2BIG;
		return -1;
	}
	memcpy(pl, path, pn);
	memcpy(pl + pn, token, tn);
	return rpc(S(x), &req, pl, pn + tn, &rep, NULL, 0, NULL, NULL, 0, NULL);
}

static int sim_xs_watch(struct xenif *x, const char *path, const char *token)
{
	if (S(x)->xsw < 0) {
		errno = EBADF;
		return -1;
	}
	return watch_call(x, SIMXEN_XS_WATCH, path, token);
}

static int sim_xs_unwatch(struct xenif *x, const char *path, const char *token)
{
	return watch_call(x, SIMXEN_XS_UNWATCH, path, token);
}

static int sim_xs_fileno(struct xenif *x)
{
	if (S(x)->xsw < 0) {
		errno = EBADF;
		return -1;
	}
	return S(x)->xsw;
}

static int sim_xs_read_watch(struct xenif *x, struct xenif_xs_watch_event *ev)
{
	char buf[SIMXEN_MAX_MSG];
	struct sim *s = S(x);
	if (s->xsw < 0) {
		errno = EBADF;
		return -1;
	}
	ssize_t n;
	do
		n = recv(s->xsw, buf, sizeof(buf), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0) {
		errno = ECONNRESET;
		return -1;
	}
	const char *path = buf;
	const char *end = buf + n;
	const char *z = memchr(path, '\0', (size_t)n);
	if (!z || !memchr(z + 1, '\0', (size_t)(end - z - 1))) {
		errno = EPROTO;
		return -1;
	}
	const char *token = z + 1;
	/* A cut path would name another node: refuse rather than truncate. */
	if (strlen(path) >= sizeof(ev->path) || strlen(token) >= sizeof(ev->token)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(ev->path, path);
	strcpy(ev->token, token);
	return 0;
}

/* The reply is xenstored's text form: "n0", "r5", ... each NUL-terminated. */
static struct xenif_xs_perm *sim_xs_get_perms(struct xenif *x, uint32_t tx, const char *path,
					      unsigned *num)
{
	static __thread char out[SIMXEN_MAX_MSG];
	struct simxen_req req = { .op = SIMXEN_XS_GET_PERMS, .tx = tx };
	struct simxen_rep rep;
	size_t n, k = 0;
	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	if (rpc(S(x), &req, path, strlen(path) + 1, &rep, out, sizeof(out), &n, NULL, 0, NULL) < 0)
		return NULL;
	struct xenif_xs_perm *p = calloc(n / 2 + 1, sizeof(*p));
	if (!p)
		return NULL;
	for (size_t i = 0; i < n;) {
		const char *e = memchr(out + i, '\0', n - i);
		char *end;
		if (!e || e == out + i)
			break;
		unsigned long d = strtoul(out + i + 1, &end, 10);
		p[k].domid = (xenif_domid_t)d;
		p[k].perms = out[i] == 'r' ? XENIF_XS_PERM_READ : out[i] == 'w' ? XENIF_XS_PERM_WRITE :
			     out[i] == 'b' ? XENIF_XS_PERM_READ | XENIF_XS_PERM_WRITE : 0;
		k++;
		i = (size_t)(e - out) + 1;
	}
	*num = (unsigned)k;
	return p;
}

static int sim_xs_get_domid(struct xenif *x, xenif_domid_t *domid)
{
	*domid = S(x)->domid;
	return 0;
}

/* ---- domain list ---- */

static int sim_ctrl_domain_list(struct xenif *x, xenif_domid_t first, struct xenif_dominfo *info,
				unsigned max)
{
	static __thread struct simxen_dominfo d[(SIMXEN_MAX_MSG - sizeof(struct simxen_rep)) /
						sizeof(struct simxen_dominfo)];
	unsigned got = 0;
	while (got < max) {
		unsigned want = max - got;
		if (want > sizeof(d) / sizeof(d[0]))
			want = sizeof(d) / sizeof(d[0]);
		struct simxen_req req = { .op = SIMXEN_CTRL_LIST, .a = { first, want } };
		struct simxen_rep rep;
		size_t n;
		if (rpc(S(x), &req, NULL, 0, &rep, d, sizeof(d), &n, NULL, 0, NULL) < 0)
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

static void sim_close(struct xenif *x)
{
	struct sim *s = S(x);
	/* Mappings stay valid after close, as with gntdev; only the bookkeeping goes. */
	for (struct region *r = s->maps, *n; r; r = n) {
		n = r->next;
		free(r);
	}
	for (struct region *r = s->shares, *n; r; r = n) {
		n = r->next;
		free(r->refs);
		free(r);
	}
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
	.gnttab_map = sim_gnttab_map,
	.gnttab_unmap = sim_gnttab_unmap,
	.gntshr_share = sim_gntshr_share,
	.gntshr_unshare = sim_gntshr_unshare,
	.evtchn_fd = sim_evtchn_fd,
	.evtchn_bind_unbound = sim_evtchn_bind_unbound,
	.evtchn_bind_interdomain = sim_evtchn_bind_interdomain,
	.evtchn_notify = sim_evtchn_notify,
	.evtchn_pending = sim_evtchn_pending,
	.evtchn_unmask = sim_evtchn_unmask,
	.evtchn_unbind = sim_evtchn_unbind,
	.xs_read = sim_xs_read,
	.xs_write = sim_xs_write,
	.xs_rm = sim_xs_rm,
	.xs_directory = sim_xs_directory,
	.xs_transaction_start = sim_xs_transaction_start,
	.xs_transaction_end = sim_xs_transaction_end,
	.xs_watch = sim_xs_watch,
	.xs_unwatch = sim_xs_unwatch,
	.xs_fileno = sim_xs_fileno,
	.xs_read_watch = sim_xs_read_watch,
	.xs_get_domid = sim_xs_get_domid,
	.xs_get_perms = sim_xs_get_perms,
	.ctrl_domain_list = sim_ctrl_domain_list,
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
		int r = rpc_fd((int)id, &req, NULL, 0, &rep, NULL, 0, NULL, &fd, 1, &n, false);
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
	if (rpc(s, &req, NULL, 0, &rep, NULL, 0, NULL, &fd, 1, &n) < 0)
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
	pthread_mutex_init(&s->lock, NULL);
	s->ctl = connect_ctl(sim_dir, err, errlen);
	if (s->ctl < 0)
		goto fail;
	uint32_t domid;
	if (call(s, SIMXEN_HELLO, 0, 0, 0, &domid) < 0) {
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
	if ((parts & XENIF_CTRL) && domid != 0) {
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
