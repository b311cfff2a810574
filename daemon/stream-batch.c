/*
 * stream-batch.c - event filters and columnar EventBatch encoding.
 *
 * Clients whose subscriptions select the same events share a group.  Each run of
 * events handed to stream_events is filtered once per group (the label filter is
 * evaluated now, while the daemon's thread state matches the event) and appended to
 * the group's columns for that ring.  At the end of the loop turn (or when the
 * columns are full) each group's columns are encoded once into a framed ServerMsg
 * whose bytes all of the group's clients share.  Groups that take every event of a
 * domain (all ops, no label filter) share more: each ring's events are copied and
 * encoded once for all of them (the shared group), whatever else their filters say
 * about other domains, and sent to each that selects the domain.
 *
 * The columns of all groups and rings together are held to client_batch_total
 * (mtraced(8), MEMORY): past it, a ring's batch is sent early (every batch pending is
 * sent and the columns given back), which costs smaller frames, never events; only
 * when even one batch's smallest columns do not fit is an event dropped for that
 * group's clients, counted and reported to them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "clock.h"
#include "frame.h"
#include "label-prefix.h"
#include "log.h"
#include "ring-reader.h"
#include "state.h"
#include "stream-batch.h"
#include "stream-blob.h"
#include "stream-dict.h"
#include "stream-msg.h"
#include "xalloc.h"

/* Flush a ring's columns early past these, which keeps a frame far below
 * FRAME_MAX_TO_CLIENT: 8192 events * 40 bytes + 512 KiB of strings. */
#define ACC_MAX_EVENTS 8192u
#define ACC_MAX_STR    (512u * 1024)

#define ACC_MIN_EVENTS 256u
/* Columns nobody wrote to for this long are given back (stream_batch_flush). */
#define ACC_IDLE_NS 1000000000u
/* Bytes per event of the columns below. */
#define COL_BYTES (sizeof(int32_t) + 2 * sizeof(uint32_t) + 2 * sizeof(int64_t) + sizeof(uint32_t))

/* Columns of one (domain, ring) for one group, in ring order. */
struct acc {
	TAILQ_ENTRY(acc) entry;
	uint32_t domid, ring, clock;
	uint64_t first_seq;
	uint64_t base_ts, last_ts; /* the first and the last event's timestamps */
	size_t n, cap;
	size_t bytes; /* what it holds, counted in batch_bytes */
	int32_t *dts; /* deltas from the previous event (the first: 0) */
	uint32_t *op;
	int64_t *thread;
	int64_t *arg;
	uint32_t *type;
	struct stream_dict dict; /* the batch's distinct strings */
	uint32_t *str_ref;       /* per event with a string: index into dict */
	size_t nref;             /* <= n: str_ref has the columns' capacity */
	uint64_t idle_since;     /* CLOCK_MONOTONIC of the first flush it had nothing; 0: it
	                          * had an event since */
};

struct stream_group {
	LIST_ENTRY(stream_group) entry;
	char *key;
	Mtrace__Subscribe *sub; /* own copy: members come and go */
	bool all_ops;
	uint8_t ops[32];            /* bit per op */
	struct label_filter labels; /* sub->labels compiled */
	bool everything;            /* all ops, no labels: takes the shared group's batches */
	struct stream_client **members;
	size_t nmembers, cap;
	TAILQ_HEAD(, acc) accs; /* in the order their rings first spoke */
};

/* Columns grow to at most ACC_MAX_EVENTS: out of memory aborts (xalloc.h). */
static int grow(void **p, size_t size, size_t n)
{
	*p = xreallocarray(*p, n, size);
	return 0;
}

static stream_batch_send_fn send_events;
static LIST_HEAD(, stream_group) groups = LIST_HEAD_INITIALIZER(groups);
static unsigned ngroups;
static struct event *flush_ev;
static bool flush_scheduled;
static size_t batch_cap = SIZE_MAX; /* client_batch_total */
/* The batches of every group that takes everything of a domain (nowhere in groups). */
static struct stream_group shared = { .all_ops = true,
	.accs = TAILQ_HEAD_INITIALIZER(shared.accs) };
static unsigned neverything; /* groups in groups with everything set */
static struct stream_batch_memory mem;

static void acc_account(struct acc *a)
{
	size_t now = sizeof(*a) + a->cap * COL_BYTES + stream_dict_bytes(&a->dict);

	mem.bytes = mem.bytes - a->bytes + now;
	a->bytes = now;
	if (mem.bytes > mem.peak)
		mem.peak = mem.bytes;
}

/* Give back a's columns and strings (it holds no events). */
static void acc_release(struct acc *a)
{
	free(a->dts);
	free(a->op);
	free(a->thread);
	free(a->arg);
	free(a->type);
	free(a->str_ref);
	stream_dict_free(&a->dict);
	a->dts = NULL;
	a->op = a->type = a->str_ref = NULL;
	a->thread = a->arg = NULL;
	a->n = a->nref = a->cap = 0;
	acc_account(a);
}

static void acc_free(struct acc *a)
{
	acc_release(a);
	mem.bytes -= a->bytes;
	free(a);
}

/* Room for one more event, within client_batch_total; -1 when that has no room. */
static int acc_grow(struct acc *a)
{
	size_t cap = a->cap ? a->cap * 2 : ACC_MIN_EVENTS;

	if (a->n < a->cap)
		return 0;
	if (cap > ACC_MAX_EVENTS)
		cap = ACC_MAX_EVENTS;
	if (mem.bytes + (cap - a->cap) * COL_BYTES > batch_cap)
		return -1;
	if (grow((void **)&a->dts, sizeof(*a->dts), cap) ||
	    grow((void **)&a->op, sizeof(*a->op), cap) ||
	    grow((void **)&a->thread, sizeof(*a->thread), cap) ||
	    grow((void **)&a->arg, sizeof(*a->arg), cap) ||
	    grow((void **)&a->type, sizeof(*a->type), cap) ||
	    grow((void **)&a->str_ref, sizeof(*a->str_ref), cap))
		return -1;
	a->cap = cap;
	acc_account(a);
	return 0;
}

static int acc_add_str(struct acc *a, const char *s, size_t len)
{
	uint32_t idx;

	int r = stream_dict_add(&a->dict, s, len, &idx);

	if (r > 0) /* a new string: the table may have grown */
		acc_account(a);
	if (r < 0)
		return -1;
	a->str_ref[a->nref++] = idx;
	return 0;
}

/* Every group, then the shared one. */
static struct stream_group *group_next(struct stream_group *g)
{
	if (g == &shared)
		return NULL;
	g = g ? LIST_NEXT(g, entry) : LIST_FIRST(&groups);
	return g ? g : &shared;
}

/* A batch of n events of domid (NULL: dropped) to the clients of g; the shared
 * group's go to every group that takes everything and selects domid. */
static void deliver(struct stream_group *g, uint32_t domid, struct stream_blob *b, size_t n)
{
	struct stream_group *x;
	size_t i;

	if (g != &shared) {
		for (i = 0; i < g->nmembers; i++)
			send_events(g->members[i], b, n);
		return;
	}
	LIST_FOREACH(x, &groups, entry)
	{
		if (!x->everything || !state_domain_matches(domid, x->sub))
			continue;
		for (i = 0; i < x->nmembers; i++)
			send_events(x->members[i], b, n);
	}
}

static void group_send(struct stream_group *g, struct acc *a)
{
	Mtrace__EventBatch eb = MTRACE__EVENT_BATCH__INIT;
	char *strs_stack[64], **strs = strs_stack;
	struct stream_blob *b;
	size_t i;

	if (a->n == 0)
		return;
	if (g == &shared && neverything == 0)
		goto out; /* the groups it was for have left */
	if (stream_dict_count(&a->dict) > 64 &&
	    !(strs = malloc(stream_dict_count(&a->dict) * sizeof(*strs)))) {
		deliver(g, a->domid, NULL, a->n);
		goto out;
	}
	for (i = 0; i < stream_dict_count(&a->dict); i++)
		strs[i] = stream_dict_str(&a->dict, i);
	eb.base_ts = a->base_ts;
	eb.domid = a->domid;
	eb.ring = a->ring;
	eb.clock = a->clock;
	eb.first_seq = a->first_seq;
	eb.n_ts_delta = eb.n_op = eb.n_thread = eb.n_arg = eb.n_type = a->n;
	eb.ts_delta = a->dts;
	eb.op = a->op;
	eb.thread = a->thread;
	eb.arg = a->arg;
	eb.type = a->type;
	eb.n_str = stream_dict_count(&a->dict);
	eb.str = strs;
	eb.n_str_ref = a->nref;
	eb.str_ref = a->str_ref;
	b = stream_blob_pack_events(&eb, UINT8_MAX); /* op and type are bytes */
	mem.encoded++;
	/* NULL cannot happen within the ACC_MAX_* bounds short of ENOMEM: a drop for
	 * every member then, so nobody silently misses events. */
	deliver(g, a->domid, b, a->n);
	stream_blob_unref(b);
	if (strs != strs_stack)
		free(strs);
out:
	a->n = 0;
	a->nref = 0;
	stream_dict_reset(&a->dict);
}

void stream_batch_flush(void)
{
	struct stream_group *g;
	struct acc *a, *next;
	uint64_t now = 0;

	flush_scheduled = false;
	for (g = group_next(NULL); g; g = group_next(g)) {
		for (a = TAILQ_FIRST(&g->accs); a; a = next) {
			next = TAILQ_NEXT(a, entry);
			if (a->n) {
				group_send(g, a);
				continue;
			}
			/* Idle for ACC_IDLE_NS: give the columns back, or every filter times
			 * every ring ever seen would keep its buffers forever.  Not sooner: a
			 * guest's rings often speak in turns of their own, and columns given
			 * back after each would be allocated and grown again, cold, for each. */
			if (!now)
				now = clock_ns(CLOCK_MONOTONIC);
			if (!a->idle_since) {
				a->idle_since = now;
			} else if (now - a->idle_since >= ACC_IDLE_NS) {
				TAILQ_REMOVE(&g->accs, a, entry);
				acc_free(a);
			}
		}
	}
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	stream_batch_flush();
}

static void schedule_flush(void)
{
	/* Activated, not timed: it runs after the callbacks already active in this loop
	 * turn, so the rings drained in one turn share frames and nothing waits for a
	 * timer tick. */
	if (!flush_scheduled && flush_ev) {
		event_active(flush_ev, EV_TIMEOUT, 0);
		flush_scheduled = true;
	}
}

static struct acc *group_acc(struct stream_group *g, uint32_t domid, uint32_t ring, uint32_t clock)
{
	struct acc *a;

	TAILQ_FOREACH(a, &g->accs, entry)
	{
		if (a->domid == domid && a->ring == ring) {
			if (a->clock != clock && a->n)
				group_send(g, a); /* one clock per batch */
			a->clock = clock;
			return a;
		}
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->domid = domid;
	a->ring = ring;
	a->clock = clock;
	acc_account(a);
	TAILQ_INSERT_TAIL(&g->accs, a, entry);
	return a;
}

static bool label_matches(const struct stream_group *g, uint32_t domid, uint64_t thread)
{
	if (g->labels.any)
		return true;
	if (thread == MTRACE_THREAD_NONE)
		return false;
	return label_filter_match(&g->labels, state_thread_label(domid, thread));
}

/* A guest clock may step back, or jump by more than the 2 s a 32-bit delta holds. */
static bool delta_fits(uint64_t d)
{
	return (int64_t)d >= INT32_MIN && (int64_t)d <= INT32_MAX;
}

/* An event the group cannot take (out of memory, or no room within
 * client_batch_total): every member is told it missed it. */
static void group_drop(struct stream_group *g, uint32_t domid, size_t n)
{
	deliver(g, domid, NULL, n);
}

/* Send every pending batch but keep's and free their columns. */
static void release_all(const struct acc *keep)
{
	struct stream_group *g;
	struct acc *a, *next;

	for (g = group_next(NULL); g; g = group_next(g)) {
		for (a = TAILQ_FIRST(&g->accs); a; a = next) {
			next = TAILQ_NEXT(a, entry);
			if (a == keep)
				continue;
			group_send(g, a);
			TAILQ_REMOVE(&g->accs, a, entry);
			acc_free(a);
		}
	}
}

static bool has_room(const struct acc *a, bool str)
{
	return a->n < a->cap && (!str || mem.bytes <= batch_cap);
}

/*
 * Room in a for one more event (and, with str, a string) within client_batch_total.
 * Past the total: every other batch is sent and its memory given back, then a's own
 * batch is sent, then a starts again from its smallest columns.  -1 only when even
 * those do not fit.
 */
static int acc_room(struct stream_group *g, struct acc *a, bool str)
{
	if (has_room(a, str) || (acc_grow(a) == 0 && has_room(a, str)))
		return 0;
	mem.pressure++;
	release_all(a);
	if (acc_grow(a) == 0 && has_room(a, str))
		return 0;
	if (a->n) {
		group_send(g, a);
		if (has_room(a, str))
			return 0;
	}
	acc_release(a);
	return acc_grow(a) == 0 && has_room(a, str) ? 0 : -1;
}

/* An event of ev the group selects: its op, then its thread's label. */
static bool selects(const struct stream_group *g, uint32_t domid, const struct mtrace_event *e)
{
	return (g->all_ops || (g->ops[e->op >> 3] & (1u << (e->op & 7)))) &&
	    label_matches(g, domid, e->thread);
}

/* Append e to a with every check: a batch's first event, a string, full columns, a
 * delta that does not fit. */
static void acc_append(
    struct stream_group *g, struct acc *a, uint32_t domid, const struct mtrace_event *e)
{
	bool str = mtrace_op_flags[e->op] & MTRACE_OPF_STR;
	size_t k = a->n;

	/* A batch ends where its frame would grow too large or a delta not fit. */
	if (k &&
	    (k >= ACC_MAX_EVENTS || !delta_fits(e->ts - a->last_ts) ||
	        (str && strtab_bytes(&a->dict.t) + e->str_len + 1 > ACC_MAX_STR)))
		group_send(g, a);
	if (acc_room(g, a, str) < 0 ||
	    (str && acc_add_str(a, e->str ? e->str : "", e->str ? e->str_len : 0) < 0)) {
		group_drop(g, domid, 1);
		return;
	}
	k = a->n;
	if (k == 0) {
		/* every batch's first event comes here: busy again */
		a->idle_since = 0;
		a->first_seq = e->seq;
		a->base_ts = a->last_ts = e->ts;
	}
	a->dts[k] = (int32_t)(int64_t)(e->ts - a->last_ts);
	a->last_ts = e->ts;
	a->op[k] = e->op;
	a->thread[k] = (int64_t)e->thread;
	a->arg[k] = (int64_t)e->arg;
	a->type[k] = e->type;
	a->n = k + 1;
}

/* Events acc_copy_run looks at a call. */
#define RUN_MAX 256u

/*
 * Most events land in a batch already begun with room for them, follow the previous
 * one within a 32-bit delta and have no string or one the batch's dictionary has
 * cached: copy the leading run of those in ev into a's columns and return how many
 * that was.  Two passes, so that neither branches on which events have strings
 * (random in a trace: a mispredicted branch per few events): the columns of every
 * event, noting where the strings are; then the strings alone, the run ending at the
 * first the cache does not have.  The columns and counts stay in locals: a store to
 * a column may alias a's own fields (the build has -fno-strict-aliasing), so going
 * through a would reload them for every event.
 */
static size_t acc_copy_run(struct acc *a, const struct mtrace_event *ev, size_t n)
{
	size_t k = a->n, m = a->cap - k, nref = a->nref, j, ns = 0, s;
	uint64_t last = a->last_ts;
	int32_t *dts;
	uint32_t *op, *type;
	int64_t *thread, *arg;
	uint16_t at[RUN_MAX];

	if (k == 0)
		return 0; /* a batch's first event sets its base (and its columns may be NULL) */
	dts = a->dts + k;
	op = a->op + k;
	type = a->type + k;
	thread = a->thread + k;
	arg = a->arg + k;
	if (m > n)
		m = n;
	if (m > RUN_MAX)
		m = RUN_MAX;
	for (j = 0; j < m; j++) {
		const struct mtrace_event *e = &ev[j];
		uint64_t d = e->ts - last;

		/* delta_fits in one compare */
		if (d + 0x80000000u > UINT32_MAX)
			break;
		dts[j] = (int32_t)(int64_t)d;
		op[j] = e->op;
		thread[j] = (int64_t)e->thread;
		arg[j] = (int64_t)e->arg;
		type[j] = e->type;
		at[ns] = (uint16_t)j;
		ns += mtrace_op_flags[e->op] & MTRACE_OPF_STR;
		last = e->ts;
	}
	/* past client_batch_total a string event takes acc_append (which sends early) */
	if (ns && mem.bytes > batch_cap)
		j = at[0];
	for (s = 0; s < ns && at[s] < j; s++) {
		const struct mtrace_event *e = &ev[at[s]];
		struct stream_dict_hit key, *slot;
		uint32_t idx;

		if (!e->str ||
		    !stream_dict_cached(&a->dict, e->str, e->str_len, &key, &slot, &idx)) {
			j = at[s];
			break;
		}
		a->str_ref[nref++] = idx;
	}
	a->n = k + j;
	a->nref = nref;
	if (j)
		a->last_ts = ev[j - 1].ts;
	return j;
}

static void group_events(struct stream_group *g, uint32_t domid, uint32_t ring, uint32_t clock,
    const struct mtrace_event *ev, size_t n)
{
	struct acc *a;

	if (g != &shared && !state_domain_matches(domid, g->sub))
		return;
	a = group_acc(g, domid, ring, clock);
	if (!a) {
		group_drop(g, domid, n);
		return;
	}
	if (g == &shared) {
		/* every event: runs without checks, the others one by one */
		for (size_t i = 0; i < n; i++) {
			i += acc_copy_run(a, ev + i, n - i);
			if (i < n)
				acc_append(g, a, domid, &ev[i]);
		}
	} else {
		for (size_t i = 0; i < n; i++)
			if (selects(g, domid, &ev[i]))
				acc_append(g, a, domid, &ev[i]);
	}
	if (a->n)
		schedule_flush();
}

void stream_batch_events(
    uint32_t domid, uint32_t ring, uint32_t clock, const struct mtrace_event *ev, size_t n)
{
	struct stream_group *g;
	bool all = false;

	if (n == 0)
		return;
	LIST_FOREACH(g, &groups, entry)
	{
		if (g->everything)
			all = all || state_domain_matches(domid, g->sub);
		else
			group_events(g, domid, ring, clock, ev, n);
	}
	if (all)
		group_events(&shared, domid, ring, clock, ev, n);
}

/* A canonical text of the event filter: equal filters give equal keys whatever the
 * order the client listed things in. */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *filter_key(const Mtrace__Subscribe *sub, const uint8_t ops[32], bool all_ops)
{
	size_t len = 128 + sub->n_domids * 12, i, off = 0;
	uint32_t *ids = NULL;
	char **names = NULL, **labels = NULL, *key = NULL;

	for (i = 0; i < sub->n_domain_names; i++)
		len += strlen(sub->domain_names[i]) + 12;
	for (i = 0; i < sub->n_labels; i++)
		len += strlen(sub->labels[i]) + 12;
	len += 70;
	ids = malloc((sub->n_domids + 1) * sizeof(*ids));
	names = malloc((sub->n_domain_names + 1) * sizeof(*names));
	labels = malloc((sub->n_labels + 1) * sizeof(*labels));
	key = malloc(len);
	if (!ids || !names || !labels || !key) {
		free(key);
		key = NULL;
		goto out;
	}
	/* Empty repeated fields are NULL: memcpy/qsort must not see them. */
	if (sub->n_domids) {
		memcpy(ids, sub->domids, sub->n_domids * sizeof(*ids));
		qsort(ids, sub->n_domids, sizeof(*ids), cmp_u32);
	}
	if (sub->n_domain_names) {
		memcpy(names, sub->domain_names, sub->n_domain_names * sizeof(*names));
		qsort(names, sub->n_domain_names, sizeof(*names), cmp_str);
	}
	if (sub->n_labels) {
		memcpy(labels, sub->labels, sub->n_labels * sizeof(*labels));
		qsort(labels, sub->n_labels, sizeof(*labels), cmp_str);
	}
	off += (size_t)snprintf(key + off, len - off, "d");
	for (i = 0; i < sub->n_domids; i++)
		off += (size_t)snprintf(key + off, len - off, ",%u", ids[i]);
	/* Strings are length-prefixed so no separator can be forged inside one. */
	off += (size_t)snprintf(key + off, len - off, ";n");
	for (i = 0; i < sub->n_domain_names; i++)
		off +=
		    (size_t)snprintf(key + off, len - off, ",%zu:%s", strlen(names[i]), names[i]);
	off += (size_t)snprintf(key + off, len - off, ";l");
	for (i = 0; i < sub->n_labels; i++)
		off +=
		    (size_t)snprintf(key + off, len - off, ",%zu:%s", strlen(labels[i]), labels[i]);
	off += (size_t)snprintf(key + off, len - off, ";o");
	if (all_ops)
		off += (size_t)snprintf(key + off, len - off, "*");
	else
		for (i = 0; i < 32; i++)
			off += (size_t)snprintf(key + off, len - off, "%02x", ops[i]);
out:
	free(ids);
	free(names);
	free(labels);
	return key;
}

static void drop_accs(struct stream_group *g)
{
	struct acc *a;

	while ((a = TAILQ_FIRST(&g->accs))) {
		TAILQ_REMOVE(&g->accs, a, entry);
		acc_free(a);
	}
}

struct stream_group *stream_group_join(struct stream_client *c, const Mtrace__Subscribe *sub)
{
	uint8_t ops[32] = { 0 };
	bool all_ops = sub->n_ops == 0;
	struct stream_group *g;
	char *key;
	size_t i;

	for (i = 0; i < sub->n_ops; i++)
		if (sub->ops[i] < 256)
			ops[sub->ops[i] >> 3] |= (uint8_t)(1u << (sub->ops[i] & 7));
	key = filter_key(sub, ops, all_ops);
	if (!key)
		return NULL;
	LIST_FOREACH(g, &groups, entry)
	if (strcmp(g->key, key) == 0)
		break;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g || !(g->sub = stream_sub_copy(sub)) ||
		    label_filter_compile(&g->labels, g->sub->labels, g->sub->n_labels) < 0) {
			if (g && g->sub)
				mtrace__subscribe__free_unpacked(g->sub, NULL);
			free(g);
			free(key);
			return NULL;
		}
		g->key = key;
		key = NULL;
		g->all_ops = all_ops;
		g->everything = all_ops && g->sub->n_labels == 0;
		neverything += g->everything;
		memcpy(g->ops, ops, sizeof(ops));
		TAILQ_INIT(&g->accs);
		LIST_INSERT_HEAD(&groups, g, entry);
		ngroups++;
	}
	free(key);
	if (g->nmembers == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 4;
		if (grow((void **)&g->members, sizeof(*g->members), cap)) {
			if (g->nmembers == 0)
				stream_group_leave(g, NULL);
			return NULL;
		}
		g->cap = cap;
	}
	g->members[g->nmembers++] = c;
	return g;
}

void stream_group_leave(struct stream_group *g, struct stream_client *c)
{
	size_t i;

	for (i = 0; i < g->nmembers; i++) {
		if (g->members[i] == c) {
			g->members[i] = g->members[--g->nmembers];
			break;
		}
	}
	if (g->nmembers)
		return;
	LIST_REMOVE(g, entry);
	neverything -= g->everything;
	drop_accs(g);
	if (neverything == 0)
		drop_accs(&shared); /* batches for nobody now */
	mtrace__subscribe__free_unpacked(g->sub, NULL);
	label_filter_free(&g->labels);
	free(g->members);
	free(g->key);
	free(g);
	ngroups--;
}

void stream_batch_domain_gone(uint32_t domid)
{
	struct stream_group *g;
	struct acc *a, *next;

	for (g = group_next(NULL); g; g = group_next(g)) {
		for (a = TAILQ_FIRST(&g->accs); a; a = next) {
			next = TAILQ_NEXT(a, entry);
			if (a->domid == domid) {
				group_send(g, a);
				TAILQ_REMOVE(&g->accs, a, entry);
				acc_free(a);
			}
		}
	}
}

void stream_batch_set_cap(size_t total)
{
	batch_cap = total ? total : SIZE_MAX;
}

const struct stream_batch_memory *stream_batch_memory(void)
{
	return &mem;
}

void stream_batch_init(struct event_base *base, stream_batch_send_fn send)
{
	send_events = send;
	flush_ev = event_new(base, -1, 0, flush_cb, NULL);
}

void stream_batch_fini(void)
{
	drop_accs(&shared);
	log_info("event batches: %llu encoded, peak %zu bytes, client_batch_total reached %llu "
	         "times",
	    (unsigned long long)mem.encoded, mem.peak, (unsigned long long)mem.pressure);
	if (flush_ev)
		event_free(flush_ev);
	flush_ev = NULL;
	flush_scheduled = false;
}
