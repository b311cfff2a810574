/*
 * view.c - turn the latest Stats into the lines mtrace-top shows: a header (host and one
 * line per domain, as xentop's) and the current view's table.  Curses and batch mode
 * both print through here (xentop's print() pattern), so batch tests see what a
 * person sees.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "top.h"

#define LINE_MAX_TOP    1024
#define TREE_INDENT_MAX 24 /* deeper levels share the last indent */
#define BECOMES_HOPS    64 /* bound on following becomes chains (guests may loop them) */

/*
 * Every line leaves through here.  Labels, names and failure strings come from guests:
 * a control byte in one must not reach the terminal (an escape sequence would redraw
 * or retitle it), so they print as '?'.  UTF-8 passes.
 */
static bool out(struct top_sink *s, enum top_attr a, const char *text)
{
	char line[LINE_MAX_TOP];
	size_t i;
	for (i = 0; text[i] && i + 1 < sizeof(line); i++)
		line[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
	line[i] = '\0';
	return s->line(s, a, line);
}

struct sort_ctx {
	const struct top_field *f;
	bool reverse;
};

static const Mtrace__DomainStats *find_domain(const Mtrace__Stats *s, uint32_t domid, size_t *idx)
{
	for (size_t i = 0; i < s->n_domains; i++)
		if (s->domains[i]->domid == domid) {
			if (idx)
				*idx = i;
			return s->domains[i];
		}
	return NULL;
}

static bool text_matches(const char *hay, const char *needle)
{
	return hay && strcasestr(hay, needle) != NULL;
}

static bool row_passes(
    const struct top_opts *o, uint32_t domid, const Mtrace__DomainStats *d, const char *label)
{
	if (o->domid >= 0 && (int64_t)domid != o->domid)
		return false;
	if (o->domname[0] && (!d || !d->name || strcmp(d->name, o->domname) != 0))
		return false;
	if (!o->filter[0])
		return true;
	return text_matches(label, o->filter) || (d && text_matches(d->name, o->filter));
}

/* Ties broken by domain then id (or label) so that equal rows do not dance. */
static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct top_row *x = a, *y = b;
	const struct sort_ctx *c = arg;
	int r = c->f->cmp(x, y);
	if (c->reverse)
		r = -r;
	if (r)
		return r;
	uint32_t dx = x->t ? x->t->domid : x->s ? x->s->domid : x->l->domid;
	uint32_t dy = y->t ? y->t->domid : y->s ? y->s->domid : y->l->domid;
	if (dx != dy)
		return dx < dy ? -1 : 1;
	if (x->t)
		return x->t->id < y->t->id ? -1 : x->t->id > y->t->id;
	if (x->s)
		return x->s->index < y->s->index ? -1 : x->s->index > y->s->index;
	return strcmp(x->l->label ? x->l->label : "", y->l->label ? y->l->label : "");
}

/*
 * The latest guest time of each domain, from the threads we were sent: a pending
 * thread's pending time runs to the domain's last event.  Ages are measured on the
 * guest's clock, which need not be ours (a domU's monotonic clock is its own).
 */
static void domain_nows(const Mtrace__Stats *s, uint64_t *now)
{
	for (size_t i = 0; i < s->n_domains; i++)
		now[i] = 0;
	for (size_t i = 0; i < s->n_threads; i++) {
		const Mtrace__ThreadStats *t = s->threads[i];
		size_t di;
		if (!find_domain(s, t->domid, &di))
			continue;
		uint64_t end = t->state == MTRACE__THREAD_STATE__PENDING
		    ? t->created_ns + t->pending_ns
		    : t->resolved_ns;
		if (end > now[di])
			now[di] = end;
	}
}

static size_t thread_rows(const struct top_opts *o, const Mtrace__Stats *s, struct top_row *rows)
{
	uint64_t *now = calloc(s->n_domains + 1, sizeof(*now));
	size_t n = 0;
	if (!now)
		return 0;
	domain_nows(s, now);
	for (size_t i = 0; i < s->n_threads; i++) {
		const Mtrace__ThreadStats *t = s->threads[i];
		size_t di = 0;
		const Mtrace__DomainStats *d = find_domain(s, t->domid, &di);
		if (!row_passes(o, t->domid, d, t->label))
			continue;
		rows[n] = (struct top_row){ .t = t, .d = d, .dom_now = d ? now[di] : 0 };
		n++;
	}
	free(now);
	return n;
}

static size_t label_rows(const struct top_opts *o, const Mtrace__Stats *s, struct top_row *rows)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_labels; i++) {
		const Mtrace__LabelStats *l = s->labels[i];
		const Mtrace__DomainStats *d = find_domain(s, l->domid, NULL);
		if (!row_passes(o, l->domid, d, l->label))
			continue;
		rows[n++] = (struct top_row){ .l = l, .d = d };
	}
	return n;
}

static size_t site_rows(const struct top_opts *o, const Mtrace__Stats *s, struct top_row *rows)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_sites; i++) {
		const Mtrace__SiteStats *x = s->sites[i];
		const Mtrace__DomainStats *d = find_domain(s, x->domid, NULL);
		if (!row_passes(o, x->domid, d, x->site))
			continue;
		rows[n++] = (struct top_row){ .s = x, .d = d };
	}
	return n;
}

/* The end of a becomes chain that starts at row i (a row that became nothing we hold
 * is its own end). */
static size_t chain_end(const struct top_row *rows, const struct row_key *keys, size_t n, size_t i)
{
	for (unsigned hop = 0; hop < BECOMES_HOPS; hop++) {
		const Mtrace__ThreadStats *t = rows[i].t;
		if (t->becomes < 0)
			break;
		long j = row_key_find(keys, n, t->domid, t->becomes);
		if (j < 0 || (size_t)j == i)
			break;
		i = (size_t)j;
	}
	return i;
}

/*
 * Order rows[0..n) (already sorted by the chosen column) as a forest: children under
 * their parent, siblings in column order.  Threads that became another thread are
 * folded into the end of their chain; a parent that is absent (evicted, not in the
 * top N) makes a root; parent cycles written by a broken guest end as roots too.
 * Returns the new row count (folded rows drop out).
 */
static size_t tree_order(struct top_row *rows, size_t n)
{
	struct row_key *keys = calloc(n + 1, sizeof(*keys));
	long *parent = calloc(n + 1, sizeof(*parent));
	long *first = calloc(n + 1, sizeof(*first));
	long *next = calloc(n + 1, sizeof(*next));
	bool *hidden = calloc(n + 1, sizeof(*hidden));
	bool *done = calloc(n + 1, sizeof(*done));
	size_t *stack = calloc(n + 1, sizeof(*stack));
	unsigned *depth = calloc(n + 1, sizeof(*depth));
	struct top_row *out = calloc(n + 1, sizeof(*out));
	size_t m = 0;
	if (!keys || !parent || !first || !next || !hidden || !done || !stack || !depth || !out) {
		m = n; /* out of memory: leave the flat, sorted list */
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct row_key){ rows[i].t->domid, rows[i].t->id, i };
	qsort(keys, n, sizeof(*keys), row_key_cmp);
	for (size_t i = 0; i < n; i++) {
		size_t e = chain_end(rows, keys, n, i);
		if (e != i) {
			hidden[i] = true;
			if (!rows[e].folded++)
				rows[e].folded_from = rows[i].t->id;
		}
	}
	for (size_t i = 0; i < n; i++) {
		first[i] = -1;
		parent[i] = -1;
		long p = rows[i].t->parent >= 0
		    ? row_key_find(keys, n, rows[i].t->domid, rows[i].t->parent)
		    : -1;
		if (p >= 0)
			p = (long)chain_end(rows, keys, n, (size_t)p);
		if (p >= 0 && (size_t)p != i && !hidden[p])
			parent[i] = p;
	}
	/*
	 * X became Y: Y stands where X stood, under X's parent (Y itself is usually X's
	 * own child, which would otherwise make it a root).
	 */
	for (size_t i = 0; i < n; i++) {
		if (!hidden[i] || rows[i].t->parent < 0)
			continue;
		size_t e = chain_end(rows, keys, n, i);
		long p = row_key_find(keys, n, rows[i].t->domid, rows[i].t->parent);
		if (p >= 0)
			p = (long)chain_end(rows, keys, n, (size_t)p);
		if (p >= 0 && (size_t)p != e && !hidden[p])
			parent[e] = p;
	}
	/* Prepend in reverse so every child list keeps the column order. */
	for (size_t k = n; k-- > 0;)
		if (!hidden[k] && parent[k] >= 0) {
			next[k] = first[parent[k]];
			first[parent[k]] = (long)k;
		}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t r = 0; r < n; r++) {
			/* Pass 0: true roots.  Pass 1: whatever a cycle kept unreachable. */
			if (hidden[r] || done[r] || (pass == 0 && parent[r] >= 0))
				continue;
			size_t sp = 0;
			stack[sp++] = r;
			depth[r] = 0;
			while (sp) {
				size_t i = stack[--sp];
				if (done[i])
					continue;
				done[i] = true;
				out[m] = rows[i];
				out[m].depth = depth[i];
				m++;
				/* Push children last-first so the first child pops first. */
				size_t mark = sp;
				for (long c = first[i]; c >= 0; c = next[c])
					if (!done[c] && sp < n) {
						stack[sp++] = (size_t)c;
						depth[c] = depth[i] + 1;
					}
				for (size_t a = mark, b = sp; a + 1 < b; a++, b--) {
					size_t tmp = stack[a];
					stack[a] = stack[b - 1];
					stack[b - 1] = tmp;
				}
			}
		}
	}
	memcpy(rows, out, m * sizeof(*rows));
out:
	free(keys);
	free(parent);
	free(first);
	free(next);
	free(hidden);
	free(done);
	free(stack);
	free(depth);
	free(out);
	return m;
}

static void put_cell(
    char *line, size_t *len, const struct top_field *f, int w, const char *cell, bool last)
{
	int room = LINE_MAX_TOP - 1 - (int)*len;
	if (room <= 0)
		return;
	int k;
	if (last && f->left)
		k = snprintf(line + *len, (size_t)room, "%s", cell);
	else
		k = snprintf(line + *len, (size_t)room, f->left ? "%-*s " : "%*s ", w, cell);
	*len += k < room ? (size_t)k : (size_t)room - 1;
}

static void tree_label(char *buf, size_t n, const struct top_row *r, const struct top_field *f)
{
	char cell[512];
	size_t len = 0;
	unsigned d = r->depth < TREE_INDENT_MAX ? r->depth : TREE_INDENT_MAX;
	buf[0] = '\0';
	for (unsigned i = 1; i < d && len + 3 < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "  ");
	if (d && len + 4 < n)
		len += (size_t)snprintf(buf + len, n - len, "`- ");
	f->print(cell, sizeof(cell), r);
	if (len < n)
		len += (size_t)snprintf(buf + len, n - len, "%s", cell);
	if (r->folded && len < n)
		snprintf(buf + len, n - len, " (was %" PRId64 "%s)", r->folded_from,
		    r->folded > 1 ? ", ..." : "");
}

/* A column is as wide as its widest cell on this screen (ids like 1099511628695, long
 * domain names), never narrower than its table width or its title. */
static void column_widths(const struct top_opts *o, const struct top_table *tab,
    const struct top_row *rows, size_t n, int *w)
{
	char cell[512];
	int sf = o->sort[o->view];
	for (unsigned c = 0; c < tab->n; c++) {
		int tw = (int)strlen(tab->f[c].title) + ((int)c == sf);
		w[c] = tab->f[c].width > tw ? tab->f[c].width : tw;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned c = 0; c + 1 < tab->n; c++) {
			tab->f[c].print(cell, sizeof(cell), &rows[i]);
			int l = (int)strlen(cell);
			if (l > w[c])
				w[c] = l;
		}
}

static bool emit_table(const struct top_opts *o, const struct top_table *tab,
    const struct top_row *rows, size_t n, struct top_sink *s)
{
	char line[LINE_MAX_TOP], cell[512];
	size_t len = 0;
	int sf = o->sort[o->view];
	int w[TOP_MAX_FIELDS];
	column_widths(o, tab, rows, n, w);
	line[0] = '\0';
	for (unsigned c = 0; c < tab->n; c++) {
		/* The sort column's title is marked, as htop does. */
		char title[32];
		snprintf(title, sizeof(title), "%s%s", tab->f[c].title,
		    (int)c == sf ? (o->reverse ? "^" : "v") : "");
		put_cell(line, &len, &tab->f[c], w[c], title, c + 1 == tab->n);
	}
	if (!out(s, ATTR_TITLE, line))
		return false;
	bool ok = true;
	for (size_t i = 0; i < n && ok; i++) {
		len = 0;
		line[0] = '\0';
		for (unsigned c = 0; c < tab->n; c++) {
			const struct top_field *f = &tab->f[c];
			if ((o->view == VIEW_TREE || o->view == VIEW_SITE_TREE) && c + 1 == tab->n)
				tree_label(cell, sizeof(cell), &rows[i], f);
			else
				f->print(cell, sizeof(cell), &rows[i]);
			put_cell(line, &len, f, w[c], cell, c + 1 == tab->n);
		}
		s->row = (long)i;
		ok = out(s, s->cursor == (long)i ? ATTR_SELECTED : ATTR_NORMAL, line);
	}
	s->row = -1;
	return ok;
}

static void counters_text(const Mtrace__DomainStats *d, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < d->n_counters && len + 1 < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s=%" PRId64, i ? " " : "",
		    d->counters[i]->name, d->counters[i]->value);
	if (len >= n)
		len = n - 1;
	if (!len)
		snprintf(buf, n, "-");
}

static bool emit_header(const struct top_opts *o, const struct top_model *m, struct top_sink *s)
{
	const Mtrace__Stats *st = m->stats;
	char line[LINE_MAX_TOP], tbuf[32], desc[256];
	uint64_t live = 0, total = 0, ended = 0;
	double rate = 0;
	for (size_t i = 0; i < st->n_domains; i++) {
		live += st->domains[i]->live_threads;
		total += st->domains[i]->threads_total;
		ended += st->domains[i]->threads_ended;
		rate += st->domains[i]->rate_1s;
	}
	time_t secs = (time_t)(st->time_ns / 1000000000u);
	struct tm tm;
	localtime_r(&secs, &tm);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	snprintf(line, sizeof(line),
	    "mtrace-top %s - %s  host %s  domains %zu  threads %" PRIu64 " live %" PRIu64
	    " total %" PRIu64 " ended  %.0f ev/s  clients %u%s",
	    MTRACE_VERSION, tbuf, m->host[0] ? m->host : "?", st->n_domains, live, total, ended,
	    rate, st->clients, st->dropped_for_client ? "  (updates dropped)" : "");
	if (!out(s, ATTR_BOLD, line))
		return false;
	view_describe(o, desc, sizeof(desc));
	snprintf(line, sizeof(line), "%s%s%s", desc, m->note[0] ? "  | " : "", m->note);
	if (!out(s, ATTR_DIM, line))
		return false;
	/* The name column as wide as the longest name shown (the others hold numbers that
	 * fit their widths). */
	int nw = 12;
	for (size_t i = 0; i < st->n_domains; i++) {
		const char *nm = st->domains[i]->name;
		int l = nm ? (int)strlen(nm) : 0;
		if (l > nw && l < 128)
			nw = l;
	}
	snprintf(line, sizeof(line),
	    "%-*s %5s %-8s %6s %9s %12s %8s %8s %6s %8s %8s %6s %6s %-15s %8s %s", nw, "DOMAIN",
	    "ID", "STATE", "KIND", "EV/S", "EVENTS", "LOST", "CORRUPT", "LIVE", "THREADS", "ENDED",
	    "%RUN", "%STEAL", "CLOCK", "CLK-UNC", "COUNTERS");
	if (!out(s, ATTR_TITLE, line))
		return false;
	if (!st->n_domains && !out(s, ATTR_NORMAL, "(no traced domains)"))
		return false;
	for (size_t i = 0; i < st->n_domains; i++) {
		const Mtrace__DomainStats *d = st->domains[i];
		char counters[512], state[16], run[16] = "-", steal[16] = "-", unc[16] = "-";
		double vr, vs;
		const Mtrace__ClockMap *cm = session_clock_map(m, d);
		counters_text(d, counters, sizeof(counters));
		/* how its clock lies on the host timeline: the source and the half-width of
		 * the interval its offset is known to (unknown: none) */
		if (cm && cm->source != MTRACE__CLOCK_MAP__SOURCE__UNKNOWN)
			fmt_duration(unc, sizeof(unc), cm->uncertainty_ns);
		if (vcpu_rate(m, d->domid, &vr, &vs)) { /* the hypervisor source's (vcpu.c) */
			snprintf(run, sizeof(run), "%.1f", vr);
			snprintf(steal, sizeof(steal), "%.1f", vs);
		}
		/* One word, so the column stays a column; the full status is in mtrace-cat. */
		snprintf(state, sizeof(state), "%s",
		    d->state && d->state[0] ? d->state
		        : d->alive          ? "running"
		                            : "dead");
		state[strcspn(state, " :")] = '\0';
		snprintf(line, sizeof(line),
		    "%-*s %5u %-8s %6s %9.0f %12" PRIu64 " %8" PRIu64 " %8" PRIu64 " %6" PRIu64
		    " %8" PRIu64 " %8" PRIu64 " %6s %6s %-15s %8s %s",
		    nw, d->name && d->name[0] ? d->name : "?", d->domid, state,
		    d->legacy ? "legacy" : "ring", d->rate_1s, d->events, d->lost, d->corrupt,
		    d->live_threads, d->threads_total, d->threads_ended, run, steal,
		    cm ? json_clock_source(cm->source) : "-", unc, counters);
		if (!out(s, ATTR_NORMAL, line))
			return false;
	}
	/* Below the rows, in parentheses (no domain row, as "(no traced domains)"), and only
	 * for a guest it concerns: its label figures are short of what it wrote. */
	for (size_t i = 0; i < st->n_domains; i++) {
		const Mtrace__DomainStats *d = st->domains[i];
		if (!d->labels_dropped)
			continue;
		snprintf(line, sizeof(line),
		    "(%s, id %u: %" PRIu64 " label events dropped, past max_labels_per_guest"
		    " distinct labels)",
		    d->name && d->name[0] ? d->name : "?", d->domid, d->labels_dropped);
		if (!out(s, ATTR_BOLD, line))
			return false;
	}
	return out(s, ATTR_NORMAL, "");
}

void view_describe(const struct top_opts *o, char *buf, size_t n)
{
	const struct top_table *t = fields_table(o->view);
	int sf = o->sort[o->view];
	char dom[80] = "all";
	if (o->domid >= 0)
		snprintf(dom, sizeof(dom), "%" PRId64, o->domid);
	else if (o->domname[0])
		snprintf(dom, sizeof(dom), "%s", o->domname);
	char depth[32] = "";
	if (o->view == VIEW_SITE_TREE && o->tree_depth)
		snprintf(depth, sizeof(depth), " (depth %u%s)", o->tree_depth,
		    o->n_folds ? ", folds" : "");
	else if (o->view == VIEW_SITE_TREE && o->n_folds)
		snprintf(depth, sizeof(depth), " (%u folded)", o->n_folds);
	snprintf(buf, n, "view %s%s  sort %s%s  filter %s%s%s  domain %s  every %.1fs%s",
	    o->view == VIEW_TREE ? "tree" : t->name, depth,
	    sf >= 0 && (unsigned)sf < t->n ? t->f[sf].title : "?", o->reverse ? " (reversed)" : "",
	    o->filter[0] ? "'" : "", o->filter[0] ? o->filter : "none", o->filter[0] ? "'" : "",
	    dom, o->delay_ms / 1000.0, o->paused ? "  [PAUSED]" : "");
}

void view_render(const struct top_opts *o, const struct top_model *m, struct top_sink *s)
{
	if (!m->stats) {
		out(s, ATTR_BOLD,
		    "mtrace-top " MTRACE_VERSION " - waiting for statistics from mtraced");
		return;
	}
	if (!emit_header(o, m, s))
		return;
	const Mtrace__Stats *st = m->stats;
	const struct top_table *tab = fields_table(o->view);
	bool by_site = o->view == VIEW_SITES || o->view == VIEW_SITE_TREE;
	size_t cap = (o->view == VIEW_LABELS ? st->n_labels
	                     : by_site       ? st->n_sites
	                                     : st->n_threads) +
	    1;
	struct top_row *rows = calloc(cap, sizeof(*rows));
	if (!rows) {
		out(s, ATTR_BOLD, "(out of memory)");
		return;
	}
	size_t n = o->view == VIEW_LABELS ? label_rows(o, st, rows)
	    : by_site                     ? site_rows(o, st, rows)
	                                  : thread_rows(o, st, rows);
	int sf = o->sort[o->view];
	if (sf < 0 || (unsigned)sf >= tab->n)
		sf = (int)tab->default_sort;
	struct sort_ctx ctx = { &tab->f[sf], o->reverse };
	qsort_r(rows, n, sizeof(*rows), row_cmp, &ctx);
	if (o->view == VIEW_TREE)
		n = tree_order(rows, n);
	if (o->view == VIEW_SITE_TREE) {
		struct top_row *tree;
		n = sitetree_order(o, st, rows, n, row_cmp, &ctx, &tree);
		free(rows);
		if (!tree) {
			out(s, ATTR_BOLD, "(out of memory)");
			return;
		}
		rows = tree;
	}
	/* the cursor stays on its site while the tree changes under it (htop keeps a pid):
	 * on the row of that site nearest to where it was */
	long near = -1;
	for (size_t i = 0; s->follow && o->view == VIEW_SITE_TREE && i < n; i++)
		if (rows[i].s->domid == s->cursor_ref.domid &&
		    rows[i].s->index == s->cursor_ref.index &&
		    (near < 0 || labs((long)i - s->cursor) < labs(near - s->cursor)))
			near = (long)i;
	if (near >= 0)
		s->cursor = near;
	s->cursor_site = o->view == VIEW_SITE_TREE && s->cursor >= 0 && (size_t)s->cursor < n;
	if (s->cursor_site)
		s->cursor_ref =
		    (struct top_site_ref){ rows[s->cursor].s->domid, rows[s->cursor].s->index };
	emit_table(o, tab, rows, n, s);
	if (by_site && !st->n_sites && !st->sites_omitted)
		out(s, ATTR_DIM, "(no creation sites: the guests shown record none)");
	if (by_site && st->sites_omitted) {
		char line[96];
		snprintf(line, sizeof(line), "%u sites omitted (mtraced's frame limit)",
		    st->sites_omitted);
		out(s, ATTR_DIM, line);
	}
	free(rows);
}
