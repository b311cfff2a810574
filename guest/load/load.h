/*
 * load.h - mtrace-load's parts: the options (load-args.c), the workload that writes
 * the rings (mtrace-load.c) and the JSON summary of what it wrote (load-summary.c).
 */
#ifndef MTRACE_LOAD_H
#define MTRACE_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mtrace-guest.h"

#define MAX_NAMES 64   /* distinct labels / counters */
#define LABEL_MAX 1024 /* bytes of a --labels-from line */
#define OPS       256
/* Ring i's thread ids start at i << RING_ID_SHIFT: below the queue's kind byte. */
#define RING_ID_SHIFT 40
_Static_assert(((uint64_t)MTRACE_MAX_RINGS << RING_ID_SHIFT) < (1ull << 56), "ids fit the queue");

enum garbage {
	G_NONE,
	G_RANDOM,
	G_LENGTHS,
	G_STRINGS,
	G_INDEXES,
	G_MIXED
};
extern const char *const load_garbage_names[G_MIXED + 1];

#define PINGPONG_MAX 4 /* --pingpong exchanges, run in order */
struct pingpong_spec {
	char name[32]; /* keys under data/mtrace-pingpong/NAME */
	unsigned n;    /* round trips */
};

struct opts {
	unsigned rings, pages, threads, labels, counters;
	unsigned evtchn_pct, fail_pct;
	uint64_t rate, events, seed, batch_us;
	double duration, wait_reader, linger;
	bool hold; /* --hold: stay announced after the summary until SIGTERM/SIGINT */
	bool spin; /* --spin: wait for the next batch on the CPU (always runnable) */
	uint32_t clock;
	enum garbage garbage;
	const char *summary, *backend, *sim_dir, *labels_from;
	uint32_t backend_domid;
	char *label_names[MAX_NAMES];                /* --labels-from: the strings, else label-N */
	struct pingpong_spec pingpong[PINGPONG_MAX]; /* --pingpong: instead of the workload */
	unsigned npingpong;
	double pingpong_timeout; /* --pingpong-timeout: each wait for the other side */
};

struct ring_job {
	const struct opts *o;
	struct mtrace_ring *r;
	unsigned index;
	uint32_t port;
	uint64_t rng;
	/* what we wrote */
	uint64_t events;
	uint64_t per_op[OPS];
	uint64_t labels[MAX_NAMES];
	uint64_t counters[MAX_NAMES];
	uint64_t garbage_writes;
	/* workload state */
	uint64_t *slots;
	uint64_t next_id, cur;
	uint64_t queue[4];
	unsigned queued;
};

/* Options from argv (0), or -1 after a message (usage errors, --labels-from). */
int load_parse_args(int argc, char **argv, struct opts *o);
void load_free_labels(struct opts *o);

/* The JSON summary: exactly what the rings were written, per op, label and counter. */
void load_summary(FILE *f, const struct opts *o, struct mtrace_guest *g,
    const struct ring_job *jobs, double elapsed, bool reader_caught_up, unsigned reannounced);

#endif
