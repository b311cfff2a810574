/*
 * xs-tx.c - simulated xenstored: transactions.
 *
 * Transactions work on a private copy of the tree the connection can see.  Every node
 * the transaction reads, lists or changes is remembered with the generation it had
 * when the transaction began; the commit fails with EAGAIN if any of them changed
 * meanwhile (xenstored's per-node conflict rule), otherwise the logged operations
 * are replayed on the real tree and fire their watches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xs-int.h"

struct pathent { /* an accessed or written path in a transaction */
	struct pathent *next;
	uint64_t gen;
	char path[];
};

struct op {
	struct op *next;
	bool rm;
	size_t vlen;
	char *val;
	char path[];
};

static void pathlist_free(struct pathent *p)
{
	while (p) {
		struct pathent *n = p->next;
		free(p);
		p = n;
	}
}

static void tx_free(struct xtx *t)
{
	if (t->root)
		xs_node_free(t->root);
	pathlist_free(t->acc);
	pathlist_free(t->written);
	for (struct op *o = t->ops, *n; o; o = n) {
		n = o->next;
		free(o->val);
		free(o);
	}
	free(t);
}

static bool in_list(const struct pathent *l, const char *path, bool prefix)
{
	for (; l; l = l->next)
		if (prefix ? xs_under(path, l->path) : !strcmp(path, l->path))
			return true;
	return false;
}

static int push_path(struct pathent **l, const char *path, uint64_t gen)
{
	size_t n = strlen(path) + 1;
	struct pathent *p = malloc(sizeof(*p) + n);
	if (!p)
		return ENOMEM;
	p->gen = gen;
	memcpy(p->path, path, n);
	p->next = *l;
	*l = p;
	return 0;
}

/* Remember the state path had when the transaction began (unless the transaction
 * itself has decided it already). */
int xs_tx_record(struct xtx *t, const char *path)
{
	if (in_list(t->written, path, true) || in_list(t->acc, path, false))
		return 0;
	if (t->nacc >= XS_TX_MAX_OPS)
		return ENOSPC;
	struct xs_node *n = xs_find(t->root, path);
	t->nacc++;
	return push_path(&t->acc, path, n ? n->gen : 0);
}

/* Cut path (in place) to its parent. */
static void to_parent(char *out)
{
	char *s = strrchr(out, '/');
	if (s == out)
		s[1] = '\0';
	else
		*s = '\0';
}

/* Record path and, for a write, every ancestor it would create plus the first existing
 * one (whose list of children changes); for a removal, the parent. */
int xs_tx_record_change(struct xtx *t, const char *path, bool rm)
{
	char p[XS_ABS_PATH_MAX + 1];
	int err = xs_tx_record(t, path);
	strcpy(p, path);
	while (!err && strcmp(p, "/")) {
		to_parent(p);
		err = xs_tx_record(t, p);
		if (rm || xs_find(t->root, p))
			break;
	}
	return err;
}

int xs_tx_log_op(struct xtx *t, bool rm, const char *path, const char *val, size_t vlen)
{
	if (t->nops >= XS_TX_MAX_OPS)
		return ENOSPC;
	size_t n = strlen(path) + 1;
	struct op *o = calloc(1, sizeof(*o) + n);
	if (!o)
		return ENOMEM;
	if (!rm) {
		o->val = malloc(vlen ? vlen : 1);
		if (!o->val) {
			free(o);
			return ENOMEM;
		}
		memcpy(o->val, val, vlen);
		o->vlen = vlen;
	}
	o->rm = rm;
	memcpy(o->path, path, n);
	*t->opt = o;
	t->opt = &o->next;
	t->nops++;
	return push_path(&t->written, path, 0);
}

static int tx_commit(struct broker *b, struct xtx *t)
{
	for (struct pathent *a = t->acc; a; a = a->next) {
		struct xs_node *n = xs_find(xs_root(), a->path);
		if ((n ? n->gen : 0) != a->gen)
			return EAGAIN;
	}
	/* Quotas were checked against the copy; the replay re-checks nothing but memory. */
	for (struct op *o = t->ops; o; o = o->next) {
		if (o->rm) {
			if (xs_tree_rm(b, xs_root(), true, o->path) == 0)
				xs_watch_fire(o->path, true);
		} else if (xs_total_nodes() + xs_missing(xs_root(), o->path) <= XS_TOTAL_NODES &&
		    xs_tree_write(b, xs_root(), true, o->path, o->val, o->vlen, t->domid) == 0) {
			xs_watch_fire(o->path, false);
		}
	}
	return 0;
}

struct xtx *xs_tx_find(struct xs_conn *x, uint32_t id)
{
	for (struct xtx *t = x ? x->txs : NULL; t; t = t->next)
		if (t->id == id)
			return t;
	return NULL;
}

static void tx_unlink(struct xs_conn *x, struct xtx *t)
{
	for (struct xtx **pp = &x->txs; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			x->ntx--;
			return;
		}
	}
}

int xs_tx_start(struct xs_conn *x, uint32_t domid, uint32_t *res)
{
	struct xtx *t;
	if (!x)
		return EBADF;
	if (x->ntx >= (domid ? XS_GUEST_TX : XS_DOM0_TX))
		return ENOSPC;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->root = xs_snapshot(domid))) {
		free(t);
		return ENOMEM;
	}
	t->opt = &t->ops;
	t->domid = domid;
	do
		t->id = ++x->next_tx;
	while (t->id == 0 || xs_tx_find(x, t->id));
	t->next = x->txs;
	x->txs = t;
	x->ntx++;
	*res = t->id;
	return 0;
}

int xs_tx_end(struct broker *b, struct xs_conn *x, struct xtx *t, bool abort)
{
	tx_unlink(x, t);
	int err = abort ? 0 : tx_commit(b, t);
	tx_free(t);
	return err;
}

void xs_tx_conn_gone(struct xs_conn *x)
{
	while (x->txs) {
		struct xtx *t = x->txs;
		x->txs = t->next;
		tx_free(t);
	}
}
