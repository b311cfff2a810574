/*
 * clocksync.c - unit tests of guest/clock-sync.c over a made-up xenif: the pairs its
 * clock_pair answers are scripted, what it writes to xenstore is kept.  What is written
 * (the contract's four decimals, seq counting up), when a move is one (> 50 us and more
 * than the two measures' noise), and that no source means no key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock-sync.h"
#include "mtrace-ring.h"
#include "unit.h"

static struct {
	struct xenif_clock_pair next; /* what clock_pair answers */
	int fail;                     /* errno to fail with, 0: answer */
	clockid_t asked;
	char path[160], val[128]; /* the last write */
	unsigned writes;
} fake;

static int fake_pair(struct xenif *x, clockid_t clk, struct xenif_clock_pair *p)
{
	(void)x;
	fake.asked = clk;
	if (fake.fail) {
		errno = fake.fail;
		return -1;
	}
	*p = fake.next;
	return 0;
}

static int fake_write(struct xenif *x, uint32_t tx, const char *path, const void *val, size_t len)
{
	(void)x, (void)tx;
	snprintf(fake.path, sizeof(fake.path), "%s", path);
	snprintf(fake.val, sizeof(fake.val), "%.*s", (int)len, (const char *)val);
	fake.writes++;
	return 0;
}

static const struct xenif_ops fake_ops = {
	.name = "fake",
	.xs_write = fake_write,
	.clock_pair = fake_pair,
};
static struct xenif fake_x = { .ops = &fake_ops };

static void set(int64_t clk, uint64_t xen, uint64_t width)
{
	fake.next = (struct xenif_clock_pair){ .xen_ns = xen, .clk_ns = clk, .width_ns = width };
}

static void announce(void)
{
	struct clock_sync cs;

	memset(&fake, 0, sizeof(fake));
	clock_sync_init(&cs, &fake_x, MTRACE_CLOCK_TSC);
	set(1000000000, 5000000000, 300);
	CHECK(clock_sync_measure(&cs));
	/* a TSC ring's timeline is CLOCK_MONOTONIC */
	CHECK(fake.asked == CLOCK_MONOTONIC);
	CHECK(clock_sync_moved(&cs)); /* nothing written yet: write */
	CHECK(clock_sync_put(&cs, 0, "/local/domain/3/data/mtrace") == 0);
	CHECK(!strcmp(fake.path, "/local/domain/3/data/mtrace/clock-sync"), "%s", fake.path);
	CHECK(!strcmp(fake.val, "1 1000000000 5000000000 300"), "%s", fake.val);
	/* 40 us later in both clocks: the same relation */
	set(1000040000, 5000040000, 300);
	CHECK(clock_sync_measure(&cs) && !clock_sync_moved(&cs));
	/* moved by 50 us exactly: not more than 50 */
	set(1000040000, 5000090000, 0);
	CHECK(clock_sync_measure(&cs) && !clock_sync_moved(&cs));
	/* 60 us: a move */
	set(1000040000, 5000100000, 0);
	CHECK(clock_sync_measure(&cs) && clock_sync_moved(&cs));
	/* 60 us inside measures 200 us wide: noise, not a move */
	set(1000040000, 5000100000, 200000);
	CHECK(clock_sync_measure(&cs) && !clock_sync_moved(&cs));
	/* a step of a second (a resume on another host's Xen time) */
	set(1000040000, 6000040000, 400);
	CHECK(clock_sync_measure(&cs) && clock_sync_moved(&cs));
	CHECK(clock_sync_put(&cs, 0, "/local/domain/3/data/mtrace") == 0);
	CHECK(!strcmp(fake.val, "2 1000040000 6000040000 400"), "%s", fake.val);
	clock_sync_destroy(&cs);
}

static void realtime_ring(void)
{
	struct clock_sync cs;

	memset(&fake, 0, sizeof(fake));
	clock_sync_init(&cs, &fake_x, MTRACE_CLOCK_REALTIME);
	set(1796000000000000000, 7000, 10);
	CHECK(clock_sync_measure(&cs) && fake.asked == CLOCK_REALTIME);
	CHECK(
	    clock_sync_put(&cs, 0, "b") == 0 && !strcmp(fake.val, "1 1796000000000000000 7000 10"),
	    "%s", fake.val);
	clock_sync_destroy(&cs);
}

static void no_source(void)
{
	struct clock_sync cs;

	memset(&fake, 0, sizeof(fake));
	clock_sync_init(&cs, &fake_x, MTRACE_CLOCK_MONOTONIC);
	fake.fail = ENOTSUP;
	CHECK(!clock_sync_measure(&cs) && cs.err == ENOTSUP);
	CHECK(!clock_sync_moved(&cs));
	/* nothing to announce: no key, and no error */
	CHECK(clock_sync_put(&cs, 0, "b") == 0 && fake.writes == 0);
	/* a value that cannot be written as the contract's decimals is no measure */
	fake.fail = 0;
	set(-5, 7000, 10);
	CHECK(!clock_sync_measure(&cs));
	clock_sync_destroy(&cs);
}

const struct unit_test unit_clocksync[] = {
	{ "clocksync", "announce", announce },
	{ "clocksync", "realtime_ring", realtime_ring },
	{ "clocksync", "no_source", no_source },
	{ NULL, NULL, NULL },
};
