/*
 * timeline.c - unit tests of client/lib/timeline.c: a guest time mapped by the map in
 * force at it (the first for what came before), a domain attached anew starting its
 * maps again, unknown maps kept off the timeline, and event-channel pairs: the k-th
 * send with the k-th receive whatever order they arrive in, judged ordered, uncertain,
 * violated or unmapped, orphans at a channel's start dropped, a loss realigning, a
 * port bound again elsewhere starting its channel again.
 */
#include <stdint.h>
#include <string.h>

#include "timeline.h"
#include "unit.h"

static void tell_map(struct tl *t, uint32_t domid, uint32_t clock, int64_t off, uint64_t unc,
    int source, int64_t since, uint64_t seq)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__ClockMap c = MTRACE__CLOCK_MAP__INIT;

	c.domid = domid;
	c.clock = clock;
	c.offset_ns = off;
	c.uncertainty_ns = unc;
	c.source = (Mtrace__ClockMap__Source)source;
	c.since_host_ns = since;
	c.seq = seq;
	m.msg_case = MTRACE__SERVER_MSG__MSG_CLOCK_MAP;
	m.clock_map = &c;
	tl_msg(t, "", &m);
}

static void tell_link(struct tl *t, uint32_t d, uint32_t p, uint32_t rd, uint32_t rp)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__EvtchnLink l = MTRACE__EVTCHN_LINK__INIT;

	l.domid = d;
	l.port = p;
	l.remote_domid = rd;
	l.remote_port = rp;
	m.msg_case = MTRACE__SERVER_MSG__MSG_EVTCHN_LINK;
	m.evtchn_link = &l;
	tl_msg(t, "", &m);
}

static struct tl_time at(struct tl *t, uint32_t domid, uint64_t g)
{
	struct tl_time x;

	tl_map(tl_clock(t, "", domid, 1), g, &x);
	return x;
}

static void maps(void)
{
	struct tl *t = tl_new();
	struct tl_time x;

	x = at(t, 5, UINT64_MAX);
	CHECK(!x.known && x.source == TL_NO_MAP && x.host_ns == INT64_MAX);
	tell_map(t, 5, 1, 1000, 7, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 1500, 1);
	x = at(t, 5, 100);
	CHECK(x.known && x.host_ns == 1100 && x.uncertainty_ns == 7, "before the first: the first");
	/* a step of +1000 measured at host 5000 (guest 3000 by the new map) */
	tell_map(t, 5, 1, 2000, 9, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 5000, 2);
	CHECK(at(t, 5, 2999).host_ns == 3999 && at(t, 5, 3000).host_ns == 5000);
	CHECK(tl_clock_last(tl_clock(t, "", 5, 1))->seq == 2);
	/* another clock, another domain, another host: apart */
	CHECK(!tl_clock(t, "", 5, 2) && !tl_clock(t, "", 6, 1) && !tl_clock(t, "h1", 5, 1));
	/* attached anew: seq 1 again starts the list again */
	tell_map(t, 5, 1, 50, 0, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 0, 1);
	CHECK(at(t, 5, 10000).host_ns == 10050);
	/* unknown: the guest's own time, off the timeline */
	tell_map(t, 5, 1, 0, UINT64_MAX, MTRACE__CLOCK_MAP__SOURCE__UNKNOWN, 0, 2);
	x = at(t, 5, 77);
	CHECK(!x.known && x.host_ns == 77 && x.uncertainty_ns == UINT64_MAX);
	tl_free(t);
}

static struct tl_end end(uint32_t d, uint32_t p, struct tl *t, uint64_t g)
{
	struct tl_end e = { .domid = d, .port = p, .guest_ns = g, .at = at(t, d, g) };

	return e;
}

static void pairs(void)
{
	struct tl *t = tl_new();
	struct tl_pair p;
	struct tl_counts c;
	struct tl_end e;

	tell_map(t, 5, 1, 0, 10, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 0, 1);
	tell_map(t, 6, 1, 1000, 10, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 0, 1);
	e = end(5, 3, t, 100);
	CHECK(!tl_evtchn(t, "", true, &e, &p), "no link told: no channel");
	tell_link(t, 5, 3, 6, 2);
	tell_link(t, 6, 2, 5, 3);
	/* an orphan: a receive before any send, earlier than the first send */
	e = end(6, 2, t, 0);
	CHECK(!tl_evtchn(t, "", false, &e, &p));
	e = end(5, 3, t, 2000);
	CHECK(!tl_evtchn(t, "", true, &e, &p), "the orphan is dropped, the send waits");
	e = end(5, 3, t, 3000);
	CHECK(!tl_evtchn(t, "", true, &e, &p));
	/* receives 1 and 2: host 1000 + g */
	e = end(6, 2, t, 1500); /* host 2500: 500 after send 1 */
	CHECK(tl_evtchn(t, "", false, &e, &p) && p.order == TL_ORDERED && p.gap_ns == 500 &&
	    p.uncertainty_ns == 20 && p.send.guest_ns == 2000);
	e = end(6, 2, t, 2010); /* host 3010: 10 after send 2, within 20 */
	CHECK(tl_evtchn(t, "", false, &e, &p) && p.order == TL_UNCERTAIN && p.gap_ns == 10);
	/* the other way (6 -> 5), once a pair aligned it: a receive that arrives first and
	 * is before its send is no orphan but a violation */
	e = end(6, 2, t, 8000); /* host 9000 */
	CHECK(!tl_evtchn(t, "", true, &e, &p));
	e = end(5, 3, t, 9100);
	CHECK(tl_evtchn(t, "", false, &e, &p) && p.order == TL_ORDERED && p.gap_ns == 100);
	e = end(5, 3, t, 9200);
	CHECK(!tl_evtchn(t, "", false, &e, &p));
	e = end(6, 2, t, 8700); /* host 9700: after the receive */
	CHECK(tl_evtchn(t, "", true, &e, &p) && p.order == TL_VIOLATED && p.gap_ns == -500);
	e = end(6, 2, t, 8990); /* host 9990 */
	CHECK(!tl_evtchn(t, "", true, &e, &p));
	e = end(5, 3, t, 9980); /* before by 10, within 20 */
	CHECK(tl_evtchn(t, "", false, &e, &p) && p.order == TL_UNCERTAIN && p.gap_ns == -10);
	tl_counts(t, &c);
	CHECK(c.pairs == 5 && c.ordered == 2 && c.uncertain == 2 && c.violated == 1);
	CHECK(c.unpaired == 1, "the orphan (%llu)", (unsigned long long)c.unpaired);
	tl_free(t);
}

static void loss_and_unmapped(void)
{
	struct tl *t = tl_new();
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;
	struct tl_pair p;
	struct tl_counts c;
	struct tl_end e;

	tell_map(t, 5, 1, 0, 0, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 0, 1);
	tell_map(t, 6, 1, 0, UINT64_MAX, MTRACE__CLOCK_MAP__SOURCE__UNKNOWN, 0, 1);
	tell_link(t, 5, 3, 6, 2);
	tell_link(t, 6, 2, 5, 3);
	e = end(5, 3, t, 100);
	CHECK(!tl_evtchn(t, "", true, &e, &p));
	e = end(5, 3, t, 200);
	CHECK(!tl_evtchn(t, "", true, &e, &p));
	/* dom6 lost events: the k-th send is no longer its k-th receive */
	l.domid = 6;
	l.lost_in_ring = 1;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	tl_msg(t, "", &m);
	e = end(6, 2, t, 300);
	CHECK(!tl_evtchn(t, "", false, &e, &p), "the sends before the loss are gone");
	e = end(5, 3, t, 400);
	CHECK(tl_evtchn(t, "", true, &e, &p) && p.order == TL_UNMAPPED);
	tl_counts(t, &c);
	CHECK(c.pairs == 1 && c.unmapped == 1 && c.unpaired == 2);
	tl_free(t);
}

static void tell_down(struct tl *t, uint32_t domid)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainDown d = MTRACE__DOMAIN_DOWN__INIT;

	d.domid = domid;
	m.msg_case = MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN;
	m.domain_down = &d;
	tl_msg(t, "", &m);
}

/* A live reader forgets a gone domain (its maps, links, channels and what waited on
 * them); a converter keeps its maps for the end of its output. */
static void gone(void)
{
	struct tl *live = tl_new(), *conv = tl_new();
	struct tl_pair p;
	struct tl_counts c;
	struct tl_end e;

	tl_forget_gone(live);
	for (int i = 0; i < 2; i++) {
		struct tl *t = i ? conv : live;
		tell_map(t, 5, 1, 0, 10, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 0, 1);
		tell_map(t, 6, 1, 0, 10, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 0, 1);
		tell_link(t, 5, 3, 6, 2);
		tell_link(t, 6, 2, 5, 3);
		e = end(5, 3, t, 100);
		CHECK(!tl_evtchn(t, "", true, &e, &p), "the send waits");
		tell_down(t, 5);
	}
	CHECK(!tl_clock(live, "", 5, 1) && tl_clock(live, "", 6, 1), "live: dom5's map forgotten");
	e = end(6, 2, live, 200);
	CHECK(!tl_evtchn(live, "", false, &e, &p), "live: the channel went with dom5");
	tl_counts(live, &c);
	CHECK(c.pairs == 0 && c.unpaired == 1, "live: the waiting send counted (%llu)",
	    (unsigned long long)c.unpaired);
	CHECK(tl_clock(conv, "", 5, 1) != NULL, "converter: dom5's map kept");
	e = end(6, 2, conv, 200);
	CHECK(tl_evtchn(conv, "", false, &e, &p) && p.order == TL_ORDERED, "converter: paired");
	tl_free(live);
	tl_free(conv);
}

static void count_map(const char *host, const Mtrace__ClockMap *m, size_t nth, void *arg)
{
	uint64_t *first_seq_and_n = arg;

	(void)host;
	if (nth == 0)
		first_seq_and_n[0] = m->seq;
	first_seq_and_n[1]++;
}

/* A domain whose map changes without end costs a bounded table: the latest maps map. */
static void many_maps(void)
{
	struct tl *t = tl_new();
	uint64_t seen[2] = { 0, 0 };

	for (uint64_t i = 1; i <= 10000; i++)
		tell_map(t, 5, 1, (int64_t)i, 10, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL,
		    (int64_t)(i * 1000 + i), i);
	tl_each_map(t, count_map, seen);
	CHECK(seen[1] <= 4096 && seen[1] >= 2048, "%llu maps kept", (unsigned long long)seen[1]);
	CHECK(seen[0] == 10001 - seen[1], "the newest kept (first %llu)",
	    (unsigned long long)seen[0]);
	CHECK(at(t, 5, 9999000).host_ns == 9999000 + 9999, "in force at its time");
	CHECK(at(t, 5, 10000000).host_ns == 10000000 + 10000, "the last");
	tl_free(t);
}

/* A port closed and bound again to another domain: mtraced tells the new link, and
 * the old channel's unanswered sends are not paired with the new end's receives. */
static void relink(void)
{
	struct tl *t = tl_new();
	struct tl_pair p;
	struct tl_counts c;
	struct tl_end e;

	for (uint32_t d = 5; d <= 7; d++)
		tell_map(t, d, 1, 0, 0, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 0, 1);
	tell_link(t, 5, 3, 6, 2);
	e = end(5, 3, t, 100);
	CHECK(!tl_evtchn(t, "", true, &e, &p), "sent to dom6, never received");
	tell_link(t, 5, 3, 6, 2); /* told again, the same: nothing changes */
	tell_link(t, 5, 3, 7, 4);
	tell_link(t, 7, 4, 5, 3);
	e = end(7, 4, t, 150);
	CHECK(!tl_evtchn(t, "", false, &e, &p), "dom7's receive: before any send to it");
	e = end(5, 3, t, 200);
	CHECK(!tl_evtchn(t, "", true, &e, &p), "the orphan dropped, this send waits");
	e = end(7, 4, t, 300);
	CHECK(tl_evtchn(t, "", false, &e, &p) && p.send.guest_ns == 200 && p.recv.domid == 7 &&
	    p.order == TL_ORDERED);
	tl_counts(t, &c);
	CHECK(c.pairs == 1 && c.unpaired == 2, "pairs %llu unpaired %llu",
	    (unsigned long long)c.pairs, (unsigned long long)c.unpaired);
	tl_free(t);
}

const struct unit_test unit_timeline[] = {
	{ "timeline", "gone", gone },
	{ "timeline", "many-maps", many_maps },
	{ "timeline", "maps", maps },
	{ "timeline", "pairs", pairs },
	{ "timeline", "loss-and-unmapped", loss_and_unmapped },
	{ "timeline", "relink", relink },
	{ "timeline", NULL, NULL },
};
