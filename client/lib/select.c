/*
 * select.c - a subscription's selection applied in the client (select.h).
 *
 * The label filter needs each thread's current label, as mtraced keeps it: a bounded
 * table where finished threads are dropped first, oldest first.  Domain names come
 * from DomainUp (and Stats, for a stream read from the middle).  Both are keyed by the
 * host too, so that the domain 5 of two hosts in the fleet stream are two domains.
 */
#include <stdlib.h>
#include <string.h>

#include "label-prefix.h"
#include "ops.h"
#include "select.h"
#include "thread-table.h"

/* Labels outlive their threads, as in mtraced's table (whose finished threads go
 * first when it is full): a read of a resolved thread still matches its label. */
#define LABELS_MAX (1u << 18)
/* Hosts told apart (names chosen by whoever publishes: bounded); more share the last. */
#define HOSTS_MAX 1024
#define NAMES_MAX (1u << 16)

struct label {
	char *str;
	bool finished;
};

struct mtc_select {
	uint32_t *domids;
	char **names, **labels;
	size_t n_domids, n_names, n_labels;
	uint8_t ops[32]; /* bitmap, when not all_ops */
	bool all_ops, events;
	struct ttab label_of;  /* (host:domid, thread) -> struct label */
	struct ttab_fifo fifo; /* finished threads, oldest first */
	struct ttab name_of;   /* (host:domid, 0) -> char * */
	char **hosts;
	size_t n_hosts;
	size_t last_host; /* the host of the last message (they come in runs) */
};

static char **copy_strs(char *const *v, size_t n)
{
	char **c = calloc(n + 1, sizeof(*c));

	for (size_t i = 0; c && i < n; i++)
		if (!(c[i] = strdup(v[i] ? v[i] : ""))) {
			while (i--)
				free(c[i]);
			free(c);
			return NULL;
		}
	return c;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void label_free(void *p)
{
	free(((struct label *)p)->str);
}

static void name_free(void *p)
{
	free(*(char **)p);
}

void mtc_select_free(struct mtc_select *f)
{
	if (!f)
		return;
	free(f->domids);
	free_strs(f->names, f->n_names);
	free_strs(f->labels, f->n_labels);
	free_strs(f->hosts, f->n_hosts);
	ttab_free(&f->label_of, label_free);
	ttab_free(&f->name_of, name_free);
	ttab_fifo_free(&f->fifo);
	free(f);
}

struct mtc_select *mtc_select_new(const Mtrace__Subscribe *sub)
{
	struct mtc_select *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	ttab_init(&f->label_of, sizeof(struct label));
	ttab_init(&f->name_of, sizeof(char *));
	f->domids = malloc((sub->n_domids + 1) * sizeof(*f->domids));
	f->names = copy_strs(sub->domain_names, sub->n_domain_names);
	f->labels = copy_strs(sub->labels, sub->n_labels);
	f->hosts = calloc(HOSTS_MAX, sizeof(*f->hosts));
	if (!f->domids || !f->names || !f->labels || !f->hosts) {
		mtc_select_free(f);
		return NULL;
	}
	if (sub->n_domids)
		memcpy(f->domids, sub->domids, sub->n_domids * sizeof(*f->domids));
	f->n_domids = sub->n_domids;
	f->n_names = sub->n_domain_names;
	f->n_labels = sub->n_labels;
	f->all_ops = sub->n_ops == 0;
	for (size_t i = 0; i < sub->n_ops; i++)
		if (sub->ops[i] < 256)
			f->ops[sub->ops[i] >> 3] |= (uint8_t)(1u << (sub->ops[i] & 7));
	f->events = sub->events;
	return f;
}

bool mtc_select_narrows(const struct mtc_select *f)
{
	return f->n_domids || f->n_names || f->n_labels || !f->all_ops || !f->events;
}

/* The key of (host, domid): the host's index above the domid. */
static uint64_t dom_key(struct mtc_select *f, const char *host, uint32_t domid)
{
	size_t i = f->last_host;

	if (!host)
		host = "";
	if (i >= f->n_hosts || strcmp(f->hosts[i], host) != 0) {
		for (i = 0; i < f->n_hosts; i++)
			if (!strcmp(f->hosts[i], host))
				break;
		if (i == f->n_hosts) {
			char *c = f->n_hosts < HOSTS_MAX ? strdup(host) : NULL;
			if (c)
				f->hosts[f->n_hosts++] = c;
			i = c ? i : HOSTS_MAX - 1;
		}
		f->last_host = i;
	}
	return (uint64_t)i << 32 | domid;
}

static void note_name(struct mtc_select *f, uint64_t key, const char *name)
{
	char **n;
	int fresh;

	if (!f->n_names || (!ttab_get(&f->name_of, key, 0) && f->name_of.n >= NAMES_MAX))
		return;
	if ((n = ttab_put(&f->name_of, key, 0, &fresh))) {
		free(*n);
		*n = strdup(name ? name : "");
	}
}

static bool domain_passes(struct mtc_select *f, uint64_t key)
{
	char **name;

	if (!f->n_domids && !f->n_names)
		return true;
	for (size_t i = 0; i < f->n_domids; i++)
		if (f->domids[i] == (uint32_t)key)
			return true;
	name = ttab_get(&f->name_of, key, 0);
	for (size_t i = 0; name && *name && i < f->n_names; i++)
		if (!strcmp(f->names[i], *name))
			return true;
	return false;
}

/* Make room: the oldest finished thread goes. */
static bool evict_one(struct mtc_select *f)
{
	uint64_t d, t;

	while (ttab_fifo_pop(&f->fifo, &d, &t)) {
		struct label *l = ttab_get(&f->label_of, d, t);
		if (l && l->finished) {
			ttab_del(&f->label_of, d, t, label_free);
			return true;
		}
	}
	return false;
}

static void track_label(
    struct mtc_select *f, uint64_t key, const Mtrace__EventBatch *b, size_t i, const char *str)
{
	unsigned op = b->op[i];
	struct label *l;
	int fresh;

	if (op == MTRACE_OP_LABEL && b->thread[i] != -1) {
		if (f->label_of.n >= LABELS_MAX &&
		    !ttab_get(&f->label_of, key, (uint64_t)b->thread[i]) && !evict_one(f))
			return; /* full of live threads: this label is not kept */
		l = ttab_put(&f->label_of, key, (uint64_t)b->thread[i], &fresh);
		if (l) {
			free(l->str);
			l->str = strdup(str ? str : "");
		}
	} else if (op == MTRACE_OP_FULFILLS || op == MTRACE_OP_FAILS) {
		l = ttab_get(&f->label_of, key, (uint64_t)b->arg[i]);
		if (l && !l->finished) {
			l->finished = true;
			ttab_fifo_push(&f->fifo, key, (uint64_t)b->arg[i]);
		}
	}
}

static bool label_passes(const struct mtc_select *f, uint64_t key, int64_t thread)
{
	struct label *l;

	if (!f->n_labels)
		return true;
	if (thread == -1)
		return false;
	l = ttab_get(&f->label_of, key, (uint64_t)thread);
	/* the daemon's own match (stream filter, statistics) */
	return label_prefix_match(l ? l->str : NULL, f->labels, f->n_labels);
}

static bool fits32(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

/* The columns of a selected piece, as many as the batch has events. */
struct piece {
	int32_t *dts;
	uint32_t *op, *type, *ref;
	int64_t *th, *ar;
};

static void piece_free(struct piece *p)
{
	free(p->dts);
	free(p->op);
	free(p->type);
	free(p->ref);
	free(p->th);
	free(p->ar);
}

static int piece_alloc(struct piece *p, size_t n, size_t nref)
{
	p->dts = malloc((n + 1) * sizeof(*p->dts));
	p->op = malloc((n + 1) * sizeof(*p->op));
	p->type = malloc((n + 1) * sizeof(*p->type));
	p->th = malloc((n + 1) * sizeof(*p->th));
	p->ar = malloc((n + 1) * sizeof(*p->ar));
	p->ref = malloc((nref + 1) * sizeof(*p->ref));
	return p->dts && p->op && p->type && p->th && p->ar && p->ref ? 0 : -1;
}

struct emit {
	void (*fn)(Mtrace__ServerMsg *m, enum mtc_select_how how, void *arg);
	void *arg;
};

static void emit_piece(const struct emit *e, const Mtrace__ServerMsg *m, Mtrace__EventBatch *p)
{
	Mtrace__ServerMsg pm = *m;

	pm.events = p;
	e->fn(&pm, MTC_SELECT_MADE, e->arg);
}

/* Whether event i passes the ops and label filters (labels as of this event). */
static bool event_passes(
    const struct mtc_select *f, uint64_t key, const Mtrace__EventBatch *b, size_t i)
{
	return (f->all_ops ||
	           (b->op[i] < 256 && (f->ops[b->op[i] >> 3] & (1u << (b->op[i] & 7))))) &&
	    label_passes(f, key, b->thread[i]);
}

/* The selected events of m's batch, one pass as mtraced makes it (each event against
 * the labels as of that event): all (WHOLE), none, or pieces of their own. */
static int select_batch(
    struct mtc_select *f, uint64_t key, Mtrace__ServerMsg *m, const struct emit *e)
{
	const Mtrace__EventBatch *b = m->events;
	size_t n = b->n_op, i, k = 0, si = 0, nref = 0, taken = 0;
	bool dom = domain_passes(f, key);
	Mtrace__EventBatch p = *b;
	uint64_t ts = b->base_ts, prev = 0;
	struct piece c = { 0 };
	uint8_t *take;

	/* Columns of unequal length come from a broken or hostile peer: the program
	 * refuses them, as it does live. */
	if (b->n_ts_delta != n || b->n_thread != n || b->n_arg != n ||
	    (b->n_type != n && b->n_type != 0)) {
		if (dom)
			e->fn(m, MTC_SELECT_WHOLE, e->arg);
		return 0;
	}
	if (!(take = malloc(n + 1)))
		return -1;
	for (i = 0; i < n; i++) {
		const char *str = NULL;

		if (mtrace_op_has_string(b->op[i]) && si < b->n_str_ref) {
			uint32_t sref = b->str_ref[si++];
			if (sref < b->n_str)
				str = b->str[sref];
		}
		/* every domain's labels are learnt: -D and --label together */
		if (f->n_labels)
			track_label(f, key, b, i, str);
		take[i] = dom && event_passes(f, key, b, i);
		taken += take[i];
	}
	if (taken == n || !taken) {
		if (taken)
			e->fn(m, MTC_SELECT_WHOLE, e->arg);
		free(take);
		return 0;
	}
	if (piece_alloc(&c, n, b->n_str_ref) < 0) {
		piece_free(&c);
		free(take);
		return -1;
	}
	for (i = 0, si = 0; i <= n; i++) {
		uint32_t sref = 0;
		bool has_ref = false; /* a batch may have fewer refs than strings: keep that */

		if (i < n) {
			ts += (uint64_t)b->ts_delta[i];
			if (mtrace_op_has_string(b->op[i]) && si < b->n_str_ref) {
				sref = b->str_ref[si++];
				has_ref = true;
			}
		}
		/* flush at the end, or before an event whose delta would not fit */
		if (k && (i == n || (take[i] && !fits32((int64_t)(ts - prev))))) {
			p.n_ts_delta = p.n_op = p.n_thread = p.n_arg = k;
			p.n_type = b->n_type ? k : 0;
			p.ts_delta = c.dts;
			p.op = c.op;
			p.type = c.type;
			p.thread = c.th;
			p.arg = c.ar;
			p.str_ref = c.ref;
			p.n_str_ref = nref;
			emit_piece(e, m, &p);
			k = nref = 0;
		}
		if (i == n || !take[i])
			continue;
		if (k == 0) {
			p.base_ts = ts;
			c.dts[0] = 0;
		} else {
			c.dts[k] = (int32_t)(ts - prev);
		}
		prev = ts;
		c.op[k] = b->op[i];
		c.type[k] = i < b->n_type ? b->type[i] : 0;
		c.th[k] = b->thread[i];
		c.ar[k] = b->arg[i];
		if (has_ref)
			c.ref[nref++] = sref;
		k++;
	}
	piece_free(&c);
	free(take);
	return 0;
}

/* The selected domains' entries of a Stats, kept in order in place (the arrays are
 * the message's own, in its arena: the left-out entries go with it). */
static bool select_stats(struct mtc_select *f, const char *host, Mtrace__Stats *s)
{
	size_t k, i, n0 = s->n_domains + s->n_threads + s->n_labels;

	for (i = 0; i < s->n_domains; i++)
		if (s->domains[i]->name && *s->domains[i]->name)
			note_name(f, dom_key(f, host, s->domains[i]->domid), s->domains[i]->name);
	if (!f->n_domids && !f->n_names)
		return false;
	for (i = k = 0; i < s->n_domains; i++)
		if (domain_passes(f, dom_key(f, host, s->domains[i]->domid)))
			s->domains[k++] = s->domains[i];
	s->n_domains = k;
	for (i = k = 0; i < s->n_threads; i++)
		if (domain_passes(f, dom_key(f, host, s->threads[i]->domid)))
			s->threads[k++] = s->threads[i];
	s->n_threads = k;
	for (i = k = 0; i < s->n_labels; i++)
		if (domain_passes(f, dom_key(f, host, s->labels[i]->domid)))
			s->labels[k++] = s->labels[i];
	s->n_labels = k;
	return s->n_domains + s->n_threads + s->n_labels != n0;
}

int mtc_select_msg(struct mtc_select *f, const char *host, Mtrace__ServerMsg *m,
    void (*fn)(Mtrace__ServerMsg *m, enum mtc_select_how how, void *arg), void *arg)
{
	struct emit e = { fn, arg };
	bool pass = true;

	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		if (!f->events)
			return 0;
		return select_batch(f, dom_key(f, host, m->events->domid), m, &e);
	case MTRACE__SERVER_MSG__MSG_STATS:
		fn(m, select_stats(f, host, m->stats) ? MTC_SELECT_CUT : MTC_SELECT_WHOLE, arg);
		return 0;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		note_name(f, dom_key(f, host, m->domain_up->domid), m->domain_up->name);
		pass = domain_passes(f, dom_key(f, host, m->domain_up->domid));
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		pass = domain_passes(f, dom_key(f, host, m->domain_down->domid));
		break;
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP:
		pass = domain_passes(f, dom_key(f, host, m->clock_map->domid));
		break;
	case MTRACE__SERVER_MSG__MSG_EVTCHN_LINK:
		pass = domain_passes(f, dom_key(f, host, m->evtchn_link->domid));
		break;
	case MTRACE__SERVER_MSG__MSG_VCPU:
		/* a domain's vCPU intervals go with its events */
		if (!f->events)
			return 0;
		pass = domain_passes(f, dom_key(f, host, m->vcpu->domid));
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		/* domid 0 ring 0 is the reader's own loss: always told */
		pass = !(m->loss->domid || m->loss->ring) ||
		    domain_passes(f, dom_key(f, host, m->loss->domid));
		break;
	default:
		break;
	}
	if (pass)
		fn(m, MTC_SELECT_WHOLE, arg);
	return 0;
}
