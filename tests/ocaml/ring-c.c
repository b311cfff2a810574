/*
 * ring-c.c - replay a gen-script.py script through the C producer (the real
 * vocabulary of mtrace-guest.h / ring.c over mtrace_ring_init_local) and dump the
 * header page and data pages: the reference the OCaml writer must equal byte for byte.
 *
 * The scripted timestamps reach the C producer through clock_gettime: the program is
 * linked with --wrap=clock_gettime (tests/ocaml/meson.build), so every call of it in the
 * program's objects, mtrace_now's (inline in every op) among them, comes here and
 * returns the script's time, and the ops are called exactly as a guest does.  A
 * definition of clock_gettime itself would shadow libc's for every caller (the style
 * suite's symbol-shadow check refuses it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtrace-guest.h"

static uint64_t script_ts;

int __wrap_clock_gettime(clockid_t clk, struct timespec *tp);
int __wrap_clock_gettime(clockid_t clk, struct timespec *tp)
{
	(void)clk;
	tp->tv_sec = (time_t)(script_ts / 1000000000u);
	tp->tv_nsec = (long)(script_ts % 1000000000u);
	return 0;
}

static size_t unhex(const char *h, char *out, size_t max)
{
	size_t n = 0;

	if (strcmp(h, "-") == 0)
		return 0;
	while (h[0] && h[1] && n < max) {
		unsigned v;
		if (sscanf(h, "%2x", &v) != 1)
			break;
		out[n++] = (char)v;
		h += 2;
	}
	return n;
}

static void die(const char *what)
{
	fprintf(stderr, "ring-c: %s\n", what);
	exit(2);
}

int main(int argc, char **argv)
{
	static char line[20000], hex[20000], str[10000];
	struct mtrace_ring r;
	struct mtrace_ring_hdr *hdr = NULL;
	uint8_t *data = NULL;
	unsigned pages = 0;
	FILE *out;

	if (argc != 2)
		die("usage: ring-c DUMP < SCRIPT");
	while (fgets(line, sizeof(line), stdin) != NULL) {
		char op[32];
		unsigned long long ts;
		long long thread, arg, site, delta;
		unsigned clock, index, ty;
		size_t n;

		if (sscanf(line, "init %u %u %u %19999s", &pages, &clock, &index, hex) == 4) {
			hdr = aligned_alloc(MTRACE_PAGE_SIZE, MTRACE_PAGE_SIZE);
			data = aligned_alloc(MTRACE_PAGE_SIZE, (size_t)pages * MTRACE_PAGE_SIZE);
			if (hdr == NULL || data == NULL)
				die("out of memory");
			n = unhex(hex, str, 39);
			str[n] = '\0';
			mtrace_ring_init_local(&r, hdr, data, pages, clock, index, str);
			continue;
		}
		if (hdr == NULL)
			die("script does not start with init");
		if (sscanf(line, "reqrel %lld", &delta) == 1) {
			hdr->req_event = hdr->head + (uint64_t)delta;
			continue;
		}
		if (sscanf(line, "%31s %llu %lld %lld %u %lld %19999s", op, &ts, &thread, &arg, &ty,
		        &site, hex) != 7)
			die("bad script line");
		n = unhex(hex, str, sizeof(str) - 1);
		str[n] = '\0';
		script_ts = ts;
#define T ((uint64_t)thread)
#define A ((uint64_t)arg)
		if (strcmp(op, "ring_start") == 0)
			mtrace_ring_start(&r);
		else if (strcmp(op, "creates") == 0)
			mtrace_creates(&r, T, A, (uint8_t)ty);
		else if (strcmp(op, "creates_named") == 0)
			mtrace_creates_named(&r, T, A, (uint8_t)ty, (uint64_t)site);
		else if (strcmp(op, "creates_pc") == 0)
			mtrace_creates_at(&r, T, A, (uint8_t)ty, MTRACE_SITE_PC, (uint64_t)site);
		else if (strcmp(op, "site_name") == 0)
			mtrace_site_name(&r, (uint64_t)arg, str);
		else if (strcmp(op, "read") == 0)
			mtrace_read(&r, T, A);
		else if (strcmp(op, "fulfills") == 0)
			mtrace_fulfills(&r, T, A);
		else if (strcmp(op, "becomes") == 0)
			mtrace_becomes(&r, T, A);
		else if (strcmp(op, "switch") == 0)
			mtrace_switch(&r, T);
		else if (strcmp(op, "gc") == 0)
			mtrace_gc(&r, A);
		else if (strcmp(op, "signal") == 0)
			mtrace_signal(&r, T, A);
		else if (strcmp(op, "try_read") == 0)
			mtrace_try_read(&r, T, A);
		else if (strcmp(op, "evtchn_send") == 0)
			mtrace_evtchn_send(&r, T, (uint32_t)arg);
		else if (strcmp(op, "evtchn_recv") == 0)
			mtrace_evtchn_recv(&r, T, (uint32_t)arg);
		else if (strcmp(op, "label") == 0)
			mtrace_label(&r, T, str);
		else if (strcmp(op, "fails") == 0)
			mtrace_fails(&r, T, A, str);
		else if (strcmp(op, "increase") == 0)
			mtrace_increase(&r, T, str, arg);
		else if (strcmp(op, "counter") == 0)
			mtrace_counter(&r, T, str, arg);
		else
			die("unknown op");
	}
	if (hdr == NULL)
		die("empty script");
	out = fopen(argv[1], "wb");
	if (out == NULL || fwrite(hdr, MTRACE_PAGE_SIZE, 1, out) != 1 ||
	    fwrite(data, (size_t)pages * MTRACE_PAGE_SIZE, 1, out) != 1 || fclose(out) != 0)
		die("cannot write the dump");
	free(hdr);
	free(data);
	return 0;
}
