/*
 * broker.c - the simulated Xen broker: its socket, the identity of callers, request dispatch.
 *
 * Every request is answered at once from in-memory state, so a connection never has
 * more than one reply in flight; a client that does not read its replies (the send
 * would block) is misbehaving and is dropped rather than buffered for.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker.h"

/* Aligned: replies are built in place as uint32_t refs and struct arrays. */
static _Alignas(16) char outbuf[SIMXEN_MAX_MSG];

/* Returns false if the connection must be dropped. */
static bool dispatch(struct conn *c, const char *msg, size_t n)
{
	struct broker *b = c->b;
	struct simxen_req req;
	struct simxen_rep rep = { 0 };
	size_t outlen = 0;
	int fds[SIMXEN_MAX_FDS];
	unsigned nfds = 0;
	int own_fd = -1; /* an fd we created for the client and close after sending */
	const size_t outmax = sizeof(outbuf) - sizeof(rep);

	if (n < sizeof(req)) {
		blog("domain %u: short request (%zu bytes); connection dropped", c->domid, n);
		conn_reply_err(c, EPROTO, 0);
		return false;
	}
	memcpy(&req, msg, sizeof(req));
	rep.seq = req.seq;
	const char *pl = msg + sizeof(req);
	size_t plen = n - sizeof(req);

	/* A notification has no reply (simxen-proto.h): what it would have said is counted
	 * (the client checked its own ports first, so only a misbehaving one gets here). */
	if (req.op == SIMXEN_EVT_NOTIFY && !c->ident) {
		struct domain *d = conn_domain(c);
		if (!d)
			return true; /* being released */
		d->nreq++;
		d->nnotify++;
		if (!c->evt || evt_notify(b, c, c->evt, req.a[0]))
			d->nnotify_refused++;
		return true;
	}
	if (c->ident && req.op != SIMXEN_NEWCONN) {
		blog("domain %u: op %u on identity socket; dropped", c->domid, req.op);
		conn_reply_err(c, EPROTO, req.seq);
		return false;
	}
	if (req.op >= SIMXEN_TS_CREATE && req.op < SIMXEN_OP_MAX && c->domid != 0) {
		rep.err = EPERM;
		goto out;
	}
	struct domain *d = conn_domain(c);
	if (!d) { /* being released: nothing more for it */
		rep.err = ESRCH;
		goto out;
	}
	d->nreq++;
	switch (req.op) {
	case SIMXEN_HELLO:
		rep.a[0] = c->domid;
		break;
	case SIMXEN_NEWCONN:
		if (!c->ident) {
			rep.err = EINVAL;
			break;
		}
		rep.err = conn_pair(b, c->domid, false, &own_fd);
		break;
	case SIMXEN_GNT_SHARE:
		if (plen || req.a[1] == 0 || req.a[1] > outmax / sizeof(uint32_t)) {
			rep.err = EINVAL;
			break;
		}
		rep.err =
		    gnt_share(b, c, req.a[0], req.a[1], req.a[2] != 0, (uint32_t *)outbuf, &own_fd);
		if (!rep.err)
			outlen = req.a[1] * sizeof(uint32_t);
		break;
	case SIMXEN_GNT_UNSHARE:
		if (plen % sizeof(uint32_t) || plen == 0) {
			rep.err = EINVAL;
			break;
		}
		{
			uint32_t refs[SIMXEN_MAX_MSG / sizeof(uint32_t)];
			memcpy(refs, pl, plen);
			rep.err = gnt_unshare(b, c, refs, (uint32_t)(plen / sizeof(uint32_t)));
		}
		break;
	case SIMXEN_GNT_MAP:
		if (req.a[1] == 0 || req.a[1] > SIMXEN_MAP_CHUNK ||
		    plen != req.a[1] * sizeof(uint32_t)) {
			rep.err = EINVAL;
			break;
		}
		{
			uint32_t refs[SIMXEN_MAP_CHUNK];
			struct simxen_map_ent ent[SIMXEN_MAP_CHUNK];
			memcpy(refs, pl, plen);
			rep.err =
			    gnt_map(b, c, req.a[0], req.a[1], (int)req.a[2], refs, ent, fds, &nfds);
			if (!rep.err) {
				outlen = req.a[1] * sizeof(ent[0]);
				memcpy(outbuf, ent, outlen);
			}
		}
		break;
	case SIMXEN_GNT_UNMAP:
		rep.err = gnt_unmap(b, c, req.a[0], req.a[1]);
		break;
	case SIMXEN_EVT_OPEN:
		if (c->evt) {
			rep.err = EBUSY;
			break;
		}
		c->evt = evt_open(b, c, &own_fd);
		if (!c->evt)
			rep.err = errno;
		break;
	case SIMXEN_EVT_BIND_UNBOUND:
	case SIMXEN_EVT_BIND_INTERDOMAIN:
	case SIMXEN_EVT_UNMASK:
	case SIMXEN_EVT_UNBIND:
		if (!c->evt) {
			rep.err = EBADF;
			break;
		}
		if (req.op == SIMXEN_EVT_BIND_UNBOUND)
			rep.err = evt_bind_unbound(b, c, c->evt, req.a[0], &rep.a[0]);
		else if (req.op == SIMXEN_EVT_BIND_INTERDOMAIN)
			rep.err = evt_bind_interdomain(b, c, c->evt, req.a[0], req.a[1], &rep.a[0]);
		else if (req.op == SIMXEN_EVT_UNMASK)
			rep.err = evt_unmask(b, c, c->evt, req.a[0]);
		else
			rep.err = evt_unbind(b, c, c->evt, req.a[0]);
		break;
	case SIMXEN_XS_OPEN:
		if (c->xs) {
			rep.err = EBUSY;
			break;
		}
		c->xs = xs_conn_open(b, c, &own_fd);
		if (!c->xs)
			rep.err = errno;
		break;
	case SIMXEN_XS_READ:
	case SIMXEN_XS_WRITE:
	case SIMXEN_XS_RM:
	case SIMXEN_XS_DIRECTORY:
	case SIMXEN_XS_TX_START:
	case SIMXEN_XS_TX_END:
	case SIMXEN_XS_WATCH:
	case SIMXEN_XS_UNWATCH:
	case SIMXEN_XS_GET_PERMS:
		rep.err = xs_op(b, c, c->xs, req.op, req.tx, req.a[0], pl, plen, outbuf, outmax,
		    &outlen, &rep.a[0]);
		break;
	case SIMXEN_CTRL_LIST:
		if (c->domid != 0) {
			rep.err = EPERM;
			break;
		}
		{
			unsigned max = req.a[1];
			if (max > outmax / sizeof(struct simxen_dominfo))
				max = outmax / sizeof(struct simxen_dominfo);
			outlen = dom_list_info(b, req.a[0], max, (struct simxen_dominfo *)outbuf) *
			    sizeof(struct simxen_dominfo);
		}
		break;
	case SIMXEN_TS_CREATE:
		rep.err = dom_ts_create(b, c, &req, pl, plen, &rep.a[0]);
		break;
	case SIMXEN_TS_DESTROY:
		rep.err = dom_destroy(b, req.a[0]);
		break;
	case SIMXEN_TS_CRASH:
		rep.err = dom_crash(b, req.a[0]);
		break;
	case SIMXEN_TS_PAUSE:
	case SIMXEN_TS_UNPAUSE:
		rep.err = dom_pause(b, req.a[0], req.op == SIMXEN_TS_PAUSE);
		break;
	case SIMXEN_EVT_STATUS:
		rep.err = evt_status(b, req.a[0], req.a[1], rep.a);
		break;
	case SIMXEN_TS_LIST:
		outlen = dom_list_text(b, outbuf, outmax);
		break;
	case SIMXEN_CTRL_PID: {
		/* the simulated hypervisor's scheduling is its domains' processes' (xenif) */
		struct domain *g = dom_get(b, req.a[0]);
		if (!g || g->pid <= 0 || g->state != DOM_RUNNING)
			rep.err = ESRCH;
		else
			rep.a[0] = (uint32_t)g->pid;
		break;
	}
	case SIMXEN_TS_STOP:
		b->stopping = true;
		event_base_loopexit(b->base, NULL);
		break;
	default:
		blog("domain %u: unknown request %u; connection dropped", c->domid, req.op);
		conn_reply_err(c, EPROTO, req.seq);
		return false;
	}
out:
	if (rep.err)
		outlen = 0, nfds = 0;
	else if (own_fd >= 0)
		fds[nfds++] = own_fd;
	bool ok = conn_send(c, &rep, outbuf, outlen, fds, nfds);
	if (own_fd >= 0)
		close(own_fd);
	return ok;
}

/* Is pid (or one of its ancestors) a guest?  Then it may not pose as dom0. */
static uint32_t guest_of_pid(struct broker *b, pid_t pid)
{
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		for (unsigned i = 1; i < b->ndoms; i++)
			if (b->doms[i] && b->doms[i]->pid == pid)
				return b->doms[i]->domid;
		char path[64], st[512];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		ssize_t n = read(fd, st, sizeof(st) - 1);
		close(fd);
		if (n <= 0)
			return 0;
		st[n] = '\0';
		char *p = strrchr(st, ')'); /* comm may contain anything */
		int ppid;
		if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
			return 0;
		pid = ppid;
	}
	return 0;
}

static void listen_cb(evutil_socket_t fd, short what, void *arg)
{
	struct broker *b = arg;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0)
		return;
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	uint32_t g = 0;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0)
		g = guest_of_pid(b, cr.pid);
	if (g) {
		blog("domain %u tried to connect as dom0; refused", g);
		struct simxen_rep rep = { .err = EPERM };
		send(cfd, &rep, sizeof(rep), MSG_DONTWAIT | MSG_NOSIGNAL);
		close(cfd);
		return;
	}
	if (!conn_new(b, cfd, 0, false)) {
		struct simxen_rep rep = { .err = EMFILE };
		send(cfd, &rep, sizeof(rep), MSG_DONTWAIT | MSG_NOSIGNAL);
		close(cfd);
	}
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct broker *b = arg;
	if (sig == SIGCHLD) {
		dom_reap(b);
		return;
	}
	b->stopping = true;
	event_base_loopexit(b->base, NULL);
}

/*
 * A broker whose state directory was removed (a test that cleaned up, or was killed
 * after removing it) can no longer be reached by anyone: stop it and its guests rather
 * than leave them running.  The socket's inode tells us the path is still ours.
 */
static void orphan_cb(evutil_socket_t fd, short what, void *arg)
{
	struct broker *b = arg;
	struct stat st;

	if (stat(b->sock_path, &st) == 0 && st.st_ino == b->sock_ino)
		return;
	blog("%s is gone: stopping", b->sock_path);
	b->stopping = true;
	event_base_loopexit(b->base, NULL);
}

/* The broker holds a descriptor per shared page set: let it have as many as allowed. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int broker_run(const char *dir, int ready_fd)
{
	static struct broker B;
	struct broker *b = &B;
	int rc = 1;

	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	b->dir = strdup(dir);
	b->next_domid = 1;
	b->dispatch = dispatch;
	b->collect = dom_collect;
	if ((size_t)snprintf(b->sock_path, sizeof(b->sock_path), "%s/%s", dir, SIMXEN_SOCK) >=
	    sizeof(b->sock_path)) {
		blog("state directory path too long for a socket: %s", dir);
		return 1;
	}
	/* One broker per directory, even if two are started at the same instant. */
	char lockpath[4200];
	snprintf(lockpath, sizeof(lockpath), "%s/lock", dir);
	int lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		blog("another broker runs in %s", dir);
		return 1;
	}
	if (xs_init() || !(b->base = event_base_new()) || dom0_init(b)) {
		blog("cannot initialise: %s", strerror(errno));
		return 1;
	}
	unlink(b->sock_path); /* the CLI checked that no live broker owns it */
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, b->sock_path);
	b->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (b->listen_fd < 0 || bind(b->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(b->listen_fd, 128) < 0) {
		blog("cannot listen on %s: %s", b->sock_path, strerror(errno));
		return 1;
	}
	struct stat sst;
	if (stat(b->sock_path, &sst) == 0)
		b->sock_ino = sst.st_ino;
	char pidpath[4200];
	snprintf(pidpath, sizeof(pidpath), "%s/%s", dir, SIMXEN_PIDFILE);
	FILE *pf = fopen(pidpath, "w");
	if (pf) {
		fprintf(pf, "%d\n", (int)getpid());
		fclose(pf);
	}
	b->listen_ev = event_new(b->base, b->listen_fd, EV_READ | EV_PERSIST, listen_cb, b);
	b->sigchld_ev = evsignal_new(b->base, SIGCHLD, signal_cb, b);
	b->sigterm_ev = evsignal_new(b->base, SIGTERM, signal_cb, b);
	b->sigint_ev = evsignal_new(b->base, SIGINT, signal_cb, b);
	event_add(b->listen_ev, NULL);
	event_add(b->sigchld_ev, NULL);
	event_add(b->sigterm_ev, NULL);
	event_add(b->sigint_ev, NULL);
	struct timeval orphan_tv = { .tv_sec = 1 };
	b->orphan_ev = event_new(b->base, -1, EV_PERSIST, orphan_cb, b);
	event_add(b->orphan_ev, &orphan_tv);
	if (ready_fd >= 0) {
		if (write(ready_fd, "R", 1) != 1)
			blog("cannot tell the starter we are ready");
		close(ready_fd);
	}
	blog("simulated Xen host ready in %s (pid %d)", dir, (int)getpid());
	event_base_dispatch(b->base);
	rc = 0;

	dom_kill_all(b);
	unlink(b->sock_path);
	unlink(pidpath);
	while (b->conns)
		conn_close(b->conns);
	blog("stopped");
	return rc;
}
