/*
 * vcpu-decode.c - one physical CPU's window of Xen trace records, decoded.
 *
 * The layout (xen/common/trace.c): each record is a 32-bit header (event id in the low
 * 28 bits, the count of 32-bit extra words in the next 3, whether a 64-bit TSC follows
 * in the top bit), the TSC if any, then the extra words; records are 4-byte aligned and
 * never cross the buffer's end (Xen pads to it with a WRAP_BUFFER record).  The
 * scheduler records (xen/common/sched/core.c):
 *
 *   RUNSTATE_CHANGE  id 0x21001 | old << 8 | new << 4, TSC, 1 word: vcpu (low 16 bits),
 *                    domain (high 16)
 *   CONTINUE_RUNNING id 0x21002, TSC, the same word
 *   SLEEP, WAKE, YIELD, BLOCK  0x28003..6, TSC, 2 words: domain, vcpu
 *   SWITCH           0x2800a, TSC, 4 words: prev domain, prev vcpu, next domain, next vcpu
 *   LOST_RECORDS     0x1f001, TSC, 4 words: count, domain|vcpu<<16 (who ran), first TSC
 *
 * Nothing is trusted: a record whose word count is not its id's, or without a TSC, is
 * counted bad and skipped (its length is still the header's, so the rest of the window
 * keeps its alignment); a TSC before the CPU's previous one is dropped (counted), so
 * that what leaves here is in time order per CPU.  A window that ends inside a record
 * drops those bytes (counted): Xen only publishes whole records, so that is damage.
 */
#include <string.h>

#include "vcpu-decode.h"

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* The kind of a scheduler record and the words it must carry; -1 for other ids. */
static int kind_of(uint32_t ev, unsigned *words)
{
	if ((ev & ~0x330u) == XTRC_RUNSTATE_CHANGE) {
		*words = 1;
		return VREC_RUNSTATE;
	}
	switch (ev) {
	case XTRC_CONTINUE_RUNNING:
		*words = 1;
		return VREC_CONTINUE;
	case XTRC_SCHED_WAKE:
		*words = 2;
		return VREC_WAKE;
	case XTRC_SCHED_SLEEP:
		*words = 2;
		return VREC_SLEEP;
	case XTRC_SCHED_BLOCK:
		*words = 2;
		return VREC_BLOCK;
	case XTRC_SCHED_YIELD:
		*words = 2;
		return VREC_YIELD;
	case XTRC_SCHED_SWITCH:
		*words = 4;
		return VREC_SWITCH;
	case XTRC_LOST_RECORDS:
		*words = 4;
		return VREC_LOST;
	default:
		return -1;
	}
}

/* A domain or vCPU id from a 32-bit word: ids are 16 bits; more is malformed. */
static int id16(uint32_t w, uint16_t *out)
{
	if (w > 0xffffu)
		return -1;
	*out = (uint16_t)w;
	return 0;
}

/* Fill r from the record's extra words w; -1 when they are not what the id says. */
static int fill(struct vrec *r, int kind, uint32_t ev, const uint32_t *w)
{
	r->kind = (uint8_t)kind;
	switch (kind) {
	case VREC_RUNSTATE:
		r->old_state = (uint8_t)((ev >> 8) & 3);
		r->new_state = (uint8_t)((ev >> 4) & 3);
		if (r->old_state == r->new_state)
			return -1; /* Xen traces a change only */
		__attribute__((fallthrough));
	case VREC_CONTINUE:
		r->vcpu = (uint16_t)(w[0] & 0xffff);
		r->domid = (uint16_t)(w[0] >> 16);
		return 0;
	case VREC_WAKE:
	case VREC_SLEEP:
	case VREC_BLOCK:
	case VREC_YIELD:
		return id16(w[0], &r->domid) || id16(w[1], &r->vcpu) ? -1 : 0;
	case VREC_SWITCH:
		return id16(w[0], &r->domid) || id16(w[1], &r->vcpu) || id16(w[2], &r->domid2) ||
		        id16(w[3], &r->vcpu2)
		    ? -1
		    : 0;
	case VREC_LOST:
		r->lost = w[0];
		r->domid = (uint16_t)(w[1] & 0xffff);
		r->vcpu = (uint16_t)(w[1] >> 16);
		r->first_tsc = (uint64_t)w[2] | (uint64_t)w[3] << 32;
		if (r->lost == 0 || r->first_tsc > r->tsc)
			return -1;
		return 0;
	default:
		return -1;
	}
}

size_t vcpu_decode(struct vdec_cpu *c, uint32_t cpu, const uint8_t *buf, size_t len,
    struct vrec *out, size_t max, struct vdec_stats *st)
{
	size_t at = 0, n = 0;

	while (at + 4 <= len) {
		uint32_t hdr = rd32(buf + at);
		size_t size = vcpu_rec_size(hdr);
		if (size > len - at)
			break;
		const uint8_t *p = buf + at + 4;
		at += size;
		st->records++;

		uint32_t ev = hdr & 0x0fffffffu;
		unsigned words = (hdr >> 28) & 7, want = 0;
		int kind = kind_of(ev, &want);
		if (kind < 0) {
			st->other++;
			continue;
		}
		if (!(hdr >> 31) || words != want) {
			st->bad++;
			continue;
		}
		uint32_t w[4];
		struct vrec r = { .cpu = cpu };
		r.tsc = (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
		for (unsigned i = 0; i < words; i++)
			w[i] = rd32(p + 8 + 4 * i);
		if (fill(&r, kind, ev, w) < 0) {
			st->bad++;
			continue;
		}
		if (r.tsc < c->last_tsc) {
			st->backwards++;
			continue;
		}
		if (n == max) {
			st->bad++;
			continue;
		}
		c->last_tsc = r.tsc;
		r.seq = c->seq++;
		if (kind == VREC_LOST)
			st->lost += r.lost;
		st->kept++;
		st->by_kind[kind]++;
		out[n++] = r;
	}
	st->cut_bytes += len - at;
	return n;
}
