/*
 * xs.c - simulated xenstored: the tree, permissions, quotas, transactions, watches.
 *
 * Permissions are simplified to what mtrace needs from xenstored's model: dom0 may do
 * anything; a guest may read /local/domain/<id> and below, and write or remove only
 * below it.  The node itself belongs to the toolstack, and so does every node dom0
 * creates right below it (name, domid: in xenstored they inherit the home node's
 * permissions, owner dom0 and read-only for the guest) and below those: a guest cannot
 * rename itself.  The toolstack makes data/ the guest's own, as libxl does.
 *
 * Transactions work on a private copy of the tree the connection can see.  Every node
 * the transaction reads, lists or changes is remembered with the generation it had
 * when the transaction began; the commit fails with EAGAIN if any of them changed
 * meanwhile (xenstored's per-node conflict rule), otherwise the logged operations
 * are replayed on the real tree and fire their watches.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

struct watch {
	struct watch *next;
	char *path; /* absolute, or @special */
	char *token;
	bool rel; /* registered relative: events are reported relative */
};

struct wev {
	struct wev *next;
	size_t len;
	char data[];
};

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

struct xtx {
	struct xtx *next;
	uint32_t id;
	uint32_t domid; /* whose: nodes it creates are theirs */
	struct xs_node *root;
	struct pathent *acc, *written;
	unsigned nacc, nops, created;
	struct op *ops, **opt;
};

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

static struct xs_node *root;
static uint64_t gen_counter;
static unsigned total_nodes;
static struct xs_conn *xconns;

/* ---- paths ---- */

static bool valid_chars(const char *p)
{
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		        (*p >= '0' && *p <= '9') || *p == '-' || *p == '/' || *p == '_' ||
		        *p == '@'))
			return false;
	return true;
}

/* Make path absolute (relative paths are under the caller's home) and check it as
 * xenstored does.  out must hold XS_ABS_PATH_MAX + 1. */
static int canon(uint32_t domid, const char *in, bool special_ok, char *out, bool *rel)
{
	size_t l = strlen(in);
	if (rel)
		*rel = false;
	if (in[0] == '@') {
		if (!special_ok || l > 64 || !valid_chars(in))
			return EINVAL;
		strcpy(out, in);
		return 0;
	}
	if (in[0] != '/') {
		if (l == 0 || l > XS_REL_PATH_MAX)
			return EINVAL;
		snprintf(out, XS_ABS_PATH_MAX + 1, "/local/domain/%u/%s", domid, in);
		if (rel)
			*rel = true;
	} else {
		if (l > XS_ABS_PATH_MAX)
			return EINVAL;
		strcpy(out, in);
	}
	l = strlen(out);
	if (!valid_chars(out) || strstr(out, "//") || (l > 1 && out[l - 1] == '/') ||
	    strchr(out, '@'))
		return EINVAL;
	return 0;
}

/* Is p equal to or below dir? */
static bool under(const char *p, const char *dir)
{
	size_t l = strlen(dir);
	if (l == 1)
		return true; /* "/" */
	return !strncmp(p, dir, l) && (p[l] == '\0' || p[l] == '/');
}

static void home(uint32_t domid, char *h, size_t n)
{
	snprintf(h, n, "/local/domain/%u", domid);
}

static bool can_read(uint32_t domid, const char *p)
{
	char h[32];
	if (domid == 0)
		return true;
	home(domid, h, sizeof(h));
	return under(p, h);
}

static bool can_write(uint32_t domid, const char *p)
{
	char h[32];
	if (domid == 0)
		return true;
	home(domid, h, sizeof(h));
	return under(p, h) && strcmp(p, h);
}

static uint32_t owner_of(const char *p)
{
	unsigned id;
	if (sscanf(p, "/local/domain/%u", &id) == 1 && id <= MAX_DOMID)
		return id;
	return 0;
}

/* ---- the tree ---- */

static struct xs_node *node_new(const char *name, size_t nlen, struct xs_node *parent)
{
	struct xs_node *n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strndup(name, nlen))) {
		free(n);
		return NULL;
	}
	n->parent = parent;
	if (parent) { /* appended: directory lists children in creation order */
		struct xs_node **pp = &parent->child;
		while (*pp)
			pp = &(*pp)->next;
		*pp = n;
	}
	return n;
}

static void node_free(struct xs_node *n)
{
	while (n->child) {
		struct xs_node *c = n->child;
		n->child = c->next;
		node_free(c);
	}
	free(n->name);
	free(n->val);
	free(n);
}

static struct xs_node *child_of(struct xs_node *n, const char *name, size_t len)
{
	for (struct xs_node *c = n->child; c; c = c->next)
		if (strlen(c->name) == len && !memcmp(c->name, name, len))
			return c;
	return NULL;
}

static struct xs_node *find(struct xs_node *r, const char *path)
{
	struct xs_node *n = r;
	const char *p = path + 1;
	while (n && *p) {
		const char *e = strchrnul(p, '/');
		n = child_of(n, p, (size_t)(e - p));
		p = *e ? e + 1 : e;
	}
	return n;
}

/* Number of nodes a write of path would create. */
static unsigned missing(struct xs_node *r, const char *path)
{
	unsigned k = 0;
	struct xs_node *n = r;
	const char *p = path + 1;
	while (*p) {
		const char *e = strchrnul(p, '/');
		n = n ? child_of(n, p, (size_t)(e - p)) : NULL;
		k += !n;
		p = *e ? e + 1 : e;
	}
	return k;
}

static void charge(struct broker *b, uint32_t owner, int delta)
{
	struct domain *d = dom_get(b, owner);
	if (d)
		d->xs_nodes += (unsigned)delta;
	total_nodes += (unsigned)delta;
}

/* A domain's home, /local/domain/<id>. */
static bool is_home(const struct xs_node *n)
{
	return n->parent && n->parent->parent && n->parent->parent->parent &&
	    !n->parent->parent->parent->parent && !strcmp(n->parent->name, "domain") &&
	    !strcmp(n->parent->parent->name, "local");
}

/* Whether path, or a node above it below the home, is the toolstack's. */
static bool ts_locked(struct xs_node *r, const char *path)
{
	struct xs_node *n = r;
	const char *p = path + 1;

	while (n && *p) {
		const char *e = strchrnul(p, '/');
		n = child_of(n, p, (size_t)(e - p));
		if (n && n->ts)
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

/* global: the real tree (generations, quota accounting); else a transaction's copy.
 * creator: the domain writing (dom0 for the toolstack). */
static int tree_write(struct broker *b, struct xs_node *r, bool global, const char *path,
    const char *val, size_t vlen, uint32_t creator)
{
	char *v = malloc(vlen ? vlen : 1);
	if (!v)
		return ENOMEM;
	memcpy(v, val, vlen);
	struct xs_node *n = r;
	const char *p = path + 1;
	while (*p) {
		const char *e = strchrnul(p, '/');
		struct xs_node *c = child_of(n, p, (size_t)(e - p));
		if (!c) {
			if (!(c = node_new(p, (size_t)(e - p), n))) {
				free(v);
				return ENOMEM;
			}
			c->owner = owner_of(path);
			c->ts = creator == 0 && (n->ts || is_home(n));
			if (global) {
				c->gen = ++gen_counter;
				n->gen = ++gen_counter; /* its list of children changed */
				charge(b, c->owner, 1);
			}
		}
		n = c;
		p = *e ? e + 1 : e;
	}
	free(n->val);
	n->val = v;
	n->vlen = vlen;
	if (global)
		n->gen = ++gen_counter;
	return 0;
}

static void uncharge_tree(struct broker *b, struct xs_node *n)
{
	for (struct xs_node *c = n->child; c; c = c->next)
		uncharge_tree(b, c);
	charge(b, n->owner, -1);
}

static void unlink_node(struct xs_node *n)
{
	struct xs_node **pp = &n->parent->child;
	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
}

/* ENOENT only if the parent is missing too, as xenstored answers. */
static int tree_rm(struct broker *b, struct xs_node *r, bool global, const char *path)
{
	struct xs_node *n = find(r, path);
	if (!n) {
		char parent[XS_ABS_PATH_MAX + 1];
		strcpy(parent, path);
		char *s = strrchr(parent, '/');
		if (s == parent)
			s[1] = '\0';
		else
			*s = '\0';
		return find(r, parent) ? 0 : ENOENT;
	}
	if (n == r)
		return EINVAL;
	if (global) {
		uncharge_tree(b, n);
		n->parent->gen = ++gen_counter;
	}
	unlink_node(n);
	node_free(n);
	return 0;
}

static void adopt(struct xs_node *parent, struct xs_node *c)
{
	struct xs_node **pp = &parent->child;
	while (*pp)
		pp = &(*pp)->next;
	*pp = c;
	c->parent = parent;
}

/* A deep copy, not linked anywhere; NULL (nothing left allocated) when out of memory. */
static struct xs_node *copy_tree(const struct xs_node *n)
{
	struct xs_node *c = node_new(n->name, strlen(n->name), NULL);
	if (!c)
		return NULL;
	c->gen = n->gen;
	c->owner = n->owner;
	c->ts = n->ts;
	if (n->vlen || n->val) {
		c->val = malloc(n->vlen ? n->vlen : 1);
		if (!c->val) {
			node_free(c);
			return NULL;
		}
		if (n->vlen)
			memcpy(c->val, n->val, n->vlen);
		c->vlen = n->vlen;
	}
	/* Linked with a tail pointer: appending one by one would be quadratic in wide
	 * directories such as /local/domain. */
	struct xs_node **tail = &c->child;
	for (const struct xs_node *k = n->child; k; k = k->next) {
		struct xs_node *kc = copy_tree(k);
		if (!kc) {
			node_free(c);
			return NULL;
		}
		kc->parent = c;
		*tail = kc;
		tail = &kc->next;
	}
	return c;
}

/* What a connection can see: everything for dom0, its home (and the spine to it) for a
 * guest, which keeps a guest's transactions cheap however big the store is. */
static struct xs_node *snapshot(uint32_t domid)
{
	if (domid == 0)
		return copy_tree(root);
	char h[32];
	home(domid, h, sizeof(h));
	struct xs_node *r = node_new("", 0, NULL);
	if (!r)
		return NULL;
	r->gen = root->gen;
	struct xs_node *src = root, *dst = r;
	const char *p = h + 1;
	while (*p) {
		const char *e = strchrnul(p, '/');
		src = child_of(src, p, (size_t)(e - p));
		if (!src)
			break;
		struct xs_node *c =
		    *e ? node_new(src->name, strlen(src->name), NULL) : copy_tree(src);
		if (!c) {
			node_free(r);
			return NULL;
		}
		if (*e)
			c->gen = src->gen;
		adopt(dst, c);
		dst = c;
		if (!*e)
			break;
		p = e + 1;
	}
	return r;
}

/* ---- watches ---- */

static void flush(struct xs_conn *x)
{
	while (x->qh) {
		struct wev *e = x->qh;
		ssize_t n = send(x->fd, e->data, e->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			event_add(x->wev, NULL);
			return;
		}
		x->qh = e->next;
		if (!x->qh)
			x->qt = &x->qh;
		x->qn--;
		free(e);
		if (n < 0) { /* client closed its end: drop the rest */
			while (x->qh) {
				e = x->qh;
				x->qh = e->next;
				free(e);
			}
			x->qt = &x->qh;
			x->qn = 0;
			return;
		}
	}
}

static void write_cb(evutil_socket_t fd, short what, void *arg)
{
	flush(arg);
}

static void queue_event(struct xs_conn *x, const char *path, const char *token)
{
	size_t pl = strlen(path) + 1, tl = strlen(token) + 1;
	if (x->qn >= (x->domid ? XS_WATCHQ_GUEST : XS_WATCHQ_DOM0)) {
		/* A client that never reads its watches loses events, not our memory. */
		if (x->dropped++ % 1000 == 0)
			blog("domain %u: watch events not read, %lu dropped", x->domid, x->dropped);
		return;
	}
	struct wev *e = malloc(sizeof(*e) + pl + tl);
	if (!e)
		return;
	e->next = NULL;
	e->len = pl + tl;
	memcpy(e->data, path, pl);
	memcpy(e->data + pl, token, tl);
	*x->qt = e;
	x->qt = &e->next;
	if (x->qn++ == 0)
		flush(x);
}

static void send_watch(struct xs_conn *x, const struct watch *w, const char *path)
{
	char h[32];
	home(x->domid, h, sizeof(h));
	size_t hl = strlen(h);
	if (w->rel && !strncmp(path, h, hl) && path[hl] == '/')
		path += hl + 1;
	queue_event(x, path, w->token);
}

/* A change of path fires watches on it and above; a removal also fires the watches
 * on the nodes that went with it. */
static void fire(const char *path, bool removed)
{
	for (struct xs_conn *x = xconns; x; x = x->next) {
		for (struct watch *w = x->watches; w; w = w->next) {
			if (w->path[0] == '@')
				continue;
			if (under(path, w->path)) {
				if (can_read(x->domid, path))
					send_watch(x, w, path);
			} else if (removed && under(w->path, path)) {
				if (can_read(x->domid, w->path))
					send_watch(x, w, w->path);
			}
		}
	}
}

void xs_fire_special(struct broker *b, const char *special)
{
	for (struct xs_conn *x = xconns; x; x = x->next)
		for (struct watch *w = x->watches; w; w = w->next)
			if (!strcmp(w->path, special))
				queue_event(x, special, w->token);
}

/* ---- transactions ---- */

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
		node_free(t->root);
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
		if (prefix ? under(path, l->path) : !strcmp(path, l->path))
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
static int record(struct xtx *t, const char *path)
{
	if (in_list(t->written, path, true) || in_list(t->acc, path, false))
		return 0;
	if (t->nacc >= XS_TX_MAX_OPS)
		return ENOSPC;
	struct xs_node *n = find(t->root, path);
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
static int record_change(struct xtx *t, const char *path, bool rm)
{
	char p[XS_ABS_PATH_MAX + 1];
	int err = record(t, path);
	strcpy(p, path);
	while (!err && strcmp(p, "/")) {
		to_parent(p);
		err = record(t, p);
		if (rm || find(t->root, p))
			break;
	}
	return err;
}

static int log_op(struct xtx *t, bool rm, const char *path, const char *val, size_t vlen)
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
		struct xs_node *n = find(root, a->path);
		if ((n ? n->gen : 0) != a->gen)
			return EAGAIN;
	}
	/* Quotas were checked against the copy; the replay re-checks nothing but memory. */
	for (struct op *o = t->ops; o; o = o->next) {
		if (o->rm) {
			if (tree_rm(b, root, true, o->path) == 0)
				fire(o->path, true);
		} else if (total_nodes + missing(root, o->path) <= XS_TOTAL_NODES &&
		    tree_write(b, root, true, o->path, o->val, o->vlen, t->domid) == 0) {
			fire(o->path, false);
		}
	}
	return 0;
}

static struct xtx *tx_find(struct xs_conn *x, uint32_t id)
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

/* ---- requests ---- */

static int do_write(
    struct broker *b, uint32_t domid, struct xtx *t, const char *path, const char *val, size_t vlen)
{
	if (vlen > XS_VALUE_MAX)
		return E2BIG;
	struct xs_node *r = t ? t->root : root;
	if (!can_write(domid, path) || (domid && ts_locked(r, path)))
		return EACCES;
	unsigned k = missing(r, path);
	if (k) {
		struct domain *d = dom_get(b, domid);
		unsigned used = (d ? d->xs_nodes : 0) + (t ? t->created : 0);
		if (domid && used + k > XS_GUEST_NODES)
			return EDQUOT;
		if (total_nodes + (t ? t->created : 0) + k > XS_TOTAL_NODES)
			return ENOSPC;
	}
	if (!t) {
		int err = tree_write(b, root, true, path, val, vlen, domid);
		if (!err)
			fire(path, false);
		return err;
	}
	int err = record_change(t, path, false);
	if (!err)
		err = log_op(t, false, path, val, vlen);
	if (!err)
		err = tree_write(b, t->root, false, path, val, vlen, domid);
	if (!err)
		t->created += k;
	return err;
}

static int do_rm(struct broker *b, uint32_t domid, struct xtx *t, const char *path)
{
	if (!strcmp(path, "/"))
		return EINVAL;
	if (!can_write(domid, path) || (domid && ts_locked(t ? t->root : root, path)))
		return EACCES;
	if (!t) {
		int err = tree_rm(b, root, true, path);
		if (!err)
			fire(path, true);
		return err;
	}
	int err = record_change(t, path, true);
	if (err)
		return err;
	err = tree_rm(b, t->root, false, path);
	if (!err)
		err = log_op(t, true, path, NULL, 0);
	return err;
}

/* Split "a\0b\0" exactly. */
static int two_strings(const char *pl, size_t len, const char **a, const char **bb)
{
	const char *z = len ? memchr(pl, '\0', len) : NULL;
	if (!z)
		return EINVAL;
	size_t rest = len - (size_t)(z - pl) - 1;
	const char *z2 = rest ? memchr(z + 1, '\0', rest) : NULL;
	if (!z2 || z2 != pl + len - 1)
		return EINVAL;
	*a = pl;
	*bb = z + 1;
	return 0;
}

static int watch_op(struct xs_conn *x, uint32_t op, const char *pl, size_t len)
{
	const char *path, *token;
	char abs[XS_ABS_PATH_MAX + 1];
	bool rel;
	if (!x)
		return EBADF;
	if (len > XS_VALUE_MAX)
		return E2BIG; /* xenstored's payload limit bounds path + token */
	int err = two_strings(pl, len, &path, &token);
	if (!err)
		err = canon(x->domid, path, true, abs, &rel);
	if (err)
		return err;
	struct watch **pp;
	for (pp = &x->watches; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->path, abs) && !strcmp((*pp)->token, token))
			break;
	if (op == SIMXEN_XS_UNWATCH) {
		if (!*pp)
			return ENOENT;
		struct watch *w = *pp;
		*pp = w->next;
		x->nwatches--;
		free(w->path);
		free(w->token);
		free(w);
		return 0;
	}
	if (*pp)
		return EEXIST;
	if (x->nwatches >= (x->domid ? XS_GUEST_WATCHES : XS_DOM0_WATCHES))
		return E2BIG; /* xenstored's watch quota answer */
	struct watch *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(abs)) || !(w->token = strdup(token))) {
		if (w)
			free(w->path);
		free(w);
		return ENOMEM;
	}
	w->rel = rel;
	w->next = x->watches;
	x->watches = w;
	x->nwatches++;
	/* xenstored fires every new watch once, so the watcher looks at the current state. */
	queue_event(x, path, token);
	return 0;
}

int xs_op(struct broker *b, struct conn *c, struct xs_conn *x, uint32_t op, uint32_t txid,
    uint32_t a0, const char *pl, size_t len, char *out, size_t outmax, size_t *outlen,
    uint32_t *res)
{
	uint32_t domid = conn_domid(c);
	static char abs[XS_ABS_PATH_MAX + 1];
	struct xtx *t = NULL;

	if (op == SIMXEN_XS_WATCH || op == SIMXEN_XS_UNWATCH)
		return watch_op(x, op, pl, len);
	if (op == SIMXEN_XS_TX_START) {
		if (!x)
			return EBADF;
		if (x->ntx >= (domid ? XS_GUEST_TX : XS_DOM0_TX))
			return ENOSPC;
		t = calloc(1, sizeof(*t));
		if (!t || !(t->root = snapshot(domid))) {
			free(t);
			return ENOMEM;
		}
		t->opt = &t->ops;
		t->domid = domid;
		do
			t->id = ++x->next_tx;
		while (t->id == 0 || tx_find(x, t->id));
		t->next = x->txs;
		x->txs = t;
		x->ntx++;
		*res = t->id;
		return 0;
	}
	if (txid) {
		t = tx_find(x, txid);
		if (!t)
			return ENOENT;
	}
	if (op == SIMXEN_XS_TX_END) {
		if (!t)
			return ENOENT;
		tx_unlink(x, t);
		int err = a0 ? 0 : tx_commit(b, t);
		tx_free(t);
		return err;
	}

	/* The rest name a path first. */
	const char *z = len ? memchr(pl, '\0', len) : NULL;
	if (!z)
		return EINVAL;
	int err = canon(domid, pl, false, abs, NULL);
	if (err)
		return err;
	const char *val = z + 1;
	size_t vlen = len - (size_t)(val - pl);
	if (op != SIMXEN_XS_WRITE && vlen)
		return EINVAL;
	switch (op) {
	case SIMXEN_XS_READ:
	case SIMXEN_XS_DIRECTORY: {
		if (!can_read(domid, abs))
			return EACCES;
		if (t && (err = record(t, abs)))
			return err;
		struct xs_node *n = find(t ? t->root : root, abs);
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
		if (!can_read(domid, abs))
			return EACCES;
		struct xs_node *n = find(t ? t->root : root, abs);
		if (!n)
			return ENOENT;
		uint32_t own = owner_of(abs);
		int l;
		/* as xenstored lists them: the owner (and everyone else's access), then the
		 * domains given more */
		if (n->ts || is_home(n))
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

int xs_init(void)
{
	root = node_new("", 0, NULL);
	if (!root)
		return -1;
	root->gen = ++gen_counter;
	return 0;
}

struct xs_conn *xs_open(struct broker *b, struct conn *c, int *client_fd)
{
	int sv[2];
	struct xs_conn *x = calloc(1, sizeof(*x));
	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		free(x);
		return NULL;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	x->b = b;
	x->domid = conn_domid(c);
	x->fd = sv[0];
	x->qt = &x->qh;
	x->wev = event_new(b->base, sv[0], EV_WRITE, write_cb, x);
	if (!x->wev) {
		close(sv[0]);
		close(sv[1]);
		free(x);
		errno = ENOMEM;
		return NULL;
	}
	x->next = xconns;
	if (xconns)
		xconns->prev = x;
	xconns = x;
	*client_fd = sv[1];
	return x;
}

void xs_close(struct broker *b, struct xs_conn *x)
{
	while (x->txs) {
		struct xtx *t = x->txs;
		x->txs = t->next;
		tx_free(t);
	}
	while (x->watches) {
		struct watch *w = x->watches;
		x->watches = w->next;
		free(w->path);
		free(w->token);
		free(w);
	}
	while (x->qh) {
		struct wev *e = x->qh;
		x->qh = e->next;
		free(e);
	}
	event_free(x->wev);
	close(x->fd);
	if (x->prev)
		x->prev->next = x->next;
	else
		xconns = x->next;
	if (x->next)
		x->next->prev = x->prev;
	free(x);
}

int xs_ts_write(struct broker *b, const char *path, const char *val)
{
	int err = tree_write(b, root, true, path, val, strlen(val), 0);
	if (!err)
		fire(path, false);
	return err;
}

int xs_ts_give(struct broker *b, const char *path, uint32_t domid)
{
	int err = tree_write(b, root, true, path, "", 0, domid);
	if (!err)
		fire(path, false);
	return err;
}

void xs_ts_rm(struct broker *b, const char *path)
{
	if (tree_rm(b, root, true, path) == 0)
		fire(path, true);
}
