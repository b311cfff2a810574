/*
 * fuzz-sites.c - the site and module records (daemon/state-sites.c, sites.c) on any
 * sequence a guest could write: CREATES with a site of any kind and value, SITE_NAME
 * and MODULE records of any bytes, interleaved with the ticks that symbolise and the
 * Stats that show the sites (packed as mtraced sends them).  It must not crash, leak or
 * read out of bounds.  (A site's display keeps the guest's bytes: clients escape them
 * where they show them; tests/sites/sites-hostile checks the JSON stays valid.)
 *
 * The input is a list of commands, one byte each and its operands:
 *   c%7 == 0  CREATES: creator, child (a byte each), a SITE (kind byte, value u64)
 *   c%7 == 1  CREATES as above, its site in the real module (offset u16 from its start)
 *   c%7 == 2  SITE_NAME: id byte, length byte, that many bytes
 *   c%7 == 3  MODULE: length byte, that many bytes (the record's text), bias u64
 *   c%7 == 4  MODULE: libc's build-id (this machine's, when it has debug files for it)
 *             at a start of a byte << 32
 *   c%7 == 5  a tick (symbolisation)
 *   c%7 == 6  a Stats with the site tables (as a client's timer makes it, between ticks)
 * in one of four domains (the command byte / 7 % 4); they are forgotten after each
 * input, the site cache stays (bounded) as in mtraced.
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"
#include "mtrace-ring.h"
#include "mtrace.pb-c.h"
#include "ring-reader.h"
#include "state-int.h"
#include "state.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static char libc_id[2 * 64 + 1]; /* hex, "" when none */
static uint64_t now_ns = 1000000000ull;

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && in->n; i++, in->n--)
		v |= (uint64_t)*in->p++ << (8 * i);
	return v;
}

/* libc's build-id, read with libelf as a real guest's loader would publish it */
static void read_libc_id(void)
{
	const uint8_t *id;
	ssize_t n;
	Elf *e;
	int fd = open(LIBC, O_RDONLY);

	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	n = e ? dwelf_elf_gnu_build_id(e, (const void **)&id) : -1;
	for (ssize_t i = 0; i > -1 && i < n && i < 64; i++)
		snprintf(libc_id + 2 * i, 3, "%02x", id[i]);
	if (e)
		elf_end(e);
	close(fd);
}

static void init(void)
{
	static bool done;
	static struct mtraced_config cfg;

	if (done)
		return;
	done = true;
	config_defaults(&cfg);
	cfg.max_threads_per_guest = 256;
	cfg.max_sites_per_guest = 64;
	snprintf(cfg.debug_dirs, sizeof(cfg.debug_dirs), "/usr/lib/debug");
	state_init(&cfg);
	read_libc_id();
}

static void apply(struct state_domain *d, uint8_t op, uint8_t type, uint64_t thread, uint64_t arg,
    const char *str, size_t len)
{
	struct mtrace_event e = {
		.ts = now_ns, .thread = thread, .arg = arg, .op = op, .type = type
	};

	e.str = str;
	e.str_len = (uint16_t)len;
	state_apply(d, &e);
}

static void stats(void)
{
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	Mtrace__Stats *s;

	sub.stats_interval_ms = 100;
	sub.top_n = 16;
	sub.site_stats = true;
	sub.label_stats = true;
	s = state_stats(&sub, 0);
	size_t n = mtrace__stats__get_packed_size(s);
	uint8_t *out = malloc(n ? n : 1);
	if (mtrace__stats__pack(s, out) != n)
		abort();
	free(out);
	state_stats_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	char buf[MTRACE_STR_MAX + 1];

	init();
	while (in.n) {
		uint8_t c = (uint8_t)take(&in, 1);
		struct state_domain *d = state_domain_get(1 + c / 7 % 4);
		uint64_t t, child, v, len;

		switch (c % 7) {
		case 0:
		case 1:
			t = take(&in, 1);
			child = take(&in, 1);
			apply(d, MTRACE_OP_CREATES, 0, t, child, NULL, 0);
			if (c % 7 == 0) {
				uint8_t kind = (uint8_t)take(&in, 1);
				apply(d, MTRACE_OP_SITE, kind, child, take(&in, 8), NULL, 0);
			} else {
				v = (1ull << 32) + take(&in, 2) * 16;
				apply(d, MTRACE_OP_SITE, MTRACE_SITE_PC, child, v, NULL, 0);
			}
			break;
		case 2:
			v = take(&in, 1);
			len = take(&in, 1);
			len = len < in.n ? len : in.n;
			memcpy(buf, in.p, len);
			in.p += len, in.n -= len;
			apply(d, MTRACE_OP_SITE_NAME, 0, MTRACE_THREAD_NONE, v, buf, len);
			break;
		case 3:
			len = take(&in, 1);
			len = len < in.n ? len : in.n;
			memcpy(buf, in.p, len);
			buf[len] = 0; /* as the ring reader gives strings */
			in.p += len, in.n -= len;
			v = take(&in, 8);
			apply(d, MTRACE_OP_MODULE, 0, MTRACE_THREAD_NONE, v, buf, len);
			break;
		case 4:
			v = take(&in, 1) << 32;
			if (!libc_id[0])
				break;
			len = (uint64_t)snprintf(buf, sizeof(buf), "%s %llx %llx libc.so.6",
			    libc_id, (unsigned long long)v, (unsigned long long)(v + 0x1000000));
			apply(d, MTRACE_OP_MODULE, 0, MTRACE_THREAD_NONE, v, buf, len);
			break;
		case 5:
			now_ns += 20000000;
			state_tick(now_ns);
			break;
		default:
			stats();
			break;
		}
	}
	/* every site shown as mtraced shows it, then symbolised to the end */
	for (int guard = 0; state_tick(now_ns += 20000000) && guard < 1000; guard++)
		;
	for (uint32_t dom = 1; dom <= 4; dom++) {
		struct state_domain *d = state_domain_find(dom);
		for (uint32_t i = 0; d && i < d->nsites; i++) {
			state_site_display(d, i, buf, sizeof(buf));
			if (strnlen(buf, sizeof(buf)) == sizeof(buf))
				abort();
		}
	}
	stats();
	for (uint32_t dom = 1; dom <= 4; dom++)
		state_domain_forget(dom);
	return 0;
}

/* For the replay main: a guest naming a site in libc, named sites, a module, and a Stats
 * made before the tick that looks its new site up (mtraced crashed on it: a new site's
 * module index was 0, not none, and the domain had no module table). */
void fuzz_seeds(void (*run)(const uint8_t *data, size_t size))
{
	static const uint8_t s1[] = { 4, 1, 1, 1, 2, 0x10, 0x00, 5, 6, 0, 1, 3, 0, 1, 0, 0, 0, 0, 0,
		0, 0, 5, 6 };
	static const uint8_t s2[] = { 2, 7, 5, 'a', ':', '1', ' ', 'f', 0, 1, 4, 1, 7, 0, 0, 0, 0,
		0, 0, 0, 5, 6 };
	static const uint8_t s3[] = { 3, 22, '0', '1', '0', '2', '0', '3', ' ', '1', '0', '0', '0',
		' ', '2', '0', '0', '0', ' ', 'x', '.', 's', 'o', ' ', 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		9, 0, 0x10, 0x10, 0, 0, 0, 0, 0, 0, 5, 6 };
	static const uint8_t s4[] = { 0, 1, 2, 1, 7, 0, 0, 0, 0, 0, 0, 0, 6 };

	run(s1, sizeof(s1));
	run(s2, sizeof(s2));
	run(s3, sizeof(s3));
	run(s4, sizeof(s4));
}
