/*
 * stream-columns.c - the column encoder: one (domain, ring)'s events in EventBatch
 * columns (deltas, ops, threads, args, types, a dictionary of strings), encoded once
 * into a framed ServerMsg whose bytes all the clients of a batch share.
 *
 * The columns of every group and ring together are counted here, in the account the
 * batcher (stream-batch.c) gives each of them, against client_batch_total (mtraced(8),
 * MEMORY); what to send when the total is reached is the groups' policy.
 */
#include <stdlib.h>
#include <string.h>

#include "mtrace.pb-c.h"
#include "ring-reader.h"
#include "stream-blob.h"
#include "stream-columns.h"
#include "xalloc.h"

/* Flush a ring's columns early past these, which keeps a frame far below
 * FRAME_MAX_TO_CLIENT: 8192 events * 40 bytes + 512 KiB of strings. */
#define COL_MAX_EVENTS 8192u
#define COL_MAX_STR    (512u * 1024)

#define COL_MIN_EVENTS 256u
/* Bytes per event of the columns below. */
#define COL_BYTES (sizeof(int32_t) + 2 * sizeof(uint8_t) + 2 * sizeof(int64_t) + sizeof(uint32_t))

void stream_col_account_init(struct stream_col_account *ac)
{
	memset(ac, 0, sizeof(*ac));
	ac->cap = SIZE_MAX;
}

void stream_columns_set_cap(struct stream_col_account *ac, size_t total)
{
	ac->cap = total ? total : SIZE_MAX;
}

void stream_columns_pressure(struct stream_col_account *ac)
{
	ac->mem.pressure++;
}

/* Columns grow to at most COL_MAX_EVENTS: out of memory aborts (xalloc.h). */
static void grow(void **p, size_t size, size_t n)
{
	*p = xreallocarray(*p, n, size);
}

static void account(struct stream_columns *a)
{
	size_t now = sizeof(*a) + a->cap * COL_BYTES + stream_dict_bytes(&a->dict);

	struct stream_batch_memory *mem = &a->ac->mem;

	mem->bytes = mem->bytes - a->bytes + now;
	a->bytes = now;
	if (mem->bytes > mem->peak)
		mem->peak = mem->bytes;
}

struct stream_columns *stream_columns_new(
    struct stream_col_account *ac, uint32_t domid, uint32_t ring, uint32_t clock)
{
	struct stream_columns *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->ac = ac;
	a->domid = domid;
	a->ring = ring;
	a->clock = clock;
	account(a);
	return a;
}

void stream_columns_release(struct stream_columns *a)
{
	free(a->dts);
	free(a->op);
	free(a->thread);
	free(a->arg);
	free(a->type);
	free(a->str_ref);
	stream_dict_free(&a->dict);
	a->dts = NULL;
	a->op = a->type = NULL;
	a->str_ref = NULL;
	a->thread = a->arg = NULL;
	a->n = a->nref = a->cap = 0;
	account(a);
}

void stream_columns_free(struct stream_columns *a)
{
	stream_columns_release(a);
	a->ac->mem.bytes -= a->bytes;
	free(a);
}

int stream_columns_grow(struct stream_columns *a)
{
	size_t cap = a->cap ? a->cap * 2 : COL_MIN_EVENTS;

	if (a->n < a->cap)
		return 0;
	if (cap > COL_MAX_EVENTS)
		cap = COL_MAX_EVENTS;
	if (a->ac->mem.bytes + (cap - a->cap) * COL_BYTES > a->ac->cap)
		return -1;
	grow((void **)&a->dts, sizeof(*a->dts), cap);
	grow((void **)&a->op, sizeof(*a->op), cap);
	grow((void **)&a->thread, sizeof(*a->thread), cap);
	grow((void **)&a->arg, sizeof(*a->arg), cap);
	grow((void **)&a->type, sizeof(*a->type), cap);
	grow((void **)&a->str_ref, sizeof(*a->str_ref), cap);
	a->cap = cap;
	account(a);
	return 0;
}

bool stream_columns_has_room(const struct stream_columns *a, bool str)
{
	return a->n < a->cap && (!str || a->ac->mem.bytes <= a->ac->cap);
}

/* A guest clock may step back, or jump by more than the 2 s a 32-bit delta holds. */
static bool delta_fits(uint64_t d)
{
	return (int64_t)d >= INT32_MIN && (int64_t)d <= INT32_MAX;
}

bool stream_columns_full_for(const struct stream_columns *a, const struct mtrace_event *e)
{
	bool str = mtrace_op_flags[e->op] & MTRACE_OPF_STR;

	return a->n &&
	    (a->n >= COL_MAX_EVENTS || !delta_fits(e->ts - a->last_ts) ||
	        (str && stream_dict_bytes_with(&a->dict, e->str_len) > COL_MAX_STR));
}

int stream_columns_add_str(struct stream_columns *a, const char *s, size_t len)
{
	uint32_t idx;

	int r = stream_dict_add(&a->dict, s ? s : "", s ? len : 0, &idx);

	if (a->dict.grew) {
		a->dict.grew = false;
		account(a);
	}
	if (r < 0)
		return -1;
	a->str_ref[a->nref++] = idx;
	return 0;
}

void stream_columns_put(struct stream_columns *a, const struct mtrace_event *e)
{
	size_t k = a->n;

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

/* A string of len bytes fits the batch (stream_columns_full_for) while len < this. */
static size_t str_room(const struct stream_columns *a)
{
	size_t used = stream_dict_bytes_with(&a->dict, 0);

	return used < COL_MAX_STR ? COL_MAX_STR - used + 1 : 0;
}

/* Events stream_columns_take copies before it looks at their strings. */
#define TAKE_CHUNK 256u

/*
 * One chunk of stream_columns_take: the columns of up to m events, then their
 * strings.  The columns are copied first, with no look at which events have a string
 * but a note of where they are (a branch on it is mispredicted every few events of a
 * trace); the strings then are added as acc_append (stream-batch.c) would, with its
 * checks, and the events taken end at the first that would have sent the batch first
 * (its strings past COL_MAX_STR, the columns past client_batch_total) or has no
 * string: its columns, copied, are simply not counted.  So is the event whose delta
 * does not fit: it is stored before it is looked at, which spares the loop the moves a
 * check first costs (the slot is there: m is within the columns' room), and the loop
 * is unrolled twice (an add and a compare fewer per event).  The columns and counts stay in
 * locals: a store to a column may alias a's own fields (the build has
 * -fno-strict-aliasing), so going through a would reload them for every event.
 */
static size_t take_chunk(struct stream_columns *a, const struct mtrace_event *restrict ev, size_t m)
{
	size_t k0 = a->n, j, s, ns = 0, room;
	bool over;
	uint64_t last = k0 ? a->last_ts : ev[0].ts; /* a batch's first event: delta 0 */
	int32_t *dts = a->dts + k0;
	uint8_t *op = a->op + k0, *type = a->type + k0;
	int64_t *thread = a->thread + k0, *arg = a->arg + k0;
	uint32_t *ref = a->str_ref + a->nref;
	uint16_t at[TAKE_CHUNK];

#pragma GCC unroll 2
	for (j = 0; j < m; j++) {
		const struct mtrace_event *e = &ev[j];
		uint64_t d = e->ts - last;
		uint8_t o = e->op;

		dts[j] = (int32_t)d;
		op[j] = o;
		thread[j] = (int64_t)e->thread;
		arg[j] = (int64_t)e->arg;
		type[j] = e->type;
		at[ns] = (uint16_t)j;
		ns += mtrace_op_flags[o] & MTRACE_OPF_STR;
		/* a guest clock may step back, or jump by more than the 2 s a delta holds */
		if (__builtin_expect((int64_t)(int32_t)d != (int64_t)d, 0))
			break;
		last = e->ts;
	}
	/* the event the loop stopped at was counted, and is not taken */
	if (j < m)
		ns -= mtrace_op_flags[ev[j].op] & MTRACE_OPF_STR;
	/* what the checks read changes only with a string new to the batch */
	over = a->ac->mem.bytes > a->ac->cap;
	room = str_room(a);
	for (s = 0; s < ns; s++) {
		const struct mtrace_event *e = &ev[at[s]];
		uint32_t idx;
		int r;

		if (!e->str || over || e->str_len >= room ||
		    (r = stream_dict_add(&a->dict, e->str, e->str_len, &idx)) < 0) {
			j = at[s];
			break;
		}
		if (r > 0) /* new to the batch: its strings' bytes grew */
			room = str_room(a);
		if (a->dict.grew) { /* new to the table: its heap may have */
			a->dict.grew = false;
			account(a);
			over = a->ac->mem.bytes > a->ac->cap;
		}
		ref[s] = idx;
	}
	if (!j)
		return 0;
	if (k0 == 0) {
		/* a batch's first event: busy again */
		a->idle_since = 0;
		a->first_seq = ev[0].seq;
		a->base_ts = ev[0].ts;
	}
	a->n = k0 + j;
	a->nref += s;
	a->last_ts = ev[j - 1].ts;
	return j;
}

size_t stream_columns_take(struct stream_columns *a, const struct mtrace_event *ev, size_t n)
{
	size_t got = 0;

	while (got < n) {
		size_t m = a->cap - a->n, t;

		if (m > n - got)
			m = n - got;
		if (m > TAKE_CHUNK)
			m = TAKE_CHUNK;
		if (!m) /* no room, or no columns yet: the checked path grows them */
			break;
		t = take_chunk(a, ev + got, m);
		got += t;
		if (t < m)
			break;
	}
	return got;
}

void stream_columns_reset(struct stream_columns *a)
{
	a->n = 0;
	a->nref = 0;
	stream_dict_reset(&a->dict);
}

/* a's batch packed into a new blob (*blob) or into the caller's buffer (get);
 * the columns are reset in any case.  The framed length, or -1. */
static ssize_t encode(struct stream_columns *a, struct stream_blob **blob,
    uint8_t *(*get)(void *arg, size_t framed), void *arg)
{
	char *strs_stack[64], **strs = strs_stack;
	uint32_t lens_stack[64], *lens = lens_stack;
	size_t i, ns = stream_dict_count(&a->dict);
	ssize_t len = -1;

	if (ns > 64 &&
	    (!(strs = malloc(ns * sizeof(*strs))) || !(lens = malloc(ns * sizeof(*lens)))))
		goto out;
	for (i = 0; i < ns; i++) {
		strs[i] = (char *)stream_dict_str(&a->dict, i);
		lens[i] = stream_dict_len(&a->dict, i);
	}
	const struct stream_batch_cols c = {
		.domid = a->domid,
		.ring = a->ring,
		.clock = a->clock,
		.base_ts = a->base_ts,
		.first_seq = a->first_seq,
		.n = a->n,
		.dts = a->dts,
		.op = a->op,
		.type = a->type,
		.thread = a->thread,
		.arg = a->arg,
		.nstr = ns,
		.str = strs,
		.str_len = lens,
		.nref = a->nref,
		.str_ref = a->str_ref,
	};
	/* NULL cannot happen within the COL_MAX_* bounds short of ENOMEM */
	if (blob) {
		*blob = stream_blob_pack_cols(&c);
		len = *blob ? (ssize_t)(*blob)->len : -1;
	} else {
		len = stream_blob_pack_cols_into(&c, get, arg);
	}
	a->ac->mem.encoded++;
out:
	if (strs != strs_stack)
		free(strs);
	if (lens != lens_stack)
		free(lens);
	stream_columns_reset(a);
	return len;
}

struct stream_blob *stream_columns_encode(struct stream_columns *a)
{
	struct stream_blob *b = NULL;

	encode(a, &b, NULL, NULL);
	return b;
}

ssize_t stream_columns_encode_into(
    struct stream_columns *a, uint8_t *(*get)(void *arg, size_t framed), void *arg)
{
	return encode(a, NULL, get, arg);
}
