/*
 * mtrace-cat - print what mtraced streams, a recording holds or the fleet stream has
 * (one session over any source, session.h): events and statistics as text, JSON lines,
 * Chrome trace events, a CTF trace, folded creation stacks, or a recording (the
 * delimited ServerMsg frames behind a small header, docs/recording.md).  The filters
 * are the subscription's: mtraced applies them live, the session to stored records.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "cat-args.h"
#include "cat-chrome.h"
#include "cat-ctf.h"
#include "cat-folded.h"
#include "cat-format.h"
#include "clock.h"
#include "frame.h"
#include "malloc-tune.h"
#include "mtrace-client.h"
#include "json.h"
#include "recording.h"
#include "ring-reader.h"
#include "sat.h"
#include "session.h"
#include "timeline.h"

/* What --summary reports at exit (tests compare it with what the guest wrote). */
struct cat_sum {
	uint64_t events, batches, messages, stats, dropped, lost_in_ring, bytes;
	uint64_t by_op[256];
	bool goodbye;
};

/* One run: the options, the session, the outputs and what was counted. */
struct cat {
	const struct cat_opts *o;
	struct event_base *base;
	struct mtc_session *s;
	FILE *out;      /* stdout or -O */
	FILE *wfile;    /* -w */
	FILE *sinks[2]; /* where recordings go: -f proto's output, -w's file */
	size_t n_sinks;
	bool unflushed; /* written since the last flush */
	bool finished;  /* nothing more is handled: the loop ends */
	bool waiting;   /* the link went away and is waited for */
	int status;     /* the exit status */
	struct cat_sum sum;
	struct tl *tl; /* the host timeline: clock maps, event-channel pairs */
};

static void finish(struct cat *c, int status)
{
	if (status > c->status)
		c->status = status;
	c->finished = true;
	event_base_loopbreak(c->base);
}

/* An event-channel send or receive: its pair, once both ends are known, printed. */
static void pair_end(struct cat *c, const Mtrace__EventBatch *b, size_t i, uint64_t ts,
    const struct tl_time *at, uint32_t track, uint64_t written)
{
	const struct mtc_rec *rec = mtc_session_rec(c->s);
	struct tl_end e = { .domid = b->domid,
		.port = (uint32_t)b->arg[i],
		.ring = b->ring,
		.guest_ns = ts,
		.at = *at,
		.user = track,
		.user2 = written,
		.thread = b->thread[i] };
	struct tl_pair p;

	if (!tl_evtchn(c->tl, rec->host, b->op[i] == MTRACE_OP_EVTCHN_SEND, &e, &p))
		return;
	if (c->o->fmt == CAT_CHROME)
		cat_chrome_pair(c->out, &p);
	else
		cat_pair(c->out, c->o->fmt, &p);
}

/* Print a batch's events; returns false once the -n count is reached. */
static bool print_batch(struct cat *c, const Mtrace__EventBatch *b)
{
	const struct cat_opts *o = c->o;
	size_t n = b->n_op, si = 0, i;
	uint64_t ts = b->base_ts;
	const struct tl_clock *tc =
	    tl_clock(c->tl, mtc_session_rec(c->s)->host, b->domid, b->clock);
	bool pairs = o->fmt == CAT_CHROME || o->fmt == CAT_JSON || o->fmt == CAT_TEXT;

	c->sum.batches++;
	for (i = 0; i < n; i++) {
		const char *str = NULL;
		struct tl_time at;
		uint32_t track = 0;
		uint64_t written = 0;

		ts += (uint64_t)b->ts_delta[i];
		tl_map(tc, ts, &at);
		/* a reference past the dictionary is the peer's bug: print no string */
		if (mtrace_op_has_string(b->op[i]) && si < b->n_str_ref &&
		    b->str_ref[si++] < b->n_str)
			str = b->str[b->str_ref[si - 1]];
		c->sum.events++;
		c->sum.by_op[b->op[i] & 0xff]++;
		if (o->fmt == CAT_FOLDED)
			folded_event(b->domid, (uint8_t)b->op[i],
			    n == b->n_type ? (uint8_t)b->type[i] : 0, ts, b->thread[i], b->arg[i],
			    str);
		else if (o->fmt == CAT_CHROME)
			track = cat_chrome_event(c->out, b, i, &at, str, &written);
		else if (o->fmt == CAT_CTF)
			cat_ctf_event(b, i, &at, str);
		else
			cat_event(c->out, o->fmt, b, i, ts, &at, str);
		if (pairs &&
		    (b->op[i] == MTRACE_OP_EVTCHN_SEND || b->op[i] == MTRACE_OP_EVTCHN_RECV))
			pair_end(c, b, i, ts, &at, track, written);
		if (o->count && !o->no_events && c->sum.events >= o->count)
			return false;
	}
	return true;
}

/* The message to the recording sinks: its frame as received, or packed again when the
 * session selected it (a piece of a batch, a Stats of fewer domains). */
static void sink(struct cat *c, const Mtrace__ServerMsg *m, const struct mtc_rec *rec)
{
	size_t len, hl;
	uint8_t *buf;

	if (!c->n_sinks)
		return;
	if (rec->raw) {
		for (size_t i = 0; i < c->n_sinks; i++)
			recording_write_frame(c->sinks[i], rec->raw, rec->raw_len);
		return;
	}
	len = mtrace__server_msg__get_packed_size(m);
	if (!(buf = malloc(len + FRAME_VARINT_MAX)))
		return;
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(m, buf + hl);
	for (size_t i = 0; i < c->n_sinks; i++)
		recording_write_frame(c->sinks[i], buf, hl + len);
	free(buf);
}

/* Returns 1 to go on, 0 to stop (the -n count). */
static int handle(struct cat *c, const Mtrace__ServerMsg *m)
{
	const struct cat_opts *o = c->o;
	const struct mtc_rec *rec = mtc_session_rec(c->s);
	const Mtrace__EventBatch *b;

	if (m->msg_case == MTRACE__SERVER_MSG__MSG_HELLO) {
		/* stored records: the daemon they came from */
		cat_ctf_hello(m->hello);
		sink(c, m, rec);
		return 1;
	}
	c->sum.messages++;
	sat_inc(&c->sum.bytes, rec->raw ? rec->raw_len : mtrace__server_msg__get_packed_size(m));
	tl_msg(c->tl, rec->host, m);
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		b = m->events;
		/* Columns of unequal length come from a broken or hostile peer: refuse them. */
		if (b->n_ts_delta != b->n_op || b->n_thread != b->n_op || b->n_arg != b->n_op ||
		    (b->n_type != b->n_op && b->n_type != 0)) {
			fprintf(
			    stderr, "mtrace-cat: malformed event batch (column lengths differ)\n");
			return 1;
		}
		sink(c, m, rec);
		return print_batch(c, b) ? 1 : 0;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		cat_names_note(m->domain_up->domid, m->domain_up->name);
		if (o->fmt == CAT_CHROME)
			cat_chrome_domain_up(c->out, m->domain_up->domid, m->domain_up->name);
		if (o->fmt == CAT_CTF)
			cat_ctf_domain_up(
			    m->domain_up->domid, m->domain_up->name, m->domain_up->clock);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		if (o->fmt == CAT_CHROME)
			cat_chrome_domain_down(c->out, m->domain_down->domid);
		break;
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP:
		if (o->fmt == CAT_CTF)
			cat_ctf_clock_map(m->clock_map);
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		/* a stored notice is anyone's: 2^63 twice must not wrap to 0 */
		sat_inc(&c->sum.dropped, m->loss->dropped_for_client);
		sat_inc(&c->sum.lost_in_ring, m->loss->lost_in_ring);
		if (m->loss->dropped_for_client)
			fprintf(stderr,
			    "mtrace-cat: %" PRIu64 " events dropped: this client "
			    "read too slowly\n",
			    m->loss->dropped_for_client);
		break;
	case MTRACE__SERVER_MSG__MSG_STATS:
		c->sum.stats++;
		break;
	case MTRACE__SERVER_MSG__MSG_VCPU:
		if (o->fmt == CAT_CHROME)
			cat_chrome_vcpu(c->out, m->vcpu);
		if (o->fmt == CAT_CTF)
			cat_ctf_vcpu(m->vcpu);
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		c->sum.goodbye = true;
		if (!o->stored) /* the session takes the link down next (on_down) */
			fprintf(stderr, "mtrace-cat: mtraced said goodbye: %s\n",
			    m->goodbye->reason ? m->goodbye->reason : "");
		break;
	case MTRACE__SERVER_MSG__MSG_ERROR:
		if (!o->stored)
			fprintf(stderr, "mtrace-cat: error from mtraced: %s\n",
			    m->error->message ? m->error->message : "?");
		break;
	default:
		break;
	}
	sink(c, m, rec);
	if (o->fmt == CAT_FOLDED) {
		/* nothing printed before the end; the statistics name the sites */
		if (m->msg_case == MTRACE__SERVER_MSG__MSG_STATS)
			folded_stats(m->stats);
	} else {
		cat_other(c->out, o->fmt, m);
	}
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_STATS && o->no_events && o->count &&
	    c->sum.stats >= o->count)
		return 0;
	return 1;
}

static unsigned on_msg(struct mtc_session *s, Mtrace__ServerMsg *m, void *arg)
{
	struct cat *c = arg;

	(void)s;
	if (c->finished)
		return MTC_MSG_YIELD;
	c->unflushed = true;
	if (handle(c, m) == 0 || ferror(c->out))
		finish(c, 0); /* the count, or the reader went away (EPIPE) */
	return c->finished ? MTC_MSG_YIELD : 0;
}

/* Write out when the source runs dry (or every few thousand messages), not per
 * message: cheap at high rates, prompt at low ones. */
static void flush_out(struct cat *c)
{
	if (!c->unflushed)
		return;
	c->unflushed = false;
	if (fflush(c->out) == EOF)
		finish(c, 0); /* EPIPE: the reader went away */
	for (size_t i = 0; i < c->n_sinks; i++)
		fflush(c->sinks[i]);
}

static void on_turn(struct mtc_session *s, unsigned n, void *arg)
{
	(void)s;
	(void)n;
	flush_out(arg);
}

static void on_up(struct mtc_session *s, const Mtrace__Hello *h, void *arg)
{
	struct cat *c = arg;

	(void)h;
	if (c->waiting)
		fprintf(stderr, "mtrace-cat: reconnected to %s\n",
		    mtc_session_stored(s) ? "NATS" : "mtraced");
	c->waiting = false;
}

static bool on_down(struct mtc_session *s, const struct mtc_down *d, void *arg)
{
	struct cat *c = arg;

	(void)s;
	flush_out(c);
	if (d->recovers || d->kind == MTC_DOWN_CONNECT) {
		/* NATS went, libnats brings it back; or mtraced is not back yet */
		if (d->recovers)
			fprintf(stderr, "mtrace-cat: %s\n", d->why);
		c->waiting = true;
		return true;
	}
	if (d->kind == MTC_DOWN_END) {
		finish(c, 0);
		return false;
	}
	if (c->o->stored || d->kind == MTC_DOWN_ERROR) {
		/* a damaged recording; mtraced refused us (said by handle) */
		if (c->o->stored)
			fprintf(stderr, "mtrace-cat: %s\n", d->why);
		finish(c, 1);
		return false;
	}
	/* mtraced went away: a Goodbye, the end of the connection, or a failure */
	if (c->o->reconnect) {
		fprintf(stderr, "mtrace-cat: mtraced went away; waiting for it\n");
		c->waiting = true;
		return true;
	}
	if (d->kind == MTC_DOWN_LOST && d->errnum) {
		fprintf(stderr, "mtrace-cat: %s\n", d->why);
		finish(c, 1);
	} else {
		finish(c, 0);
	}
	return false;
}

static void subscription(Mtrace__Subscribe *sub, void *arg)
{
	const struct cat_opts *o = ((struct cat *)arg)->o;

	sub->n_domids = o->n_domids;
	sub->domids = (uint32_t *)o->domids;
	sub->n_domain_names = o->n_names;
	sub->domain_names = (char **)o->names;
	sub->n_ops = o->n_ops;
	sub->ops = (uint32_t *)o->ops;
	sub->n_labels = o->n_labels;
	sub->labels = (char **)o->labels;
	sub->events = !o->no_events;
	sub->shared_memory = o->shared_memory;
	sub->stats_interval_ms = o->stats_ms;
	sub->top_n = o->top_n;
	sub->sort = (Mtrace__SortKey)o->sort;
	sub->label_stats = o->label_stats;
	sub->site_stats = o->site_stats;
	sub->include_finished = o->finished;
	if (o->fmt == CAT_FOLDED) {
		/* the sites' names come with the statistics */
		sub->site_stats = true;
		if (!sub->stats_interval_ms)
			sub->stats_interval_ms = 250;
	}
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	finish(arg, 0); /* ^C, SIGTERM, --time: what was received is written out */
}

/* The outputs, once the source is open (live, the daemon's Hello opens the
 * recordings; stored, their own Hello frame is copied through): 0 or -1, said. */
static int begin(struct cat *c)
{
	const struct cat_opts *o = c->o;
	const Mtrace__Hello *hello = mtc_session_hello(c->s);
	char err[512];

	c->out = stdout;
	if (o->fmt == CAT_CTF) {
		if (cat_ctf_open(o->output, err, sizeof(err)) < 0) {
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return -1;
		}
		if (hello)
			cat_ctf_hello(hello);
	} else if (o->output && !(c->out = fopen(o->output, "wb"))) {
		fprintf(stderr, "mtrace-cat: cannot create %s: %s\n", o->output, strerror(errno));
		c->out = stdout;
		return -1;
	}
	/* One thread writes: stdio need not lock per call (a third of the converters' time) */
	__fsetlocking(c->out, FSETLOCKING_BYCALLER);
	if (o->fmt == CAT_PROTO)
		c->sinks[c->n_sinks++] = c->out;
	if (o->record) {
		if (!(c->wfile = fopen(o->record, "wb"))) {
			fprintf(stderr, "mtrace-cat: cannot create %s: %s\n", o->record,
			    strerror(errno));
			return -1;
		}
		c->sinks[c->n_sinks++] = c->wfile;
	}
	for (size_t i = 0; i < c->n_sinks; i++)
		recording_write_header(c->sinks[i], hello);
	if (o->fmt == CAT_CHROME)
		cat_chrome_begin(c->out);
	if (o->fmt == CAT_FOLDED)
		folded_init(o->frames, o->weight);
	return 0;
}

/* The outputs closed: the exit status, with what went wrong said. */
static int end(struct cat *c)
{
	const struct cat_opts *o = c->o;
	int status = c->status;
	char err[512];

	if (o->fmt == CAT_CHROME)
		cat_chrome_vcpu_end();
	if (o->fmt == CAT_CHROME && cat_chrome_end(c->out, c->tl) < 0 && errno != EPIPE) {
		fprintf(stderr, "mtrace-cat: writing the Chrome trace: %s\n", strerror(errno));
		status = 1;
	}
	if (o->fmt == CAT_FOLDED)
		folded_print(c->out);
	if (o->fmt == CAT_CTF && cat_ctf_close(err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-cat: %s\n", err);
		status = 1;
	}
	if (fflush(c->out) == EOF && errno != EPIPE) {
		fprintf(stderr, "mtrace-cat: writing output: %s\n", strerror(errno));
		status = 1;
	}
	if (c->wfile && fclose(c->wfile) != 0) {
		fprintf(stderr, "mtrace-cat: writing %s: %s\n", o->record, strerror(errno));
		status = 1;
	}
	if (c->out != stdout && fclose(c->out) != 0) {
		fprintf(stderr, "mtrace-cat: writing %s: %s\n", o->output, strerror(errno));
		status = 1;
	}
	return status;
}

/* One line of JSON on stderr; the sums of what was read saturate, and those that did
 * are named in "saturated" (at least that much); with --nats, the messages skipped as
 * not ours per host (fleet-hosts.h) and each host's clock against NATS (fleet-skew.h). */
static void print_summary(
    const struct cat_sum *sum, const struct mtc_source *src, const struct tl *tl)
{
	struct tl_counts p;
	static const char *const names[] = { "dropped_for_client", "lost_in_ring", "bytes" };
	const uint64_t vals[] = { sum->dropped, sum->lost_in_ring, sum->bytes };
	struct evbuffer *b = evbuffer_new();
	bool any = false;

	if (!b)
		return;
	tl_counts(tl, &p);
	evbuffer_add_printf(b,
	    "{\"events\":%" PRIu64 ",\"batches\":%" PRIu64 ",\"messages\":%" PRIu64
	    ",\"stats\":%" PRIu64 ",\"dropped_for_client\":%" PRIu64 ",\"lost_in_ring\":%" PRIu64
	    ",\"bytes\":%" PRIu64 ",\"goodbye\":%s,\"evtchn_pairs\":{\"pairs\":%" PRIu64
	    ",\"ordered\":%" PRIu64 ",\"uncertain\":%" PRIu64 ",\"violated\":%" PRIu64
	    ",\"unmapped\":%" PRIu64 ",\"unpaired\":%" PRIu64 "},\"by_op\":{",
	    sum->events, sum->batches, sum->messages, sum->stats, sum->dropped, sum->lost_in_ring,
	    sum->bytes, sum->goodbye ? "true" : "false", p.pairs, p.ordered, p.uncertain,
	    p.violated, p.unmapped, p.unpaired);
	for (unsigned op = 0, first = 1; op < 256; op++) {
		if (!sum->by_op[op])
			continue;
		evbuffer_add_printf(b, "%s\"%u\":%" PRIu64, first ? "" : ",", op, sum->by_op[op]);
		first = 0;
	}
	evbuffer_add(b, "}", 1);
	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		if (sat_full(vals[i])) {
			evbuffer_add_printf(
			    b, "%s\"%s\"", any ? "," : ",\"saturated\":[", names[i]);
			any = true;
		}
	if (any)
		evbuffer_add(b, "]", 1);
	evbuffer_add(b, ",\"bad_messages\":", 16);
	if (mtc_source_bad_json(src, b) < 0)
		evbuffer_add(b, "null", 4);
	evbuffer_add(b, ",\"host_skew\":", 13);
	if (mtc_source_skew_json(src, b) < 0)
		evbuffer_add(b, "null", 4);
	evbuffer_add(b, "}\n", 2);
	json_write(stderr, b);
	evbuffer_free(b);
}

int main(int argc, char **argv)
{
	static const struct mtc_session_ops ops = {
		.software = "mtrace-cat " MTRACE_VERSION,
		.subscription = subscription,
		.on_msg = on_msg,
		.on_turn = on_turn,
		.on_up = on_up,
		.on_down = on_down,
		.see_ends = true, /* printed and recorded like the rest */
	};
	struct cat_opts o = { .src = { .prog = "mtrace-cat",
		                  .software = "mtrace-cat " MTRACE_VERSION } };
	struct cat c = { .o = &o };
	struct event *sigint = NULL, *sigterm = NULL, *timer = NULL;
	char err[512] = "out of memory"; /* unless the source says why */
	int status = 1;

	malloc_tune();
	if (cat_parse_args(argc, argv, &o) < 0)
		return 2;
	/* Writes to a closed pipe fail with EPIPE and end the run cleanly. */
	signal(SIGPIPE, SIG_IGN);
	c.out = stdout;
	if (!(c.tl = tl_new()) || !(c.base = event_base_new())) {
		fprintf(stderr, "mtrace-cat: cannot create the event loop\n");
		return 1;
	}
	c.s = mtc_session_new_source(c.base, mtc_source_new(&o.src, err, sizeof(err)), &ops, &c);
	if (!c.s) {
		fprintf(stderr, "mtrace-cat: %s\n", err);
		goto out;
	}
	if (mtc_session_connect(c.s, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-cat: %s\n", err);
		goto out;
	}
	if (begin(&c) < 0)
		goto out;
	sigint = evsignal_new(c.base, SIGINT, on_stop, &c);
	sigterm = evsignal_new(c.base, SIGTERM, on_stop, &c);
	if (!sigint || !sigterm || event_add(sigint, NULL) < 0 || event_add(sigterm, NULL) < 0) {
		fprintf(stderr, "mtrace-cat: cannot set up events\n");
		goto out;
	}
	if (o.seconds > 0) {
		/* for the whole run, across reconnections */
		struct timeval tv = tv_from_ns((uint64_t)(o.seconds * 1e9));

		if (!(timer = evtimer_new(c.base, on_stop, &c)) || evtimer_add(timer, &tv) < 0) {
			fprintf(stderr, "mtrace-cat: cannot set up events\n");
			goto out;
		}
	}
	event_base_dispatch(c.base);
	status = end(&c);
	if (o.summary)
		print_summary(&c.sum, mtc_session_source(c.s), c.tl);
out:
	mtc_session_free(c.s);
	if (sigint)
		event_free(sigint);
	if (sigterm)
		event_free(sigterm);
	if (timer)
		event_free(timer);
	event_base_free(c.base);
	tl_free(c.tl);
	return status;
}
