/*
 * xtrace.h - Xen trace records written as the hypervisor writes them (xen/common/trace.c:
 * header word, TSC, extra words), for the tests, the fuzz seeds and the benchmark of the
 * decoder (daemon/vcpu-decode.c), which must read exactly this.
 */
#ifndef MTRACE_TEST_XTRACE_H
#define MTRACE_TEST_XTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct xt_buf {
	uint8_t *p;
	size_t len, cap; /* a record that would not fit is not written (len stays) */
};

/* One record: id, with the TSC or not, and n extra words. */
static inline void xt_rec(
    struct xt_buf *b, uint32_t id, int with_tsc, uint64_t tsc, const uint32_t *w, unsigned n)
{
	uint32_t hdr = (id & 0x0fffffffu) | (uint32_t)(n & 7) << 28 | (with_tsc ? 1u << 31 : 0);
	size_t size = 4 + (with_tsc ? 8 : 0) + 4 * (size_t)(n & 7);

	if (b->len + size > b->cap)
		return;
	memcpy(b->p + b->len, &hdr, 4);
	b->len += 4;
	if (with_tsc) {
		uint32_t lo = (uint32_t)tsc, hi = (uint32_t)(tsc >> 32);
		memcpy(b->p + b->len, &lo, 4);
		memcpy(b->p + b->len + 4, &hi, 4);
		b->len += 8;
	}
	memcpy(b->p + b->len, w, 4 * (size_t)(n & 7));
	b->len += 4 * (size_t)(n & 7);
}

static inline void xt_runstate(
    struct xt_buf *b, uint64_t tsc, uint16_t dom, uint16_t vcpu, unsigned old, unsigned new_)
{
	uint32_t w = (uint32_t)dom << 16 | vcpu;
	xt_rec(b, 0x00021001u | (old & 3) << 8 | (new_ & 3) << 4, 1, tsc, &w, 1);
}

static inline void xt_two(struct xt_buf *b, uint32_t id, uint64_t tsc, uint16_t dom, uint16_t vcpu)
{
	uint32_t w[2] = { dom, vcpu };
	xt_rec(b, id, 1, tsc, w, 2);
}

static inline void xt_switch(
    struct xt_buf *b, uint64_t tsc, uint16_t pd, uint16_t pv, uint16_t nd, uint16_t nv)
{
	uint32_t w[4] = { pd, pv, nd, nv };
	xt_rec(b, 0x0002800au, 1, tsc, w, 4);
}

static inline void xt_lost(
    struct xt_buf *b, uint64_t tsc, uint32_t count, uint16_t dom, uint16_t vcpu, uint64_t first)
{
	uint32_t w[4] = { count, (uint32_t)vcpu << 16 | dom, (uint32_t)first,
		(uint32_t)(first >> 32) };
	xt_rec(b, 0x0001f001u, 1, tsc, w, 4);
}

#endif
