/*
 * vcpu-decode.h - Xen's trace records (xen/public/trace.h, Xen 4.17) as the scheduler
 * writes them, decoded from a copy of one physical CPU's window (vcpu-decode.c): pure
 * functions of the bytes, no Xen, safe on any input (tests/daemon/fuzz-vcpu.c).
 */
#ifndef MTRACED_VCPU_DECODE_H
#define MTRACED_VCPU_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* The event ids and runstates we read (public/trace.h, public/vcpu.h). */
#define XTRC_LOST_RECORDS     0x0001f001u
#define XTRC_WRAP_BUFFER      0x0001f002u
#define XTRC_SCHED_MIN        0x00021000u
#define XTRC_RUNSTATE_CHANGE  0x00021001u /* | old << 8 | new << 4 */
#define XTRC_CONTINUE_RUNNING 0x00021002u
#define XTRC_SCHED_VERBOSE    0x00028000u
#define XTRC_SCHED_SLEEP      0x00028003u
#define XTRC_SCHED_WAKE       0x00028004u
#define XTRC_SCHED_YIELD      0x00028005u
#define XTRC_SCHED_BLOCK      0x00028006u
#define XTRC_SCHED_SWITCH     0x0002800au
/* What mtraced asks Xen to record: runstate changes and the verbose scheduler class. */
#define XTRC_MTRACE_MASK (XTRC_SCHED_MIN | XTRC_SCHED_VERBOSE)

#define XRUNSTATE_RUNNING  0
#define XRUNSTATE_RUNNABLE 1
#define XRUNSTATE_BLOCKED  2
#define XRUNSTATE_OFFLINE  3

#define XDOMID_FIRST_RESERVED 0x7ff0u /* the idle domain (0x7fff) and Xen's own ids */

enum vrec_kind {
	VREC_RUNSTATE, /* a vCPU's runstate changed: old -> new */
	VREC_CONTINUE, /* the running vCPU was picked again */
	VREC_WAKE,
	VREC_SLEEP,
	VREC_BLOCK,
	VREC_YIELD,
	VREC_SWITCH, /* vcpu (domid, vcpu) out, (domid2, vcpu2) in */
	VREC_LOST,   /* Xen dropped `lost` records of this CPU since first_tsc */
	VREC_KINDS
};

/* One decoded record.  Every record we keep carries the CPU's TSC. */
struct vrec {
	uint64_t tsc;
	uint64_t first_tsc; /* LOST: when the loss began */
	uint32_t cpu;       /* the physical CPU whose buffer held it */
	uint32_t lost;      /* LOST */
	uint32_t seq;       /* order of decoding (vcpu_decode numbers them): ties of TSC */
	uint16_t domid, vcpu;
	uint16_t domid2, vcpu2; /* SWITCH: the next vCPU */
	uint8_t kind;           /* enum vrec_kind */
	uint8_t old_state, new_state;
};

/* What the decoder saw; every byte of a window is counted in one of them. */
struct vdec_stats {
	uint64_t records;   /* well-formed records, of any class */
	uint64_t kept;      /* scheduler or loss records handed on */
	uint64_t other;     /* other classes and padding, skipped */
	uint64_t bad;       /* records malformed for their id, or untimed: dropped */
	uint64_t backwards; /* TSC before the CPU's previous record: dropped */
	uint64_t cut_bytes; /* a window ending inside a record: the bytes dropped */
	uint64_t lost;      /* records Xen said it lost (LOST records' counts) */
	uint64_t by_kind[VREC_KINDS];
};

/* A CPU's decoding state across its windows (zero it to begin). */
struct vdec_cpu {
	uint64_t last_tsc;
	uint32_t seq; /* the next record's seq (shared by all CPUs' decoders is fine too) */
};

/* Decode one window of cpu (len bytes, a copy) into out (at most max; the records past
 * it are counted in st->bad, never written).  Returns the records written. */
size_t vcpu_decode(struct vdec_cpu *c, uint32_t cpu, const uint8_t *buf, size_t len,
    struct vrec *out, size_t max, struct vdec_stats *st);

/* Bytes of a record with this header word (4 + 8 with the TSC + 4 per extra word). */
static inline size_t vcpu_rec_size(uint32_t hdr)
{
	return 4 + ((hdr >> 31) ? 8 : 0) + 4 * ((hdr >> 28) & 7);
}

#endif
