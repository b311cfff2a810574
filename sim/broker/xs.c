/*
 * xs.c - simulated xenstored: connections and their requests.
 *
 * The store itself is xs-tree.c (paths, permissions, quotas, the tree), its
 * transactions xs-tx.c and its watches xs-watch.c; this file reads a request, checks
 * it, and runs it on the tree or in a transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xs-int.h"

static int do_write(
    struct broker *b, uint32_t domid, struct xtx *t, const char *path, const char *val, size_t vlen)
{
	if (vlen > XS_VALUE_MAX)
		return E2BIG;
	struct xs_node *r = t ? t->root : xs_root();
	if (!xs_can_write(domid, path) || (domid && xs_ts_locked(r, path)))
		return EACCES;
	unsigned k = xs_missing(r, path);
	if (k) {
		struct domain *d = dom_get(b, domid);
		unsigned used = (d ? d->xs_nodes : 0) + (t ? t->created : 0);
		if (domid && used + k > XS_GUEST_NODES)
			return EDQUOT;
		if (xs_total_nodes() + (t ? t->created : 0) + k > XS_TOTAL_NODES)
			return ENOSPC;
	}
	if (!t) {
		int err = xs_tree_write(b, xs_root(), true, path, val, vlen, domid);
		if (!err)
			xs_watch_fire(path, false);
		return err;
	}
	int err = xs_tx_record_change(t, path, false);
	if (!err)
		err = xs_tx_log_op(t, false, path, val, vlen);
	if (!err)
		err = xs_tree_write(b, t->root, false, path, val, vlen, domid);
	if (!err)
		t->created += k;
	return err;
}

static int do_rm(struct broker *b, uint32_t domid, struct xtx *t, const char *path)
{
	if (!strcmp(path, "/"))
		return EINVAL;
	if (!xs_can_write(domid, path) || (domid && xs_ts_locked(t ? t->root : xs_root(), path)))
		return EACCES;
	if (!t) {
		int err = xs_tree_rm(b, xs_root(), true, path);
		if (!err)
			xs_watch_fire(path, true);
		return err;
	}
	int err = xs_tx_record_change(t, path, true);
	if (err)
		return err;
	err = xs_tree_rm(b, t->root, false, path);
	if (!err)
		err = xs_tx_log_op(t, true, path, NULL, 0);
	return err;
}

int xs_op(struct broker *b, struct conn *c, struct xs_conn *x, uint32_t op, uint32_t txid,
    uint32_t a0, const char *pl, size_t len, char *out, size_t outmax, size_t *outlen,
    uint32_t *res)
{
	uint32_t domid = conn_domid(c);
	static char abs[XS_ABS_PATH_MAX + 1];
	struct xtx *t = NULL;

	if (op == SIMXEN_XS_WATCH || op == SIMXEN_XS_UNWATCH)
		return xs_watch_op(x, op, pl, len);
	if (op == SIMXEN_XS_TX_START)
		return xs_tx_start(x, domid, res);
	if (txid) {
		t = xs_tx_find(x, txid);
		if (!t)
			return ENOENT;
	}
	if (op == SIMXEN_XS_TX_END) {
		if (!t)
			return ENOENT;
		return xs_tx_end(b, x, t, a0 != 0);
	}

	/* The rest name a path first. */
	const char *z = len ? memchr(pl, '\0', len) : NULL;
	if (!z)
		return EINVAL;
	int err = xs_canon(domid, pl, false, abs, NULL);
	if (err)
		return err;
	const char *val = z + 1;
	size_t vlen = len - (size_t)(val - pl);
	if (op != SIMXEN_XS_WRITE && vlen)
		return EINVAL;
	switch (op) {
	case SIMXEN_XS_READ:
	case SIMXEN_XS_DIRECTORY: {
		if (!xs_can_read(domid, abs))
			return EACCES;
		if (t && (err = xs_tx_record(t, abs)))
			return err;
		struct xs_node *n = xs_find(t ? t->root : xs_root(), abs);
		if (!n)
			return ENOENT;
		if (op == SIMXEN_XS_READ) {
			if (n->vlen > outmax)
				return E2BIG;
			if (n->vlen) /* a node made as a parent has no value at all */
				memcpy(out, n->val, n->vlen);
			*outlen = n->vlen;
			return 0;
		}
		size_t o = 0;
		for (struct xs_node *k = n->child; k; k = k->next) {
			size_t l = strlen(k->name) + 1;
			if (o + l > outmax)
				return E2BIG;
			memcpy(out + o, k->name, l);
			o += l;
		}
		*outlen = o;
		return 0;
	}
	case SIMXEN_XS_GET_PERMS: {
		if (!xs_can_read(domid, abs))
			return EACCES;
		struct xs_node *n = xs_find(t ? t->root : xs_root(), abs);
		if (!n)
			return ENOENT;
		uint32_t own = xs_owner_of(abs);
		int l;
		/* as xenstored lists them: the owner (and everyone else's access), then the
		 * domains given more */
		if (n->ts || xs_is_home(n))
			l = snprintf(out, outmax, "n0%cr%u%c", 0, own, 0);
		else
			l = snprintf(out, outmax, "n%u%c", own, 0);
		if (l < 0 || (size_t)l >= outmax)
			return E2BIG;
		*outlen = (size_t)l;
		return 0;
	}
	case SIMXEN_XS_WRITE:
		return do_write(b, domid, t, abs, val, vlen);
	case SIMXEN_XS_RM:
		return do_rm(b, domid, t, abs);
	}
	return EINVAL;
}

struct xs_conn *xs_conn_open(struct broker *b, struct conn *c, int *client_fd)
{
	struct xs_conn *x = calloc(1, sizeof(*x));
	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	x->b = b;
	x->domid = conn_domid(c);
	x->qt = &x->qh;
	x->fd = conn_push_pair(b, xs_watch_write_cb, x, &x->wev, client_fd);
	if (x->fd < 0) {
		int e = errno;
		free(x);
		errno = e;
		return NULL;
	}
	xs_watch_attach(x);
	return x;
}

void xs_conn_close(struct broker *b, struct xs_conn *x)
{
	xs_tx_conn_gone(x);
	xs_watch_detach(x);
	event_free(x->wev);
	close(x->fd);
	free(x);
}

int xs_ts_write(struct broker *b, const char *path, const char *val)
{
	int err = xs_tree_write(b, xs_root(), true, path, val, strlen(val), 0);
	if (!err)
		xs_watch_fire(path, false);
	return err;
}

int xs_ts_give(struct broker *b, const char *path, uint32_t domid)
{
	int err = xs_tree_write(b, xs_root(), true, path, "", 0, domid);
	if (!err)
		xs_watch_fire(path, false);
	return err;
}

void xs_ts_rm(struct broker *b, const char *path)
{
	if (xs_tree_rm(b, xs_root(), true, path) == 0)
		xs_watch_fire(path, true);
}
