/*
 * fleetskew.c - unit tests of client/lib/fleet-skew.c: a host's clock against the NATS
 * server's is the largest time_ns - stored of its Stats over the window (a lower bound,
 * the latency of the quickest one below the truth); only Stats measure; a host that
 * lies moves its own estimate only, and nothing wraps; the window forgets.
 */
#include <stdlib.h>
#include <string.h>

#include "fleet-skew.h"
#include "unit.h"

#define S  1000000000LL
#define MS 1000000LL

static Mtrace__ServerMsg *stats(uint64_t time_ns)
{
	static Mtrace__Stats st;
	static Mtrace__ServerMsg m;

	mtrace__stats__init(&st);
	mtrace__server_msg__init(&m);
	st.time_ns = time_ns;
	m.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
	m.stats = &st;
	return &m;
}

/* One Stats of host made at its clock's true + skew, stored latency later. */
static const struct fleet_skew_est *sample(
    struct fleet_skews *s, const char *host, int64_t t, int64_t skew, int64_t latency)
{
	return fleet_skew_msg(s, host, stats((uint64_t)(t + skew)), t + latency);
}

static struct fleet_skews *fresh(void)
{
	struct fleet_skews *s = calloc(1, sizeof(*s));

	REQUIRE(s);
	return s;
}

/* The largest difference wins: the quickest latency's, the skew less it. */
static void lower_bound(void)
{
	struct fleet_skews *s = fresh();
	const struct fleet_skew_est *e = NULL;
	static const int64_t lat[] = { 9 * MS, 2 * MS, 400000, 30 * MS, 1 * MS };
	int64_t t = 1800000000 * S;

	for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++)
		e = sample(s, "h2", t + (int64_t)i * S, 5 * S, lat[i]);
	REQUIRE(e);
	CHECK(e->skew_ns == 5 * S - 400000, "%lld", (long long)e->skew_ns);
	CHECK(
	    e->spread_ns == (uint64_t)(30 * MS - 400000), "%llu", (unsigned long long)e->spread_ns);
	CHECK(e->samples == 5);
	/* behind the server: negative */
	e = sample(s, "h3", t, -3 * S, 1 * MS);
	CHECK(e && e->skew_ns == -3 * S - 1 * MS && e->samples == 1);
	free(s);
}

/* What is not a Stats, or has no time, or was stored at no known time, measures nothing. */
static void only_stats(void)
{
	struct fleet_skews *s = fresh();
	Mtrace__ServerMsg m;
	Mtrace__ClockMap cm;

	mtrace__server_msg__init(&m);
	mtrace__clock_map__init(&cm);
	cm.since_host_ns = 1800000000 * S;
	m.msg_case = MTRACE__SERVER_MSG__MSG_CLOCK_MAP;
	m.clock_map = &cm;
	CHECK(fleet_skew_msg(s, "h", &m, 1800000000 * S) == NULL);
	CHECK(fleet_skew_msg(s, "h", stats(0), 1800000000 * S) == NULL);
	CHECK(fleet_skew_msg(s, "h", stats(1800000000 * S), 0) == NULL);
	CHECK(s->n == 0);
	free(s);
}

/* A host that lies about its time moves its own estimate only; nothing wraps. */
static void liar(void)
{
	struct fleet_skews *s = fresh();
	const struct fleet_skew_est *e;
	int64_t t = 1800000000 * S;

	sample(s, "honest", t, 2 * S, 1 * MS);
	e = fleet_skew_msg(s, "liar", stats(UINT64_MAX), t);
	CHECK(e && e->skew_ns == INT64_MAX - t, "%lld", (long long)e->skew_ns);
	e = fleet_skew_msg(s, "liar", stats(1), t + S);
	CHECK(e && e->skew_ns == INT64_MAX - t && e->samples == 2);
	CHECK(e->spread_ns == (uint64_t)(INT64_MAX - t) - (uint64_t)(1 - t - S), "%llu",
	    (unsigned long long)e->spread_ns);
	e = sample(s, "honest", t + S, 2 * S, 3 * MS);
	CHECK(e && e->skew_ns == 2 * S - 1 * MS && e->samples == 2 && e->spread_ns == 2 * MS);
	free(s);
}

/* The window: two halves of stored time; a step of the host's clock shows within it. */
static void window(void)
{
	struct fleet_skews *s = fresh();
	const struct fleet_skew_est *e = NULL;
	int64_t t = 1800000000 * S, i;

	for (i = 0; i < 40; i++)
		e = sample(s, "h", t + i * S, 5 * S, 1 * MS);
	CHECK(e->skew_ns == 5 * S - 1 * MS && e->samples > 0 && e->samples <= 40);
	/* the clock stepped back 2 s: the older, larger ones stay a while, then go */
	for (; i < 160; i++) {
		e = sample(s, "h", t + i * S, 3 * S, 1 * MS);
		if (i < 60) /* the half of the last 5 s ones is the one before */
			CHECK(e->skew_ns == 5 * S - 1 * MS, "at %lld s", (long long)i);
	}
	CHECK(e->skew_ns == 3 * S - 1 * MS && e->spread_ns == 0, "%lld", (long long)e->skew_ns);
	CHECK(e->samples >= FLEET_SKEW_HALF_S && e->samples <= 2 * FLEET_SKEW_HALF_S, "%u",
	    e->samples);
	/* silent for longer than the window: the next starts alone */
	e = sample(s, "h", t + 1000 * S, 1 * S, 1 * MS);
	CHECK(e->skew_ns == 1 * S - 1 * MS && e->samples == 1);
	free(s);
}

/* More hosts than the table: the least recently heard goes, and comes back anew. */
static void evict(void)
{
	struct fleet_skews *s = fresh();
	const struct fleet_skew_est *e;
	char name[32];
	int64_t t = 1800000000 * S;

	sample(s, "old", t, 7 * S, 1 * MS);
	for (int i = 0; i < FLEET_SKEW_HOSTS; i++) {
		snprintf(name, sizeof(name), "made-up-%d", i);
		sample(s, name, t, -S, 1 * MS);
		if (i == FLEET_SKEW_HOSTS / 2)
			sample(s, "recent", t, 4 * S, 1 * MS);
	}
	CHECK(s->n == FLEET_SKEW_HOSTS && s->evicted == 2, "%llu", (unsigned long long)s->evicted);
	e = sample(s, "recent", t + S, 4 * S, 2 * MS);
	CHECK(e && e->skew_ns == 4 * S - 1 * MS && e->samples == 2, "the recent one kept");
	e = sample(s, "old", t + S, 7 * S, 2 * MS);
	CHECK(e && e->skew_ns == 7 * S - 2 * MS && e->samples == 1, "the old one let go, anew");
	CHECK(s->evicted == 3);
	free(s);
}

const struct unit_test unit_fleetskew[] = {
	{ "fleetskew", "lower_bound", lower_bound },
	{ "fleetskew", "only_stats", only_stats },
	{ "fleetskew", "liar", liar },
	{ "fleetskew", "window", window },
	{ "fleetskew", "evict", evict },
	{ NULL, NULL, NULL },
};
