/*
 * announce.c - unit tests of daemon/announce.c, the announcement parser, alone: what it
 * accepts, what it refuses and the reason it gives, on tables of xenstore keys
 * (announce-table.h, shared with the fuzz target tests/daemon/fuzz-announce.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "announce-table.h"
#include "announce.h"
#include "unit.h"

#define GOOD "state=ready\nversion=1\nclock=monotonic\nevent-channel=5\n"

static enum announce_status parse(const char *text, struct announce *a, char *why, size_t wl)
{
	struct table t;

	table_parse(&t, text, strlen(text));
	why[0] = 0;
	return announce_parse(a, table_read, &t, why, wl);
}

/* Refused, with a reason that starts with want. */
static void refused(const char *text, const char *want)
{
	struct announce a;
	char why[256];

	memset(&a, 0x5a, sizeof(a));
	CHECK(parse(text, &a, why, sizeof(why)) == ANNOUNCE_BAD);
	CHECK(strncmp(why, want, strlen(want)) == 0, "reason \"%s\", wanted \"%s...\"", why, want);
	/* a refused announcement leaves the caller's copy alone */
	CHECK(((unsigned char *)&a)[0] == 0x5a);
}

static void accepted(void)
{
	struct announce a;
	char why[256];

	/* accepted */
	CHECK(parse(GOOD "rings=2\nring/0/ref=100\nring/0/pages=16\nring/1/ref=0\n"
	                 "ring/1/pages=1\n",
	          &a, why, sizeof(why)) == ANNOUNCE_OK);
	CHECK(a.clock == MTRACE_CLOCK_MONOTONIC && a.port == 5 && a.rings == 2);
	CHECK(a.ref[0] == 100 && a.pages[0] == 16 && a.ref[1] == 0 && a.pages[1] == 1);
	CHECK(announce_pages(&a) == 17 + 2);
	CHECK(parse("state=ready\nversion=1\nclock=xen\nevent-channel=1048575\nrings=1\n"
	            "ring/0/ref=4294967295\nring/0/pages=512\n",
	          &a, why, sizeof(why)) == ANNOUNCE_OK);
	CHECK(a.clock == MTRACE_CLOCK_XEN && a.port == 1048575 && a.ref[0] == UINT32_MAX);
	CHECK(parse("state=ready\nversion=1\nclock=realtime\nevent-channel=3\nrings=1\n"
	            "ring/0/ref=7\nring/0/pages=1\n",
	          &a, why, sizeof(why)) == ANNOUNCE_OK);
	CHECK(a.clock == MTRACE_CLOCK_REALTIME);
	CHECK(parse("state=ready\nversion=2\nclock=tsc\nevent-channel=3\nrings=1\n"
	            "ring/0/ref=7\nring/0/pages=1\n",
	          &a, why, sizeof(why)) == ANNOUNCE_OK);
	CHECK(a.clock == MTRACE_CLOCK_TSC);
}

static void nothing(void)
{
	struct announce a;
	char why[256];

	/* nothing announced */
	CHECK(parse("", &a, why, sizeof(why)) == ANNOUNCE_NONE);
	CHECK(parse("state=closed\nversion=1\n", &a, why, sizeof(why)) == ANNOUNCE_NONE);
}

static void refusals(void)
{
	/* refused, each with its key in the reason */
	refused("state=starting\n", "state: \"starting\"");
	refused("state=ready\n", "version: (missing) is not 1 or 2");
	refused("state=ready\nversion=3\n", "version: \"3\" is not 1 or 2");
	refused("state=ready\nversion=1\nclock=tsc\n", "clock: \"tsc\""); /* needs version 2 */
	refused(
	    "state=ready\nversion=1\nclock=monotonic\nevent-channel=0\n", "event-channel: \"0\"");
	refused(
	    "state=ready\nversion=1\nclock=monotonic\nevent-channel=05\n", "event-channel: \"05\"");
	refused(
	    "state=ready\nversion=1\nclock=monotonic\nevent-channel=+5\n", "event-channel: \"+5\"");
	refused("state=ready\nversion=1\nclock=monotonic\nevent-channel=1048576\n",
	    "event-channel: \"1048576\"");
	refused("state=ready\nversion=1\nclock=monotonic\nevent-channel=99999999999\n",
	    "event-channel: \"99999999999\"");
	refused(GOOD "rings=0\n", "rings: \"0\" not in 1..64");
	refused(GOOD "rings=65\n", "rings: \"65\" not in 1..64");
	refused(GOOD "rings=1\nring/0/ref=4294967296\n", "ring/0/ref: \"4294967296\"");
	refused(GOOD "rings=1\nring/0/ref=-1\n", "ring/0/ref: \"-1\"");
	refused(GOOD "rings=1\nring/0/ref=1\nring/0/pages=3\n",
	    "ring/0/pages: \"3\" not a power of two in 1..512");
	refused(GOOD "rings=1\nring/0/ref=1\nring/0/pages=1024\n",
	    "ring/0/pages: \"1024\" not a power of two");
	refused(GOOD "rings=2\nring/0/ref=1\nring/0/pages=2\n", "ring/1/ref: (missing)");
}

static void hostile(void)
{
	struct announce a;
	char why[256];

	/* hostile bytes are escaped in the reason, and long values cut */
	refused("state=re\x01\"dy\n", "state: \"re\\x01\\x22dy\"");
	refused(
	    "state=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	    "state: \"xxxxxxxx");
	CHECK(parse("state=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	          &a, why, sizeof(why)) == ANNOUNCE_BAD &&
	    strstr(why, "...\"") && strlen(why) < 80);
	/* a reason cut to the caller's buffer stays a string */
	CHECK(parse("state=bad\n", &a, why, 8) == ANNOUNCE_BAD && strlen(why) == 7);
}

static void decimal(void)
{
	uint64_t n;

	/* the strict decimal on its own */
	CHECK(announce_parse_dec("0", 1, 10, &n) == 0 && n == 0);
	CHECK(announce_parse_dec("4294967295", 10, UINT32_MAX, &n) == 0 && n == UINT32_MAX);
	CHECK(announce_parse_dec("11", 2, 10, &n) < 0);
	CHECK(announce_parse_dec("1 ", 2, 10, &n) < 0);
	CHECK(announce_parse_dec("", 0, 10, &n) < 0);
	CHECK(announce_parse_dec(NULL, 0, 10, &n) < 0);
}

const struct unit_test unit_announce[] = {
	{ "announce", "accepted", accepted },
	{ "announce", "nothing", nothing },
	{ "announce", "refused", refusals },
	{ "announce", "hostile-bytes", hostile },
	{ "announce", "decimal", decimal },
	{ "announce", NULL, NULL },
};
