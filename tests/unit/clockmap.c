/*
 * clockmap.c - unit tests of daemon/clockmap.c: the strict parser of a guest's
 * clock-sync announcement, when a measured map becomes a new record (the first, a
 * move past max(uncertainty, 50 us), another source, a measure twice as narrow; never a
 * small drift), and the
 * event-channel links kept for new clients.
 */
#include <stdint.h>
#include <string.h>

#include "clockmap.h"
#include "unit.h"

static int parse(const char *s, struct clock_sync *cs)
{
	return clock_sync_parse(s, strlen(s), cs);
}

static void sync_good(void)
{
	struct clock_sync cs;

	CHECK(parse("1 2 3 4", &cs) == 0 && cs.seq == 1 && cs.ring_ns == 2 && cs.xen_ns == 3 &&
	    cs.width_ns == 4);
	CHECK(clock_sync_parse("7 100 200 0\0", 12, &cs) == 0 && cs.xen_ns == 200);
	CHECK(parse("7 100 200 0\n", &cs) == 0 && cs.width_ns == 0);
	CHECK(parse("18446744073709551615 9223372036854775807 0 1000000000", &cs) == 0);
	CHECK(cs.seq == UINT64_MAX && cs.ring_ns == INT64_MAX && cs.width_ns == 1000000000);
}

static void sync_refused(void)
{
	static const char *const bad[] = { "", "1 2 3", "1 2 3 4 5", "1  2 3 4", " 1 2 3 4",
		"1 2 3 4 ", "-1 2 3 4", "+1 2 3 4", "1 x 3 4", "1 2 3 1000000001",
		"1 9223372036854775808 3 4", "1 2 9223372036854775808 4",
		"18446744073709551616 2 3 4", "1\t2 3 4", "0x1 2 3 4", "1 2 3 4\n\n" };
	struct clock_sync cs = { 42, 42, 42, 42 };
	char big[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse(bad[i], &cs) < 0, "\"%s\" taken", bad[i]);
	CHECK(cs.seq == 42, "a refused value left the caller's copy alone");
	CHECK(clock_sync_parse("1 2\0 3 4", 8, &cs) < 0);
	CHECK(clock_sync_parse(NULL, 0, &cs) < 0);
	memset(big, '1', sizeof(big));
	memcpy(big, "1 2 3 ", 6);
	CHECK(clock_sync_parse(big, sizeof(big), &cs) < 0, "longer than CLOCK_SYNC_MAX");
}

static void offers(void)
{
	struct clockmap_rec r;

	clockmap_fini();
	CHECK(!clockmap_get(5, 1));
	CHECK(clockmap_offer(5, 1, 1000000, 20, CLOCKMAP_SAME_KERNEL, 10, &r));
	CHECK(r.seq == 1 && r.offset_ns == 1000000 && r.since_host_ns == 10 && r.domid == 5);
	/* a drift within 50 us keeps the record */
	CHECK(!clockmap_offer(5, 1, 1000000 + 49000, 20, CLOCKMAP_SAME_KERNEL, 20, &r));
	CHECK(!clockmap_offer(5, 1, 1000000 - 50000, 20, CLOCKMAP_SAME_KERNEL, 20, &r));
	CHECK(clockmap_get(5, 1)->offset_ns == 1000000 && clockmap_get(5, 1)->seq == 1);
	/* past it: a new record */
	CHECK(clockmap_offer(5, 1, 1000000 + 50001, 20, CLOCKMAP_SAME_KERNEL, 30, &r));
	CHECK(r.seq == 2 && r.since_host_ns == 30 && r.offset_ns == 1050001);
	/* a wide uncertainty widens the threshold */
	CHECK(!clockmap_offer(5, 1, 1050001 + 90000, 100000, CLOCKMAP_SAME_KERNEL, 40, &r));
	CHECK(clockmap_offer(5, 1, 1050001 + 110000, 100000, CLOCKMAP_SAME_KERNEL, 40, &r));
	CHECK(r.seq == 3 && r.uncertainty_ns == 100000);
	/* another source is a record whatever the offset */
	CHECK(clockmap_offer(5, 1, r.offset_ns, 500, CLOCKMAP_XEN_SYSTEM_TIME, 50, &r));
	CHECK(r.seq == 4 && r.source == CLOCKMAP_XEN_SYSTEM_TIME);
	/* a measure twice as narrow refines the record, by 50 us or more (on real Xen a
	 * first bracket of dom0's Xen time taken while it is busy may be 2 ms wide) */
	CHECK(clockmap_offer(5, 3, 7000, 1000000, CLOCKMAP_XEN_SYSTEM_TIME, 51, &r));
	CHECK(!clockmap_offer(5, 3, 7000, 600000, CLOCKMAP_XEN_SYSTEM_TIME, 52, &r));
	CHECK(clockmap_offer(5, 3, 7100, 500000, CLOCKMAP_XEN_SYSTEM_TIME, 53, &r));
	CHECK(r.seq == 2 && r.uncertainty_ns == 500000 && r.offset_ns == 7100);
	CHECK(!clockmap_offer(5, 3, 7100, 260000, CLOCKMAP_XEN_SYSTEM_TIME, 54, &r));
	CHECK(clockmap_offer(5, 3, 7100, 30000, CLOCKMAP_XEN_SYSTEM_TIME, 55, &r) && r.seq == 3);
	CHECK(!clockmap_offer(5, 3, 7100, 10000, CLOCKMAP_XEN_SYSTEM_TIME, 56, &r),
	    "narrower by less than 50 us: kept");
	/* unknown stays unknown, once */
	CHECK(clockmap_offer(5, 2, 0, CLOCKMAP_UNKNOWN_NS, CLOCKMAP_UNKNOWN, 60, &r));
	CHECK(!clockmap_offer(5, 2, 123456789, CLOCKMAP_UNKNOWN_NS, CLOCKMAP_UNKNOWN, 70, &r));
	/* other domains are apart, forget goes with the domain */
	CHECK(clockmap_offer(6, 1, -5, 0, CLOCKMAP_SAME_KERNEL, 80, &r) && r.seq == 1);
	clockmap_forget(5);
	CHECK(!clockmap_get(5, 1) && !clockmap_get(5, 2) && clockmap_get(6, 1));
	CHECK(clockmap_offer(5, 1, 1, 0, CLOCKMAP_SAME_KERNEL, 90, &r) && r.seq == 1,
	    "attached anew: from 1 again");
	clockmap_fini();
}

static void count_link(const struct evlink *l, void *arg)
{
	(void)l;
	++*(unsigned *)arg;
}

static void links(void)
{
	struct evlink a = { 5, 3, 6, 2 }, b = { 6, 2, 5, 3 };
	unsigned n = 0;

	clockmap_fini();
	CHECK(evlink_note(&a) && !evlink_note(&a), "told once");
	CHECK(evlink_note(&b));
	a.remote_port = 9;
	CHECK(evlink_note(&a), "bound again elsewhere: told again");
	evlink_foreach(count_link, &n);
	CHECK(n == 2);
	clockmap_forget(6); /* both: one is 6's port, the other's end was 6's */
	n = 0;
	evlink_foreach(count_link, &n);
	CHECK(n == 0);
	clockmap_fini();
}

const struct unit_test unit_clockmap[] = {
	{ "clockmap", "sync-good", sync_good },
	{ "clockmap", "sync-refused", sync_refused },
	{ "clockmap", "offers", offers },
	{ "clockmap", "links", links },
	{ "clockmap", NULL, NULL },
};
