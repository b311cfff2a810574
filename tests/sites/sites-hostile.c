/*
 * sites-hostile.c - a guest sending garbage sites through the real guest library:
 * 100,000 distinct random addresses, fake and malformed MODULE records (fake
 * build-ids, bad hex, start >= end, paths as names), SITE_NAME strings of every bad
 * kind (empty, over-long, not UTF-8, control characters, id 0, terminal escapes),
 * SITE records of an unknown kind or for threads never created.  It prints what it
 * sent as JSON, then lingers.
 *
 *   sites-hostile [--linger SECONDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrace-guest.h"

#define LIT(s) s, sizeof(s) - 1

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	struct mtrace_guest_config cfg;
	struct mtrace_guest *g;
	struct mtrace_ring *r;
	char err[256], s[4096];
	double linger = 10;
	uint64_t id = 2, sent = 0, modules = 0, names = 0;

	if (argc == 3 && !strcmp(argv[1], "--linger"))
		linger = atof(argv[2]);
	memset(&cfg, 0, sizeof(cfg));
	cfg.rings = 1;
	cfg.data_pages = 256;
	cfg.modules = true; /* the real ones too: a fake build-id next to a real one */
	g = mtrace_guest_open(&cfg, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "sites-hostile: %s\n", err);
		return 1;
	}
	r = mtrace_guest_ring(g, 0);
	usleep(300000); /* the daemon attaches */
	/* fake modules: random build-ids over the whole address space, then junk */
	for (int i = 0; i < 200; i++) {
		char hex[129];
		unsigned n = 2 + (unsigned)(rnd() % 63);
		for (unsigned k = 0; k < n; k++)
			snprintf(hex + 2 * k, 3, "%02x", (unsigned)(rnd() & 0xff));
		snprintf(s, sizeof(s), "%s %llx %llx ../../../etc/passwd", hex,
		    (unsigned long long)(rnd() >> 20), (unsigned long long)(rnd() | 1ull << 63));
		mtrace_emit_slow(
		    r, MTRACE_OP_MODULE, 0, mtrace_now(r), MTRACE_THREAD_NONE, rnd(), s, strlen(s));
		modules++;
	}
	static const char *const bad_modules[] = {
		"",
		" ",
		"zz 1 2 x",
		"ABCDEF 1 2 x",
		"ab",
		"abcd 2 1 x",
		"abcd 1 1",
		"abcd  1 2",
		"abcd 1 2x",
		"abcd 11111111111111111 2",
		"/etc/shadow 1 2 x",
		"../.. 1 2",
		"ab/../../etc 1 2 x",
		"abcd 1 ffffffffffffffffff",
	};
	for (size_t i = 0; i < sizeof(bad_modules) / sizeof(bad_modules[0]); i++) {
		mtrace_emit_slow(r, MTRACE_OP_MODULE, 0, mtrace_now(r), MTRACE_THREAD_NONE, 0,
		    bad_modules[i], strlen(bad_modules[i]));
		modules++;
	}
	/* bad names */
	memset(s, 'A', sizeof(s));
	const struct {
		const char *str;
		size_t len;
		uint64_t id;
	} bad_names[] = {
		{ LIT(""), 5 },
		{ s, MTRACE_STR_MAX, 6 },
		{ LIT("\xff\xfe\xc0\xaf bad utf8"), 7 },
		{ LIT("\x1b[2J\x1b]0;owned\x07 escapes"), 8 },
		{ LIT("line\nbreak\r\t"), 9 },
		{ LIT("zero id"), 0 },
		{ LIT("<script>alert(1)</script>"), 10 },
		{ LIT("\"quote\\ json"), 11 },
	};
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		mtrace_emit_slow(r, MTRACE_OP_SITE_NAME, 0, mtrace_now(r), MTRACE_THREAD_NONE,
		    bad_names[i].id, bad_names[i].str, bad_names[i].len);
		names++;
	}
	/* let the daemon read those before the flood can overwrite them */
	mtrace_ring_kick(r);
	usleep(500000);
	mtrace_switch(r, 1);
	/* 100,000 distinct sites: random addresses and random named ids, paced so that
	 * the daemon sees most of them */
	for (int i = 0; i < 100000; i++) {
		uint64_t c = id++;
		if (i % 3 == 2)
			mtrace_creates_named(r, 1, c, MTRACE_TT_TASK, rnd());
		else
			mtrace_creates_here(r, 1, c, MTRACE_TT_TASK), (void)0;
		if (i % 3 == 1) /* a random address, not this line's */
			mtrace_creates_at(r, 1, id++, MTRACE_TT_TASK, MTRACE_SITE_PC, rnd());
		mtrace_fulfills(r, 1, c);
		sent++;
		if (i % 2000 == 1999)
			usleep(2000);
	}
	/* bad kinds, unknown threads, a second site for one thread */
	for (int i = 0; i < 100; i++) {
		mtrace_creates_at(r, 1, id++, MTRACE_TT_TASK, (uint8_t)(2 + i), rnd());
		mtrace_emit_ts(
		    r, MTRACE_OP_SITE, 0, mtrace_now(r), 1000000000ull + (uint64_t)i, rnd());
		mtrace_emit_ts(r, MTRACE_OP_SITE, 0, mtrace_now(r), 2, rnd());
	}
	mtrace_ring_kick(r);
	printf("{\"creates\":%llu,\"modules\":%llu,\"names\":%llu}\n", (unsigned long long)sent,
	    (unsigned long long)modules, (unsigned long long)names);
	fflush(stdout);
	usleep((useconds_t)(linger * 1e6));
	mtrace_guest_close(g);
	return 0;
}
