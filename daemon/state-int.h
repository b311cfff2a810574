/*
 * state-int.h - the state subsystem's private layout and internal calls, shared by
 * state.c (the hot path), state-domains.c, state-threads.c, state-strtab.c,
 * state-labels.c (updates) and state-stats.c (read-outs).  Nothing outside state*.c
 * includes it.
 */
#ifndef MTRACED_STATE_INT_H
#define MTRACED_STATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "strtab.h"
#include "xalloc.h"

struct mtraced_config;

#define WIN_SECS      60  /* longest rolling window */
#define LABEL_WIN     10  /* label creation rate window */
#define HIST_BUCKETS  252 /* 4 log-linear buckets per power of two of ns */
#define LABEL_PAST    3   /* earlier labels a thread remembers: counts stay distinct */
#define NAME_MAX_LEN  64
#define STR_MAX_STORE 256 /* labels, failures and counter names are cut here */
#define NO_IDX        UINT32_MAX
#define MAX_FAILURES  256 /* distinct failure strings per guest (mtraced(8)) */
#define MAX_COUNTERS  256 /* distinct counter names per guest (mtraced(8)) */
#define TCACHE_BITS   4   /* the thread lookup cache: 16 entries (cache_find) */
#define TCACHE        (1u << TCACHE_BITS)

enum {
	TS_PENDING = 0,
	TS_RESOLVED = 1,
	TS_FAILED = 2
};

/* Events per second over the last 60 s, one bucket a second. */
struct win {
	uint64_t sec; /* second the `cur` count belongs to */
	uint64_t cur;
	uint32_t b[WIN_SECS]; /* b[s % WIN_SECS] for s in (sec - WIN_SECS, sec) */
};

/*
 * Two cache lines a thread.  The first holds what an event of the thread touches (its
 * counts: events, the per-second count, reads and resolves, the commonest ops'), what
 * a switch charges (running_ns), and what a resolve or an eviction moves (the list
 * links, state, label and site); the second what Stats and the rarer ops read, and
 * what is touched only where the second line is anyway: the id the hash is cleared by
 * (an eviction fetches both lines ahead, evict_prefetch, and writes both when the slot
 * is reused), the creation time (a resolve writes resolved_ns beside it).  A read or a
 * resolve used to write reads/resolves on the second line: with a table larger than
 * the caches, a second miss.  Entries are line-aligned so that no hot field straddles
 * two lines.  The label history (read only when a thread is relabelled) lives beside
 * the slab, in past[], valid once has_past is set: a new thread writes nothing there.
 */
struct thr {
	uint64_t events;
	/* events in second ev_sec: (uint32_t)events - ev_base (set when ev_sec began, so
	 * that an event writes only `events`); ev_prev: events in the second before */
	uint32_t ev_sec, ev_base, ev_prev;
	uint32_t prev, next; /* pending or finished list; free list */
	uint8_t type;
	uint8_t state;
	uint8_t has_past; /* past[] of this slot holds its label history */
	uint8_t labelled; /* counted in threads_labelled (a label kept or dropped) */
	uint32_t label;   /* label index or NO_IDX */
	uint32_t site;    /* creation site index or NO_IDX */
	uint64_t running_ns;
	uint64_t reads, resolves;
	/* second line */
	uint64_t id;
	uint64_t created_ns;
	uint64_t parent;
	uint64_t becomes;
	uint64_t resolved_ns;
	uint64_t notifies, children;
	uint32_t failure; /* failure string index or NO_IDX */
	uint8_t waited;   /* its wait (creation to first run or resolution) was taken */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct thr) == 128, "two cache lines a thread");
_Static_assert(offsetof(struct thr, resolves) < 64 && offsetof(struct thr, id) == 64,
    "an event's counts on the first line");

/* Labels a thread had before its current one, newest first (NO_IDX: none). */
struct thr_past {
	uint32_t l[LABEL_PAST];
};

struct label {
	uint64_t count, live;   /* distinct threads given it; pending ones it is the label of */
	uint64_t current;       /* threads whose current (last) label it is */
	uint64_t relabels;      /* times a thread was given it */
	uint64_t cr_sec;        /* second of cr[cr_sec % LABEL_WIN] */
	uint32_t cr[LABEL_WIN]; /* creations per second */
	uint64_t nlife, life_sum_ns; /* resolved threads, their lifetimes' sum */
	uint32_t hist[HIST_BUCKETS]; /* lifetimes of resolved threads */
	/* waits measured against the vCPUs (state-vcpu.c), their length, steal, blocked */
	uint64_t waits, wait_ns, wait_steal_ns, wait_blocked_ns;
};

#define STATE_MODULES_MAX 64 /* MODULE records kept per domain */

/* A module the guest published (MODULE record), copied and checked. */
struct gmod {
	uint8_t id[64]; /* build-id */
	uint8_t idlen;
	uint64_t bias, start, end;
	char name[64]; /* shown only, never opened */
};

struct sites_sym;

struct site {
	uint64_t value; /* guest address (pc) or producer's id (named) */
	uint64_t rel;   /* file address in its module, once resolved */
	uint32_t mod;   /* index in mods, NO_IDX: none */
	uint32_t name;  /* named: index in site_names, NO_IDX until named */
	uint8_t kind;   /* enum mtrace_site_kind */
	bool tried;     /* symbolisation attempted (sym NULL: it failed) */
	struct sites_sym *sym;
	struct label st;
};

struct site_edge {
	uint32_t from, to; /* site indices; from NO_IDX: the parent had no site */
	uint64_t count;    /* 0: empty slot */
};

/*
 * The strings a table was asked for last (STR_CACHE of them, replaced in turn), by
 * their length and first and last 8 bytes: a guest uses a handful of labels and
 * counter names over and over, and a repeated one is found here with a compare or
 * two, where interning it hashed it, probed the table and compared it again (~15 % of
 * mtraced's time in the zl1 benchmark).  Only strings stored as they came (not cut,
 * no NUL) are kept, so a hit is what the table would have answered.  len UINT32_MAX:
 * empty (a string is at most 65535 bytes).
 */
#define STR_CACHE 4

struct str_cache {
	uint64_t head[STR_CACHE], tail[STR_CACHE];
	uint32_t len[STR_CACHE], idx[STR_CACHE];
	uint32_t next; /* the entry replaced next */
};

struct tslot {
	uint64_t id;
	uint32_t idx; /* NO_IDX = empty */
};

struct list {
	uint32_t head, tail;
};

struct state_domain {
	uint32_t domid;
	char name[NAME_MAX_LEN];
	char status[160];
	bool alive, legacy;
	bool gone; /* destroyed or crashed, as opposed to withdrawn */
	uint32_t rings, clock;
	uint64_t dead_at_ns;

	uint64_t events, lost, corrupt, unknown, wakeups, ratelimited;
	uint64_t op_events[256]; /* events by op (Stats.op_events) */
	uint64_t gc_ns, gcs;
	struct win win;
	uint64_t last_ts;
	/* the distinct ports the last batch's event-channel events named (state_batch_ports) */
#define STATE_BATCH_PORTS 8
	uint32_t bports[STATE_BATCH_PORTS];
	uint32_t nbports;
	bool bports_more; /* more than that: the batch itself must be read */

	/* running thread, for time running */
	uint64_t running;
	uint64_t run_start;
	uint32_t running_idx; /* its slot, NO_IDX if untracked */

	/* threads: slab + id hash + two lists in age order */
	struct thr *thr;       /* a mapping of thr_res entries, thr_cap of them in use */
	struct thr_past *past; /* beside thr[], thr_cap entries */
	uint32_t nthr, thr_cap, thr_res, free_head;
	struct tslot *tab;
	uint32_t tab_mask;
	bool tab_long;     /* a probe past TAB_PROBE_MAX: rekey at the next update */
	uint64_t hash_key; /* 0: the unkeyed hash; else the domain's key (thash) */
	uint64_t hash_rekeys;
	struct list pending, finished;
	uint64_t live, threads_total, threads_evicted;
	uint64_t threads_ended;    /* left pending other than by eviction (docs/figures.md) */
	uint64_t threads_labelled; /* given a label at least once, kept or dropped */
	/* threads looked up lately, by their id's hash (cache_find); idx NO_IDX: empty */
	uint64_t cache_id[TCACHE];
	uint32_t cache_idx[TCACHE];

	struct strtab labels;
	struct str_cache label_cache;
	struct label *lstat;
	uint32_t lstat_cap;      /* entries allocated in lstat (labels.cap when last grown) */
	uint64_t labels_dropped; /* label events whose label the full table could not take */
	struct strtab failures;
	struct str_cache failure_cache;
	uint64_t failures_dropped;
	struct strtab counters;
	struct str_cache counter_cache;
	int64_t *cval;
	uint64_t counters_dropped;

	/* creation sites (state-sites.c) */
	struct site *sites;
	uint32_t nsites, sites_cap, site_mask, resolve_next;
	uint32_t sites_gen, resolve_gen; /* a new name: retry what failed */
	uint64_t resolve_debt_ns;        /* symbolisation time past its share, to repay */
	uint32_t *site_tab;
	struct strtab site_names;
	struct site_edge *edges;
	uint32_t nedges, edge_mask;
	struct gmod *mods;
	uint32_t nmods;
	uint64_t sites_dropped, sites_bad, edges_dropped, modules_dropped;
	uint64_t clock_sync_bad; /* refused clock-sync announcements (guest-time.c) */

	/* the hypervisor's scheduling of its vCPUs (state-vcpu.c); NULL: none known, and
	 * then the hot path measures no waits */
	struct vcpu_dom *vc;
	/* issue 37's map of the domain's clock to the host timeline (guest-time.c), kept
	 * here rather than in vc: a map alone is no reason to measure waits */
	int64_t host_offset_ns;
	bool host_mapped;
};

/* ---- state-domains.c: the domain table, the configuration, memory ---- */

/* The state subsystem's context, one for the daemon (state-domains.c sets it up). */
struct state_ctx {
	struct state_domain **doms;
	unsigned ndoms;
	const struct mtraced_config *cfg; /* the copy taken at state_init/reconfigure */
	uint64_t cur_sec;                 /* the second the rolling windows are at */
};
extern struct state_ctx state_ctx;
/* state-sites.c's spelling, until its rework (another branch) reads state_ctx. */
#define state_cfg     (state_ctx.cfg)
#define state_cur_sec (state_ctx.cur_sec)

double state_win_rate(const struct win *w, uint64_t now_sec, unsigned secs);

/* ---- state.c: the hot path ---- */

uint64_t state_thr_rate(const struct thr *t);

/* ---- state-threads.c: the thread table (slab, id hash, age lists, eviction) ---- */

void state_tab_resize(struct state_domain *d, uint32_t nslots);
/* The table rebuilt on a new random key (thash); clears tab_long. */
void state_tab_rekey(struct state_domain *d);
/* A new pending thread, evicting one (never `avoid`) when full; NO_IDX if none could go. */
uint32_t state_thr_new(struct state_domain *d, uint64_t id, uint64_t ts, uint64_t parent,
    uint8_t type, uint32_t avoid);
void state_thr_remove(struct state_domain *d, uint32_t i);
void state_slab_free(struct state_domain *d);

/* ---- state-strtab.c: interned strings (labels, failures, counter names) ---- */

/* Index of s (n bytes, cut at STR_MAX_STORE - 1 and at a NUL) or NO_IDX when the
 * table is full; *added tells whether it is new. */
uint32_t state_strtab_intern(struct strtab *t, const char *s, size_t n, bool *added);
/* The same through c (state_intern below): a string c does not have. */
uint32_t state_intern_slow(
    struct strtab *t, struct str_cache *c, const char *s, size_t n, bool *added);
void state_str_cache_init(struct str_cache *c);

/* ---- state-labels.c: per-label counts, creation rate and lifetime histogram ---- */

/* t is given label li (state_intern's answer, NO_IDX: the table was full, a drop). */
void state_thr_set_label(struct state_domain *d, struct thr *t, uint32_t li, bool added);
uint64_t state_hist_pct(const struct label *l, double p);
uint32_t state_label_rate_sum(const struct label *l, uint64_t now_sec);
void state_label_roll(struct label *l, uint64_t now_sec);

/* ---- state-sites.c: creation sites, the graph between them, modules ---- */

struct mtrace_event;
void state_site_apply(struct state_domain *d, const struct mtrace_event *ev);
void state_site_name(struct state_domain *d, const struct mtrace_event *ev);
void state_module_apply(struct state_domain *d, const struct mtrace_event *ev);
/* Resolve new sites within this domain's share of the tick's time (from state_tick,
 * after state_sites_tick_begin with the number of domains state_sites_waiting
 * names); true while some wait. */
bool state_sites_waiting(const struct state_domain *d);
void state_sites_tick_begin(unsigned nwaiting);
bool state_sites_tick(struct state_domain *d);
void state_sites_free(struct state_domain *d);
/* "func (file:line)", the site's name, "module+0xoff" or "0xaddr"; "(root)" for NO_IDX. */
void state_site_display(const struct state_domain *d, uint32_t si, char *buf, size_t len);

/* ---- state-vcpu.c: the vCPUs' figures and the waits measured against them ---- */

struct arena;
typedef struct Mtrace__DomainStats Mtrace__DomainStats;
typedef struct Mtrace__Stats Mtrace__Stats;
/* t's wait ends at ts (a switch to it, or its resolution): taken once (t->waited). */
void state_vcpu_wait(struct state_domain *d, struct thr *t, uint64_t ts);
void state_vcpu_free(struct state_domain *d);
void state_vcpu_fill_domain(struct arena *a, Mtrace__DomainStats *ds, const struct state_domain *d);
void state_vcpu_fill_stats(Mtrace__Stats *s);

/*
 * ---- inline: used per event by state_apply and by the files above ----
 * Here rather than in one file so that every caller can inline them (no LTO).
 */

/*
 * Fibonacci hashing: the product's top bits, scaled to the table (mask + 1 slots, a
 * power of two).  Ids are often a counter, and the top bits spread consecutive ids
 * evenly over the table: one probe a lookup at load 0.5 (its middle bits, as taken
 * before, put them on a lattice that clusters: 1.7, and more for new ids).
 *
 * The multiplier is public, so a guest can pick ids whose home slots run one after
 * another: one run of thousands of slots, and every lookup that lands in it walks it,
 * for every guest's events on our one core.  A probe longer than TAB_PROBE_MAX marks
 * the table, and the next state update rebuilds it on the ids mixed with a random key
 * of the domain's (murmur3's finaliser after the xor): ids the guest cannot aim.
 * An honest guest keeps the cheaper unkeyed hash.
 */
#define TAB_PROBE_MAX 64

static inline uint64_t tab_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline uint32_t thash(const struct state_domain *d, uint64_t id)
{
	uint64_t top;

	if (__builtin_expect(d->hash_key != 0, 0))
		id = tab_mix(id ^ d->hash_key);
	top = (id * 0x9E3779B97F4A7C15ull) >> 32;
	return (uint32_t)((top * ((uint64_t)d->tab_mask + 1)) >> 32);
}

static inline uint32_t tab_find(struct state_domain *d, uint64_t id)
{
	uint32_t j = thash(d, id);

	for (uint32_t n = 0;; j = (j + 1) & d->tab_mask, n++) {
		if (d->tab[j].idx == NO_IDX || d->tab[j].id == id) {
			if (__builtin_expect(n > TAB_PROBE_MAX, 0))
				d->tab_long = true;
			return d->tab[j].idx;
		}
	}
}

/* The slot of id if the cache has it, else NO_IDX.  Direct-mapped: a lookup is one
 * compare whichever thread it is, and the threads an event names (its own, the one it
 * creates, resolves or signals, the next one to run) mostly keep their entries; two
 * most recent entries, as before, missed every third event of mtrace-load's mix (8
 * threads a ring), a hash probe and a shuffle each. */
static inline uint32_t tcache_slot(uint64_t id)
{
	return (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> (64 - TCACHE_BITS));
}

static inline uint32_t cache_find(const struct state_domain *d, uint64_t id)
{
	uint32_t k = tcache_slot(id);

	return d->cache_id[k] == id ? d->cache_idx[k] : NO_IDX;
}

static inline void cache_put(struct state_domain *d, uint64_t id, uint32_t i)
{
	uint32_t k = tcache_slot(id);

	d->cache_id[k] = id;
	d->cache_idx[k] = i;
}

/* A slot that no longer holds its thread (id) leaves the cache. */
static inline void cache_forget(struct state_domain *d, uint64_t id, uint32_t i)
{
	uint32_t k = tcache_slot(id);

	if (d->cache_idx[k] == i)
		d->cache_idx[k] = NO_IDX;
}

static inline void list_push(struct state_domain *d, struct list *l, uint32_t i)
{
	d->thr[i].prev = l->tail;
	d->thr[i].next = NO_IDX;
	if (l->tail != NO_IDX)
		d->thr[l->tail].next = i;
	else
		l->head = i;
	l->tail = i;
}

static inline void list_del(struct state_domain *d, struct list *l, uint32_t i)
{
	struct thr *t = &d->thr[i];

	if (t->prev != NO_IDX)
		d->thr[t->prev].next = t->next;
	else
		l->head = t->next;
	if (t->next != NO_IDX)
		d->thr[t->next].prev = t->prev;
	else
		l->tail = t->prev;
}

static inline void label_unlive(struct state_domain *d, struct thr *t)
{
	if (t->label != NO_IDX && d->lstat[t->label].live)
		d->lstat[t->label].live--;
}

/* The index of s (n bytes) if c has it, else NO_IDX.  Calls nothing, so that a
 * caller's hit saves no registers; the middle of a string past 16 bytes (its first
 * and last 8 are the key's) compared 8 bytes at a time. */
static inline uint32_t state_str_cached(
    const struct strtab *t, const struct str_cache *c, const char *s, size_t n)
{
	uint64_t head = strtab_load8(s, n), tail = n > 8 ? strtab_load8(s + n - 8, 8) : 0;

	for (unsigned k = 0; k < STR_CACHE; k++) {
		if (c->head[k] != head || c->len[k] != n || c->tail[k] != tail)
			continue;
		const char *o = strtab_str(t, c->idx[k]);
		size_t i = 8;

		while (i + 8 < n && strtab_load8(o + i, 8) == strtab_load8(s + i, 8))
			i += 8;
		if (i + 8 >= n)
			return c->idx[k];
	}
	return NO_IDX;
}

/* state_strtab_intern through the cache c: inline, since every label, counter and
 * failure event interns its string. */
static inline uint32_t state_intern(
    struct strtab *t, struct str_cache *c, const char *s, size_t n, bool *added)
{
	uint32_t i = state_str_cached(t, c, s, n);

	if (i != NO_IDX) {
		*added = false;
		return i;
	}
	return state_intern_slow(t, c, s, n, added);
}

/* Lifetime histogram bucket of v ns (state-labels.c's hist_value is the inverse). */
static inline unsigned hist_bucket(uint64_t v)
{
	unsigned msb;

	if (v < 4)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	return (msb - 1) * 4 + (unsigned)((v >> (msb - 2)) & 3);
}

#endif
