/*
 * chrome-time.c - the trace's time base, its clocks and its event-channel arrows
 * (chrome-time.h).
 *
 * The base is the smallest time of the whole trace, so that every domain's events
 * come after it whatever order the stream brought them in (a domain read late, a
 * recording that starts with one guest's old events): the objects wait in a
 * temporary file and are copied out with their times made relative.
 *
 * A pair (timeline.h) is an arrow from the send's instant to the receive's, across
 * domains, only when the receive is not before the send: "evtchn" when the gap is
 * larger than the two maps' uncertainties, "evtchn_uncertain" (with the figures in its
 * args) when it is not.  A receive that the maps put before its send, or whose clock is
 * not on the host timeline, gets no arrow -- one drawn backwards would claim what is
 * not known -- but a marker on its track that says so.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "chrome-time.h"
#include "json.h"

#define HEAD "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"

FILE *chrome_body_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	FILE *f;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/mtrace-cat-chrome.XXXXXX", dir);
	if ((fd = mkstemp(path)) < 0)
		return NULL;
	unlink(path); /* gone with the process, whatever happens */
	if (!(f = fdopen(fd, "w+"))) {
		close(fd);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

static uint64_t at_ts(const struct tl_end *e)
{
	return e->user2; /* the time its instant was written at */
}

void chrome_pair(struct chrome_emit *e, struct chrome_pairs *pc, FILE *f, const struct tl_pair *p)
{
	uint32_t pa = p->send.domid, pb = p->recv.domid;
	uint32_t ta = (uint32_t)p->send.user, tb = (uint32_t)p->recv.user;

	if (!ta || !tb) {
		pc->not_drawn++; /* an end with no instant of its own (cannot happen) */
		return;
	}
	if (p->order == TL_ORDERED) {
		chrome_flow_between(
		    e, f, pa, ta, at_ts(&p->send), pb, tb, at_ts(&p->recv), "evtchn");
		fputc('}', f);
		pc->arrows++;
		return;
	}
	if (p->order == TL_UNCERTAIN && p->gap_ns >= 0) {
		chrome_flow_between(
		    e, f, pa, ta, at_ts(&p->send), pb, tb, at_ts(&p->recv), "evtchn_uncertain");
		fprintf(f,
		    ",\"args\":{\"uncertain\":true,\"gap_ns\":%" PRId64
		    ",\"uncertainty_ns\":%" PRIu64 "}}",
		    p->gap_ns, p->uncertainty_ns);
		pc->uncertain_arrows++;
		return;
	}
	chrome_instant(e, f, pb, tb, at_ts(&p->recv),
	    p->order == TL_UNMAPPED ? "evtchn_recv: clock not on the timeline"
	                            : "evtchn_recv: not after its send",
	    "evtchn_order");
	fprintf(f,
	    ",\"args\":{\"order\":\"%s\",\"gap_ns\":%" PRId64 ",\"uncertainty_ns\":%" PRIu64
	    ",\"send_domid\":%" PRIu32 ",\"send_port\":%" PRIu32 "}}",
	    tl_order_name(p->order), p->gap_ns, p->uncertainty_ns, p->send.domid, p->send.port);
	pc->not_drawn++;
}

struct meta {
	FILE *f;
	bool first;
};

static void meta_map(const char *host, const Mtrace__ClockMap *m, size_t nth, void *arg)
{
	struct meta *w = arg;
	struct evbuffer *b = evbuffer_new();

	(void)nth;
	fputs(w->first ? "" : ",", w->f);
	w->first = false;
	fprintf(w->f,
	    "{\"domid\":%" PRIu32 ",\"clock\":%" PRIu32 ",\"source\":\"%s\",\"offset_ns\":%" PRId64
	    ",\"uncertainty_ns\":%" PRIu64 ",\"since_host_ns\":%" PRId64 ",\"seq\":%" PRIu64,
	    m->domid, m->clock, json_clock_source(m->source), m->offset_ns, m->uncertainty_ns,
	    m->since_host_ns, m->seq);
	if (host && *host && b) {
		fputs(",\"host\":", w->f);
		json_str(b, host);
		json_write(w->f, b);
	}
	fputc('}', w->f);
	if (b)
		evbuffer_free(b);
}

int chrome_finish(FILE *out, FILE *body, const struct chrome_emit *e, const struct chrome_pairs *pc,
    const struct tl *tl, uint64_t clamped)
{
	uint64_t base = body && e->any_ts ? e->min_ts : 0;
	struct tl_counts n = { 0 };
	struct meta w = { out, true };
	int rc = 0;

	if (body) {
		fputs(HEAD, out);
		rc = chrome_rebase(body, out, base);
		fclose(body);
	}
	if (tl)
		tl_counts(tl, &n);
	/* Perfetto skips keys it does not know after traceEvents. */
	fprintf(out,
	    "\n],\"metadata\":{\"mtrace\":{\"origin_wall_ns\":%" PRIu64
	    ",\"ts\":\"us since origin_wall_ns, 3 decimals (exact ns)\","
	    "\"timeline\":\"each domain's clock mapped onto its dom0's CLOCK_REALTIME (clocks)\","
	    "\"clamped\":%" PRIu64 ",\"clocks\":[",
	    base, clamped);
	if (tl)
		tl_each_map(tl, meta_map, &w);
	fprintf(out,
	    "],\"evtchn_pairs\":{\"pairs\":%" PRIu64 ",\"ordered\":%" PRIu64
	    ",\"uncertain\":%" PRIu64 ",\"violated\":%" PRIu64 ",\"unmapped\":%" PRIu64
	    ",\"unpaired\":%" PRIu64 ",\"arrows\":%" PRIu64 ",\"uncertain_arrows\":%" PRIu64
	    ",\"not_drawn\":%" PRIu64 "}}}}\n",
	    n.pairs, n.ordered, n.uncertain, n.violated, n.unmapped, n.unpaired, pc->arrows,
	    pc->uncertain_arrows, pc->not_drawn);
	return rc < 0 || ferror(out) ? -1 : 0;
}
