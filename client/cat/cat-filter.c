/*
 * cat-filter.c - client-side filters for recordings (see cat-filter.h).
 *
 * The label filter needs each thread's current label, as mtraced keeps it: a bounded
 * table where finished threads are dropped first, oldest first.
 */
#include <stdlib.h>
#include <string.h>

#include "cat-filter.h"
#include "cat-format.h"
#include "label-prefix.h"
#include "ops.h"
#include "thread-table.h"

/* Labels outlive their threads, as in mtraced's table (whose finished threads go
 * first when it is full): a read of a resolved thread still matches its label. */
#define LABELS_MAX (1u << 18)

struct label {
	char *str;
	bool finished;
};

static struct ttab labels; /* (domid, thread) -> struct label */
static bool labels_init;
static struct ttab_fifo fifo; /* finished threads, oldest first */

bool cat_filter_domain(const struct cat_filter *f, uint32_t domid)
{
	const char *name;
	size_t i;

	if (!f->n_domids && !f->n_names)
		return true;
	for (i = 0; i < f->n_domids; i++)
		if (f->domids[i] == domid)
			return true;
	name = cat_names_get(domid);
	for (i = 0; name && i < f->n_names; i++)
		if (strcmp(f->names[i], name) == 0)
			return true;
	return false;
}

bool cat_filter_active(const struct cat_filter *f)
{
	return f->n_domids || f->n_names || f->n_labels || !f->all_ops;
}

static void label_free(void *p)
{
	free(((struct label *)p)->str);
}

/* Make room: the oldest finished thread goes. */
static bool evict_one(void)
{
	uint64_t d, t;

	while (ttab_fifo_pop(&fifo, &d, &t)) {
		struct label *l = ttab_get(&labels, d, t);
		if (l && l->finished) {
			ttab_del(&labels, d, t, label_free);
			return true;
		}
	}
	return false;
}

static void track_label(const Mtrace__EventBatch *b, size_t i, const char *str)
{
	unsigned op = b->op[i];
	struct label *l;
	int fresh;

	if (!labels_init) {
		ttab_init(&labels, sizeof(struct label));
		labels_init = true;
	}
	if (op == MTRACE_OP_LABEL && b->thread[i] != -1) {
		if (labels.n >= LABELS_MAX &&
		    !ttab_get(&labels, b->domid, (uint64_t)b->thread[i]) && !evict_one())
			return; /* full of live threads: this label is not kept */
		l = ttab_put(&labels, b->domid, (uint64_t)b->thread[i], &fresh);
		if (l) {
			free(l->str);
			l->str = strdup(str ? str : "");
		}
	} else if (op == MTRACE_OP_FULFILLS || op == MTRACE_OP_FAILS) {
		l = ttab_get(&labels, b->domid, (uint64_t)b->arg[i]);
		if (l && !l->finished) {
			l->finished = true;
			ttab_fifo_push(&fifo, b->domid, (uint64_t)b->arg[i]);
		}
	}
}

static bool label_matches(const struct cat_filter *f, uint32_t domid, int64_t thread)
{
	struct label *l;

	if (!f->n_labels)
		return true;
	if (thread == -1 || !labels_init)
		return false;
	l = ttab_get(&labels, domid, (uint64_t)thread);
	/* the daemon's own match (stream filter, statistics) */
	return label_prefix_match(l ? l->str : NULL, (char *const *)f->labels, f->n_labels);
}

static bool fits32(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

int cat_filter_batch(struct cat_filter *f, const Mtrace__EventBatch *b,
    void (*fn)(const Mtrace__EventBatch *part, void *arg), void *arg)
{
	size_t n = b->n_op, i, k = 0, si = 0, nref = 0;
	Mtrace__EventBatch p = *b;
	uint64_t ts = b->base_ts, prev = 0;
	int32_t *dts = malloc((n + 1) * sizeof(*dts));
	uint32_t *op = malloc((n + 1) * sizeof(*op)), *type = malloc((n + 1) * sizeof(*type));
	int64_t *th = malloc((n + 1) * sizeof(*th)), *ar = malloc((n + 1) * sizeof(*ar));
	uint32_t *ref = malloc((b->n_str_ref + 1) * sizeof(*ref));
	int r = 0;

	if (!dts || !op || !type || !th || !ar || !ref) {
		r = -1;
		goto out;
	}
	for (i = 0; i <= n; i++) {
		const char *str = NULL;
		bool has = i < n && mtrace_op_has_string(b->op[i]);
		uint32_t sref = 0;
		bool has_ref = false; /* a batch may have fewer refs than strings: keep that */
		bool take;

		if (i < n) {
			ts += (uint64_t)b->ts_delta[i];
			if (has && si < b->n_str_ref) {
				sref = b->str_ref[si++];
				has_ref = true;
				if (sref < b->n_str)
					str = b->str[sref];
			}
			track_label(b, i, str);
			take = cat_filter_domain(f, b->domid) &&
			    (f->all_ops ||
			        (b->op[i] < 256 &&
			            (f->ops[b->op[i] >> 3] & (1u << (b->op[i] & 7))))) &&
			    label_matches(f, b->domid, b->thread[i]);
		} else {
			take = false;
		}
		/* flush at the end, or before an event whose delta would not fit */
		if (k && (i == n || (take && !fits32((int64_t)(ts - prev))))) {
			p.n_ts_delta = p.n_op = p.n_thread = p.n_arg = k;
			p.n_type = b->n_type ? k : 0;
			p.ts_delta = dts;
			p.op = op;
			p.type = type;
			p.thread = th;
			p.arg = ar;
			p.str_ref = ref;
			p.n_str_ref = nref;
			fn(&p, arg);
			k = nref = 0;
		}
		if (!take)
			continue;
		if (k == 0) {
			p.base_ts = ts;
			dts[0] = 0;
		} else {
			dts[k] = (int32_t)(ts - prev);
		}
		prev = ts;
		op[k] = b->op[i];
		type[k] = i < b->n_type ? b->type[i] : 0;
		th[k] = b->thread[i];
		ar[k] = b->arg[i];
		if (has_ref)
			ref[nref++] = sref;
		k++;
	}
out:
	free(dts);
	free(op);
	free(type);
	free(th);
	free(ar);
	free(ref);
	return r;
}

int cat_filter_stats(const struct cat_filter *f, const Mtrace__Stats *m, struct cat_stats_view *v)
{
	size_t i;

	memset(v, 0, sizeof(*v));
	v->s = *m;
	v->d = malloc((m->n_domains + 1) * sizeof(*v->d));
	v->t = malloc((m->n_threads + 1) * sizeof(*v->t));
	v->l = malloc((m->n_labels + 1) * sizeof(*v->l));
	if (!v->d || !v->t || !v->l) {
		cat_filter_stats_free(v);
		return -1;
	}
	v->s.domains = v->d;
	v->s.threads = v->t;
	v->s.labels = v->l;
	v->s.n_domains = v->s.n_threads = v->s.n_labels = 0;
	for (i = 0; i < m->n_domains; i++)
		if (cat_filter_domain(f, m->domains[i]->domid))
			v->d[v->s.n_domains++] = m->domains[i];
	for (i = 0; i < m->n_threads; i++)
		if (cat_filter_domain(f, m->threads[i]->domid))
			v->t[v->s.n_threads++] = m->threads[i];
	for (i = 0; i < m->n_labels; i++)
		if (cat_filter_domain(f, m->labels[i]->domid))
			v->l[v->s.n_labels++] = m->labels[i];
	return 0;
}

void cat_filter_stats_free(struct cat_stats_view *v)
{
	free(v->d);
	free(v->t);
	free(v->l);
	v->d = NULL;
	v->t = NULL;
	v->l = NULL;
}

void cat_filter_free(struct cat_filter *f)
{
	(void)f;
	if (labels_init)
		ttab_free(&labels, label_free);
	labels_init = false;
	ttab_fifo_free(&fifo);
}
