/*
 * fuzz-vcpu.c - Xen's trace buffers as mtraced reads them (daemon/vcpu-decode.c, then
 * daemon/vcpu-runstate.c), on any bytes a broken or hostile hypervisor page could hold.
 *
 * Input: windows, each [cpu (1 byte, mod 4)] [length (2 bytes, little-endian)] [bytes],
 * decoded per CPU, merged and applied pass by pass as daemon/vcpu-xen.c does (the cut at
 * the newest record seen).  It must not crash, keep every count within what the bytes
 * allow, and hand on only intervals that are non-empty and, per vCPU, never overlap.
 * Seeds: tests/daemon/vcpu-corpus (make_vcpu_corpus.py), and fuzz_seeds below.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vcpu-decode.h"
#include "vcpu-runstate.h"
#include "xtrace.h"

#define NCPU 4
#define MAXR 4096
#define SEEN 1024 /* vCPUs whose last end is checked */

struct seen {
	uint32_t key; /* domid << 16 | vcpu, + 1 (0: empty) */
	uint64_t end;
};

static struct seen seen[SEEN];

static void on_iv(void *arg, const struct vrs_interval *iv)
{
	uint64_t *n = arg;
	if (iv->end_tsc <= iv->start_tsc || iv->state > XRUNSTATE_OFFLINE ||
	    (iv->state == XRUNSTATE_RUNNING) != (iv->pcpu >= 0) || iv->pcpu >= NCPU ||
	    iv->domid >= XDOMID_FIRST_RESERVED)
		abort();
	uint32_t key = ((uint32_t)iv->domid << 16 | iv->vcpu) + 1;
	for (uint32_t i = key % SEEN, k = 0; k < SEEN; i = (i + 1) % SEEN, k++) {
		if (seen[i].key == key) {
			if (iv->start_tsc < seen[i].end)
				abort(); /* overlaps what this vCPU was said to do */
			seen[i].end = iv->end_tsc;
			break;
		}
		if (!seen[i].key) {
			seen[i] = (struct seen){ key, iv->end_tsc };
			break;
		}
	}
	(*n)++;
}

static void on_wake(void *arg, uint16_t d, uint16_t v, uint64_t tsc)
{
	(void)arg, (void)d, (void)v, (void)tsc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vrec recs[2 * MAXR];
	struct vdec_cpu cpus[NCPU] = { 0 };
	struct vdec_stats st = { 0 };
	struct vcpu_runstate rs;
	uint64_t intervals = 0, newest = 0, bytes = 0;
	size_t held = 0, at = 0;
	struct vrs_out o = { on_iv, on_wake, &intervals };

	memset(seen, 0, sizeof(seen));
	if (vrs_init(&rs, 256) < 0)
		return 0;
	while (at + 3 <= size) {
		uint32_t cpu = data[at] % NCPU;
		size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
		at += 3;
		if (len > size - at)
			len = size - at;
		size_t n =
		    vcpu_decode(&cpus[cpu], cpu, data + at, len, recs + held, 2 * MAXR - held, &st);
		bytes += len;
		at += len;
		for (size_t i = 0; i < n; i++) {
			if (recs[held + i].cpu != cpu)
				abort();
			if (recs[held + i].tsc > newest)
				newest = recs[held + i].tsc;
		}
		held += n;
		size_t ready = vrs_merge(recs, held, newest);
		for (size_t i = 1; i < ready; i++)
			if (recs[i].tsc < recs[i - 1].tsc)
				abort();
		vrs_apply(&rs, recs, ready, &o);
		memmove(recs, recs + ready, (held - ready) * sizeof(*recs));
		held -= ready;
		for (size_t i = 0; i < held; i++)
			if (recs[i].tsc != newest)
				abort(); /* only the newest instant is ever held back */
		vrs_cut(&rs, newest, &o);
	}
	if (st.records * 4 > bytes || st.kept + st.other + st.bad + st.backwards > st.records)
		abort();
	if (rs.n > rs.max)
		abort();
	vrs_free(&rs);
	return 0;
}

/* Windows as Xen writes them: two CPUs, three domains switching, a wake, a loss. */
void fuzz_seeds(void (*run)(const uint8_t *data, size_t size))
{
	static uint8_t win[2][2048], input[4200];
	struct xt_buf b[2] = { { win[0], 0, sizeof(win[0]) }, { win[1], 0, sizeof(win[1]) } };
	uint64_t t = 1000;

	for (int i = 0; i < 40; i++, t += 37) {
		struct xt_buf *w = &b[i & 1];
		uint16_t d = (uint16_t)(1 + i % 3);
		xt_runstate(w, t, d, 0, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING);
		xt_switch(w, t + 1, (uint16_t)(1 + (i + 2) % 3), 0, d, 0);
		xt_runstate(w, t + 20, d, 0, XRUNSTATE_RUNNING,
		    i % 4 ? XRUNSTATE_RUNNABLE : XRUNSTATE_BLOCKED);
		if (i % 4 == 0)
			xt_two(w, XTRC_SCHED_WAKE, t + 30, d, 0);
		if (i == 20)
			xt_lost(w, t + 31, 5, d, 0, t + 25);
	}
	size_t n = 0;
	for (int c = 0; c < 2; c++) {
		input[n++] = (uint8_t)c;
		input[n++] = (uint8_t)b[c].len;
		input[n++] = (uint8_t)(b[c].len >> 8);
		memcpy(input + n, b[c].p, b[c].len);
		n += b[c].len;
	}
	run(input, n);
}
