/*
 * fleet-skew.c - each host's clock against the NATS server's (fleet-skew.h): the
 * largest time_ns - stored of its Stats over a window of stored time.
 */
#include <stdio.h>
#include <string.h>

#include "fleet-skew.h"
#include "json.h"

#define HALF_NS ((int64_t)FLEET_SKEW_HALF_S * 1000000000)

/* a - b, held at the ends of int64 rather than wrapped (a host's time is its word) */
static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return a < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

/* The host's slot: found, or made (the least recently heard one let go when full). */
static struct fleet_skew_host *slot(struct fleet_skews *s, const char *host)
{
	struct fleet_skew_host *h;
	unsigned i, old = 0;

	if (s->n && strcmp(s->hosts[s->last].name, host) == 0)
		return &s->hosts[s->last];
	for (i = 0; i < s->n; i++) {
		if (strcmp(s->hosts[i].name, host) == 0) {
			s->last = i;
			return &s->hosts[i];
		}
		if (s->hosts[i].seen < s->hosts[old].seen)
			old = i;
	}
	if (s->n < FLEET_SKEW_HOSTS) {
		old = s->n++;
	} else {
		s->evicted++;
	}
	h = &s->hosts[old];
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", host);
	s->last = old;
	return h;
}

/* One sample d = time_ns - stored into the window, and the estimate made again. */
static void add(struct fleet_skew_host *h, int64_t d, int64_t stored_ns)
{
	struct fleet_skew_est *e = &h->est;
	int64_t hi, lo;

	/* stored times come in order (one stream); one from before the half (a consumer
	 * made again) counts in it */
	if (!h->n[0] || stored_ns >= sat_sub(h->half_start_ns, -HALF_NS)) {
		bool next = h->n[0] && stored_ns < sat_sub(h->half_start_ns, -2 * HALF_NS);

		h->n[1] = next ? h->n[0] : 0;
		h->max[1] = h->max[0];
		h->min[1] = h->min[0];
		h->n[0] = 0;
		h->half_start_ns = stored_ns;
	}
	if (!h->n[0] || d > h->max[0])
		h->max[0] = d;
	if (!h->n[0] || d < h->min[0])
		h->min[0] = d;
	if (h->n[0] < UINT32_MAX)
		h->n[0]++;
	hi = h->max[0];
	lo = h->min[0];
	if (h->n[1]) {
		hi = h->max[1] > hi ? h->max[1] : hi;
		lo = h->min[1] < lo ? h->min[1] : lo;
	}
	e->skew_ns = hi;
	e->spread_ns = (uint64_t)hi - (uint64_t)lo; /* hi >= lo: exact modulo 2^64 */
	e->samples = h->n[0] + h->n[1] < h->n[0] ? UINT32_MAX : h->n[0] + h->n[1];
}

const struct fleet_skew_est *fleet_skew_msg(
    struct fleet_skews *s, const char *host, const Mtrace__ServerMsg *m, int64_t stored_ns)
{
	struct fleet_skew_host *h;
	int64_t at;

	/* The one host time mtraced reads as it makes a message that is sent at once and
	 * always (every second, as mtrace-ship asks): a Stats.  A ClockMap's since_host_ns
	 * can be far older than its message (the maps in force, told at subscribe), a
	 * batch's times are its guest's. */
	if (m->msg_case != MTRACE__SERVER_MSG__MSG_STATS || !m->stats->time_ns || stored_ns <= 0)
		return NULL;
	at = m->stats->time_ns > INT64_MAX ? INT64_MAX : (int64_t)m->stats->time_ns;
	h = slot(s, host);
	h->seen = ++s->tick;
	add(h, sat_sub(at, stored_ns), stored_ns);
	return &h->est;
}

void fleet_skews_json(const struct fleet_skews *s, struct evbuffer *b)
{
	evbuffer_add(b, "[", 1);
	for (unsigned i = 0; i < s->n; i++) {
		const struct fleet_skew_est *e = &s->hosts[i].est;

		if (i)
			evbuffer_add(b, ",", 1);
		json_host_skew(b, s->hosts[i].name, e->skew_ns, e->spread_ns, e->samples);
	}
	evbuffer_add(b, "]", 1);
}
