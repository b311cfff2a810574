/*
 * mtrace-ring.h - the trace ring ABI shared by a Xen guest (producer) and dom0 (reader).
 *
 * This header is the contract; docs/ring-protocol.md is its specification.  Everything
 * here is fixed-size, little-endian (x86/arm64 guests and dom0 share endianness in
 * practice; the magic detects a mismatch) and free of pointers.
 *
 * One ring = one header page + 2^k data pages, all granted by the guest to dom0.
 * The header page is granted read-write (dom0 writes req_event into it); data pages
 * are granted read-only.  Positions are free-running u64 byte counts, masked by
 * (data_size - 1) to find an offset.  Records are 8-byte aligned, carry their own
 * length and never straddle the end of the data area (a PAD record fills the gap).
 */
#ifndef MTRACE_RING_H
#define MTRACE_RING_H

#include <stdint.h>

#define MTRACE_RING_MAGIC       0x4352544dU /* "MTRC" little-endian */
#define MTRACE_RING_VERSION     2           /* 2: the header carries a time block (clock "tsc") */
#define MTRACE_RING_VERSION_MIN 1           /* what a reader still accepts */
#define MTRACE_PAGE_SIZE        4096U
#define MTRACE_RING_MIN_PAGES   1U
#define MTRACE_RING_MAX_PAGES   512U /* 2 MiB of data per ring */
#define MTRACE_MAX_RINGS        64U  /* rings per guest (one per vCPU/producer thread) */

/* Operation codes 0..13: the MirageOS / Lwt / Eio vocabulary, same numbers as mirage-profile. */
enum mtrace_op {
	MTRACE_OP_CREATES = 0,     /* thread created `arg` (child); type = thread type */
	MTRACE_OP_READ = 1,        /* thread read the result of `arg` */
	MTRACE_OP_FULFILLS = 2,    /* thread resolved `arg` successfully */
	MTRACE_OP_FAILS = 3,       /* thread resolved `arg` with failure; string = exception */
	MTRACE_OP_BECOMES = 4,     /* thread now behaves as `arg` (tail call / bind merge) */
	MTRACE_OP_LABEL = 5,       /* thread gets label string */
	MTRACE_OP_INCREASE = 6,    /* counter `string` += amount (arg as int64) */
	MTRACE_OP_SWITCH = 7,      /* thread is now running (thread = -1: guest idle) */
	MTRACE_OP_GC = 8,          /* GC took arg ns, ending at ts (thread unused) */
	MTRACE_OP_SIGNAL = 9,      /* `arg` signalled thread (implies switch) */
	MTRACE_OP_TRY_READ = 10,   /* thread checked `arg` and found it pending */
	MTRACE_OP_COUNTER = 11,    /* counter `string` = arg as int64 */
	MTRACE_OP_READ_LATER = 12, /* Eio: read without switch */
	MTRACE_OP_SIGNAL_NEW = 13, /* Eio: signal without switch */
	/* mtrace's own ops */
	MTRACE_OP_EVTCHN_SEND = 64, /* thread notified event channel port `arg` */
	MTRACE_OP_EVTCHN_RECV = 65, /* thread woke on event channel port `arg` */
	MTRACE_OP_RING_START =
	    66, /* first record of a ring: arg = ring index, string = producer name */
	/* creation sites (ring version 1, additive: a reader that does not know them skips them) */
	MTRACE_OP_SITE =
	    67, /* thread `thread` was created at site `arg`; type = enum mtrace_site_kind */
	MTRACE_OP_SITE_NAME = 68, /* named site `arg` is string "file:line function" */
	MTRACE_OP_MODULE =
	    69, /* a loaded module: arg = load bias, string = "BUILDID START END NAME" */
	MTRACE_OP_PAD = 255, /* filler up to the end of the data area; not an event */
};
#define MTRACE_OP_COUNT_MIRAGE 14

/* Thread types carried by CREATES (mirage-profile §1.2); 99 = unknown. */
enum mtrace_thread_type {
	MTRACE_TT_WAIT = 0,
	MTRACE_TT_TASK,
	MTRACE_TT_BIND,
	MTRACE_TT_TRY,
	MTRACE_TT_CHOOSE,
	MTRACE_TT_PICK,
	MTRACE_TT_JOIN,
	MTRACE_TT_MAP,
	MTRACE_TT_CONDITION,
	MTRACE_TT_ON_SUCCESS,
	MTRACE_TT_ON_FAILURE,
	MTRACE_TT_ON_TERMINATION,
	MTRACE_TT_ON_ANY,
	MTRACE_TT_IGNORE_RESULT,
	MTRACE_TT_ASYNC,
	MTRACE_TT_PROMISE,
	MTRACE_TT_SEMAPHORE,
	MTRACE_TT_SWITCH,
	MTRACE_TT_STREAM,
	MTRACE_TT_MUTEX,
	MTRACE_TT_COUNT,
	MTRACE_TT_UNKNOWN = 99,
};

/* What a SITE record's arg is. */
enum mtrace_site_kind {
	MTRACE_SITE_PC = 0,    /* a code address in the guest (mapped through MODULE records) */
	MTRACE_SITE_NAMED = 1, /* a producer-chosen id, named once by SITE_NAME */
};
#define MTRACE_SITE_NAME_MAX 255U /* longest site string a reader keeps */
#define MTRACE_BUILD_ID_MAX  64U  /* bytes of a build-id a reader accepts */

#define MTRACE_THREAD_NONE UINT64_MAX /* "-1": no thread / guest idle */

/* Clocks a header may name. */
enum mtrace_clock {
	MTRACE_CLOCK_MONOTONIC = 1, /* Linux CLOCK_MONOTONIC, ns */
	MTRACE_CLOCK_XEN = 2,       /* Xen system time, ns since boot */
	MTRACE_CLOCK_REALTIME = 3,  /* CLOCK_REALTIME, ns since the epoch (replays) */
	MTRACE_CLOCK_TSC = 4,       /* TSC ticks; the header's time block turns them into ns
					 * on its `timeline` clock (header version 2) */
};

/*
 * A record.  Every non-PAD record has the 32-byte fixed part; ops with a string
 * (FAILS, LABEL, INCREASE, COUNTER, RING_START) append `str_len` bytes plus a NUL,
 * padded with zeros to the record length.  len is the whole record in bytes,
 * a multiple of 8, >= 8 (PAD) or >= 32 (others).
 */
struct mtrace_rec {
	uint16_t len;
	uint8_t op;
	uint8_t type;    /* thread type for CREATES, else 0 */
	uint32_t seq;    /* event sequence number, low 32 bits; PAD: 0 */
	uint64_t ts;     /* ns on the header's clock */
	uint64_t thread; /* current thread (MTRACE_THREAD_NONE = idle) */
	uint64_t arg;    /* other thread, amount, value, duration or port */
};
#define MTRACE_REC_FIXED 32U
/*
 * A CREATES record may carry the child's creation site after the fixed part
 * (len >= MTRACE_REC_CREATES_SITE): readers that know it decode it as a SITE event
 * following the CREATES, older ones skip it by len.
 */
struct mtrace_site_ext {
	uint64_t site;   /* as a SITE record's arg */
	uint8_t kind;    /* enum mtrace_site_kind */
	uint8_t flags;   /* 0 */
	uint8_t _pad[6]; /* 0 */
};
#define MTRACE_REC_CREATES_SITE (MTRACE_REC_FIXED + 16U)
#define MTRACE_REC_ALIGN        8U
#define MTRACE_REC_MAX          4096U /* longest record a producer writes and a reader accepts */
#define MTRACE_STR_MAX          (MTRACE_REC_MAX - MTRACE_REC_FIXED - 1)

/*
 * The time block of a version-2 header whose clock is MTRACE_CLOCK_TSC: how dom0 turns a
 * record's ticks into ns on `timeline` (MONOTONIC for a Linux guest, XEN for a
 * unikernel, which copies its vcpu_time_info here).  The fields and the formula are
 * Xen's pvclock (vcpu_time_info, public/xen.h), extended to ticks before tsc_timestamp:
 *
 *   d  = tsc - tsc_timestamp          (two's complement; negative: before the base)
 *   d' = shift >= 0 ? |d| << shift : |d| >> -shift
 *   ns = system_time +/- (d' * mul) >> 32
 *
 * The guest rewrites the block when it recalibrates, under a seqlock: `seq` odd while it
 * writes, incremented again (even) after, with release ordering; a reader copies the
 * block between two equal even reads of seq, and otherwise keeps its previous copy.
 * A recalibration keeps the conversion continuous at its own instant (the new base is
 * where the old line stood), so records converted with a newer block stay within the
 * calibration error of where the older one put them.
 */
struct mtrace_time_info {
	uint32_t seq;               /* seqlock: odd while the guest rewrites the block */
	uint32_t timeline;          /* enum mtrace_clock: MONOTONIC or XEN */
	uint64_t tsc_timestamp;     /* ticks at the base point */
	uint64_t system_time;       /* ns on `timeline` at tsc_timestamp */
	uint32_t tsc_to_system_mul; /* ns per tick as a 0.32 fixed-point fraction */
	int8_t tsc_shift;           /* applied to the tick delta before mul */
	uint8_t _pad0[3];
	uint64_t calibrations; /* times the guest rewrote the block (diagnostic) */
	uint8_t _pad1[24];
};

/* Ticks to ns with a (copied, checked) time block. */
static inline uint64_t mtrace_time_convert(const struct mtrace_time_info *ti, uint64_t tsc)
{
	uint64_t d = tsc - ti->tsc_timestamp;
	int neg = (int64_t)d < 0;
	uint64_t ns;

	if (neg)
		d = -d;
	if (ti->tsc_shift >= 0)
		d <<= ti->tsc_shift & 63;
	else
		d >>= -ti->tsc_shift & 63;
	ns = (uint64_t)(((unsigned __int128)d * ti->tsc_to_system_mul) >> 32);
	return neg ? ti->system_time - ns : ti->system_time + ns;
}

/*
 * The header page.  Producer-owned and reader-owned fields sit on separate cache
 * lines.  Fields written by the guest are hints to dom0 and are copied and checked
 * before use; fields written by dom0 are hints to the guest.
 */
struct mtrace_ring_hdr {
	/* set once by the guest before announcing; dom0 copies them at attach */
	uint32_t magic;
	uint16_t version;
	uint16_t hdr_size;   /* sizeof(struct mtrace_ring_hdr) */
	uint32_t data_pages; /* power of two, MIN..MAX_PAGES */
	uint32_t clock;      /* enum mtrace_clock */
	uint32_t ring_index; /* this ring's index among the guest's rings */
	uint32_t flags;
	char name[40]; /* producer name, NUL-terminated ("vcpu0", "main") */
	/* version 2, clock TSC: rewritten by the guest at each recalibration (seqlock);
	 * zero otherwise.  Version 1 had 64 bytes of zero padding here. */
	struct mtrace_time_info time;

	/* producer cache line: free-running byte positions */
	uint64_t head;     /* end of the last complete record (release store) */
	uint64_t tail;     /* start of the oldest record still intact */
	uint64_t notifies; /* event-channel notifications sent (diagnostic) */
	uint8_t _pad1[40];

	/* reader cache line: written by dom0 */
	uint64_t req_event;  /* notify when a publish takes head from below to >= this */
	uint64_t reader_pos; /* how far dom0 has read (diagnostic) */
	uint8_t _pad2[48];

	/* grant references of the data pages, in order */
	uint32_t data_refs[];
};

#define MTRACE_HDR_REFS_MAX ((MTRACE_PAGE_SIZE - sizeof(struct mtrace_ring_hdr)) / sizeof(uint32_t))

_Static_assert(sizeof(struct mtrace_rec) == MTRACE_REC_FIXED, "record fixed part");
_Static_assert(
    sizeof(struct mtrace_site_ext) == MTRACE_REC_CREATES_SITE - MTRACE_REC_FIXED, "site extension");
_Static_assert(sizeof(struct mtrace_ring_hdr) == 256, "header layout");
_Static_assert(sizeof(struct mtrace_time_info) == 64, "time block layout");

/*
 * xenstore announcement, under /local/domain/<domid>/data/mtrace/ :
 *   version         "1", or "2" when clock is "tsc" (version-1 readers refuse it cleanly)
 *   clock           "monotonic" | "xen" | "realtime" | "tsc"
 *   event-channel   unbound port offered to dom0
 *   rings           number of rings N (1..MTRACE_MAX_RINGS)
 *   ring/<i>/ref    grant ref of ring i's header page
 *   ring/<i>/pages  its data page count
 *   clock-sync      "<seq> <ring_clock_ns> <xen_ns> <width_ns>" where the guest reads Xen
 *                   time (docs/xen-time.md); rewritten alone when the relation moves
 *   state           "ready" (written last, in the same transaction) | "closed"
 */
#define MTRACE_XS_DIR "data/mtrace"

#endif
