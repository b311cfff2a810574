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
	        (str && strtab_bytes(&a->dict.t) + e->str_len + 1 > COL_MAX_STR));
}

int stream_columns_add_str(struct stream_columns *a, const char *s, size_t len)
{
	uint32_t idx;

	int r = stream_dict_add(&a->dict, s ? s : "", s ? len : 0, &idx);

	if (r > 0) /* a new string: the table may have grown */
		account(a);
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

/* Events stream_columns_copy_run looks at a call. */
#define RUN_MAX 256u
/* Events whose strings are looked at before the next ones' (copy_run). */
#define RUN_CHUNK 32u

/*
 * A string new to the batch, for copy_run: added as acc_append (stream-batch.c)
 * would, with its checks; false where that would send the batch first.  Out of line
 * and looked up again: in the loop, keeping the key for stream_dict_add_slow cost
 * every lookup its stores.
 */
static __attribute__((noinline)) bool run_add_str(
    struct stream_columns *a, const struct mtrace_event *e, uint32_t *idx)
{
	int r;

	if (a->ac->mem.bytes > a->ac->cap ||
	    strtab_bytes(&a->dict.t) + e->str_len + 1 > COL_MAX_STR ||
	    (r = stream_dict_add(&a->dict, e->str, e->str_len, idx)) < 0)
		return false;
	if (r > 0) /* the table may have grown */
		account(a);
	return true;
}

/*
 * Most events land in a batch already begun with room for them, follow the previous
 * one within a 32-bit delta and have no string, or one the batch's dictionary has
 * or can take: copy the leading run of those in ev into a's columns and return how
 * many that was.  Where the strings are is found first (no branch on which events
 * have one: random in a trace, a mispredicted branch per few events), then the
 * strings alone, and only then are the columns copied, up to where the run ends:
 * copying first and cutting the run at the string after copied the rest again at
 * the next call (4.4 copies an event in mtrace-load's mix).  A string new to the
 * batch is added on the way, with acc_append's checks (stream-batch.c): the run ends
 * only where that would send the batch first (its strings past COL_MAX_STR, the
 * columns past client_batch_total) or at an event without its string.  Ending it at
 * every new string made runs of 16 events in mtrace-load's mix at 100 k events/s
 * (each batch meets its handful of strings anew), each scanned a chunk ahead.  The
 * columns and counts stay in locals: a store to a column may alias a's own fields
 * (the build has -fno-strict-aliasing), so going through a would reload them for
 * every event.
 */
size_t stream_columns_copy_run(struct stream_columns *a, const struct mtrace_event *ev, size_t n)
{
	size_t k = a->n, m = a->cap - k, nref = a->nref, j, ns = 0, s, stop;
	uint64_t last = a->last_ts;
	int32_t *dts;
	uint8_t *op, *type;
	int64_t *thread, *arg;
	uint32_t *ref;
	uint16_t at[RUN_MAX];

	if (k == 0)
		return 0; /* a batch's first event sets its base (and its columns may be NULL) */
	if (m > n)
		m = n;
	if (m > RUN_MAX)
		m = RUN_MAX;
	/* a chunk at a time: most runs end at a string within a few dozen events */
	ref = a->str_ref + nref;
	stop = m;
	s = 0;
	for (size_t c0 = 0; c0 < m; c0 += RUN_CHUNK) {
		size_t c1 = c0 + RUN_CHUNK < m ? c0 + RUN_CHUNK : m;

		for (j = c0; j < c1; j++) {
			at[ns] = (uint16_t)j;
			ns += mtrace_op_flags[ev[j].op] & MTRACE_OPF_STR;
		}
		/* past client_batch_total a string event takes the checked path (which
		 * sends early) */
		if (ns > s && a->ac->mem.bytes > a->ac->cap) {
			stop = at[s];
			break;
		}
		/* refs in place; nref counts those the run keeps */
		for (; s < ns; s++) {
			const struct mtrace_event *e = &ev[at[s]];
			struct stream_dict_hit key, *slot;
			uint32_t idx;

			if (!e->str ||
			    (!stream_dict_cached(&a->dict, e->str, e->str_len, &key, &slot, &idx) &&
			        !run_add_str(a, e, &idx))) {
				stop = at[s];
				break;
			}
			ref[s] = idx;
		}
		if (stop < m)
			break;
	}
	dts = a->dts + k;
	op = a->op + k;
	type = a->type + k;
	thread = a->thread + k;
	arg = a->arg + k;
	for (j = 0; j < stop; j++) {
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
		last = e->ts;
	}
	while (s > 0 && at[s - 1] >= j) /* a delta ended the run before some strings */
		s--;
	a->n = k + j;
	a->nref = nref + s;
	if (j)
		a->last_ts = last;
	return j;
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
	ssize_t len = -1;
	size_t i;

	if (stream_dict_count(&a->dict) > 64 &&
	    !(strs = malloc(stream_dict_count(&a->dict) * sizeof(*strs))))
		goto out;
	for (i = 0; i < stream_dict_count(&a->dict); i++)
		strs[i] = stream_dict_str(&a->dict, i);
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
		.nstr = stream_dict_count(&a->dict),
		.str = strs,
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
	if (strs != strs_stack)
		free(strs);
out:
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
