/*
 * simxen-proto.h - wire protocol between the simulated Xen broker (mtrace-simxen)
 * and its clients (xenif-sim.c, the CLI).  It lives in xenif/, below sim/: the
 * broker and the CLI include it through xenif, xenif includes nothing of sim/.
 *
 * Transport: AF_UNIX SOCK_SEQPACKET, so every request and reply is one datagram and
 * file descriptors travel with SCM_RIGHTS.  A client is dom0 when it connected to
 * DIR/sock; a guest's connections are socket pairs the broker made itself (the guest
 * inherits one at exec, fd $MTRACE_SIM_FD, and asks it for more), so a domid can
 * never be claimed, only be given.
 *
 * Control connection: strictly request -> reply, one at a time, but for SIMXEN_EVT_NOTIFY,
 * which has no reply: Linux's evtchn driver checks that the port is bound on its handle
 * (ENOTCONN) and then makes a hypercall that returns without waiting for the receiving
 * domain, so the client checks its own ports and does not wait for the broker either.
 * Event-channel connection (SIMXEN_EVT_OPEN): broker -> client only, one uint32_t port
 * per datagram.  Watch connection (SIMXEN_XS_OPEN): broker -> client only,
 * "path\0token\0" per datagram.
 */
#ifndef MTRACE_SIMXEN_PROTO_H
#define MTRACE_SIMXEN_PROTO_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define SIMXEN_SOCK    "sock" /* under the state directory */
#define SIMXEN_PIDFILE "pid"
#define SIMXEN_ENV_DIR "MTRACE_SIM_DIR"
#define SIMXEN_ENV_FD  "MTRACE_SIM_FD" /* a guest's identity socket */

#define SIMXEN_MAX_MSG   16384 /* whole datagram, either direction */
#define SIMXEN_MAX_FDS   64    /* fds in one reply */
#define SIMXEN_REQ_FDS   2     /* fds with one request: SIMXEN_TS_CREATE's stdout, stderr */
#define SIMXEN_MAP_CHUNK 64    /* refs per SIMXEN_GNT_MAP request */
#define SIMXEN_PAGE      4096u
#define SIMXEN_MAX_DOMID 0x7FEF /* DOMID_FIRST_RESERVED - 1 */
#define SIMXEN_EVT_PORTS 1024   /* ports per domain; port 0 is never valid */

/* A domain's name, as the broker accepts it (xenstore paths and `list` lines carry it);
 * the CLI checks it first so that it can say the rule instead of EINVAL. */
#define SIMXEN_NAME_MAX  63
#define SIMXEN_NAME_RULE "1..63 printable ASCII characters, no space and no '/'"
static inline bool simxen_name_ok(const char *n)
{
	size_t l = strlen(n);
	if (l == 0 || l > SIMXEN_NAME_MAX)
		return false;
	for (; *n; n++)
		if (*n <= ' ' || *n > '~' || *n == '/')
			return false;
	return true;
}

enum simxen_op {
	SIMXEN_HELLO = 1, /* -> a[0] = own domid */
	SIMXEN_NEWCONN,   /* identity socket only: -> fd of a new control conn */

	SIMXEN_GNT_SHARE,   /* a0 domid, a1 count, a2 writable -> fd, payload refs */
	SIMXEN_GNT_UNSHARE, /* payload refs */
	SIMXEN_GNT_MAP,     /* a0 domid, a1 count, a2 prot; payload refs
					 * -> fds, payload struct simxen_map_ent[count] */
	SIMXEN_GNT_UNMAP,   /* a0 granting domid, a1 pages no longer mapped */

	SIMXEN_EVT_OPEN,             /* -> fd of the delivery socket */
	SIMXEN_EVT_BIND_UNBOUND,     /* a0 remote -> a0 port */
	SIMXEN_EVT_BIND_INTERDOMAIN, /* a0 remote, a1 remote port -> a0 port */
	SIMXEN_EVT_NOTIFY,           /* a0 port; no reply (the client's own ports only) */
	SIMXEN_EVT_UNMASK,           /* a0 port */
	SIMXEN_EVT_UNBIND,           /* a0 port */

	SIMXEN_XS_OPEN,      /* -> fd of the watch socket */
	SIMXEN_XS_READ,      /* tx; payload path\0 -> payload value */
	SIMXEN_XS_WRITE,     /* tx; payload path\0value (value length = rest) */
	SIMXEN_XS_RM,        /* tx; payload path\0 */
	SIMXEN_XS_DIRECTORY, /* tx; payload path\0 -> payload name\0name\0... */
	SIMXEN_XS_TX_START,  /* -> a0 tx id */
	SIMXEN_XS_TX_END,    /* tx; a0 abort */
	SIMXEN_XS_WATCH,     /* payload path\0token\0 */
	SIMXEN_XS_UNWATCH,   /* payload path\0token\0 */
	SIMXEN_XS_GET_PERMS, /* tx; payload path\0 -> payload "n0\0r5\0" as xenstored */

	SIMXEN_CTRL_LIST, /* a0 first, a1 max -> payload struct simxen_dominfo[] */

	/* Toolstack (dom0 only). */
	SIMXEN_TS_CREATE,  /* a0 domid (0 = any), a1 flags, a2 argc;
					 * payload name\0cwd\0argv[0]\0..., with two
					 * descriptors: the domain's stdout and stderr
					 * -> a0 domid */
	SIMXEN_TS_DESTROY, /* a0 domid */
	SIMXEN_TS_CRASH,   /* a0 domid */
	SIMXEN_TS_LIST,    /* -> payload text, one line per domain */
	SIMXEN_TS_STOP,
	SIMXEN_TS_PAUSE,   /* a0 domid */
	SIMXEN_TS_UNPAUSE, /* a0 domid */

	SIMXEN_EVT_STATUS, /* dom0: a0 domid, a1 port -> a0 SIMXEN_EVT_STAT_*, a1 remote domid,
	                    * a2 remote port (EVTCHNOP_status) */
	SIMXEN_CTRL_PID,   /* a0 domid -> a0 the pid of its process (ESRCH: none) */
	SIMXEN_OP_MAX
};

/* SIMXEN_TS_CREATE flags: what to do when the guest shuts down, as xl's on_poweroff/on_crash. */
#define SIMXEN_CREATE_PRESERVE_CRASH    0x1
#define SIMXEN_CREATE_PRESERVE_POWEROFF 0x2

struct simxen_req {
	uint32_t op;
	uint32_t tx;
	uint32_t a[4];
	uint32_t seq; /* echoed in the reply */
	              /* payload follows */
};

struct simxen_rep {
	int32_t err; /* 0 or a positive errno */
	uint32_t a[4];
	uint32_t seq; /* the request's; 0 for a request too short to have one */
	              /* payload follows */
};

struct simxen_map_ent {
	uint32_t fd_index; /* index into the fds of this reply */
	uint32_t page;     /* page offset in that file */
};

struct simxen_dominfo {
	uint32_t domid;
	uint32_t flags; /* SIMXEN_DOM_* */
};
#define SIMXEN_EVT_STAT_CLOSED  0
#define SIMXEN_EVT_STAT_UNBOUND 1
#define SIMXEN_EVT_STAT_INTER   2

#define SIMXEN_DOM_DYING    0x1
#define SIMXEN_DOM_SHUTDOWN 0x2
#define SIMXEN_DOM_CRASHED  0x4
#define SIMXEN_DOM_PAUSED   0x8
#define SIMXEN_DOM_RELEASED 0x10 /* dying, kept only by foreign mappings */

#endif
