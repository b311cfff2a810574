/*
 * state-threads.c - the thread table of a domain: a slab of struct thr, an id hash
 * (open addressing, linear probing) and two lists in age order, pending and finished.
 *
 * Memory is bounded by max_threads_per_guest: when the slab is full the oldest
 * finished thread is evicted first, then the oldest pending one.  Lookups (tab_find)
 * and the list moves are static inline in state-int.h because state_apply runs them
 * per event; this file is what runs when a thread is created or removed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "config.h"
#include "mtrace-ring.h"
#include "state-int.h"
#include "state.h"

/*
 * Memory for a thread table (slab or hash).  A large one is looked up at random, and
 * with 4 KiB pages every lookup in a table of many MiB also misses the TLB: a page
 * walk that a prefetch does not hide.  Tables from HUGE_MIN up (a raised
 * max_threads_per_guest: 65536 threads and more) are put on 2 MiB pages where the
 * kernel allows them on request (transparent_hugepage "madvise"; "always" needs
 * nothing; "never" leaves 4 KiB pages): with 100 k live threads and a random mix
 * that took the decode + state cost from 55 to 47 ns an event (bench-drain 1 10
 * 100000).  The default table (2 MiB of threads) stays on small pages, within what
 * the TLB covers, and costs no more memory than before.  A table is filled from its
 * start, so at most one huge page is touched beyond what is used.
 */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN  ((size_t)8 << 20)

/* Line-aligned memory for a thread table, on huge pages from 2 MiB (aborts when out). */
static void *state_table_alloc(size_t bytes, size_t align)
{
	bool huge = bytes >= HUGE_MIN;
	size_t n =
	    huge ? (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1) : (bytes + align - 1) & ~(align - 1);
	void *p = aligned_alloc(huge ? HUGE_PAGE : align, n);

	if (p == NULL) {
		fprintf(stderr, "mtraced: out of memory (%zu bytes of threads)\n", bytes);
		abort();
	}
	if (huge)
		(void)madvise(p, n, MADV_HUGEPAGE); /* a hint: refused is only slower */
	return p;
}

static void tab_insert(struct state_domain *d, uint64_t id, uint32_t idx)
{
	uint32_t j = thash(d, id), n = 0;

	while (d->tab[j].idx != NO_IDX) {
		j = (j + 1) & d->tab_mask;
		n++;
	}
	if (n > TAB_PROBE_MAX)
		d->tab_long = true;
	d->tab[j].id = id;
	d->tab[j].idx = idx;
}

void state_tab_resize(struct state_domain *d, uint32_t nslots)
{
	struct tslot *old = d->tab;
	uint32_t oldn = d->tab ? d->tab_mask + 1 : 0;

	d->tab = state_table_alloc((size_t)nslots * sizeof(struct tslot), 64);
	d->tab_mask = nslots - 1;
	for (uint32_t j = 0; j < nslots; j++)
		d->tab[j] = (struct tslot){ .id = 0, .idx = NO_IDX };
	for (uint32_t j = 0; j < oldn; j++)
		if (old[j].idx != NO_IDX)
			tab_insert(d, old[j].id, old[j].idx);
	free(old);
}

/*
 * A guest aimed its ids at one run of slots (thash): the same table, rebuilt on a
 * random key.  Under a random hash at load <= 1/2 a probe past TAB_PROBE_MAX is next
 * to impossible; a few rekeys are allowed all the same, then the table stays as it is
 * rather than being rebuilt at every update.
 */
void state_tab_rekey(struct state_domain *d)
{
	d->tab_long = false;
	if (d->hash_rekeys >= 4)
		return;
	d->hash_rekeys++;
	do
		arc4random_buf(&d->hash_key, sizeof(d->hash_key));
	while (d->hash_key == 0);
	state_tab_resize(d, d->tab_mask + 1);
	d->tab_long = false;
}

/* Linear-probing delete by backward shift: no tombstones, so lookups stay short. */
static inline __attribute__((always_inline)) void tab_delete(struct state_domain *d, uint64_t id)
{
	uint32_t mask = d->tab_mask, i = thash(d, id), j, k;

	while (d->tab[i].idx != NO_IDX && d->tab[i].id != id)
		i = (i + 1) & mask;
	if (d->tab[i].idx == NO_IDX)
		return;
	for (j = i;;) {
		d->tab[i].idx = NO_IDX;
		for (;;) {
			j = (j + 1) & mask;
			if (d->tab[j].idx == NO_IDX)
				return;
			k = thash(d, d->tab[j].id);
			/* move j back to i unless its home k lies cyclically in (i, j] */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		d->tab[i] = d->tab[j];
		i = j;
	}
}

/* Inlined into the eviction (every new thread of a full table), with tab_delete: the
 * calls and their register saves were ~11 of the ~97 instructions an eviction's
 * removal took (bench/daemon/callgrind.sh drain: 259.2 -> 257.0 an event). */
static inline __attribute__((always_inline)) void thr_remove(struct state_domain *d, uint32_t i)
{
	struct thr *t = &d->thr[i];

	if (t->state == TS_PENDING) {
		list_del(d, &d->pending, i);
		d->live--;
		label_unlive(d, t);
		if (t->site != NO_IDX && d->sites[t->site].st.live)
			d->sites[t->site].st.live--;
	} else {
		list_del(d, &d->finished, i);
	}
	tab_delete(d, t->id);
	cache_forget(d, t->id, i);
	if (d->running_idx == i)
		d->running_idx = NO_IDX;
	t->next = d->free_head;
	d->free_head = i;
	d->nthr--;
}

void state_thr_remove(struct state_domain *d, uint32_t i)
{
	thr_remove(d, i);
}

/*
 * The slab is one private mapping that reserves room for max_threads_per_guest
 * entries up front (MAP_NORESERVE: a page costs memory only once a thread is put in
 * it, and the slab is filled from its start).  Growing the table is then only a
 * longer free list: the entries are never copied and never move, and no page is
 * faulted in twice.  Doubling a malloc'd slab copied it at every step into fresh
 * pages, and with many guests still filling their tables (100 guests of
 * bench/daemon/growth.sh) the copies and their page faults were 3-4 % of mtraced's
 * time.  A cap raised on reload, or a reservation the kernel refuses (strict
 * overcommit), grows the mapping with mremap instead, which moves page tables, not
 * bytes.
 */
static size_t slab_bytes(uint32_t n)
{
	size_t b = (size_t)n * sizeof(struct thr), unit = b >= HUGE_MIN ? HUGE_PAGE : 4096;

	return (b + unit - 1) & ~(unit - 1);
}

static bool slab_map(struct state_domain *d, uint32_t n)
{
	size_t nb = slab_bytes(n);
	void *p;

	if (d->thr) {
		p = mremap(d->thr, slab_bytes(d->thr_res), nb, MREMAP_MAYMOVE);
	} else {
		/* a large one 2 MiB longer, trimmed to start on a huge-page boundary */
		size_t slack = nb >= HUGE_MIN ? HUGE_PAGE : 0, head;
		char *q = mmap(NULL, nb + slack, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (q == MAP_FAILED)
			return false;
		head = slack ? (HUGE_PAGE - ((uintptr_t)q & (HUGE_PAGE - 1))) & (HUGE_PAGE - 1) : 0;
		if (head)
			munmap(q, head);
		if (slack - head)
			munmap(q + head + nb, slack - head);
		p = q + head;
	}
	if (p == MAP_FAILED)
		return false;
	/* small pages until the threads in use fill HUGE_MIN (slab_used): a guest with a
	 * raised cap and few threads must not take a 2 MiB page for them */
	(void)madvise(p, nb, MADV_NOHUGEPAGE);
	d->thr = p;
	d->thr_res = n;
	return true;
}

/* The slab now holds n entries in use: from HUGE_MIN up, on huge pages (a hint:
 * refused is only slower). */
static void slab_used(struct state_domain *d, uint32_t n)
{
	if ((size_t)n * sizeof(struct thr) >= HUGE_MIN)
		(void)madvise(d->thr, slab_bytes(d->thr_res), MADV_HUGEPAGE);
}

void state_slab_free(struct state_domain *d)
{
	if (d->thr)
		munmap(d->thr, slab_bytes(d->thr_res));
	d->thr = NULL;
	d->thr_res = 0;
}

/*
 * A full table evicts at every new thread, and the victims (the oldest finished
 * threads) are the coldest entries there are: fetch the next ones ahead.  The next
 * victim's entry was fetched at the eviction before, so its id (the hash slot to
 * clear) and its successor can be read now without waiting.  Inlined by force: out
 * of line, GCC finds it free of side effects and drops the call.
 */
static inline __attribute__((always_inline)) void evict_prefetch(const struct state_domain *d)
{
	uint32_t v = d->finished.head, w;

	if (v == NO_IDX)
		return;
	__builtin_prefetch(&d->tab[thash(d, d->thr[v].id)], 1);
	__builtin_prefetch((const char *)&d->thr[v] + 64, 1);
	w = d->thr[v].next;
	if (w != NO_IDX) { /* both lines: the id the next eviction reads is on the second */
		__builtin_prefetch(&d->thr[w], 1);
		__builtin_prefetch((const char *)&d->thr[w] + 64, 1);
	}
}

static uint32_t thr_alloc(struct state_domain *d, uint32_t avoid)
{
	uint32_t max = state_ctx.cfg->max_threads_per_guest, i;

	if (d->free_head == NO_IDX && d->thr_cap < max) {
		uint32_t ncap = d->thr_cap ? d->thr_cap * 2 : 64;
		if (ncap > max)
			ncap = max;
		if (ncap > d->thr_res && !slab_map(d, max) && !slab_map(d, ncap)) {
			fprintf(stderr, "mtraced: out of memory (%u threads)\n", ncap);
			abort();
		}
		slab_used(d, ncap);
		d->past = xreallocarray(d->past, ncap, sizeof(*d->past));
		for (i = ncap; i-- > d->thr_cap;) {
			d->thr[i].next = d->free_head;
			d->free_head = i;
		}
		d->thr_cap = ncap;
		/* a power of two (the mask), at least twice the slab: probes stay short and
		 * always find an empty slot, whatever max_threads_per_guest is */
		uint32_t nslots = d->tab_mask + 1;
		while (nslots < 2 * ncap)
			nslots *= 2;
		if (nslots != d->tab_mask + 1)
			state_tab_resize(d, nslots);
	}
	if (d->free_head == NO_IDX || d->nthr >= max) {
		/* full: the oldest finished thread goes first, then the oldest pending one */
		uint32_t v = d->finished.head;
		/* avoid may be NO_IDX, as is an empty list's head: never index with it */
		if (v != NO_IDX && v == avoid)
			v = d->thr[v].next;
		if (v == NO_IDX) {
			v = d->pending.head;
			if (v != NO_IDX && v == avoid)
				v = d->thr[v].next;
		}
		if (v == NO_IDX)
			return NO_IDX;
		thr_remove(d, v);
		d->threads_evicted++;
		evict_prefetch(d);
	}
	i = d->free_head;
	d->free_head = d->thr[i].next;
	d->nthr++;
	return i;
}

uint32_t state_thr_new(
    struct state_domain *d, uint64_t id, uint64_t ts, uint64_t parent, uint8_t type, uint32_t avoid)
{
	uint32_t i = thr_alloc(d, avoid);
	struct thr *t;

	if (i == NO_IDX)
		return NO_IDX;
	t = &d->thr[i];
	/* every field by hand: a memset or a compound literal becomes `rep stos`, which
	 * costs more than these stores (this runs for every thread created) */
	t->events = 0;
	t->ev_sec = (uint32_t)state_ctx.cur_sec;
	t->ev_base = t->ev_prev = 0;
	t->type = type;
	t->state = TS_PENDING;
	t->has_past = 0;
	t->labelled = 0;
	t->label = NO_IDX;
	t->site = NO_IDX;
	t->id = id;
	t->created_ns = ts;
	t->running_ns = 0;
	t->reads = t->resolves = 0;
	t->parent = parent;
	t->becomes = MTRACE_THREAD_NONE;
	t->resolved_ns = 0;
	t->notifies = t->children = 0;
	t->failure = NO_IDX;
	t->waited = 0;
	list_push(d, &d->pending, i);
	tab_insert(d, id, i);
	d->live++;
	d->threads_total++;
	return i;
}
