/*
 * sites-guest.c - a guest creating threads from several lines and functions, some of
 * them inlined, with mtrace_creates_here (the site is the line's own address), a named
 * site and cycles in the site graph (recurse, ping/pong); built -g as a PIE.  It prints its own account on stdout, one JSON object:
 * every thread with its parent and the function and line that created it, which the
 * test compares with the daemon's sites, the creation graph and addr2line.
 *
 *   sites-guest [--linger SECONDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrace-guest.h"

#define MAX_THREADS 256

static struct mtrace_ring *R;
static uint64_t next_id = 2; /* thread 1 is the root, created by no one */
static unsigned nthreads;
static struct {
	uint64_t id, parent;
	const char *func;
	int line;
	const char *named, *label;
} made[MAX_THREADS];

static void note(uint64_t parent, uint64_t child, const char *func, int line, const char *named)
{
	if (nthreads < MAX_THREADS) {
		made[nthreads].id = child;
		made[nthreads].parent = parent;
		made[nthreads].func = func;
		made[nthreads].line = line;
		made[nthreads].named = named;
		nthreads++;
	}
}

/* The creating line's own function and line, as the guest knows them. */
#define SPAWN(parent)                                                 \
	__extension__({                                               \
		uint64_t c_ = next_id++;                              \
		mtrace_creates_here(R, (parent), c_, MTRACE_TT_TASK); \
		note((parent), c_, __func__, __LINE__, NULL);         \
		c_;                                                   \
	})

/* Inlined into two callers: two sites on one line, told apart by the inlined frames. */
static inline __attribute__((always_inline)) uint64_t helper_spawn(uint64_t parent)
{
	return SPAWN(parent);
}

static __attribute__((noinline)) void worker_done(uint64_t self, uint64_t t)
{
	mtrace_fulfills(R, self, t);
}

static __attribute__((noinline)) void leaf_spawner(uint64_t self)
{
	for (int i = 0; i < 5; i++) {
		uint64_t c = SPAWN(self);
		if (i % 2 == 0)
			worker_done(self, c);
	}
}

static __attribute__((noinline)) void pool_start(uint64_t self)
{
	uint64_t a = SPAWN(self);
	uint64_t b = SPAWN(self);

	leaf_spawner(a);
	leaf_spawner(b);
	helper_spawn(a);
}

static __attribute__((noinline)) void accept_loop(uint64_t self)
{
	for (int i = 0; i < 3; i++) {
		uint64_t conn = helper_spawn(self);
		mtrace_label(R, conn, "conn");
		made[nthreads - 1].label = "conn";
		worker_done(self, conn);
	}
}

/* A site named by the producer, as an OCaml runtime would. */
static __attribute__((noinline)) void named_spawns(uint64_t self)
{
	mtrace_site_name(R, 42, "server.ml:42 Server.handle");
	for (int i = 0; i < 4; i++) {
		uint64_t c = next_id++;
		mtrace_creates_named(R, self, c, MTRACE_TT_TASK, 42);
		note(self, c, NULL, 0, "server.ml:42 Server.handle");
	}
}

/* A site whose threads create threads at the same site (a recursive task). */
static __attribute__((noinline)) void recurse(uint64_t self, int depth)
{
	if (depth > 0)
		recurse(SPAWN(self), depth - 1);
}

/* Two sites whose threads create each other's threads. */
static __attribute__((noinline)) void pong(uint64_t self, int n);
static __attribute__((noinline)) void ping(uint64_t self, int n)
{
	if (n > 0)
		pong(SPAWN(self), n - 1);
}
static __attribute__((noinline)) void pong(uint64_t self, int n)
{
	if (n > 0)
		ping(SPAWN(self), n - 1);
}

int main(int argc, char **argv)
{
	struct mtrace_guest_config cfg;
	struct mtrace_guest *g;
	char err[256];
	double linger = 5;

	if (argc == 3 && !strcmp(argv[1], "--linger"))
		linger = atof(argv[2]);
	memset(&cfg, 0, sizeof(cfg));
	cfg.rings = 1;
	cfg.data_pages = 16;
	cfg.modules = true;
	g = mtrace_guest_open(&cfg, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "sites-guest: %s\n", err);
		return 1;
	}
	R = mtrace_guest_ring(g, 0);
	mtrace_switch(R, 1);
	pool_start(1);
	accept_loop(1);
	named_spawns(1);
	recurse(1, 3);
	ping(1, 4);
	mtrace_ring_kick(R);

	printf("{\"threads\":[");
	for (unsigned i = 0; i < nthreads; i++) {
		printf("%s{\"id\":%llu,\"parent\":%llu,", i ? "," : "",
		    (unsigned long long)made[i].id, (unsigned long long)made[i].parent);
		if (made[i].label)
			printf("\"label\":\"%s\",", made[i].label);
		if (made[i].named)
			printf("\"named\":\"%s\"}", made[i].named);
		else
			printf("\"func\":\"%s\",\"line\":%d}", made[i].func, made[i].line);
	}
	printf("]}\n");
	fflush(stdout);
	usleep((useconds_t)(linger * 1e6));
	mtrace_guest_close(g);
	return 0;
}
