/*
 * module-guest.c - a guest that publishes MODULE records of its choosing and creation
 * sites inside them, through the real guest library (tests/reliab, the site cache):
 *
 *   module-guest [-f N] [-s SEED] [-r BUILDID] [-o OFFSET]... [-u N] [-n N] [-l SECONDS]
 *
 *   -f N        N made-up build-ids (from SEED), each a module of its own with one
 *               site in it: N lookups that find nothing
 *   -r BUILDID  then a module with this (real) build-id at 0x7f0000000000, its bias
 *   -o OFFSET   a site at that file offset of the real module (hex; repeatable)
 *   -u N        N more sites in the real module where it has no code: every other one
 *               in its headers (a walk of its debug info to learn it), the rest past its end

 *   -n N        N named sites, each with a name of 250 characters (of MTRACE_STR_MAX), one thread each
 *   -A          the made-up modules after the real module and its sites, not before
 *   -l SECONDS  linger so long after (10)
 *
 * It prints {"modules": M, "sites": S} once all is written, then lingers.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrace-guest.h"

#define REAL_BASE 0x7f0000000000ull
#define REAL_SIZE 0x10000000ull

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void module(
    struct mtrace_ring *r, const char *hex, uint64_t start, uint64_t size, const char *name)
{
	char s[256];

	snprintf(s, sizeof(s), "%s %llx %llx %s", hex, (unsigned long long)start,
	    (unsigned long long)(start + size), name);
	mtrace_emit_slow(
	    r, MTRACE_OP_MODULE, 0, mtrace_now(r), MTRACE_THREAD_NONE, start, s, strlen(s));
}

/* n made-up build-ids, each a module with one site in it */
static void fakes(struct mtrace_ring *r, unsigned n, uint64_t *id, uint64_t *nmod, uint64_t *nsite)
{
	char hex[41], name[32];

	for (unsigned i = 0; i < n; i++) {
		uint64_t start = 0x100000000ull * (i + 1);
		for (unsigned k = 0; k < 20; k++)
			snprintf(hex + 2 * k, 3, "%02x", (unsigned)(rnd() & 0xff));
		snprintf(name, sizeof(name), "fake%u", i);
		module(r, hex, start, 0x1000000, name);
		(*nmod)++;
		mtrace_creates_at(r, 1, *id, MTRACE_TT_TASK, MTRACE_SITE_PC, start + 0x100);
		mtrace_fulfills(r, 1, (*id)++);
		(*nsite)++;
		if (i % 16 == 15) {
			mtrace_ring_kick(r);
			usleep(20000);
		}
	}
}

int main(int argc, char **argv)
{
	struct mtrace_guest_config cfg;
	struct mtrace_guest *g;
	struct mtrace_ring *r;
	char err[256];
	const char *real = NULL;
	uint64_t offs[64], id = 2, nmod = 0, nsite = 0;
	unsigned nfake = 0, noffs = 0, unres = 0, nnamed = 0;
	double linger = 10;
	bool after = false;
	int c;

	while ((c = getopt(argc, argv, "f:s:r:o:u:n:l:A")) != -1) {
		switch (c) {
		case 'f':
			nfake = (unsigned)atoi(optarg);
			break;
		case 's':
			rng ^= strtoull(optarg, NULL, 0) * 0x2545F4914F6CDD1Dull;
			break;
		case 'r':
			real = optarg;
			break;
		case 'o':
			if (noffs < 64)
				offs[noffs++] = strtoull(optarg, NULL, 16);
			break;
		case 'u':
			unres = (unsigned)atoi(optarg);
			break;
		case 'A':
			after = true;
			break;
		case 'n':
			nnamed = (unsigned)atoi(optarg);
			break;
		case 'l':
			linger = atof(optarg);
			break;
		default:
			fprintf(stderr,
			    "usage: module-guest [-f N] [-s SEED] [-r BUILDID] "
			    "[-o OFFSET]... [-u N] [-n N] [-A] [-l SECONDS]\n");
			return 2;
		}
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.rings = 1;
	cfg.data_pages = 64;
	g = mtrace_guest_open(&cfg, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "module-guest: %s\n", err);
		return 1;
	}
	r = mtrace_guest_ring(g, 0);
	usleep(300000); /* the daemon attaches */
	fakes(r, after ? 0 : nfake, &id, &nmod, &nsite);
	if (real) {
		module(r, real, REAL_BASE, REAL_SIZE, "real.so");
		nmod++;
	}
	for (unsigned i = 0; real && i < noffs + unres; i++) {
		uint64_t off = i < noffs ? offs[i]
		    : (i - noffs) % 2    ? 0x10 * (i - noffs)
		                         : 0x8000000 + 0x10 * (i - noffs);
		mtrace_creates_at(r, 1, id, MTRACE_TT_TASK, MTRACE_SITE_PC, REAL_BASE + off);
		mtrace_fulfills(r, 1, id++);
		nsite++;
		if (i % 64 == 63) {
			mtrace_ring_kick(r);
			usleep(5000);
		}
	}
	fakes(r, after ? nfake : 0, &id, &nmod, &nsite);
	for (unsigned i = 0; i < nnamed; i++) {
		char nm[272];
		snprintf(nm, sizeof(nm), "site-%06u-%0239u", i, i);
		mtrace_emit_slow(r, MTRACE_OP_SITE_NAME, 0, mtrace_now(r), MTRACE_THREAD_NONE,
		    1000 + i, nm, strlen(nm));
		mtrace_creates_named(r, 1, id, MTRACE_TT_TASK, 1000 + i);
		mtrace_fulfills(r, 1, id++);
		nsite++;
		if (i % 32 == 31) {
			mtrace_ring_kick(r);
			usleep(5000);
		}
	}
	mtrace_ring_kick(r);
	printf("{\"modules\":%llu,\"sites\":%llu}\n", (unsigned long long)nmod,
	    (unsigned long long)nsite);
	fflush(stdout);
	usleep((useconds_t)(linger * 1e6));
	mtrace_guest_close(g);
	return 0;
}
