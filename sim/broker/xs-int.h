/*
 * xs-int.h - internals of the broker's xenstore (xs.c and its parts).
 *
 * The tree with its paths, permissions and quotas (xs-tree.c), transactions (xs-tx.c),
 * watches (xs-watch.c), connections and requests (xs.c).  The rest of the broker sees
 * only the xs_* calls of broker.h.
 */
#ifndef MTRACE_SIM_XS_INT_H
#define MTRACE_SIM_XS_INT_H

#include "broker.h"

struct xs_node {
	char *name;
	char *val;
	size_t vlen;
	uint64_t gen;
	uint32_t owner; /* domain charged for this node */
	bool ts;        /* the toolstack's: read-only for the guest */
	struct xs_node *parent, *child, *next;
};

struct pathent;
struct op;

struct xtx {
	struct xtx *next;
	uint32_t id;
	uint32_t domid; /* whose: nodes it creates are theirs */
	struct xs_node *root;
	struct pathent *acc, *written;
	unsigned nacc, nops, created;
	struct op *ops, **opt;
};

struct watch;
struct wev;

struct xs_conn {
	struct xs_conn *next, *prev;
	struct broker *b;
	uint32_t domid;
	int fd;
	struct event *wev;
	struct watch *watches;
	unsigned nwatches;
	struct wev *qh, **qt;
	unsigned qn;
	unsigned long dropped;
	struct xtx *txs;
	unsigned ntx;
	uint32_t next_tx;
};

/* xs-tree.c: paths and permissions */
/* Make path absolute (relative paths are under the caller's home) and check it as
 * xenstored does.  out must hold XS_ABS_PATH_MAX + 1. */
int xs_canon(uint32_t domid, const char *in, bool special_ok, char *out, bool *rel);
bool xs_under(const char *p, const char *dir); /* p equal to or below dir */
void xs_home(uint32_t domid, char *h, size_t n);
bool xs_can_read(uint32_t domid, const char *p);
bool xs_can_write(uint32_t domid, const char *p);
uint32_t xs_owner_of(const char *p);

/* xs-tree.c: the tree.  global: the real tree (generations, quota accounting), else a
 * transaction's copy; creator: the domain writing (dom0 for the toolstack). */
struct xs_node *xs_root(void);
unsigned xs_total_nodes(void);
void xs_node_free(struct xs_node *n);
struct xs_node *xs_find(struct xs_node *r, const char *path);
unsigned xs_missing(struct xs_node *r, const char *path); /* nodes a write would create */
bool xs_is_home(const struct xs_node *n);
bool xs_ts_locked(struct xs_node *r, const char *path);
int xs_tree_write(struct broker *b, struct xs_node *r, bool global, const char *path,
    const char *val, size_t vlen, uint32_t creator);
int xs_tree_rm(struct broker *b, struct xs_node *r, bool global, const char *path);
struct xs_node *xs_snapshot(uint32_t domid); /* what domid can see, copied */

/* xs-watch.c */
void xs_watch_attach(struct xs_conn *x);
void xs_watch_detach(struct xs_conn *x); /* its watches and queued events go */
void xs_watch_write_cb(evutil_socket_t fd, short what, void *arg);
void xs_watch_fire(const char *path, bool removed);
int xs_watch_op(struct xs_conn *x, uint32_t op, const char *pl, size_t len);

/* xs-tx.c */
int xs_tx_start(struct xs_conn *x, uint32_t domid, uint32_t *res);
struct xtx *xs_tx_find(struct xs_conn *x, uint32_t id);
int xs_tx_end(struct broker *b, struct xs_conn *x, struct xtx *t, bool abort);
void xs_tx_conn_gone(struct xs_conn *x);
int xs_tx_record(struct xtx *t, const char *path);
int xs_tx_record_change(struct xtx *t, const char *path, bool rm);
int xs_tx_log_op(struct xtx *t, bool rm, const char *path, const char *val, size_t vlen);

#endif
