/*
 * sitetree.c - the creation tree by site: which site's threads create which, as pstree
 * shows processes.  The daemon sends the graph (SiteEdge: threads of site P made N
 * threads at site C; P = -1 for threads with no site, the roots).  A graph is not a
 * tree: a site made from two sites, a site whose threads create threads of its own
 * site, two sites creating each other.  Each site is expanded once, at its first place
 * in the walk; where it comes again it is one line marked "above" (or "cycle" when it
 * is its own ancestor), so the walk ends and every edge is one line.
 */
#include <stdlib.h>
#include <string.h>

#include "top.h"

/* Child lists: kids[first[p] .. first[p + 1]) are the children of row p - 1 (slot 0:
 * the sites made by threads with no site), each a copy of the child's row with the
 * edge's count. */
struct kid {
	struct top_row r;
	size_t row;
};

struct sort_kids {
	int (*cmp)(const void *, const void *, void *);
	void *ctx;
};

static int kid_cmp(const void *a, const void *b, void *arg)
{
	const struct sort_kids *s = arg;
	return s->cmp(&((const struct kid *)a)->r, &((const struct kid *)b)->r, s->ctx);
}

/* The threads we were sent that have a manual label and a site, by (domain, site). */
static int thr_cmp(const void *a, const void *b)
{
	const Mtrace__ThreadStats *x = *(const Mtrace__ThreadStats *const *)a;
	const Mtrace__ThreadStats *y = *(const Mtrace__ThreadStats *const *)b;
	if (x->domid != y->domid)
		return x->domid < y->domid ? -1 : 1;
	return x->site_index < y->site_index ? -1 : x->site_index > y->site_index;
}

static size_t labelled_threads(const Mtrace__Stats *st, const Mtrace__ThreadStats **v)
{
	size_t n = 0;
	for (size_t i = 0; i < st->n_threads; i++)
		if (st->threads[i]->site_index >= 0 && st->threads[i]->label &&
		    st->threads[i]->label[0])
			v[n++] = st->threads[i];
	qsort(v, n, sizeof(*v), thr_cmp);
	return n;
}

/* Up to two distinct manual labels of the site's threads (more: "..."). */
static void site_labels(const Mtrace__ThreadStats **v, size_t n, struct top_row *r)
{
	size_t lo = 0, hi = n;
	Mtrace__ThreadStats k = { .domid = r->s->domid, .site_index = (int32_t)r->s->index };
	const Mtrace__ThreadStats *kp = &k;
	while (lo < hi) { /* the first thread not before the site */
		size_t mid = lo + (hi - lo) / 2;
		if (thr_cmp(&v[mid], &kp) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && !thr_cmp(&v[i], &kp); i++) {
		const char *l = v[i]->label;
		if ((r->labels[0] && !strcmp(r->labels[0], l)) ||
		    (r->labels[1] && !strcmp(r->labels[1], l)))
			continue;
		if (!r->labels[0])
			r->labels[0] = l;
		else if (!r->labels[1])
			r->labels[1] = l;
		else {
			r->more_labels = true;
			return;
		}
	}
}

/* Mark what the walk from row could reach, folds or not: what a fold hides is not a
 * root of its own. */
static void link_from(
    size_t row, const struct kid *kids, const size_t *first, bool *linked, size_t *lst)
{
	size_t sp = 0;
	if (linked[row])
		return;
	linked[row] = true;
	lst[sp++] = row;
	while (sp) {
		size_t r = lst[--sp];
		for (size_t k = first[r + 1]; k < first[r + 2]; k++)
			if (!linked[kids[k].row]) {
				linked[kids[k].row] = true;
				lst[sp++] = kids[k].row;
			}
	}
}

struct frame {
	size_t row;
	const struct top_row *r; /* the row as the parent's child (with its count) */
	unsigned depth;
	bool leave; /* the walk leaves row: it is no longer an ancestor */
};

size_t sitetree_order(const struct top_opts *o, const Mtrace__Stats *st, const struct top_row *rows,
    size_t n, int (*cmp)(const void *, const void *, void *), void *ctx, struct top_row **out)
{
	size_t ne = st->n_site_edges, nk = 0, m = 0, sp = 0;
	struct row_key *keys = calloc(n + 1, sizeof(*keys));
	size_t *first = calloc(n + 3, sizeof(*first));
	struct kid *kids = calloc(ne + 1, sizeof(*kids));
	long *kid_parent = calloc(ne + 1, sizeof(*kid_parent));
	bool *expanded = calloc(n + 1, sizeof(*expanded));
	bool *ancestor = calloc(n + 1, sizeof(*ancestor));
	bool *reached = calloc(n + 1, sizeof(*reached));
	bool *shown = calloc(n + 1, sizeof(*shown));
	bool *linked = calloc(n + 1, sizeof(*linked));
	size_t *lst = calloc(n + 1, sizeof(*lst));
	/* every row is entered once per edge into it and once as a root, and left once */
	struct frame *stack = calloc(ne + 2 * n + 2, sizeof(*stack));
	struct top_row *res = calloc(ne + n + 1, sizeof(*res));
	struct top_row *lab = calloc(n + 1, sizeof(*lab));
	const Mtrace__ThreadStats **thr = calloc(st->n_threads + 1, sizeof(*thr));
	size_t nthr = 0;
	*out = NULL;
	if (!keys || !first || !kids || !kid_parent || !expanded || !ancestor || !reached ||
	    !shown || !linked || !lst || !stack || !res || !lab || !thr)
		goto done;
	nthr = labelled_threads(st, thr);
	for (size_t i = 0; i < n; i++) {
		keys[i] = (struct row_key){ rows[i].s->domid, rows[i].s->index, i };
		lab[i] = rows[i];
		site_labels(thr, nthr, &lab[i]);
	}
	qsort(keys, n, sizeof(*keys), row_key_cmp);
	/* the edges whose child we show, with a parent we show (or none: a root) */
	for (size_t e = 0; e < ne; e++) {
		const Mtrace__SiteEdge *x = st->site_edges[e];
		long c = row_key_find(keys, n, x->domid, x->child);
		long p = x->parent < 0 ? -1 : row_key_find(keys, n, x->domid, (uint32_t)x->parent);
		if (c < 0 || (x->parent >= 0 && p < 0))
			continue;
		kids[nk].row = (size_t)c;
		kids[nk].r = lab[c];
		kids[nk].r.made = x->count;
		kids[nk].r.made_known = true;
		kid_parent[nk] = p;
		reached[c] = true;
		first[(size_t)(p + 1) + 1]++;
		nk++;
	}
	/* counting sort of the kids by parent slot, then each list in column order */
	for (size_t p = 1; p < n + 2; p++)
		first[p] += first[p - 1];
	{
		struct kid *sorted = calloc(nk + 1, sizeof(*sorted));
		size_t *fill = calloc(n + 2, sizeof(*fill));
		if (!sorted || !fill) {
			free(sorted);
			free(fill);
			goto done;
		}
		for (size_t k = 0; k < nk; k++) {
			size_t slot = (size_t)(kid_parent[k] + 1);
			sorted[first[slot] + fill[slot]++] = kids[k];
		}
		free(kids);
		free(fill);
		kids = sorted;
	}
	struct sort_kids sk = { cmp, ctx };
	for (size_t p = 0; p < n + 1; p++)
		qsort_r(kids + first[p], first[p + 1] - first[p], sizeof(*kids), kid_cmp, &sk);

	/*
	 * Roots: the sites threads with no site made, then (in column order) those no edge
	 * we show leads to (their parents' edges were dropped or filtered out), then what
	 * is left: a cycle no root reaches (not what a fold hides).
	 */
	for (int pass = 0; pass < 3; pass++) {
		size_t nroots = pass == 0 ? first[1] : n;
		for (size_t q = 0; q < nroots; q++) {
			size_t root = pass == 0 ? kids[q].row : q;
			if ((pass == 1 && (shown[root] || reached[root])) ||
			    (pass == 2 && linked[root]))
				continue;
			link_from(root, kids, first, linked, lst);
			stack[sp++] =
			    (struct frame){ root, pass == 0 ? &kids[q].r : &lab[root], 0, false };
			while (sp) {
				struct frame f = stack[--sp];
				if (f.leave) {
					ancestor[f.row] = false;
					continue;
				}
				shown[f.row] = true;
				res[m] = *f.r;
				res[m].depth = f.depth;
				res[m].node = NODE_OPEN;
				size_t a = first[f.row + 1], b = first[f.row + 2];
				if (ancestor[f.row])
					res[m].node = NODE_CYCLE;
				else if (expanded[f.row])
					res[m].node = a < b ? NODE_ABOVE : NODE_OPEN;
				else if (a < b &&
				    ((o->tree_depth && f.depth >= o->tree_depth) ||
				        sitetree_folded(o, f.r->s->domid, f.r->s->index)))
					res[m].node = NODE_FOLDED;
				else {
					expanded[f.row] = true;
					ancestor[f.row] = true;
					stack[sp++] = (struct frame){ f.row, NULL, 0, true };
					/* last child first: the first one is walked first */
					for (size_t k = b; k-- > a;)
						stack[sp++] = (struct frame){ kids[k].row,
							&kids[k].r, f.depth + 1, false };
				}
				m++;
			}
		}
	}
	*out = res;
	res = NULL;
done:
	free(keys);
	free(first);
	free(kids);
	free(kid_parent);
	free(expanded);
	free(ancestor);
	free(reached);
	free(shown);
	free(linked);
	free(lst);
	free(stack);
	free(res);
	free(lab);
	free(thr);
	return *out ? m : 0;
}

bool sitetree_folded(const struct top_opts *o, uint32_t domid, uint32_t index)
{
	for (unsigned i = 0; i < o->n_folds; i++)
		if (o->folds[i].domid == domid && o->folds[i].index == index)
			return true;
	return false;
}

bool sitetree_fold(struct top_opts *o, struct top_site_ref ref, bool fold)
{
	for (unsigned i = 0; i < o->n_folds; i++)
		if (o->folds[i].domid == ref.domid && o->folds[i].index == ref.index) {
			if (!fold)
				o->folds[i] = o->folds[--o->n_folds];
			return true;
		}
	if (!fold)
		return true;
	if (o->n_folds >= TOP_FOLDS_MAX)
		return false;
	o->folds[o->n_folds++] = ref;
	return true;
}
