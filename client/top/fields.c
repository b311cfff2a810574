/*
 * fields.c - the columns of mtrace-top: one table per view, each column its title,
 * width, sort letter, the daemon's sort key when it has one, comparator and printer
 * (xentop's fields[], systat's field_def).  Adding a column is adding a line here.
 *
 * Comparators return < 0 when a comes first in the column's natural order: largest
 * first for quantities, ascending for names and ids ('r' reverses).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ring-reader.h"
#include "top.h"

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y))

static const char *dom_name(const struct top_row *r)
{
	return r->d && r->d->name && r->d->name[0] ? r->d->name : "?";
}

static uint32_t row_domid(const struct top_row *r)
{
	return r->t ? r->t->domid : r->l ? r->l->domid : r->s ? r->s->domid : 0;
}

void fmt_duration(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.1fms", (double)ns / 1e6);
	else if (ns < 100000000000ull)
		snprintf(buf, n, "%.2fs", (double)ns / 1e9);
	else if (ns < 3600000000000ull)
		snprintf(buf, n, "%" PRIu64 "m%02" PRIu64 "s", ns / UINT64_C(60000000000),
		    ns / UINT64_C(1000000000) % 60);
	else
		snprintf(buf, n, "%" PRIu64 "h%02" PRIu64 "m", ns / UINT64_C(3600000000000),
		    ns / UINT64_C(60000000000) % 60);
}

/* Ids are u64 on the ring (sint64 on the wire only so that -1, "none", is short). */
static void print_tid(char *buf, size_t n, int64_t id)
{
	if (id == -1)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%" PRIu64, (uint64_t)id);
}

/* Age on the guest's own clock: from creation to the latest guest time we know. */
static uint64_t thread_age(const struct top_row *r)
{
	return r->dom_now > r->t->created_ns ? r->dom_now - r->t->created_ns : 0;
}

/* ---- thread columns ---- */

static int c_domain(const struct top_row *a, const struct top_row *b)
{
	int c = strcmp(dom_name(a), dom_name(b));
	return c ? c : CMP(row_domid(a), row_domid(b));
}
static void p_domain(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%s", dom_name(r));
}

static int c_tid(const struct top_row *a, const struct top_row *b)
{
	return CMP(a->t->id, b->t->id);
}
static void p_tid(char *buf, size_t n, const struct top_row *r)
{
	print_tid(buf, n, r->t->id);
}

static int c_type(const struct top_row *a, const struct top_row *b)
{
	return strcmp(mtrace_thread_type_name(a->t->type), mtrace_thread_type_name(b->t->type));
}
static void p_type(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%s", mtrace_thread_type_name(r->t->type));
}

static const char *state_name(const Mtrace__ThreadStats *t)
{
	switch (t->state) {
	case MTRACE__THREAD_STATE__PENDING:
		return "pending";
	case MTRACE__THREAD_STATE__RESOLVED:
		return "resolved";
	case MTRACE__THREAD_STATE__FAILED:
		return "failed";
	default:
		return "?";
	}
}
static int c_state(const struct top_row *a, const struct top_row *b)
{
	return CMP(a->t->state, b->t->state);
}
static void p_state(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%s", state_name(r->t));
}

static int c_parent(const struct top_row *a, const struct top_row *b)
{
	return CMP(a->t->parent, b->t->parent);
}
static void p_parent(char *buf, size_t n, const struct top_row *r)
{
	print_tid(buf, n, r->t->parent);
}

static int c_age(const struct top_row *a, const struct top_row *b)
{
	return CMP(thread_age(b), thread_age(a));
}
static void p_age(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, thread_age(r));
}

static int c_rate(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->t->events_rate, a->t->events_rate);
}
static void p_rate(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%.0f", r->t->events_rate);
}

static int c_reads(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->t->reads, a->t->reads);
}
static void p_reads(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%" PRIu64, r->t->reads);
}

static int c_resolves(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->t->resolves, a->t->resolves);
}
static void p_resolves(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%" PRIu64, r->t->resolves);
}

static int c_children(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->t->children, a->t->children);
}
static void p_children(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%" PRIu64, r->t->children);
}

static int c_pending(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->t->pending_ns, a->t->pending_ns);
}
static void p_pending(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, r->t->pending_ns);
}

static int c_running(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->t->running_ns, a->t->running_ns);
}
static void p_running(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, r->t->running_ns);
}

static int c_label(const struct top_row *a, const struct top_row *b)
{
	const char *x = a->t ? a->t->label : a->l->label, *y = b->t ? b->t->label : b->l->label;
	return strcmp(x ? x : "", y ? y : "");
}
static void p_label(char *buf, size_t n, const struct top_row *r)
{
	const char *l = r->t ? r->t->label : r->l->label;
	char autol[256];

	/* no label of its own: its creation site, marked as an automatic label */
	if (r->t && (!l || !l[0]) && r->t->site && r->t->site[0]) {
		snprintf(autol, sizeof(autol), "@%s", r->t->site);
		l = autol;
	}
	if (r->t && r->t->state == MTRACE__THREAD_STATE__FAILED && r->t->failure &&
	    r->t->failure[0])
		snprintf(buf, n, "%s [%s]", l && l[0] ? l : "-", r->t->failure);
	else
		snprintf(buf, n, "%s", l && l[0] ? l : "-");
}

static const struct top_field thread_fields[] = {
	{ "DOMAIN", 12, true, 'D', -1, c_domain, p_domain },
	{ "TID", 7, false, 'I', MTRACE__SORT_KEY__SORT_ID, c_tid, p_tid },
	{ "TYPE", 9, true, 'Y', -1, c_type, p_type },
	{ "STATE", 8, true, 'S', -1, c_state, p_state },
	{ "PARENT", 7, false, 'P', -1, c_parent, p_parent },
	{ "AGE", 8, false, 'A', MTRACE__SORT_KEY__SORT_AGE, c_age, p_age },
	{ "EV/S", 7, false, 'E', MTRACE__SORT_KEY__SORT_EVENTS, c_rate, p_rate },
	{ "READS", 6, false, 'R', MTRACE__SORT_KEY__SORT_READS, c_reads, p_reads },
	{ "RESOLV", 6, false, 'O', MTRACE__SORT_KEY__SORT_RESOLVES, c_resolves, p_resolves },
	{ "CHILD", 5, false, 'C', MTRACE__SORT_KEY__SORT_CHILDREN, c_children, p_children },
	{ "PENDING", 8, false, 'W', MTRACE__SORT_KEY__SORT_PENDING, c_pending, p_pending },
	{ "RUNNING", 8, false, 'U', MTRACE__SORT_KEY__SORT_RUNNING, c_running, p_running },
	{ "LABEL", 0, true, 'L', -1, c_label, p_label },
};

/* ---- label columns (the group-by-label view) ---- */

static int c_count(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->l->count, a->l->count);
}
static void p_count(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%" PRIu64, r->l->count);
}

static int c_live(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->l->live, a->l->live);
}
static void p_live(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%" PRIu64, r->l->live);
}

/* threads whose current label this is, beside COUNT's ever carried it (docs/figures.md) */
static int c_current(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->l->current, a->l->current);
}
static void p_current(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%" PRIu64, r->l->current);
}

static int c_lrate(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->l->creation_rate, a->l->creation_rate);
}
static void p_lrate(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%.1f", r->l->creation_rate);
}

static int c_p50(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->l->lifetime_p50_ns, a->l->lifetime_p50_ns);
}
static void p_p50(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, r->l->lifetime_p50_ns);
}

static int c_p99(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->l->lifetime_p99_ns, a->l->lifetime_p99_ns);
}
static void p_p99(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, r->l->lifetime_p99_ns);
}

/* Waits measured against the vCPUs (issue 38): of the waits of the label's (site's)
 * threads, the time their domain's vCPUs were runnable but not run (W-STEAL), blocked
 * or offline (W-BLOCK), and steal as a share of all the waits' time (%STEAL). */
static void p_wait_ns(char *buf, size_t n, uint64_t waits, uint64_t ns)
{
	if (waits)
		fmt_duration(buf, n, ns);
	else
		snprintf(buf, n, "-");
}
static double steal_share(uint64_t steal, uint64_t wait)
{
	return wait ? (double)steal / (double)wait : -1;
}
static void p_share(char *buf, size_t n, double share)
{
	if (share < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.1f", 100 * share);
}

static int c_lsteal(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->l->wait_steal_ns, a->l->wait_steal_ns);
}
static void p_lsteal(char *buf, size_t n, const struct top_row *r)
{
	p_wait_ns(buf, n, r->l->waits, r->l->wait_steal_ns);
}
static int c_lblock(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->l->wait_blocked_ns, a->l->wait_blocked_ns);
}
static void p_lblock(char *buf, size_t n, const struct top_row *r)
{
	p_wait_ns(buf, n, r->l->waits, r->l->wait_blocked_ns);
}
static int c_lshare(const struct top_row *a, const struct top_row *b)
{
	return CMP(steal_share(b->l->wait_steal_ns, b->l->wait_ns),
	    steal_share(a->l->wait_steal_ns, a->l->wait_ns));
}
static void p_lshare(char *buf, size_t n, const struct top_row *r)
{
	p_share(buf, n, steal_share(r->l->wait_steal_ns, r->l->wait_ns));
}

static const struct top_field label_fields[] = {
	{ "DOMAIN", 12, true, 'D', -1, c_domain, p_domain },
	{ "COUNT", 7, false, 'C', -1, c_count, p_count },
	{ "LIVE", 6, false, 'V', -1, c_live, p_live },
	{ "CURRENT", 7, false, 'R', -1, c_current, p_current },
	{ "NEW/S", 7, false, 'E', -1, c_lrate, p_lrate },
	{ "LIFE-P50", 8, false, 'M', -1, c_p50, p_p50 },
	{ "LIFE-P99", 8, false, 'X', -1, c_p99, p_p99 },
	{ "W-STEAL", 8, false, 'S', -1, c_lsteal, p_lsteal },
	{ "W-BLOCK", 8, false, 'B', -1, c_lblock, p_lblock },
	{ "%STEAL", 6, false, 'T', -1, c_lshare, p_lshare },
	{ "LABEL", 0, true, 'L', -1, c_label, p_label },
};

/* ---- site columns (the group-by-creation-site view) ---- */

static int c_scount(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->count, a->s->count);
}
static void p_scount(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%" PRIu64, r->s->count);
}

static int c_slive(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->live, a->s->live);
}
static void p_slive(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%" PRIu64, r->s->live);
}

static int c_srate(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->creation_rate, a->s->creation_rate);
}
static void p_srate(char *buf, size_t n, const struct top_row *r)
{
	snprintf(buf, n, "%.1f", r->s->creation_rate);
}

static int c_sp50(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->lifetime_p50_ns, a->s->lifetime_p50_ns);
}
static void p_sp50(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, r->s->lifetime_p50_ns);
}

static int c_sp99(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->lifetime_p99_ns, a->s->lifetime_p99_ns);
}
static void p_sp99(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, r->s->lifetime_p99_ns);
}

static int c_spend(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->pending_p99_ns, a->s->pending_p99_ns);
}
static void p_spend(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, r->s->pending_p99_ns);
}

static int c_site(const struct top_row *a, const struct top_row *b)
{
	return strcmp(a->s->site ? a->s->site : "", b->s->site ? b->s->site : "");
}
static void p_site(char *buf, size_t n, const struct top_row *r)
{
	/* the inlined frames after the innermost one, outermost last */
	size_t len = (size_t)snprintf(buf, n, "%s", r->s->site && r->s->site[0] ? r->s->site : "-");
	for (size_t k = 1; k < r->s->n_frames && len < n; k++)
		len += (size_t)snprintf(buf + len, n - len, " < %s", r->s->frames[k]->function);
}

static int c_ssteal(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->wait_steal_ns, a->s->wait_steal_ns);
}
static void p_ssteal(char *buf, size_t n, const struct top_row *r)
{
	p_wait_ns(buf, n, r->s->waits, r->s->wait_steal_ns);
}
static int c_sblock(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->wait_blocked_ns, a->s->wait_blocked_ns);
}
static void p_sblock(char *buf, size_t n, const struct top_row *r)
{
	p_wait_ns(buf, n, r->s->waits, r->s->wait_blocked_ns);
}
static int c_sshare(const struct top_row *a, const struct top_row *b)
{
	return CMP(steal_share(b->s->wait_steal_ns, b->s->wait_ns),
	    steal_share(a->s->wait_steal_ns, a->s->wait_ns));
}
static void p_sshare(char *buf, size_t n, const struct top_row *r)
{
	p_share(buf, n, steal_share(r->s->wait_steal_ns, r->s->wait_ns));
}

static const struct top_field site_fields[] = {
	{ "DOMAIN", 12, true, 'D', -1, c_domain, p_domain },
	{ "COUNT", 7, false, 'C', -1, c_scount, p_scount },
	{ "LIVE", 6, false, 'V', -1, c_slive, p_slive },
	{ "NEW/S", 7, false, 'E', -1, c_srate, p_srate },
	{ "LIFE-P50", 8, false, 'M', -1, c_sp50, p_sp50 },
	{ "LIFE-P99", 8, false, 'X', -1, c_sp99, p_sp99 },
	{ "PEND-P99", 8, false, 'W', -1, c_spend, p_spend },
	{ "W-STEAL", 8, false, 'S', -1, c_ssteal, p_ssteal },
	{ "W-BLOCK", 8, false, 'B', -1, c_sblock, p_sblock },
	{ "%STEAL", 6, false, 'T', -1, c_sshare, p_sshare },
	{ "SITE", 0, true, 'L', -1, c_site, p_site },
};

/* ---- site tree columns (the creation tree by site) ---- */

static int c_made(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->made, a->made);
}
static void p_made(char *buf, size_t n, const struct top_row *r)
{
	if (r->made_known)
		snprintf(buf, n, "%" PRIu64, r->made);
	else
		snprintf(buf, n, "-");
}

static int c_spend50(const struct top_row *a, const struct top_row *b)
{
	return CMP(b->s->pending_p50_ns, a->s->pending_p50_ns);
}
static void p_spend50(char *buf, size_t n, const struct top_row *r)
{
	fmt_duration(buf, n, r->s->pending_p50_ns);
}

/* The site as an automatic label ('@', as in the thread view), then the manual labels
 * its threads were given, then why the node is not expanded here. */
static void p_tree_site(char *buf, size_t n, const struct top_row *r)
{
	static const char *const why[] = {
		[NODE_OPEN] = "",
		[NODE_FOLDED] = " [+]",
		[NODE_ABOVE] = " [above]",
		[NODE_CYCLE] = " [cycle]",
	};
	char site[400];
	size_t len;
	p_site(site, sizeof(site), r);
	len = (size_t)snprintf(buf, n, "@%s", site);
	if (r->labels[0] && len < n)
		len += (size_t)snprintf(buf + len, n - len, "  labels: %s%s%s%s", r->labels[0],
		    r->labels[1] ? ", " : "", r->labels[1] ? r->labels[1] : "",
		    r->more_labels ? ", ..." : "");
	if (len < n)
		snprintf(buf + len, n - len, "%s", why[r->node]);
}

static const struct top_field site_tree_fields[] = {
	{ "DOMAIN", 12, true, 'D', -1, c_domain, p_domain },
	{ "MADE", 6, false, 'N', -1, c_made, p_made },
	{ "COUNT", 7, false, 'C', -1, c_scount, p_scount },
	{ "LIVE", 6, false, 'V', -1, c_slive, p_slive },
	{ "NEW/S", 7, false, 'E', -1, c_srate, p_srate },
	{ "LIFE-P50", 8, false, 'M', -1, c_sp50, p_sp50 },
	{ "LIFE-P99", 8, false, 'X', -1, c_sp99, p_sp99 },
	{ "PEND-P50", 8, false, 'P', -1, c_spend50, p_spend50 },
	{ "PEND-P99", 8, false, 'W', -1, c_spend, p_spend },
	{ "SITE", 0, true, 'L', -1, c_site, p_tree_site },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(N(thread_fields) <= TOP_MAX_FIELDS && N(label_fields) <= TOP_MAX_FIELDS &&
        N(site_fields) <= TOP_MAX_FIELDS && N(site_tree_fields) <= TOP_MAX_FIELDS,
    "TOP_MAX_FIELDS: view.c sizes every column of a table at once");

static const struct top_table tables[VIEW_COUNT] = {
	[VIEW_THREADS] = { "threads", thread_fields, N(thread_fields), 6 },
	[VIEW_TREE] = { "tree", thread_fields, N(thread_fields), 1 },
	[VIEW_LABELS] = { "labels", label_fields, N(label_fields), 1 },
	[VIEW_SITES] = { "sites", site_fields, N(site_fields), 1 },
	[VIEW_SITE_TREE] = { "site-tree", site_tree_fields, N(site_tree_fields), 1 },
};

const struct top_table *fields_table(enum top_view v)
{
	return &tables[v < VIEW_COUNT ? v : VIEW_THREADS];
}

int fields_find(const struct top_table *t, const char *name_or_key)
{
	for (unsigned i = 0; i < t->n; i++)
		if (strcasecmp(t->f[i].title, name_or_key) == 0)
			return (int)i;
	if (strlen(name_or_key) == 1)
		for (unsigned i = 0; i < t->n; i++)
			if (t->f[i].key == name_or_key[0] ||
			    t->f[i].key == (name_or_key[0] & ~0x20))
				return (int)i;
	return -1;
}
