/*
 * fuzz-decoder.c - libFuzzer target for the ring decoder.  The input is used twice:
 * as a private buffer for ring_decode_buffer, and as the contents of a mapped ring
 * (first 16 bytes: head and tail; the rest: data pages) drained by the full reader,
 * so the index checks, the windowing and the parser all see hostile bytes.
 * The data page sits right before a PROT_NONE page: a read past the ring faults.
 * fuzz_seeds: a real ring's bytes (with and without the head/tail prefix) for the
 * replay main (tests/lib/fuzz-main.c) to mutate.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "mtrace-guest.h"
#include "ring-reader.h"

static uint64_t sink;

static void
consume(const struct mtrace_event *e, void *arg)
{
	/* Touch every byte the event claims, so an out-of-range string is caught. */
	sink += e->ts ^ e->thread ^ e->arg ^ e->op;
	for (unsigned i = 0; e->str != NULL && i <= e->str_len; i++)
		sink += (unsigned char)e->str[i];
	(void)arg;
}

static uint8_t *mem;	/* [hdr][data x2][guard] */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ring_reader_stats st = {0};
	uint32_t next = 0;
	bool known = false, more;
	const uint32_t pages = 2;
	struct mtrace_ring r;

	ring_decode_buffer(data, size, consume, NULL, &st, &next, &known);

	if (mem == NULL) {
		mem = mmap(NULL, (pages + 2) * MTRACE_PAGE_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			__builtin_trap();
		mprotect(mem + (pages + 1) * MTRACE_PAGE_SIZE, MTRACE_PAGE_SIZE, PROT_NONE);
	}
	struct mtrace_ring_hdr *hdr = (struct mtrace_ring_hdr *)mem;
	uint8_t *ring = mem + MTRACE_PAGE_SIZE;
	mtrace_ring_init_local(&r, hdr, ring, pages, 0, 0, "fuzz");
	struct mtrace_ring_hdr hc;
	struct ring_reader *rd = NULL;
	if (ring_hdr_copy(hdr, pages, &hc, NULL, NULL, 0) == 0)
		rd = ring_reader_attach_copy(hdr, &hc, ring, pages, NULL, 0);
	if (rd == NULL)
		__builtin_trap();
	if (size >= 16) {
		memcpy(&hdr->head, data, 8);
		memcpy(&hdr->tail, data + 8, 8);
		size_t n = size - 16 < pages * MTRACE_PAGE_SIZE ? size - 16 : pages * MTRACE_PAGE_SIZE;
		memcpy(ring, data + 16, n);
		/* A few drains with small budgets, moving head on, like a live guest. */
		for (int i = 0; i < 4; i++) {
			ring_reader_drain(rd, 1 + (size % 64) * (size_t)i, consume, NULL, &more);
			hdr->head += 8 * (uint64_t)(data[i] & 0x3f);
		}
	}
	ring_reader_free(rd);
	return 0;
}

void fuzz_seeds(void (*run)(const uint8_t *data, size_t size))
{
	static _Alignas(4096) uint8_t hdr[MTRACE_PAGE_SIZE], data[2 * MTRACE_PAGE_SIZE];
	static uint8_t in[16 + sizeof(data)];
	struct mtrace_ring r;

	mtrace_ring_init_local(&r, (struct mtrace_ring_hdr *)hdr, data, 2, 0, 0, "seed");
	mtrace_ring_start(&r);
	for (int k = 0; k < 700; k++) {
		if (k % 5 == 0)
			mtrace_label(&r, (uint64_t)k, "label-for-the-fuzzer");
		else
			mtrace_emit_ts(&r, (uint8_t)(k % 14), (uint8_t)k, (uint64_t)k, 1, 2);
	}
	memcpy(in, &r.head, 8);
	memcpy(in + 8, &r.tail, 8);
	memcpy(in + 16, data, sizeof(data));
	run(in, sizeof(in));
	/* The plain-buffer view: no 16-byte prefix. */
	run(in + 16, sizeof(data));
}
