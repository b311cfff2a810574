/*
 * expo-unit.c - expo.c on Stats messages built here: the strings mtraced would have
 * repaired arrive raw (the exporter must not rely on it), caps fold the rest into
 * "other" with the right sums and counts, dead domains are left out, and the Accept
 * header picks the format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "check.h"
#include "exporter.h"
#include "timeline.h"
#include "utf8.h"

static struct tl *clocks; /* the clock maps "told" (render's) */

static char *render(
    const Mtrace__Stats *s, enum expo_format fmt, unsigned labels, unsigned counters)
{
	struct expo_caps caps = { labels, counters };
	struct expo_self self = {
		.up = true, .stats_age_s = 0.25, .connects = 2, .clocks = clocks
	};
	struct evbuffer *b = evbuffer_new();
	size_t n;
	char *out;

	expo_render(b, fmt, s, &self, &caps);
	n = evbuffer_get_length(b);
	out = malloc(n + 1);
	evbuffer_remove(b, out, n);
	out[n] = '\0';
	evbuffer_free(b);
	return out;
}

/* A ClockMap as mtraced sends it, into the maps. */
static void tell_map(uint32_t domid, uint32_t clock, int64_t offset, uint64_t unc,
    Mtrace__ClockMap__Source src, uint64_t seq)
{
	Mtrace__ClockMap cm = MTRACE__CLOCK_MAP__INIT;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;

	cm.domid = domid;
	cm.clock = clock;
	cm.offset_ns = offset;
	cm.uncertainty_ns = unc;
	cm.source = src;
	cm.seq = seq;
	m.msg_case = MTRACE__SERVER_MSG__MSG_CLOCK_MAP;
	m.clock_map = &cm;
	tl_msg(clocks, NULL, &m);
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static bool valid_utf8(const char *s)
{
	for (size_t n; *s; s += n)
		if (!(n = utf8_len((const unsigned char *)s)))
			return false;
	return true;
}

int main(void)
{
	Mtrace__DomainStats d1 = MTRACE__DOMAIN_STATS__INIT, d2 = MTRACE__DOMAIN_STATS__INIT;
	Mtrace__DomainStats *doms[] = { &d1, &d2 };
	Mtrace__OpEvents o1 = MTRACE__OP_EVENTS__INIT, o2 = MTRACE__OP_EVENTS__INIT;
	Mtrace__OpEvents *ops[] = { &o1, &o2 };
	Mtrace__Counter c[5];
	Mtrace__Counter *cp[5];
	static const char *const cname[5] = { "c1", "c\xff", "c?", "other", "c5" };
	static const int64_t cval[5] = { 10, -3, 4, 100, 1000 };
	Mtrace__LabelStats l[7];
	Mtrace__LabelStats *lp[7];
	static const char *const lname[7] = { "a\\b", "new\nline", "bad\xfe", "bad?", "other",
		"z\"", "dead" };
	Mtrace__Stats s = MTRACE__STATS__INIT;
	char *t, *om;

	d1.domid = 1;
	d1.name = "web\"x";
	d1.alive = 1;
	d1.events = 30;
	d1.lost = 7;
	d1.labels_dropped = 9;
	d1.state = "running";
	o1.op = 1;
	o1.events = 20;
	o2.op = 200; /* an op without a name */
	o2.events = 10;
	d1.n_op_events = 2;
	d1.op_events = ops;
	for (int i = 0; i < 5; i++) {
		mtrace__counter__init(&c[i]);
		c[i].name = (char *)cname[i];
		c[i].value = cval[i];
		cp[i] = &c[i];
	}
	d1.n_counters = 5;
	d1.counters = cp;
	d2.domid = 2;
	d2.name = "gone";
	d2.alive = 0;
	d2.state = "dead";
	for (int i = 0; i < 7; i++) {
		mtrace__label_stats__init(&l[i]);
		l[i].domid = i == 6 ? 2 : 1;
		l[i].label = (char *)lname[i];
		l[i].count = 10u + (unsigned)i;
		l[i].live = (unsigned)i;
		l[i].lifetime_count = 2;
		l[i].lifetime_sum_ns = 1500000000u + (unsigned)i;
		l[i].lifetime_p50_ns = 500000000;
		l[i].lifetime_p99_ns = 1000000001;
		lp[i] = &l[i];
	}
	s.n_domains = 2;
	s.domains = doms;
	s.n_labels = 7;
	s.labels = lp;
	s.clients = 3;

	/* domain 1's monotonic clock told twice (a step), its xen clock behind the host
	 * timeline, its realtime clock not on it; the dead domain 2's not shown */
	clocks = tl_new();
	tell_map(1, 1, 1765000000000000000, 900, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 1);
	tell_map(1, 1, 1765000000123456789, 1500, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 2);
	tell_map(1, 2, -2500000000, 2000000, MTRACE__CLOCK_MAP__SOURCE__XEN_SYSTEM_TIME, 1);
	tell_map(1, 3, 0, UINT64_MAX, MTRACE__CLOCK_MAP__SOURCE__UNKNOWN, 1);
	tell_map(2, 1, 5, 5, MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL, 1);

	t = render(&s, EXPO_TEXT, 3, 2);
	CHECK(valid_utf8(t), "output is not UTF-8");
	CHECK(has_line(t,
	          "mtrace_clock_offset_seconds{domain=\"web\\\"x\",domid=\"1\",clock=\"monotonic\","
	          "source=\"same-kernel\"} 1765000000.123456789"),
	    "the map in force's offset, exact seconds");
	CHECK(has_line(t,
	          "mtrace_clock_uncertainty_seconds{domain=\"web\\\"x\",domid=\"1\","
	          "clock=\"monotonic\",source=\"same-kernel\"} 0.000001500"),
	    "its uncertainty");
	CHECK(has_line(t,
	          "mtrace_clock_maps_total{domain=\"web\\\"x\",domid=\"1\",clock=\"monotonic\","
	          "source=\"same-kernel\"} 2"),
	    "maps told: one change");
	CHECK(has_line(t,
	          "mtrace_clock_offset_seconds{domain=\"web\\\"x\",domid=\"1\",clock=\"xen\","
	          "source=\"xen-system-time\"} -2.500000000"),
	    "a negative offset");
	CHECK(has_line(t,
	          "mtrace_clock_uncertainty_seconds{domain=\"web\\\"x\",domid=\"1\","
	          "clock=\"realtime\",source=\"unknown\"} +Inf"),
	    "a clock off the host timeline: +Inf");
	CHECK(!strstr(t,
	          "mtrace_clock_offset_seconds{domain=\"web\\\"x\",domid=\"1\","
	          "clock=\"realtime\""),
	    "an offset for a clock off the host timeline");
	CHECK(has_line(t, "# TYPE mtrace_clock_uncertainty_seconds gauge"), "gauge TYPE");
	CHECK(!strstr(t, "domid=\"2\""), "a dead domain is shown");
	CHECK(has_line(t, "mtrace_up 1"), "mtrace_up");
	CHECK(has_line(t, "# TYPE mtrace_domain_events_total counter"), "counter TYPE");
	CHECK(has_line(
	          t, "mtrace_domain_events_total{domain=\"web\\\"x\",domid=\"1\",op=\"read\"} 20"),
	    "events by op");
	CHECK(has_line(t,
	          "mtrace_domain_events_total{domain=\"web\\\"x\",domid=\"1\",op=\"op_200\"} 10"),
	    "unnamed op");
	CHECK(has_line(t, "mtrace_domain_lost_events_total{domain=\"web\\\"x\",domid=\"1\"} 7"),
	    "lost");
	CHECK(has_line(t, "mtrace_domain_labels_dropped_total{domain=\"web\\\"x\",domid=\"1\"} 9"),
	    "labels mtraced dropped");
	/* labels: a\b, new\nline, bad? shown; bad? (again), other, z" folded */
	CHECK(
	    has_line(t,
	        "mtrace_label_threads_created_total{domain=\"web\\\"x\",domid=\"1\",label=\"a\\\\b\"} 10"),
	    "backslash label");
	CHECK(
	    has_line(t,
	        "mtrace_label_threads_created_total{domain=\"web\\\"x\",domid=\"1\",label=\"new\\nline\"} 11"),
	    "newline label");
	CHECK(
	    has_line(t,
	        "mtrace_label_threads_created_total{domain=\"web\\\"x\",domid=\"1\",label=\"bad?\"} 12"),
	    "invalid UTF-8 label");
	CHECK(
	    has_line(t,
	        "mtrace_label_threads_created_total{domain=\"web\\\"x\",domid=\"1\",label=\"other\"} 42"),
	    "other = 13 + 14 + 15");
	CHECK(has_line(t,
	          "mtrace_label_threads_live{domain=\"web\\\"x\",domid=\"1\",label=\"other\"} 12"),
	    "other live = 3 + 4 + 5");
	CHECK(has_line(t, "mtrace_domain_labels_folded{domain=\"web\\\"x\",domid=\"1\"} 3"),
	    "labels folded");
	CHECK(!strstr(t, "label=\"z"), "label past the cap shown");
	CHECK(
	    has_line(t,
	        "mtrace_label_thread_lifetime_seconds{domain=\"web\\\"x\",domid=\"1\",label=\"a\\\\b\",quantile=\"0.99\"} 1.000000001"),
	    "quantile in exact seconds");
	CHECK(
	    has_line(t,
	        "mtrace_label_thread_lifetime_seconds_sum{domain=\"web\\\"x\",domid=\"1\",label=\"other\"} 4.500000012"),
	    "other lifetime sum");
	CHECK(
	    has_line(t,
	        "mtrace_label_thread_lifetime_seconds_count{domain=\"web\\\"x\",domid=\"1\",label=\"other\"} 6"),
	    "other lifetime count");
	CHECK(!strstr(t, "label=\"other\",quantile"), "quantiles for the fold");
	/* counters: c1, c? shown; c? (again), other, c5 folded: -3 + ... no: c\xff is c? */
	CHECK(has_line(t, "mtrace_guest_value{domain=\"web\\\"x\",domid=\"1\",counter=\"c1\"} 10"),
	    "counter");
	CHECK(has_line(t, "mtrace_guest_value{domain=\"web\\\"x\",domid=\"1\",counter=\"c?\"} -3"),
	    "first of the colliding counters");
	CHECK(has_line(
	          t, "mtrace_guest_value{domain=\"web\\\"x\",domid=\"1\",counter=\"other\"} 1104"),
	    "other = 4 + 100 + 1000");
	CHECK(has_line(t, "mtrace_domain_counters_folded{domain=\"web\\\"x\",domid=\"1\"} 3"),
	    "counters folded");
	CHECK(has_line(t, "mtrace_daemon_guests 1"), "guests");
	CHECK(has_line(t, "mtrace_daemon_clients 3"), "clients");
	CHECK(!strstr(t, "# EOF"), "EOF in the text format");

	om = render(&s, EXPO_OPENMETRICS, 3, 2);
	CHECK(has_line(om, "# TYPE mtrace_domain_events counter"), "OpenMetrics counter family");
	CHECK(has_line(om, "# UNIT mtrace_label_thread_lifetime_seconds seconds"),
	    "OpenMetrics unit");
	CHECK(strlen(om) > 6 && !strcmp(om + strlen(om) - 6, "# EOF\n"), "OpenMetrics EOF");
	CHECK(has_line(om, "# UNIT mtrace_clock_offset_seconds seconds") &&
	        has_line(om, "# TYPE mtrace_clock_maps counter"),
	    "OpenMetrics clock families");
	free(om);
	free(t);

	/* nothing from mtraced: only the exporter's own metrics */
	t = render(NULL, EXPO_TEXT, 3, 2);
	CHECK(has_line(t, "mtrace_up 0"), "mtrace_up without stats");
	CHECK(!strstr(t, "mtrace_domain_events_total{"), "domain series without stats");
	free(t);

	CHECK(expo_negotiate(NULL) == EXPO_TEXT, "no Accept");
	CHECK(expo_negotiate("*/*") == EXPO_TEXT, "*/*");
	CHECK(expo_negotiate("application/openmetrics-text;version=1.0.0,application/"
	                     "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
	                     "q=0.5,*/*;q=0.1") == EXPO_OPENMETRICS,
	    "Prometheus 2.42's Accept");
	CHECK(expo_negotiate("text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5") ==
	        EXPO_TEXT,
	    "text preferred");
	CHECK(expo_negotiate("application/openmetrics-text;q=0") == EXPO_TEXT, "q=0");
	CHECK(expo_negotiate(" Application/OpenMetrics-Text ; version=1.0.0") == EXPO_OPENMETRICS,
	    "case and spaces");
	tl_free(clocks);
	return check_status("expo-unit");
}
