/*
 * sitetree.c - unit tests of client/top/sitetree.c, mtrace-top's creation tree by site,
 * on graphs the sites-guest test does not make: a site made from two sites (shown
 * [above] the second time), a self edge and a mutual cycle ([cycle]), a cycle no root
 * reaches, a site no edge leads to, an edge from a site filtered out, folds by hand and
 * by level (what they hide is not a root), two domains with the same site numbers,
 * the manual labels of a site's threads, and the cursor following its site as the
 * tree is drawn again.
 */
#include <stdlib.h>
#include <string.h>

#include "top.h"
#include "unit.h"

#define NSITES 10

struct graph {
	Mtrace__SiteStats site[NSITES];
	Mtrace__SiteStats *sitep[NSITES];
	Mtrace__SiteEdge edge[16];
	Mtrace__SiteEdge *edgep[16];
	Mtrace__ThreadStats thr[4];
	Mtrace__ThreadStats *thrp[4];
	Mtrace__Stats st;
	struct top_row rows[NSITES];
	size_t nrows;
};

static void site(struct graph *g, uint32_t domid, uint32_t index)
{
	Mtrace__SiteStats *s = &g->site[g->st.n_sites];
	mtrace__site_stats__init(s);
	s->domid = domid;
	s->index = index;
	s->site = (char *)"s";
	g->sitep[g->st.n_sites++] = s;
	g->rows[g->nrows++] = (struct top_row){ .s = s };
}

static void edge(struct graph *g, uint32_t domid, int32_t parent, uint32_t child, uint64_t n)
{
	Mtrace__SiteEdge *e = &g->edge[g->st.n_site_edges];
	mtrace__site_edge__init(e);
	e->domid = domid;
	e->parent = parent;
	e->child = child;
	e->count = n;
	g->edgep[g->st.n_site_edges++] = e;
}

static void thread(struct graph *g, uint32_t domid, int32_t site_index, const char *label)
{
	Mtrace__ThreadStats *t = &g->thr[g->st.n_threads];
	mtrace__thread_stats__init(t);
	t->domid = domid;
	t->site_index = site_index;
	t->label = (char *)label;
	g->thrp[g->st.n_threads++] = t;
}

/*
 * Domain 1: no-site -> 1 (2), 1 -> 1, 1 -> 2, 2 -> 3, 3 -> 2, no-site -> 4, 4 -> 2;
 * 5 <-> 6 and nothing leads to them; 7 alone; 9 (filtered out, not a row) -> 8.
 * Domain 2: no-site -> 1.
 */
static void build(struct graph *g)
{
	memset(g, 0, sizeof(*g));
	mtrace__stats__init(&g->st);
	g->st.sites = g->sitep;
	g->st.site_edges = g->edgep;
	g->st.threads = g->thrp;
	for (uint32_t i = 1; i <= 8; i++)
		site(g, 1, i);
	site(g, 2, 1);
	edge(g, 1, -1, 1, 2);
	edge(g, 1, 1, 1, 5);
	edge(g, 1, 1, 2, 3);
	edge(g, 1, 2, 3, 1);
	edge(g, 1, 3, 2, 1);
	edge(g, 1, -1, 4, 1);
	edge(g, 1, 4, 2, 7);
	edge(g, 1, 5, 6, 1);
	edge(g, 1, 6, 5, 1);
	edge(g, 1, 9, 8, 1);
	edge(g, 2, -1, 1, 3);
	thread(g, 1, 2, "conn");
	thread(g, 1, 2, "conn");
	thread(g, 1, 2, "other");
	thread(g, 2, 2, "elsewhere"); /* domain 2 has no site 2: no row takes it */
}

/* Domain, then site index, ascending. */
static int by_index(const void *a, const void *b, void *ctx)
{
	const struct top_row *x = a, *y = b;
	(void)ctx;
	if (x->s->domid != y->s->domid)
		return x->s->domid < y->s->domid ? -1 : 1;
	return x->s->index < y->s->index ? -1 : x->s->index > y->s->index;
}

struct want {
	uint32_t domid, index;
	unsigned depth;
	int node;
	long made; /* -1: none */
};

static void expect(const struct top_opts *o, struct graph *g, const struct want *w, size_t nw)
{
	struct top_row *out;
	size_t n = sitetree_order(o, &g->st, g->rows, g->nrows, by_index, NULL, &out);
	REQUIRE(out != NULL);
	CHECK(n == nw, "%zu rows, want %zu", n, nw);
	for (size_t i = 0; i < n && i < nw; i++) {
		const struct top_row *r = &out[i];
		long made = r->made_known ? (long)r->made : -1;
		CHECK(r->s->domid == w[i].domid && r->s->index == w[i].index &&
		        r->depth == w[i].depth && (int)r->node == w[i].node && made == w[i].made,
		    "row %zu: dom %u site %u depth %u node %d made %ld, want %u %u %u %d %ld", i,
		    r->s->domid, r->s->index, r->depth, (int)r->node, made, w[i].domid, w[i].index,
		    w[i].depth, w[i].node, w[i].made);
	}
	free(out);
}

static const struct top_opts plain = { .domid = -1 };

static void graph(void)
{
	struct graph g;
	build(&g);
	const struct want w[] = {
		{ 1, 1, 0, NODE_OPEN, 2 },  /* made by the thread with no site */
		{ 1, 1, 1, NODE_CYCLE, 5 }, /* its threads make threads of its own site */
		{ 1, 2, 1, NODE_OPEN, 3 },  /* first place: walked here */
		{ 1, 3, 2, NODE_OPEN, 1 },  /* */
		{ 1, 2, 3, NODE_CYCLE, 1 }, /* 2 -> 3 -> 2 */
		{ 1, 4, 0, NODE_OPEN, 1 },  /* */
		{ 1, 2, 1, NODE_ABOVE, 7 }, /* made from two sites: once walked */
		{ 2, 1, 0, NODE_OPEN, 3 },  /* another domain's site 1 */
		{ 1, 7, 0, NODE_OPEN, -1 }, /* no edge at all */
		{ 1, 8, 0, NODE_OPEN, -1 }, /* its parent site is not shown */
		{ 1, 5, 0, NODE_OPEN, -1 }, /* a cycle no root reaches: one of it a root */
		{ 1, 6, 1, NODE_OPEN, 1 },  /* */
		{ 1, 5, 2, NODE_CYCLE, 1 }, /* */
	};
	expect(&plain, &g, w, sizeof(w) / sizeof(w[0]));
}

static void folds(void)
{
	struct graph g;
	struct top_opts o = plain;
	build(&g);
	/* site 2 folded by hand: 3 is under it only, and is not a root either */
	CHECK(sitetree_fold(&o, (struct top_site_ref){ 1, 2 }, true));
	CHECK(sitetree_folded(&o, 1, 2) && !sitetree_folded(&o, 2, 2));
	const struct want w[] = {
		{ 1, 1, 0, NODE_OPEN, 2 },
		{ 1, 1, 1, NODE_CYCLE, 5 },
		{ 1, 2, 1, NODE_FOLDED, 3 },
		{ 1, 4, 0, NODE_OPEN, 1 },
		{ 1, 2, 1, NODE_FOLDED, 7 },
		{ 2, 1, 0, NODE_OPEN, 3 },
		{ 1, 7, 0, NODE_OPEN, -1 },
		{ 1, 8, 0, NODE_OPEN, -1 },
		{ 1, 5, 0, NODE_OPEN, -1 },
		{ 1, 6, 1, NODE_OPEN, 1 },
		{ 1, 5, 2, NODE_CYCLE, 1 },
	};
	expect(&o, &g, w, sizeof(w) / sizeof(w[0]));
	/* unfolded, then one level only: the roots and their children */
	CHECK(sitetree_fold(&o, (struct top_site_ref){ 1, 2 }, false) && o.n_folds == 0);
	o.tree_depth = 1;
	const struct want w1[] = {
		{ 1, 1, 0, NODE_OPEN, 2 },
		{ 1, 1, 1, NODE_CYCLE, 5 },
		{ 1, 2, 1, NODE_FOLDED, 3 },
		{ 1, 4, 0, NODE_OPEN, 1 },
		{ 1, 2, 1, NODE_FOLDED, 7 },
		{ 2, 1, 0, NODE_OPEN, 3 },
		{ 1, 7, 0, NODE_OPEN, -1 },
		{ 1, 8, 0, NODE_OPEN, -1 },
		{ 1, 5, 0, NODE_OPEN, -1 },
		{ 1, 6, 1, NODE_FOLDED, 1 },
	};
	expect(&o, &g, w1, sizeof(w1) / sizeof(w1[0]));
	/* the fold table is bounded */
	o.n_folds = 0;
	for (uint32_t i = 0; i < TOP_FOLDS_MAX; i++)
		CHECK(sitetree_fold(&o, (struct top_site_ref){ 3, i }, true));
	CHECK(!sitetree_fold(&o, (struct top_site_ref){ 3, TOP_FOLDS_MAX }, true));
	CHECK(sitetree_fold(&o, (struct top_site_ref){ 3, 0 }, true),
	    "already folded: no room needed");
}

static void labels(void)
{
	struct graph g;
	struct top_row *out;
	build(&g);
	size_t n = sitetree_order(&plain, &g.st, g.rows, g.nrows, by_index, NULL, &out);
	REQUIRE(out != NULL);
	for (size_t i = 0; i < n; i++) {
		const struct top_row *r = &out[i];
		if (r->s->domid == 1 && r->s->index == 2)
			CHECK(r->labels[0] && !strcmp(r->labels[0], "conn") && r->labels[1] &&
			    !strcmp(r->labels[1], "other") && !r->more_labels);
		else
			CHECK(
			    !r->labels[0], "dom %u site %u has a label", r->s->domid, r->s->index);
	}
	free(out);
}

/* What view_render drew: the table rows' attributes, by row. */
struct capture {
	struct top_sink s;
	enum top_attr attr[64];
	long rows;
};

static bool capture_line(struct top_sink *s, enum top_attr a, const char *text)
{
	struct capture *c = (struct capture *)s;
	(void)text;
	if (s->row >= 0 && s->row < 64) {
		c->attr[s->row] = a;
		c->rows = s->row + 1;
	}
	return true;
}

/* The cursor stays on its site as the tree is drawn again, on the nearest of its rows. */
static void cursor(void)
{
	struct graph g;
	build(&g);
	struct top_opts o = plain;
	o.view = VIEW_SITE_TREE;
	for (int v = 0; v < VIEW_COUNT; v++)
		o.sort[v] = (int)fields_table((enum top_view)v)->default_sort;
	struct top_model m = { .stats = &g.st };
	struct capture c = { .s = { .line = capture_line, .cursor = 0, .row = -1 } };
	view_render(&o, &m, &c.s);
	REQUIRE(c.s.cursor_site && c.rows == 13);
	CHECK(c.attr[0] == ATTR_SELECTED && c.attr[1] == ATTR_NORMAL);
	/* site 2 of domain 1 is on two rows; from the last row, the cursor goes to the
	 * later one, from the first, to the earlier one */
	long first = -1, second = -1;
	for (long r = 0; r < 13; r++) {
		c.s.cursor = r;
		c.s.follow = false;
		view_render(&o, &m, &c.s);
		if (c.s.cursor_ref.domid == 1 && c.s.cursor_ref.index == 2)
			*(first < 0 ? &first : &second) = r;
	}
	REQUIRE(first >= 0 && second > first);
	c.s.cursor_ref = (struct top_site_ref){ 1, 2 };
	c.s.follow = true;
	c.s.cursor = 12;
	view_render(&o, &m, &c.s);
	CHECK(c.s.cursor == second && c.attr[second] == ATTR_SELECTED, "cursor %ld", c.s.cursor);
	c.s.cursor = 0;
	view_render(&o, &m, &c.s);
	CHECK(c.s.cursor == first && c.attr[first] == ATTR_SELECTED, "cursor %ld", c.s.cursor);
	/* a site no longer drawn: the cursor stays where it is */
	c.s.cursor_ref = (struct top_site_ref){ 7, 7 };
	c.s.cursor = 3;
	view_render(&o, &m, &c.s);
	CHECK(c.s.cursor == 3 && c.attr[3] == ATTR_SELECTED);
}

static void empty(void)
{
	struct graph g;
	struct top_row *out;
	memset(&g, 0, sizeof(g));
	mtrace__stats__init(&g.st);
	CHECK(sitetree_order(&plain, &g.st, g.rows, 0, by_index, NULL, &out) == 0 && out);
	free(out);
}

const struct unit_test unit_sitetree[] = {
	{ "sitetree", "graph", graph },
	{ "sitetree", "folds", folds },
	{ "sitetree", "labels", labels },
	{ "sitetree", "cursor", cursor },
	{ "sitetree", "empty", empty },
	{ "sitetree", NULL, NULL },
};
