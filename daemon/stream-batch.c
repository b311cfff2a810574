/*
 * stream-batch.c - the subscription groups and their batches.
 *
 * Clients whose subscriptions select the same events share a group.  Each run of
 * events handed to stream_events is filtered once per group (the label filter is
 * evaluated now, while the daemon's thread state matches the event) and appended to
 * the group's columns for that ring (stream-columns.c).  At the end of the loop turn
 * (or when the columns are full) each group's columns are encoded once into a framed
 * ServerMsg whose bytes all of the group's clients share.  Groups that take every
 * event of a domain (all ops, no label filter) share more: each ring's events are
 * copied and encoded once for all of them (the shared group), whatever else their
 * filters say about other domains, and sent to each that selects the domain.
 *
 * The columns of all groups and rings together are held to client_batch_total
 * (mtraced(8), MEMORY): past it, a ring's batch is sent early (every batch pending is
 * sent and the columns given back), which costs smaller frames, never events; only
 * when even one batch's smallest columns do not fit is an event dropped for that
 * group's clients, counted and reported to them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "clock.h"
#include "label-prefix.h"
#include "log.h"
#include "ring-reader.h"
#include "state.h"
#include "stream-batch.h"
#include "stream-blob.h"
#include "stream-columns.h"
#include "stream-msg.h"
#include "stream-shm.h"
#include "xalloc.h"

/* Columns nobody wrote to for this long are given back (stream_batch_flush). */
#define COLS_IDLE_NS 1000000000u

struct stream_group {
	LIST_ENTRY(stream_group) entry;
	struct stream_batch *sb;
	char *key;
	Mtrace__Subscribe *sub; /* own copy: members come and go */
	bool all_ops;
	uint8_t ops[32];                /* bit per op */
	struct label_filter labels;     /* sub->labels compiled */
	bool everything;                /* all ops, no labels: takes the shared group's batches */
	struct stream_client **members; /* those on the socket */
	size_t nmembers, cap;
	struct stream_shm *shm;            /* the region of the others (stream-shm.c) */
	TAILQ_HEAD(, stream_columns) accs; /* in the order their rings first spoke */
	struct stream_columns *hit;        /* the last one group_acc found */
};

/* The groups of one stream server, and the account of their columns. */
struct stream_batch {
	stream_batch_send_fn send_events;
	struct stream_shms *shms; /* where a group's region is made (NULL: none) */
	LIST_HEAD(, stream_group) groups;
	struct event *flush_ev;
	bool flush_scheduled;
	/* The batches of every group that takes everything of a domain (nowhere in
	 * groups). */
	struct stream_group shared;
	unsigned neverything; /* groups in groups with everything set */
	struct stream_col_account ac;
};

/* Every group, then the shared one. */
static struct stream_group *group_next(struct stream_batch *sb, struct stream_group *g)
{
	if (g == &sb->shared)
		return NULL;
	g = g ? LIST_NEXT(g, entry) : LIST_FIRST(&sb->groups);
	return g ? g : &sb->shared;
}

/* A batch of n events of domid (NULL: dropped) to the clients of g; the shared
 * group's go to every group that takes everything and selects domid. */
static void deliver(struct stream_group *g, uint32_t domid, struct stream_blob *b, size_t n)
{
	struct stream_batch *sb = g->sb;
	struct stream_group *x;
	size_t i;

	if (g != &sb->shared) {
		if (g->shm)
			stream_shm_put(g->shm, b, n);
		for (i = 0; i < g->nmembers; i++)
			sb->send_events(g->members[i], b, n);
		return;
	}
	LIST_FOREACH(x, &sb->groups, entry)
	{
		if (!x->everything || !state_domain_matches(domid, x->sub))
			continue;
		if (x->shm)
			stream_shm_put(x->shm, b, n);
		for (i = 0; i < x->nmembers; i++)
			sb->send_events(x->members[i], b, n);
	}
}

/* The one region that is all of a batch's readers (no socket member, no other group
 * that takes it), or NULL. */
static struct stream_shm *sole_region(struct stream_group *g, uint32_t domid)
{
	struct stream_group *x, *one = NULL;

	if (g != &g->sb->shared)
		return g->shm && !g->nmembers ? g->shm : NULL;
	LIST_FOREACH(x, &g->sb->groups, entry)
	{
		if (!x->everything || !state_domain_matches(domid, x->sub))
			continue;
		if (one)
			return NULL;
		one = x;
	}
	return one && one->shm && !one->nmembers ? one->shm : NULL;
}

static uint8_t *region_room(void *arg, size_t framed)
{
	return stream_shm_reserve(arg, framed);
}

static void group_send(struct stream_group *g, struct stream_columns *a)
{
	struct stream_blob *b;
	struct stream_shm *r;
	size_t n = a->n;

	if (n == 0)
		return;
	if (g == &g->sb->shared && g->sb->neverything == 0) {
		stream_columns_reset(a); /* the groups it was for have left */
		return;
	}
	/* Only shared-memory readers: encoded straight into their region, not into a
	 * blob that would only be copied there. */
	if ((r = sole_region(g, a->domid))) {
		if (stream_columns_encode_into(a, region_room, r) < 0)
			stream_shm_put(r, NULL, n); /* too large for the region: their loss */
		else
			stream_shm_commit(r, n);
		return;
	}
	/* NULL: a drop for every member, so nobody silently misses events. */
	b = stream_columns_encode(a);
	deliver(g, a->domid, b, n);
	stream_blob_unref(b);
}

static void acc_free(struct stream_group *g, struct stream_columns *a)
{
	if (g->hit == a)
		g->hit = NULL;
	TAILQ_REMOVE(&g->accs, a, entry);
	stream_columns_free(a);
}

void stream_batch_flush(struct stream_batch *sb)
{
	struct stream_group *g;
	struct stream_columns *a, *next;
	uint64_t now = 0;

	sb->flush_scheduled = false;
	for (g = group_next(sb, NULL); g; g = group_next(sb, g)) {
		for (a = TAILQ_FIRST(&g->accs); a; a = next) {
			next = TAILQ_NEXT(a, entry);
			if (a->n) {
				group_send(g, a);
				continue;
			}
			/* Idle for COLS_IDLE_NS: give the columns back, or every filter times
			 * every ring ever seen would keep its buffers forever.  Not sooner: a
			 * guest's rings often speak in turns of their own, and columns given
			 * back after each would be allocated and grown again, cold, for each. */
			if (!now)
				now = clock_ns(CLOCK_MONOTONIC);
			if (!a->idle_since) {
				a->idle_since = now;
			} else if (now - a->idle_since >= COLS_IDLE_NS) {
				acc_free(g, a);
			}
		}
	}
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	stream_batch_flush(arg);
}

static void schedule_flush(struct stream_batch *sb)
{
	/* Activated, not timed: it runs after the callbacks already active in this loop
	 * turn, so the rings drained in one turn share frames and nothing waits for a
	 * timer tick. */
	if (!sb->flush_scheduled && sb->flush_ev) {
		event_active(sb->flush_ev, EV_TIMEOUT, 0);
		sb->flush_scheduled = true;
	}
}

static struct stream_columns *group_acc(
    struct stream_group *g, uint32_t domid, uint32_t ring, uint32_t clock)
{
	struct stream_columns *a, *from = g->hit ? g->hit : TAILQ_FIRST(&g->accs);

	/* The drain visits the rings round robin in a stable order, which is the order
	 * of this list: searched from the last one found, the next ring is the first
	 * looked at (from the head, 100 guests' rings cost ~1.3 ns an event). */
	for (a = from; a;) {
		if (a->domid == domid && a->ring == ring) {
			if (a->clock != clock && a->n)
				group_send(g, a); /* one clock per batch */
			a->clock = clock;
			g->hit = a;
			return a;
		}
		if (!(a = TAILQ_NEXT(a, entry)))
			a = TAILQ_FIRST(&g->accs);
		if (a == from)
			break;
	}
	a = stream_columns_new(&g->sb->ac, domid, ring, clock);
	if (a) {
		TAILQ_INSERT_TAIL(&g->accs, a, entry);
		g->hit = a;
	}
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

/* An event the group cannot take (out of memory, or no room within
 * client_batch_total): every member is told it missed it. */
static void group_drop(struct stream_group *g, uint32_t domid, size_t n)
{
	deliver(g, domid, NULL, n);
}

/* Send every pending batch but keep's and free their columns. */
static void release_all(struct stream_batch *sb, const struct stream_columns *keep)
{
	struct stream_group *g;
	struct stream_columns *a, *next;

	for (g = group_next(sb, NULL); g; g = group_next(sb, g)) {
		for (a = TAILQ_FIRST(&g->accs); a; a = next) {
			next = TAILQ_NEXT(a, entry);
			if (a == keep)
				continue;
			group_send(g, a);
			acc_free(g, a);
		}
	}
}

/*
 * Room in a for one more event (and, with str, a string) within client_batch_total.
 * Past the total: every other batch is sent and its memory given back, then a's own
 * batch is sent, then a starts again from its smallest columns.  -1 only when even
 * those do not fit.
 */
static int acc_room(struct stream_group *g, struct stream_columns *a, bool str)
{
	if (stream_columns_has_room(a, str) ||
	    (stream_columns_grow(a) == 0 && stream_columns_has_room(a, str)))
		return 0;
	stream_columns_pressure(&g->sb->ac);
	release_all(g->sb, a);
	if (stream_columns_grow(a) == 0 && stream_columns_has_room(a, str))
		return 0;
	if (a->n) {
		group_send(g, a);
		if (stream_columns_has_room(a, str))
			return 0;
	}
	stream_columns_release(a);
	return stream_columns_grow(a) == 0 && stream_columns_has_room(a, str) ? 0 : -1;
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
    struct stream_group *g, struct stream_columns *a, uint32_t domid, const struct mtrace_event *e)
{
	bool str = mtrace_op_flags[e->op] & MTRACE_OPF_STR;

	/* A batch ends where its frame would grow too large or a delta not fit. */
	if (stream_columns_full_for(a, e))
		group_send(g, a);
	if (acc_room(g, a, str) < 0 || (str && stream_columns_add_str(a, e->str, e->str_len) < 0)) {
		group_drop(g, domid, 1);
		return;
	}
	stream_columns_put(a, e);
}

static void group_events(struct stream_group *g, uint32_t domid, uint32_t ring, uint32_t clock,
    const struct mtrace_event *ev, size_t n)
{
	struct stream_columns *a;

	if (g != &g->sb->shared && !state_domain_matches(domid, g->sub))
		return;
	a = group_acc(g, domid, ring, clock);
	if (!a) {
		group_drop(g, domid, n);
		return;
	}
	if (g == &g->sb->shared) {
		/* every event: runs without checks, the others one by one */
		for (size_t i = 0; i < n; i++) {
			i += stream_columns_take(a, ev + i, n - i);
			if (i < n)
				acc_append(g, a, domid, &ev[i]);
		}
	} else {
		for (size_t i = 0; i < n; i++)
			if (selects(g, domid, &ev[i]))
				acc_append(g, a, domid, &ev[i]);
	}
	if (a->n)
		schedule_flush(g->sb);
}

void stream_batch_events(struct stream_batch *sb, uint32_t domid, uint32_t ring, uint32_t clock,
    const struct mtrace_event *ev, size_t n)
{
	struct stream_group *g;
	bool all = false;

	if (n == 0)
		return;
	LIST_FOREACH(g, &sb->groups, entry)
	{
		if (g->everything)
			all = all || state_domain_matches(domid, g->sub);
		else
			group_events(g, domid, ring, clock, ev, n);
	}
	if (all)
		group_events(&sb->shared, domid, ring, clock, ev, n);
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
	struct stream_columns *a;

	while ((a = TAILQ_FIRST(&g->accs)))
		acc_free(g, a);
}

struct stream_group *stream_group_join(
    struct stream_batch *sb, struct stream_client *c, const Mtrace__Subscribe *sub)
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
	LIST_FOREACH(g, &sb->groups, entry)
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
		g->sb = sb;
		g->key = key;
		key = NULL;
		g->all_ops = all_ops;
		g->everything = all_ops && g->sub->n_labels == 0;
		sb->neverything += g->everything;
		memcpy(g->ops, ops, sizeof(ops));
		TAILQ_INIT(&g->accs);
		LIST_INSERT_HEAD(&sb->groups, g, entry);
	}
	free(key);
	if (g->nmembers == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 4;
		g->members = xreallocarray(g->members, cap, sizeof(*g->members));
		g->cap = cap;
	}
	g->members[g->nmembers++] = c;
	return g;
}

struct stream_shm *stream_group_shm_attach(
    struct stream_group *g, struct stream_client *c, uid_t uid, bool efd, const char **why)
{
	size_t i;

	if (!g->shm && !(g->shm = stream_shm_new(g->sb->shms, uid, why)))
		return NULL;
	if (stream_shm_add(g->shm, c, uid, efd, why) < 0) {
		bool found;

		/* a region nobody reads would keep the group alive */
		if (stream_shm_remove(g->shm, c, &found) == 0) {
			stream_shm_free(g->shm);
			g->shm = NULL;
		}
		return NULL;
	}
	for (i = 0; i < g->nmembers; i++) {
		if (g->members[i] == c) {
			g->members[i] = g->members[--g->nmembers];
			break;
		}
	}
	return g->shm;
}

void stream_group_shm_detach(struct stream_group *g, struct stream_client *c)
{
	bool found;

	if (!g->shm)
		return;
	if (stream_shm_remove(g->shm, c, &found) == 0) {
		stream_shm_free(g->shm);
		g->shm = NULL;
	}
	if (!found)
		return;
	if (g->nmembers == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 4;
		g->members = xreallocarray(g->members, cap, sizeof(*g->members));
		g->cap = cap;
	}
	g->members[g->nmembers++] = c;
}

void stream_batch_notice(struct stream_batch *sb, uint32_t domid, const struct stream_blob *b)
{
	struct stream_group *g;

	LIST_FOREACH(g, &sb->groups, entry)
	if (g->shm && state_domain_matches(domid, g->sub))
		stream_shm_put(g->shm, b, 0);
}

void stream_group_leave(struct stream_group *g, struct stream_client *c)
{
	struct stream_batch *sb = g->sb;
	size_t i;
	bool found = false;

	for (i = 0; i < g->nmembers; i++) {
		if (g->members[i] == c) {
			g->members[i] = g->members[--g->nmembers];
			found = true;
			break;
		}
	}
	/* a region goes with its last reader */
	if (g->shm && !found && stream_shm_remove(g->shm, c, &found) == 0) {
		stream_shm_free(g->shm);
		g->shm = NULL;
	}
	if (g->nmembers || g->shm)
		return;
	LIST_REMOVE(g, entry);
	sb->neverything -= g->everything;
	drop_accs(g);
	if (sb->neverything == 0)
		drop_accs(&sb->shared); /* batches for nobody now */
	mtrace__subscribe__free_unpacked(g->sub, NULL);
	label_filter_free(&g->labels);
	free(g->members);
	free(g->key);
	free(g);
}

void stream_batch_domain_gone(struct stream_batch *sb, uint32_t domid)
{
	struct stream_group *g;
	struct stream_columns *a, *next;

	for (g = group_next(sb, NULL); g; g = group_next(sb, g)) {
		for (a = TAILQ_FIRST(&g->accs); a; a = next) {
			next = TAILQ_NEXT(a, entry);
			if (a->domid == domid) {
				group_send(g, a);
				acc_free(g, a);
			}
		}
	}
}

void stream_batch_set_cap(struct stream_batch *sb, size_t total)
{
	stream_columns_set_cap(&sb->ac, total);
}

const struct stream_batch_memory *stream_batch_memory(const struct stream_batch *sb)
{
	return &sb->ac.mem;
}

struct stream_batch *stream_batch_new(
    struct event_base *base, stream_batch_send_fn send, struct stream_shms *shms)
{
	struct stream_batch *sb = calloc(1, sizeof(*sb));

	if (!sb)
		return NULL;
	sb->send_events = send;
	sb->shms = shms;
	LIST_INIT(&sb->groups);
	sb->shared.sb = sb;
	sb->shared.all_ops = true;
	TAILQ_INIT(&sb->shared.accs);
	stream_col_account_init(&sb->ac);
	if (!(sb->flush_ev = event_new(base, -1, 0, flush_cb, sb))) {
		free(sb);
		return NULL;
	}
	return sb;
}

void stream_batch_free(struct stream_batch *sb)
{
	const struct stream_batch_memory *mem = &sb->ac.mem;

	drop_accs(&sb->shared);
	log_info("event batches: %llu encoded, peak %zu bytes, client_batch_total reached %llu "
	         "times",
	    (unsigned long long)mem->encoded, mem->peak, (unsigned long long)mem->pressure);
	event_free(sb->flush_ev);
	free(sb);
	stream_blob_kept_free();
}
