/*
 * mtrace-guest.h - the guest producer library.
 *
 * A guest opens a session (mtrace_guest_open), which shares rings with dom0 through
 * grant tables, offers an event channel and announces everything in xenstore.  Each
 * producer thread/vCPU then writes into its own ring (single producer per ring) with
 * the inline mtrace_* calls below: no locks, no syscalls, never blocking.  When dom0
 * falls behind the oldest records are overwritten and dom0 counts them as lost.
 */
#ifndef MTRACE_GUEST_H
#define MTRACE_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "mtrace-ring.h"

struct mtrace_guest; /* a session: xenif handles, event channel, announcement */

/* One ring as the producer sees it.  Fields are the producer's private copies. */
struct mtrace_ring {
	struct mtrace_ring_hdr *hdr; /* shared header page */
	uint8_t *data;               /* shared data pages */
	uint64_t mask;               /* data size - 1 */
	uint64_t head;               /* private copy of hdr->head */
	uint64_t tail;               /* private copy of hdr->tail */
	uint32_t seq;
	uint32_t clock;
	struct mtrace_guest *guest;
	/* Session hook behind mtrace_ring_kick (NULL for local rings): sends the event. */
	void (*notify)(struct mtrace_guest *g);
	uint32_t modules_written; /* MODULE records written (mtrace_modules) */
};

struct mtrace_guest_config {
	unsigned rings;          /* 1..MTRACE_MAX_RINGS */
	unsigned data_pages;     /* per ring, power of two */
	uint32_t clock;          /* enum mtrace_clock; 0 = monotonic.  TSC: used if the
					 * TSC is invariant and calibrates, else monotonic
					 * (mtrace_guest_clock says which) */
	unsigned recalibrate_ms; /* TSC: recalibration period; 0 = 100 ms */
	const char *backend;     /* "xen", "sim", NULL = auto */
	const char *sim_dir;     /* NULL = $MTRACE_SIM_DIR */
	uint32_t backend_domid;  /* reader domain, normally 0 */
	bool modules;            /* MODULE records on ring 0 at open (PC sites) */
	/* TSC: the clock the line follows, its timeline: 0 (monotonic) or MTRACE_CLOCK_XEN,
	 * the clock this library reads for a "xen" ring (what it calibrates against either
	 * way): for a guest whose Xen system time that is, as on the simulated Xen */
	uint32_t tsc_timeline;
};

struct mtrace_guest *mtrace_guest_open(
    const struct mtrace_guest_config *cfg, char *err, size_t errlen);
/* Ring i (0..rings-1).  A ring must be written by one thread at a time. */
struct mtrace_ring *mtrace_guest_ring(struct mtrace_guest *g, unsigned i);
/* Withdraw the announcement ("closed"), unshare and close. */
void mtrace_guest_close(struct mtrace_guest *g);
/* Announce again (after resume/migration the toolstack gives a fresh xenstore).
 * Returns 0, or -1 with errno set. */
int mtrace_guest_reannounce(struct mtrace_guest *g);
/* Our domid and the event-channel port offered to dom0. */
uint32_t mtrace_guest_domid(const struct mtrace_guest *g);
uint32_t mtrace_guest_port(const struct mtrace_guest *g);
/* The clock the session's rings use (decided at open: TSC may fall back to monotonic). */
uint32_t mtrace_guest_clock(const struct mtrace_guest *g);
/* Notifications skipped because another producer thread was notifying (diagnostic). */
uint64_t mtrace_guest_kicks_skipped(const struct mtrace_guest *g);

/* Out-of-line slow paths (ring.c). */
void mtrace_ring_kick(struct mtrace_ring *r);                    /* notify dom0 */
void mtrace_ring_make_room(struct mtrace_ring *r, uint32_t len); /* overwrite / pad */

/*
 * Set up a ring over caller memory, without Xen (tests, benchmarks): hdr is one page,
 * data data_pages pages (a power of two, MIN..MAX_PAGES).  Writes no record; call
 * mtrace_ring_start for the RING_START record a session writes first.
 */
void mtrace_ring_init_local(struct mtrace_ring *r, struct mtrace_ring_hdr *hdr, void *data,
    uint32_t data_pages, uint32_t clock, uint32_t index, const char *name);
/* RING_START: arg = ring index, string = producer name (from the header). */
void mtrace_ring_start(struct mtrace_ring *r);

/*
 * The TSC clock (tsc.c).  A session with clock TSC calibrates at open and recalibrates
 * on a thread of its own; over local rings the caller does both and publishes.
 */
static inline uint64_t mtrace_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return 0; /* never chosen: mtrace_tsc_invariant() is false */
#endif
}

struct mtrace_tsc_sample {
	uint64_t tsc, ns;
};
#define MTRACE_TSC_HIST 64 /* samples the rate is taken over (64 periods) */
struct mtrace_tsc_cal {
	struct mtrace_time_info ti; /* the current line (ti.seq unused) */
	double rate;                /* measured ns per tick */
	double last_err_ns;         /* CLOCK_MONOTONIC minus the line, at the last sample */
	unsigned nhist;
	struct mtrace_tsc_sample hist[MTRACE_TSC_HIST];
};
/* CPUID 0x80000007 EDX bit 8 (and MTRACE_TSC is not "0"). */
bool mtrace_tsc_invariant(void);
/* First line from two samples settle_us apart.  -1 with errno ENOTSUP (TSC not
 * invariant) or ERANGE (implausible rate). */
int mtrace_tsc_calibrate(struct mtrace_tsc_cal *c, unsigned settle_us);
void mtrace_tsc_recalibrate(struct mtrace_tsc_cal *c);
/* Write the line into a ring header's time block (seqlock). */
void mtrace_tsc_publish(const struct mtrace_tsc_cal *c, struct mtrace_ring_hdr *h);

static inline uint64_t mtrace_now(const struct mtrace_ring *r)
{
	struct timespec ts;
	if (__builtin_expect(r->clock == MTRACE_CLOCK_TSC, 1))
		return mtrace_rdtsc();
	clock_gettime(r->clock == MTRACE_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Append one record with an explicit timestamp.  The hot path: reserve, write,
 * publish head with a release store, and notify only if the reader asked for it.
 */
void mtrace_emit_slow(struct mtrace_ring *r, uint8_t op, uint8_t type, uint64_t ts, uint64_t thread,
    uint64_t arg, const char *str, size_t slen);

/*
 * The hot path of every record of a fixed length: reserve len bytes at head (making
 * room only when the ring is full or the record would straddle its end) ...
 */
static inline struct mtrace_rec *mtrace_rec_reserve(struct mtrace_ring *r, uint32_t len)
{
	uint64_t off = r->head & r->mask;
	if (__builtin_expect(r->head + len - r->tail > r->mask + 1 || off + len > r->mask + 1, 0)) {
		mtrace_ring_make_room(r, len);
		off = r->head & r->mask;
	}
	/*
	 * [head, head+len) lies below tail + size: bytes of records make_room already
	 * dropped, and it published that tail (then fenced) before returning, so a
	 * reader copying them concurrently discards them on its tail re-check.
	 */
	return (struct mtrace_rec *)(r->data + off);
}

/* ... then publish them, and notify only if the reader asked for it. */
static inline void mtrace_rec_publish(struct mtrace_ring *r, uint32_t len)
{
	r->head += len;
	/* Release: the record's bytes are visible before the head that covers them. */
	__atomic_store_n(&r->hdr->head, r->head, __ATOMIC_RELEASE);
	/*
	 * io/ring.h hold-off: notify iff req_event lies in (old head, new head].
	 * No full barrier here (it would triple the cost); a wake-up lost to the race
	 * is covered by the reader's periodic drain (docs/ring-protocol.md).
	 */
	uint64_t req = __atomic_load_n(&r->hdr->req_event, __ATOMIC_RELAXED);
	if (__builtin_expect(r->head - req < len, 0))
		mtrace_ring_kick(r);
}

/* Reserve a record of len bytes and write its fixed part; publish it when complete. */
static inline struct mtrace_rec *mtrace_rec_begin(struct mtrace_ring *r, uint32_t len, uint8_t op,
    uint8_t type, uint64_t ts, uint64_t thread, uint64_t arg)
{
	struct mtrace_rec *rec = mtrace_rec_reserve(r, len);
	rec->len = (uint16_t)len;
	rec->op = op;
	rec->type = type;
	rec->seq = r->seq++;
	rec->ts = ts;
	rec->thread = thread;
	rec->arg = arg;
	return rec;
}

static inline void mtrace_emit_ts(
    struct mtrace_ring *r, uint8_t op, uint8_t type, uint64_t ts, uint64_t thread, uint64_t arg)
{
	mtrace_rec_begin(r, MTRACE_REC_FIXED, op, type, ts, thread, arg);
	mtrace_rec_publish(r, MTRACE_REC_FIXED);
}

/* The vocabulary.  thread is the current thread (MTRACE_THREAD_NONE when idle). */
static inline void mtrace_creates(
    struct mtrace_ring *r, uint64_t thread, uint64_t child, uint8_t type)
{
	mtrace_emit_ts(r, MTRACE_OP_CREATES, type, mtrace_now(r), thread, child);
}
/*
 * CREATES with its creation site: one CREATES record of MTRACE_REC_CREATES_SITE bytes,
 * the site after the fixed part (struct mtrace_site_ext).  Old readers skip the tail
 * (they take len, not 32); new ones decode it as a SITE event after the CREATES.  16
 * more bytes and no more records: the ring holds two thirds as many creations.
 */
static inline void mtrace_creates_at_ts(struct mtrace_ring *r, uint64_t ts, uint64_t thread,
    uint64_t child, uint8_t type, uint8_t site_kind, uint64_t site)
{
	struct mtrace_rec *rec = mtrace_rec_begin(
	    r, MTRACE_REC_CREATES_SITE, MTRACE_OP_CREATES, type, ts, thread, child);
	struct mtrace_site_ext *ext = (struct mtrace_site_ext *)(rec + 1);
	ext->site = site;
	/* kind, flags 0 and the zero padding in one store (little-endian, as the ABI) */
	uint64_t word = site_kind;
	memcpy(&ext->kind, &word, sizeof(word));
	mtrace_rec_publish(r, MTRACE_REC_CREATES_SITE);
}

static inline void mtrace_creates_at(struct mtrace_ring *r, uint64_t thread, uint64_t child,
    uint8_t type, uint8_t site_kind, uint64_t site)
{
	mtrace_creates_at_ts(r, mtrace_now(r), thread, child, type, site_kind, site);
}

/*
 * The address of the code where it is expanded, computed by the caller itself at
 * run time from a PC-relative operand: no call, no stack walk, no relocation, and
 * correct in a PIE.  Its line in the debug info is the line of the expansion, inside
 * whatever the caller was inlined into.
 */
#if defined(__x86_64__)
#define mtrace_here()                                                 \
	__extension__({                                               \
		uint64_t pc_;                                         \
		__asm__ volatile("1: lea 1b(%%rip), %0" : "=r"(pc_)); \
		pc_;                                                  \
	})
#elif defined(__aarch64__)
#define mtrace_here()                                          \
	__extension__({                                        \
		uint64_t pc_;                                  \
		__asm__ volatile("1: adr %0, 1b" : "=r"(pc_)); \
		pc_;                                           \
	})
#else
#define mtrace_here()                           \
	__extension__({                         \
		__label__ here_;                \
here_:                                          \
		(uint64_t)(uintptr_t) && here_; \
	})
#endif

/* CREATES whose site is the line it is written on. */
#define mtrace_creates_here(r, thread, child, type) \
	mtrace_creates_at((r), (thread), (child), (type), MTRACE_SITE_PC, mtrace_here())

/*
 * Named sites, for runtimes where a PC means nothing (an OCaml PC lands in Lwt):
 * the producer picks a non-zero id per site, names it once per ring it uses it on
 * ("file:line function", at most MTRACE_SITE_NAME_MAX bytes), then passes the id.
 */
void mtrace_site_name(struct mtrace_ring *r, uint64_t site, const char *name);
static inline void mtrace_creates_named(
    struct mtrace_ring *r, uint64_t thread, uint64_t child, uint8_t type, uint64_t site)
{
	mtrace_creates_at(r, thread, child, type, MTRACE_SITE_NAMED, site);
}

/*
 * MODULE records for every loaded ELF object with a build-id (dl_iterate_phdr):
 * what dom0 needs to map a PC to a file and an offset.  mtrace_ring_start writes
 * them; call again after dlopen.  Returns the number written.
 */
unsigned mtrace_modules(struct mtrace_ring *r);

static inline void mtrace_read(struct mtrace_ring *r, uint64_t thread, uint64_t source)
{
	mtrace_emit_ts(r, MTRACE_OP_READ, 0, mtrace_now(r), thread, source);
}
static inline void mtrace_fulfills(struct mtrace_ring *r, uint64_t thread, uint64_t resolvee)
{
	mtrace_emit_ts(r, MTRACE_OP_FULFILLS, 0, mtrace_now(r), thread, resolvee);
}
static inline void mtrace_becomes(struct mtrace_ring *r, uint64_t thread, uint64_t other)
{
	mtrace_emit_ts(r, MTRACE_OP_BECOMES, 0, mtrace_now(r), thread, other);
}
static inline void mtrace_switch(struct mtrace_ring *r, uint64_t thread)
{
	mtrace_emit_ts(r, MTRACE_OP_SWITCH, 0, mtrace_now(r), thread, 0);
}
static inline void mtrace_gc(struct mtrace_ring *r, uint64_t duration_ns)
{
	mtrace_emit_ts(r, MTRACE_OP_GC, 0, mtrace_now(r), MTRACE_THREAD_NONE, duration_ns);
}
static inline void mtrace_signal(struct mtrace_ring *r, uint64_t thread, uint64_t source)
{
	mtrace_emit_ts(r, MTRACE_OP_SIGNAL, 0, mtrace_now(r), thread, source);
}
static inline void mtrace_try_read(struct mtrace_ring *r, uint64_t thread, uint64_t source)
{
	mtrace_emit_ts(r, MTRACE_OP_TRY_READ, 0, mtrace_now(r), thread, source);
}
static inline void mtrace_evtchn_send(struct mtrace_ring *r, uint64_t thread, uint32_t port)
{
	mtrace_emit_ts(r, MTRACE_OP_EVTCHN_SEND, 0, mtrace_now(r), thread, port);
}
static inline void mtrace_evtchn_recv(struct mtrace_ring *r, uint64_t thread, uint32_t port)
{
	mtrace_emit_ts(r, MTRACE_OP_EVTCHN_RECV, 0, mtrace_now(r), thread, port);
}

/* Ops with a string (out of line: they are not the hot path). */
void mtrace_label(struct mtrace_ring *r, uint64_t thread, const char *label);
void mtrace_fails(struct mtrace_ring *r, uint64_t thread, uint64_t resolvee, const char *exn);
void mtrace_counter(struct mtrace_ring *r, uint64_t thread, const char *name, int64_t value);
void mtrace_increase(struct mtrace_ring *r, uint64_t thread, const char *name, int64_t amount);

#endif
