/*
 * top.h - mtrace-top, the per-thread view of traced Xen guests (one header for the
 * subsystem, sectioned by file, tmux.h style).
 *
 * The program is an engine plus views (OpenBSD systat): the daemon's latest Stats is
 * the model; view.c turns it into rows through one field table per view and writes
 * them to a sink; screen.c (curses) and batch.c (plain text) are two sinks over the
 * same rows, so the batch tests cover what a person sees.
 */
#ifndef MTRACE_TOP_H
#define MTRACE_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtrace.pb-c.h"
#include "source.h"

struct tl;

enum top_view {
	VIEW_THREADS,
	VIEW_TREE,
	VIEW_LABELS,
	VIEW_SITES,
	VIEW_SITE_TREE, /* the creation graph between sites, as a tree from the root sites */
	VIEW_COUNT
};

#define TOP_FOLDS_MAX 64 /* sites folded by hand in the site tree */

struct top_site_ref {
	uint32_t domid;
	uint32_t index;
};

/* What the user asked for.  Changing anything the daemon selects on resubscribes. */
struct top_opts {
	enum top_view view;
	int sort[VIEW_COUNT]; /* field index per view's table */
	bool reverse;
	char filter[64];     /* substring of a label or domain name; "" = none */
	int64_t domid;       /* domain filter by id, -1 = none */
	char domname[64];    /* domain filter by exact name, "" = none */
	unsigned delay_ms;   /* statistics interval */
	unsigned top_n;      /* threads asked of the daemon */
	unsigned tree_depth; /* site tree: levels shown below the roots; 0 = all */
	struct top_site_ref folds[TOP_FOLDS_MAX]; /* site tree: sites folded by hand */
	unsigned n_folds;
	bool paused;
	bool finished;     /* include resolved/failed threads */
	bool no_reconnect; /* exit when the daemon goes away */
	/* mtraced (-s, the default), a recording (-i) or one host of the fleet stream
	 * (--nats URL --host H): the same views of what their Stats say */
	struct mtc_source_spec src;
	/* what session_subscription's Subscribe points to */
	uint32_t sub_domid;
	char *sub_name;
};

/* A domain's share of a physical CPU running and runnable, in % (vcpu.c). */
struct top_vcpu_rate {
	uint32_t domid;
	double run, steal;
};

/* What the daemon last told us. */
struct top_model {
	Mtrace__ServerMsg *msg; /* owns stats */
	const Mtrace__Stats *stats;
	char host[64];
	char software[64];
	char note[160]; /* latest domain up/down, shown on the header */
	uint64_t updates;
	struct top_vcpu_rate *vcpu; /* the domains with vCPU figures, from the last Stats */
	size_t nvcpu;
	struct tl *tl; /* the clock maps told (timeline.h), NULL before the first */
};

/* ---- fields.c: the field tables ---- */

struct top_row {
	const Mtrace__ThreadStats *t; /* thread views */
	const Mtrace__LabelStats *l;  /* label view */
	const Mtrace__SiteStats *s;   /* sites view */
	const Mtrace__DomainStats *d; /* the row's domain (NULL if unknown) */
	uint64_t dom_now;             /* domain's latest guest time seen */
	unsigned depth;               /* tree indent */
	unsigned folded;              /* threads folded in by becomes */
	int64_t folded_from;          /* one of them, for the tree's note */
	/* site tree: threads of this site the parent site's threads made (made_known:
	 * there is a parent edge), why the node is not expanded, manual labels seen */
	uint64_t made;
	bool made_known;
	enum {
		NODE_OPEN,
		NODE_FOLDED,
		NODE_ABOVE,
		NODE_CYCLE
	} node;
	const char *labels[2];
	bool more_labels;
};

struct top_field {
	const char *title;
	int width;       /* minimum; 0 = rest of the line */
	bool left;       /* left-aligned */
	char key;        /* sort key letter (upper case) */
	int server_sort; /* Mtrace__SortKey, -1: sorted here only */
	int (*cmp)(const struct top_row *a, const struct top_row *b);
	void (*print)(char *buf, size_t n, const struct top_row *r);
};

#define TOP_MAX_FIELDS 16 /* columns of a table */

struct top_table {
	const char *name; /* "threads", "labels" */
	const struct top_field *f;
	unsigned n;
	unsigned default_sort;
};

const struct top_table *fields_table(enum top_view v);
/* Field index by title (case-insensitive) or sort letter; -1 if none. */
int fields_find(const struct top_table *t, const char *name_or_key);
void fmt_duration(char *buf, size_t n, uint64_t ns);

/* ---- rows.c: rows by id ---- */

/* Rows by (domain, thread id or site index): keys sorted with row_key_cmp, then found
 * with row_key_find (the row, or -1). */
struct row_key {
	uint32_t domid;
	int64_t id;
	size_t row;
};
int row_key_cmp(const void *a, const void *b);
long row_key_find(const struct row_key *keys, size_t n, uint32_t domid, int64_t id);

/* ---- sitetree.c: the creation tree by site ---- */

/*
 * Lay rows[0..n) (the domain's sites, each filled in from Stats) out as the creation
 * tree from the root sites, children ordered by cmp(ctx); a site reached again is
 * shown, not expanded again (cycles and shared subtrees).  Returns the rows in *out
 * (malloc'd, at most n + edges) and their count; 0 and *out NULL when out of memory.
 */
size_t sitetree_order(const struct top_opts *o, const Mtrace__Stats *st, const struct top_row *rows,
    size_t n, int (*cmp)(const void *, const void *, void *), void *ctx, struct top_row **out);
/* Whether the site tree's user folded this site; fold or unfold it (false: no room). */
bool sitetree_folded(const struct top_opts *o, uint32_t domid, uint32_t index);
bool sitetree_fold(struct top_opts *o, struct top_site_ref ref, bool fold);

/* ---- view.c: rows and text, shared by curses and batch ---- */

enum top_attr {
	ATTR_NORMAL,
	ATTR_BOLD,
	ATTR_TITLE,
	ATTR_DIM,
	ATTR_SELECTED /* the row under the cursor */
};

struct top_sink {
	/* One line of text; returns false when there is no room for more. */
	bool (*line)(struct top_sink *s, enum top_attr a, const char *text);
	int width;   /* characters a line may use; <= 0: any */
	long cursor; /* the table row to show selected (-1: none) */
	bool follow; /* site tree: move the cursor to cursor_ref's nearest row, if any */
	long row;    /* set for each line: its table row, -1 for other lines */
	/* set by view_render: the cursor's row and site (site tree only) */
	bool cursor_site;
	struct top_site_ref cursor_ref;
};

/* The header (host, domain lines) then the current view's table. */
void view_render(const struct top_opts *o, const struct top_model *m, struct top_sink *s);
/* One line describing the current view, sort and filters. */
void view_describe(const struct top_opts *o, char *buf, size_t n);

/* ---- session.c: what mtrace-top asks of the source ---- */

/* The subscription for o (statistics only, no events), as mtc_session_ops.subscription
 * wants it: mtraced selects by it, or the session from stored records. */
void session_subscription(Mtrace__Subscribe *sub, struct top_opts *o);
/* Account one message into the model (takes ownership; events are not for it).  Returns
 * 1 when it was a Stats, 0 otherwise. */
int session_apply(struct top_model *m, Mtrace__ServerMsg *msg);
void session_model_free(struct top_model *m);
/* What the user waits for when the link is down ("mtraced", "NATS"). */
const char *session_peer(const struct top_opts *o);
/* The map in force of the domain's clock onto the host timeline (its ring clock's; a
 * TSC ring's timeline's), NULL when none was told. */
const Mtrace__ClockMap *session_clock_map(const struct top_model *m, const Mtrace__DomainStats *d);

/* ---- vcpu.c: %RUN and %STEAL per domain ---- */

/* The rates between the Stats old (NULL: none) and now. */
void vcpu_rates(struct top_model *m, const Mtrace__Stats *old, const Mtrace__Stats *now);
/* The domain's, false when it has no vCPU figures. */
bool vcpu_rate(const struct top_model *m, uint32_t domid, double *run, double *steal);

/* ---- batch.c / screen.c: the two front ends ---- */

/* Both connect (exit status 1 when the source cannot be opened) and reconnect to
 * mtraced by the client library's policy unless o->no_reconnect; at the end of stored
 * records, batch exits 0 and the screen keeps the last update. */
int batch_run(struct top_opts *o, long iterations);
int screen_run(struct top_opts *o, long iterations);

#endif
