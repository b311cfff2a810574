/*
 * conn.c - the broker's control connections: a SOCK_SEQPACKET each, its reads bounded
 * per wake-up, its replies (with descriptors) sent at once or the connection dropped.
 * What a request means is broker.c's (b->dispatch); after each request the broker's
 * b->collect finishes what the request left (a released domain's last unmapping).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker.h"

static void conn_cb(evutil_socket_t fd, short what, void *arg);

void conn_close(struct conn *c)
{
	struct broker *b = c->b;
	if (c->evt)
		evt_close(b, c, c->evt);
	if (c->xs)
		xs_conn_close(b, c->xs);
	gnt_conn_gone(b, c);
	struct domain *d = conn_domain(c);
	if (d)
		d->nconns--;
	b->nconns--;
	event_free(c->ev);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		b->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

struct conn *conn_new(struct broker *b, int fd, uint32_t domid, bool ident)
{
	struct domain *d = dom_get(b, domid);
	/* Descriptors are the broker's scarcest resource: a guest opening connections in
	 * a loop gets EMFILE, not the broker's last fd. */
	if (b->nconns >= MAX_CONNS || (domid && (!d || d->nconns >= MAX_GUEST_CONNS))) {
		errno = EMFILE;
		return NULL;
	}
	struct conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->b = b;
	c->fd = fd;
	c->domid = domid;
	c->ident = ident;
	c->ev = event_new(b->base, fd, EV_READ | EV_PERSIST, conn_cb, c);
	if (!c->ev) {
		free(c);
		return NULL;
	}
	event_add(c->ev, NULL);
	if (d)
		d->nconns++;
	b->nconns++;
	c->next = b->conns;
	if (b->conns)
		b->conns->prev = c;
	b->conns = c;
	return c;
}

/* A fresh socket pair whose broker end becomes a connection of domid. */
int conn_pair(struct broker *b, uint32_t domid, bool ident, int *client_fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		return errno;
	if (!conn_new(b, sv[0], domid, ident)) {
		int e = errno == EMFILE ? EMFILE : ENOMEM;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	/* The client end blocks: the client library waits for replies with poll. */
	fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) & ~O_NONBLOCK);
	*client_fd = sv[1];
	return 0;
}

/* Returns false if the connection must be dropped. */
bool conn_send(struct conn *c, const struct simxen_rep *rep, const void *pl, size_t len,
    const int *fds, unsigned nfds)
{
	struct iovec iov[2] = { { (void *)rep, sizeof(*rep) }, { (void *)pl, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(sizeof(int) * SIMXEN_MAX_FDS)];
	} cm;
	if (nfds) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(h), fds, sizeof(int) * nfds);
	}
	ssize_t n;
	do
		n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN)
			blog("domain %u: client does not read its replies; dropped", c->domid);
		return false;
	}
	return true;
}

bool conn_reply_err(struct conn *c, int err, uint32_t seq)
{
	struct simxen_rep rep = { .err = err, .seq = seq };
	return conn_send(c, &rep, NULL, 0, NULL, 0);
}

/* Every connection of a domain being released (its process is gone). */
void conn_close_domain(struct broker *b, uint32_t domid)
{
	for (struct conn *c = b->conns; c;) {
		if (c->domid == domid) {
			conn_close(c);
			c = b->conns; /* the list changed under us */
		} else {
			c = c->next;
		}
	}
}

/* A request's descriptors (only SIMXEN_TS_CREATE uses any) are the connection's until
 * the request is answered. */
static void take_fds(struct conn *c, struct msghdr *mh)
{
	c->rx_nfds = 0;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(mh); h; h = CMSG_NXTHDR(mh, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t j = 0; j < k; j++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + j * sizeof(int), sizeof(int));
			if (c->rx_nfds < SIMXEN_REQ_FDS)
				c->rx_fds[c->rx_nfds++] = fd;
			else
				close(fd);
		}
	}
}

static void drop_fds(struct conn *c)
{
	for (unsigned i = 0; i < c->rx_nfds; i++)
		close(c->rx_fds[i]);
	c->rx_nfds = 0;
}

static void conn_cb(evutil_socket_t fd, short what, void *arg)
{
	static char buf[SIMXEN_MAX_MSG + 1];
	struct conn *c = arg;
	struct broker *b = c->b;
	/* Bounded per wake-up so that one chatty client cannot monopolise the loop. */
	for (int i = 0; i < 32; i++) {
		struct iovec iov = { buf, sizeof(buf) };
		union {
			struct cmsghdr c;
			char b[CMSG_SPACE(sizeof(int) * SIMXEN_REQ_FDS)];
		} cm;
		struct msghdr mh = { .msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = cm.b,
			.msg_controllen = sizeof(cm.b) };
		/* Descriptors beyond SIMXEN_REQ_FDS are discarded by the kernel (MSG_CTRUNC). */
		ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n >= 0)
			take_fds(c, &mh);
		if (n <= 0) {
			drop_fds(c);
			conn_close(c);
			b->collect(b);
			return;
		}
		bool ok;
		if ((size_t)n > SIMXEN_MAX_MSG || (mh.msg_flags & MSG_TRUNC)) {
			blog("domain %u: oversized request; connection dropped", c->domid);
			conn_reply_err(c, EMSGSIZE, 0);
			ok = false;
		} else {
			ok = b->dispatch(c, buf, (size_t)n);
		}
		drop_fds(c);
		if (!ok) {
			conn_close(c);
			b->collect(b);
			return;
		}
		b->collect(b);
		if (b->stopping)
			return;
	}
}
