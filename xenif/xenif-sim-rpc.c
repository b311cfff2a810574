/*
 * xenif-sim-rpc.c - the simulated backend's transport: one request, one reply on a
 * control connection to the broker, with the descriptors the reply carries.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "xenif-sim-int.h"

#define RPC_TIMEOUT_MS 20000 /* the broker answers at once; this only catches a wedged one */

void xenif_sim_close_fds(int *fds, unsigned n)
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
int xenif_sim_rpc_fd(int fd, const struct simxen_req *req0, const void *pl, size_t pllen,
    struct simxen_rep *rep, void *out, size_t outmax, size_t *outlen, int *fds, unsigned maxfds,
    unsigned *nfds, bool match_seq)
{
	static __thread char buf[SIMXEN_MAX_MSG];
	static uint32_t seq_counter;
	struct simxen_req req = *req0;
	struct iovec iov[2] = { { &req, sizeof(req) }, { (void *)pl, pllen } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = pllen ? 2 : 1 };
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(sizeof(int) * SIMXEN_MAX_FDS)];
	} cm;
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
		mh = (struct msghdr){ .msg_iov = iov,
			.msg_iovlen = 1,
			.msg_control = cm.b,
			.msg_controllen = sizeof(cm.b) };
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
			xenif_sim_close_fds(got, ngot);
			errno = EPROTO;
			return -1;
		}
		memcpy(rep, buf, sizeof(*rep));
		if (!match_seq || rep->seq == req.seq || rep->seq == 0)
			break;
		xenif_sim_close_fds(got, ngot); /* a late answer to a request that gave up */
	}
	if (rep->err) {
		xenif_sim_close_fds(got, ngot);
		errno = rep->err > 0 && rep->err < 4096 ? rep->err : EPROTO;
		return -1;
	}
	size_t len = (size_t)n - sizeof(*rep);
	if (len > outmax) {
		xenif_sim_close_fds(got, ngot);
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

int xenif_sim_rpc(struct sim *s, const struct simxen_req *req, const void *pl, size_t pllen,
    struct simxen_rep *rep, void *out, size_t outmax, size_t *outlen, int *fds, unsigned maxfds,
    unsigned *nfds)
{
	pthread_mutex_lock(&s->lock);
	int r = xenif_sim_rpc_fd(
	    s->ctl, req, pl, pllen, rep, out, outmax, outlen, fds, maxfds, nfds, true);
	int e = errno;
	pthread_mutex_unlock(&s->lock);
	errno = e;
	return r;
}

/* A simple call: args in, a[0] out. */
int xenif_sim_call(struct sim *s, uint32_t op, uint32_t tx, uint32_t a0, uint32_t a1, uint32_t *res)
{
	struct simxen_req req = { .op = op, .tx = tx, .a = { a0, a1 } };
	struct simxen_rep rep;
	if (xenif_sim_rpc(s, &req, NULL, 0, &rep, NULL, 0, NULL, NULL, 0, NULL) < 0)
		return -1;
	if (res)
		*res = rep.a[0];
	return 0;
}
