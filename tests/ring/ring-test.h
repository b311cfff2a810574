/*
 * ring-test.h - what the files of test-ring share: the guarded ring memory, the events a
 * drain collected and the helpers over them (ring-harness.c), and the cases: the producer
 * and the decoder on sound input (ring-flow.c), and on hostile or broken input
 * (ring-hostile.c).
 */
#ifndef MTRACE_RING_TEST_H
#define MTRACE_RING_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtrace-guest.h"
#include "ring-reader.h"

struct mem {
	struct mtrace_ring_hdr *hdr;
	uint8_t *data;
	uint8_t *map;
	size_t maplen;
	uint32_t pages;
};

/* Events collected by the callback, strings copied out (they die at the next drain). */
struct ev {
	struct mtrace_event e;
	char *str; /* copy, "" when the op has none */
};
struct coll {
	struct ev *v;
	size_t n, cap;
};

void mem_init(struct mem *m, uint32_t pages);
void mem_free(struct mem *m);
void collect(const struct mtrace_event *e, void *arg);
void coll_reset(struct coll *c);
void coll_free(struct coll *c);
size_t drain_all(struct ring_reader *rd, struct coll *c);
struct ring_reader *attach(struct mem *m);
/* A deterministic event derived from its sequence number (contents checkable). */
void emit_seq(struct mtrace_ring *r, uint32_t seq);
bool check_seq_event(const struct mtrace_event *e, const char *str);

void t_roundtrip(void);
void t_wrap(void);
void t_overwrite(void);
void t_budget(void);
void t_sites(void);
void t_concurrent(double seconds, uint32_t pages);
void t_corrupt(void);
void t_header(void);
void t_truncated(void);
void t_strings(void);
void t_seq(void);

#endif
