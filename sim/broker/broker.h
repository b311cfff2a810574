/*
 * broker.h - internals of the simulated Xen broker (mtrace-simxen start).
 *
 * One process, one libevent loop, all state in memory: domains (domain.c), grant
 * tables (gnt.c), event channels (evtchn.c), xenstore (xs*.c, xs-int.h), client
 * connections and the request dispatcher (broker.c), the log line and push sockets
 * (io.c).  Every limit below exists so that a hostile or buggy client gets an error
 * instead of the broker's memory.
 */
#ifndef MTRACE_SIM_BROKER_H
#define MTRACE_SIM_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "simxen-broker.h"
#include "simxen-proto.h"

#define MAX_DOMID        SIMXEN_MAX_DOMID
#define MAX_DOMAINS      1024
#define MAX_GUEST_CONNS  64    /* control connections per guest domain */
#define MAX_CONNS        4096  /* all connections, dom0's included */
#define GNT_FIRST_REF    8     /* Xen reserves the first grant entries */
#define GNT_MAX_REFS     16384 /* v1 table of 32 frames */
#define EVT_MAX_PORTS    SIMXEN_EVT_PORTS
#define EVT_QUEUE_CAP    (2 * EVT_MAX_PORTS)
#define XS_VALUE_MAX     4096 /* XENSTORE_PAYLOAD_MAX */
#define XS_ABS_PATH_MAX  3072
#define XS_REL_PATH_MAX  2048
#define XS_GUEST_NODES   1000 /* xenstored's default quota-nb-entry-per-domain */
#define XS_GUEST_WATCHES 128
#define XS_GUEST_TX      10
#define XS_DOM0_WATCHES  4096
#define XS_DOM0_TX       64
#define XS_TOTAL_NODES   200000
#define XS_TX_MAX_OPS    2048
#define XS_WATCHQ_GUEST  256 /* undelivered watch events per connection */
#define XS_WATCHQ_DOM0   8192

struct conn;
struct xs_node;
struct grant;
struct evt_port;

enum dom_state {
	DOM_RUNNING,
	DOM_SHUTDOWN,
	DOM_DYING
};

struct domain {
	uint32_t domid;
	char name[SIMXEN_NAME_MAX + 1];
	pid_t pid; /* process group of the guest; 0 for dom0 */
	enum dom_state state;
	bool crashed, paused, destroy_requested, crash_requested;
	uint32_t flags;    /* SIMXEN_CREATE_* */
	struct grant **gt; /* grant table, indexed by ref */
	uint32_t gt_cap, gt_next, ngrants;
	struct evt_port *ports; /* indexed by port */
	uint32_t nports;
	unsigned long foreign_maps; /* its pages mapped by others right now */
	bool released;              /* dying; goes when foreign_maps drops to 0 */
	unsigned xs_nodes;          /* quota accounting */
	unsigned nconns;
	/* requests served, notifications among them and those refused (no reply says so):
	 * for the release log line */
	unsigned long nreq, nnotify, nnotify_refused;
};

struct broker {
	struct event_base *base;
	char *dir;
	char sock_path[108];
	int listen_fd;
	struct event *listen_ev, *sigchld_ev, *sigterm_ev, *sigint_ev, *orphan_ev;
	ino_t sock_ino; /* our socket; another inode there means we are orphaned */
	struct domain *doms[MAX_DOMAINS]; /* compact, for iteration; doms[0] is dom0 */
	unsigned ndoms;
	struct domain *by_id[MAX_DOMID + 1];
	uint32_t next_domid;
	struct conn *conns; /* all control connections */
	unsigned nconns;
	bool stopping;
	/* A request's meaning and what follows it (broker.c sets them): conn.c reads and
	 * replies but does not know the requests. */
	bool (*dispatch)(struct conn *c, const char *msg, size_t n); /* false: drop c */
	bool (*collect)(struct broker *b);
	bool collect_due; /* a released domain's last mapping went: collect scans */
};

struct gnt_maps;

struct conn { /* a control connection (conn.c) */
	struct conn *next, *prev;
	struct broker *b;
	int fd;
	struct event *ev;
	uint32_t domid;
	bool ident; /* a guest's identity socket: only SIMXEN_NEWCONN */
	struct evt_handle *evt;
	struct xs_conn *xs;
	struct gnt_maps *maps;
	/* descriptors that came with the request being dispatched (closed after it) */
	int rx_fds[SIMXEN_REQ_FDS];
	unsigned rx_nfds;
};

/* Lookups every part makes, inline so that none of them calls back into broker.c or
 * domain.c for them. */
static inline struct domain *dom_get(struct broker *b, uint32_t domid) /* NULL if absent */
{
	return domid <= MAX_DOMID ? b->by_id[domid] : NULL;
}

static inline uint32_t conn_domid(const struct conn *c)
{
	return c->domid;
}

static inline struct domain *conn_domain(const struct conn *c)
{
	return dom_get(c->b, c->domid);
}

static inline struct gnt_maps **conn_maps(struct conn *c) /* what c has mapped, per granter */
{
	return &c->maps;
}

static inline struct conn *conn_first(struct broker *b)
{
	return b->conns;
}

static inline struct conn *conn_next(struct conn *c)
{
	return c->next;
}

/* io.c */
void blog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int conn_push_pair(
    struct broker *b, event_callback_fn cb, void *arg, struct event **ev, int *client_fd);

/* conn.c: NULL/errno when a cap is reached; replies return false if c must be dropped */
struct conn *conn_new(struct broker *b, int fd, uint32_t domid, bool ident);
int conn_pair(struct broker *b, uint32_t domid, bool ident, int *client_fd);
void conn_close(struct conn *c);
void conn_close_domain(struct broker *b, uint32_t domid);
bool conn_send(struct conn *c, const struct simxen_rep *rep, const void *pl, size_t len,
    const int *fds, unsigned nfds);
bool conn_reply_err(struct conn *c, int err, uint32_t seq);

/* domain.c */
int dom_create(struct broker *b, uint32_t domid, uint32_t flags, const char *name,
    const int stdio[2], const char *cwd, char *const argv[], uint32_t *out);
int dom_ts_create(struct broker *b, struct conn *c, const struct simxen_req *req, const char *pl,
    size_t len, uint32_t *domid);
bool dom_collect(struct broker *b); /* released domains nobody maps are gone: fired */
int dom_destroy(struct broker *b, uint32_t domid);
int dom_crash(struct broker *b, uint32_t domid);
int dom_pause(struct broker *b, uint32_t domid, bool pause);
void dom_reap(struct broker *b); /* SIGCHLD */
void dom_kill_all(struct broker *b);
size_t dom_list_text(struct broker *b, char *out, size_t max);
size_t dom_list_info(struct broker *b, uint32_t first, unsigned max, struct simxen_dominfo *out);
int dom0_init(struct broker *b);

/* gnt.c: errors are positive errno values */
int gnt_share(struct broker *b, struct conn *c, uint32_t grantee, uint32_t count, bool writable,
    uint32_t *refs, int *fd);
int gnt_unshare(struct broker *b, struct conn *c, const uint32_t *refs, uint32_t count);
/* fds[] receives at most SIMXEN_MAX_FDS borrowed descriptors (do not close). */
int gnt_map(struct broker *b, struct conn *c, uint32_t granter, uint32_t count, int prot,
    const uint32_t *refs, struct simxen_map_ent *ent, int *fds, unsigned *nfds);
int gnt_unmap(struct broker *b, struct conn *c, uint32_t granter, uint32_t count);
/* Revoke what c shared and forget what it mapped. */
void gnt_conn_gone(struct broker *b, struct conn *c);
void gnt_domain_gone(struct domain *d);

/* evtchn.c */
struct evt_handle;
struct evt_handle *evt_open(struct broker *b, struct conn *c, int *client_fd);
void evt_close(struct broker *b, struct conn *c, struct evt_handle *h);
int evt_bind_unbound(
    struct broker *b, struct conn *c, struct evt_handle *h, uint32_t remote, uint32_t *port);
int evt_bind_interdomain(struct broker *b, struct conn *c, struct evt_handle *h, uint32_t remote,
    uint32_t rport, uint32_t *port);
int evt_notify(struct broker *b, struct conn *c, struct evt_handle *h, uint32_t port);
int evt_unmask(struct broker *b, struct conn *c, struct evt_handle *h, uint32_t port);
int evt_unbind(struct broker *b, struct conn *c, struct evt_handle *h, uint32_t port);
void evt_domain_gone(struct broker *b, struct domain *d);
/* EVTCHNOP_status for dom0: out[0] SIMXEN_EVT_STAT_*, out[1..2] the remote end. */
int evt_status(struct broker *b, uint32_t domid, uint32_t port, uint32_t out[3]);

/* xs.c (xs_init: xs-tree.c, xs_fire_special: xs-watch.c) */
struct xs_conn;
int xs_init(void);
struct xs_conn *xs_conn_open(struct broker *b, struct conn *c, int *client_fd);
void xs_conn_close(struct broker *b, struct xs_conn *x);
int xs_op(struct broker *b, struct conn *c, struct xs_conn *x, uint32_t op, uint32_t tx,
    uint32_t a0, const char *pl, size_t len, char *out, size_t outmax, size_t *outlen,
    uint32_t *res);
/* Toolstack side, as dom0 and without permission checks. */
int xs_ts_write(struct broker *b, const char *path, const char *val);
/* Create path (empty) as domid's own, as libxl makes /local/domain/<id>/data. */
int xs_ts_give(struct broker *b, const char *path, uint32_t domid);
void xs_ts_rm(struct broker *b, const char *path);
void xs_fire_special(struct broker *b, const char *special);

#endif
