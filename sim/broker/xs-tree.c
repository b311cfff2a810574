/*
 * xs-tree.c - simulated xenstored: paths, permissions, quotas, the tree and the
 * snapshots transactions work on.
 *
 * Permissions are simplified to what mtrace needs from xenstored's model: dom0 may do
 * anything; a guest may read /local/domain/<id> and below, and write or remove only
 * below it.  The node itself belongs to the toolstack, and so does every node dom0
 * creates right below it (name, domid: in xenstored they inherit the home node's
 * permissions, owner dom0 and read-only for the guest) and below those: a guest cannot
 * rename itself.  The toolstack makes data/ the guest's own, as libxl does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xs-int.h"

static struct xs_node *root;
static uint64_t gen_counter;
static unsigned total_nodes;

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
int xs_canon(uint32_t domid, const char *in, bool special_ok, char *out, bool *rel)
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
bool xs_under(const char *p, const char *dir)
{
	size_t l = strlen(dir);
	if (l == 1)
		return true; /* "/" */
	return !strncmp(p, dir, l) && (p[l] == '\0' || p[l] == '/');
}

void xs_home(uint32_t domid, char *h, size_t n)
{
	snprintf(h, n, "/local/domain/%u", domid);
}

bool xs_can_read(uint32_t domid, const char *p)
{
	char h[32];
	if (domid == 0)
		return true;
	xs_home(domid, h, sizeof(h));
	return xs_under(p, h);
}

bool xs_can_write(uint32_t domid, const char *p)
{
	char h[32];
	if (domid == 0)
		return true;
	xs_home(domid, h, sizeof(h));
	return xs_under(p, h) && strcmp(p, h);
}

uint32_t xs_owner_of(const char *p)
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

void xs_node_free(struct xs_node *n)
{
	while (n->child) {
		struct xs_node *c = n->child;
		n->child = c->next;
		xs_node_free(c);
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

struct xs_node *xs_find(struct xs_node *r, const char *path)
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
unsigned xs_missing(struct xs_node *r, const char *path)
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
bool xs_is_home(const struct xs_node *n)
{
	return n->parent && n->parent->parent && n->parent->parent->parent &&
	    !n->parent->parent->parent->parent && !strcmp(n->parent->name, "domain") &&
	    !strcmp(n->parent->parent->name, "local");
}

/* Whether path, or a node above it below the home, is the toolstack's. */
bool xs_ts_locked(struct xs_node *r, const char *path)
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
int xs_tree_write(struct broker *b, struct xs_node *r, bool global, const char *path,
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
			c->owner = xs_owner_of(path);
			c->ts = creator == 0 && (n->ts || xs_is_home(n));
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
int xs_tree_rm(struct broker *b, struct xs_node *r, bool global, const char *path)
{
	struct xs_node *n = xs_find(r, path);
	if (!n) {
		char parent[XS_ABS_PATH_MAX + 1];
		strcpy(parent, path);
		char *s = strrchr(parent, '/');
		if (s == parent)
			s[1] = '\0';
		else
			*s = '\0';
		return xs_find(r, parent) ? 0 : ENOENT;
	}
	if (n == r)
		return EINVAL;
	if (global) {
		uncharge_tree(b, n);
		n->parent->gen = ++gen_counter;
	}
	unlink_node(n);
	xs_node_free(n);
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
			xs_node_free(c);
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
			xs_node_free(c);
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
struct xs_node *xs_snapshot(uint32_t domid)
{
	if (domid == 0)
		return copy_tree(root);
	char h[32];
	xs_home(domid, h, sizeof(h));
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
			xs_node_free(r);
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

int xs_init(void)
{
	root = node_new("", 0, NULL);
	if (!root)
		return -1;
	root->gen = ++gen_counter;
	return 0;
}

struct xs_node *xs_root(void)
{
	return root;
}

unsigned xs_total_nodes(void)
{
	return total_nodes;
}
