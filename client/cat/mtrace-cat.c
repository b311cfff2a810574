/*
 * mtrace-cat - subscribe to mtraced (or read a recording) and print events and
 * statistics as text, JSON lines, Chrome trace events, a CTF trace, or a recording
 * (the delimited ServerMsg frames behind a small header, docs/recording.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cat-args.h"
#include "cat-chrome.h"
#include "cat-ctf.h"
#include "cat-filter.h"
#include "clock.h"
#include "cat-folded.h"
#include "cat-format.h"
#include "cat-nats.h"
#include "frame.h"
#include "malloc-tune.h"
#include "mtrace-client.h"
#include "session.h"
#include "recording.h"
#include "ring-reader.h"

static volatile sig_atomic_t stop_signal;

/* Where recordings go (-f proto's output, -w's file) and the -i filters. */
static FILE *sinks[2];
static size_t n_sinks;
static struct cat_filter filt;
static bool filtering, reached_count;
static FILE *out;

/* What --summary reports at exit (tests compare it with what the guest wrote). */
static struct {
	uint64_t events, batches, messages, stats, dropped, lost_in_ring, bytes;
	uint64_t by_op[256];
	bool goodbye;
} sum;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static double now_s(void)
{
	return clock_mono_s();
}

/* Print a batch's events; returns false once the -n count is reached. */
static bool print_batch(const struct cat_opts *o, const Mtrace__EventBatch *b)
{
	size_t n = b->n_op, si = 0, i;
	uint64_t ts = b->base_ts;

	sum.batches++;
	for (i = 0; i < n; i++) {
		const char *str = NULL;

		ts += (uint64_t)b->ts_delta[i];
		/* a reference past the dictionary is the peer's bug: print no string */
		if (mtrace_op_has_string(b->op[i]) && si < b->n_str_ref &&
		    b->str_ref[si++] < b->n_str)
			str = b->str[b->str_ref[si - 1]];
		sum.events++;
		sum.by_op[b->op[i] & 0xff]++;
		if (o->fmt == CAT_FOLDED)
			folded_event(b->domid, (uint8_t)b->op[i],
			    n == b->n_type ? (uint8_t)b->type[i] : 0, ts, b->thread[i], b->arg[i],
			    str);
		else if (o->fmt == CAT_CHROME)
			cat_chrome_event(out, b, i, ts, str);
		else if (o->fmt == CAT_CTF)
			cat_ctf_event(b, i, ts, str);
		else
			cat_event(out, o->fmt, b, i, ts, str);
		if (o->count && !o->no_events && sum.events >= o->count)
			return false;
	}
	return true;
}

static void sink_raw(const uint8_t *raw, size_t len)
{
	for (size_t i = 0; i < n_sinks; i++)
		recording_write_frame(sinks[i], raw, len);
}

/* A message of ours (a filtered piece of a recording) to the recording sinks. */
static void sink_msg(const Mtrace__ServerMsg *m)
{
	size_t len, hl;
	uint8_t *buf;

	if (!n_sinks)
		return;
	len = mtrace__server_msg__get_packed_size(m);
	buf = malloc(len + FRAME_VARINT_MAX);
	if (!buf)
		return;
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(m, buf + hl);
	sink_raw(buf, hl + len);
	free(buf);
}

static void filtered_part(const Mtrace__EventBatch *part, void *arg)
{
	const struct cat_opts *o = arg;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;

	if (reached_count)
		return;
	m.msg_case = MTRACE__SERVER_MSG__MSG_EVENTS;
	m.events = (Mtrace__EventBatch *)part;
	sink_msg(&m);
	if (!print_batch(o, part))
		reached_count = true;
}

/* Messages about one domain that the -i filters leave out. */
static bool filtered_out(const Mtrace__ServerMsg *m)
{
	if (!filtering)
		return false;
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		return !cat_filter_domain(&filt, m->domain_up->domid);
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		return !cat_filter_domain(&filt, m->domain_down->domid);
	case MTRACE__SERVER_MSG__MSG_LOSS:
		/* domid 0 ring 0 is this client's own loss: always shown */
		return (m->loss->domid || m->loss->ring) &&
		    !cat_filter_domain(&filt, m->loss->domid);
	default:
		return false;
	}
}

static int handle_events(
    const struct cat_opts *o, const Mtrace__EventBatch *b, const uint8_t *raw, size_t rlen)
{
	size_t n = b->n_op;

	/* Columns of unequal length come from a broken or hostile peer: refuse them. */
	if (b->n_ts_delta != n || b->n_thread != n || b->n_arg != n ||
	    (b->n_type != n && b->n_type != 0)) {
		fprintf(stderr, "mtrace-cat: malformed event batch (column lengths differ)\n");
		return 1;
	}
	if (o->stored && o->no_events)
		return 1;
	if (!filtering) {
		sink_raw(raw, rlen);
		return print_batch(o, b) ? 1 : 0;
	}
	if (cat_filter_batch(&filt, b, filtered_part, (void *)o) < 0) {
		fprintf(stderr, "mtrace-cat: out of memory\n");
		return -1;
	}
	return reached_count ? 0 : 1;
}

/* Returns 1 to go on, 0 to stop cleanly, -1 on error. */
static int handle(
    const struct cat_opts *o, const Mtrace__ServerMsg *m, const uint8_t *raw, size_t rlen)
{
	struct cat_stats_view view;
	const Mtrace__ServerMsg *shown = m;
	Mtrace__ServerMsg vm;

	if (m->msg_case == MTRACE__SERVER_MSG__MSG_HELLO) {
		/* a recording's first frame: the daemon it came from */
		cat_ctf_hello(m->hello);
		sink_raw(raw, rlen);
		return 1;
	}
	sum.messages++;
	sum.bytes += rlen;
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_UP)
		cat_names_note(m->domain_up->domid, m->domain_up->name);
	if (filtered_out(m))
		return 1;
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		return handle_events(o, m->events, raw, rlen);
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		if (o->fmt == CAT_CHROME)
			cat_chrome_domain_up(out, m->domain_up->domid, m->domain_up->name);
		if (o->fmt == CAT_CTF)
			cat_ctf_domain_up(
			    m->domain_up->domid, m->domain_up->name, m->domain_up->clock);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		if (o->fmt == CAT_CHROME)
			cat_chrome_domain_down(out, m->domain_down->domid);
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		sum.dropped += m->loss->dropped_for_client;
		sum.lost_in_ring += m->loss->lost_in_ring;
		if (m->loss->dropped_for_client)
			fprintf(stderr,
			    "mtrace-cat: %" PRIu64 " events dropped: this client "
			    "read too slowly\n",
			    m->loss->dropped_for_client);
		break;
	case MTRACE__SERVER_MSG__MSG_STATS:
		sum.stats++;
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		sum.goodbye = true;
		break;
	default:
		break;
	}
	if (filtering && m->msg_case == MTRACE__SERVER_MSG__MSG_STATS) {
		if (cat_filter_stats(&filt, m->stats, &view) < 0)
			return -1;
		vm = *m;
		vm.stats = &view.s;
		shown = &vm;
		sink_msg(shown);
	} else {
		sink_raw(raw, rlen);
	}
	if (o->fmt == CAT_FOLDED) {
		/* nothing printed before the end; the statistics name the sites */
		if (shown->msg_case == MTRACE__SERVER_MSG__MSG_STATS)
			folded_stats(shown->stats);
	} else {
		cat_other(out, o->fmt, shown);
	}
	if (shown != m)
		cat_filter_stats_free(&view);
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
		if (o->no_events && o->count && sum.stats >= o->count)
			return 0;
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		if (!o->stored)
			fprintf(stderr, "mtrace-cat: mtraced said goodbye: %s\n",
			    m->goodbye->reason ? m->goodbye->reason : "");
		/* 2: mtraced went away, and we wait for it (--reconnect) */
		return o->stored ? 1 : o->reconnect ? 2 : 0;
	case MTRACE__SERVER_MSG__MSG_ERROR:
		fprintf(stderr, "mtrace-cat: error from mtraced: %s\n",
		    m->error->message ? m->error->message : "?");
		return o->stored ? 1 : -1;
	default:
		break;
	}
	return 1;
}

static void print_summary(void)
{
	fprintf(stderr,
	    "{\"events\":%" PRIu64 ",\"batches\":%" PRIu64 ",\"messages\":%" PRIu64
	    ",\"stats\":%" PRIu64 ",\"dropped_for_client\":%" PRIu64 ",\"lost_in_ring\":%" PRIu64
	    ",\"bytes\":%" PRIu64 ",\"goodbye\":%s,\"by_op\":{",
	    sum.events, sum.batches, sum.messages, sum.stats, sum.dropped, sum.lost_in_ring,
	    sum.bytes, sum.goodbye ? "true" : "false");
	for (unsigned op = 0, first = 1; op < 256; op++) {
		if (!sum.by_op[op])
			continue;
		fprintf(stderr, "%s\"%u\":%" PRIu64, first ? "" : ",", op, sum.by_op[op]);
		first = 0;
	}
	fprintf(stderr, "}}\n");
}

/* The next message from the daemon or the recording (mtc_next's contract). */
static int next_msg(struct mtc *c, struct recording *rec, int timeout, Mtrace__ServerMsg **m,
    const uint8_t **raw, size_t *rlen, char *err, size_t errlen)
{
	int r;

	if (c)
		return mtc_next(c, timeout, m, raw, rlen, err, errlen);
	if (!rec)
		return cat_nats_next(timeout, m, raw, rlen, err, errlen);
	r = recording_next(rec, m, raw, rlen, err, errlen);
	if (r <= 0)
		errno = r == 0 ? 0 : EPROTO; /* 0: the end of the file, as EOF from the daemon */
	return r == 0 ? -1 : r;
}

static double deadline; /* -t: for the whole run, across reconnections */

/* 1 to go on, 0 to stop, -1 on error, 2 when mtraced went away (--reconnect). */
static int run(const struct cat_opts *o, struct mtc *c, struct recording *rec)
{
	bool unflushed = false;
	char err[512];

	for (;;) {
		Mtrace__ServerMsg *m;
		const uint8_t *raw;
		size_t rlen;
		int timeout = -1, r;

		if (stop_signal)
			return 0;
		if (deadline > 0) {
			double left = deadline - now_s();
			if (left <= 0)
				return 0;
			timeout = (int)(left * 1000) + 1;
		}
		/* Write out when the socket runs dry, not per message: cheap at high rates,
		 * prompt at low ones. */
		r = next_msg(c, rec, unflushed ? 0 : timeout, &m, &raw, &rlen, err, sizeof(err));
		if (r == 0) {
			if (unflushed) {
				if (fflush(out) == EOF)
					return 0; /* EPIPE: the reader went away */
				for (size_t i = 0; i < n_sinks; i++)
					fflush(sinks[i]);
				unflushed = false;
			}
			continue;
		}
		if (r < 0) {
			if (stop_signal)
				return 0;
			if (c && o->reconnect) {
				fflush(out);
				return 2; /* the daemon went away (EOF or a reset): wait for it */
			}
			if (errno == 0)
				return 0; /* EOF: the daemon went away, the file ended */
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return -1;
		}
		r = handle(o, m, raw, rlen);
		mtc_msg_free(m);
		unflushed = true;
		if (ferror(out))
			return 0;
		if (r <= 0)
			return r;
	}
}

static void filter_from_opts(const struct cat_opts *o)
{
	filt.domids = o->domids;
	filt.n_domids = o->n_domids;
	filt.names = o->names;
	filt.n_names = o->n_names;
	filt.labels = (const char *const *)o->labels;
	filt.n_labels = o->n_labels;
	filt.all_ops = o->n_ops == 0;
	for (size_t i = 0; i < o->n_ops; i++)
		filt.ops[o->ops[i] >> 3] |= (uint8_t)(1u << (o->ops[i] & 7));
	filtering = cat_filter_active(&filt);
}

static int subscribe(struct mtc *c, void *arg)
{
	const struct cat_opts *o = arg;
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;

	sub.n_domids = o->n_domids;
	sub.domids = (uint32_t *)o->domids;
	sub.n_domain_names = o->n_names;
	sub.domain_names = (char **)o->names;
	sub.n_ops = o->n_ops;
	sub.ops = (uint32_t *)o->ops;
	sub.n_labels = o->n_labels;
	sub.labels = (char **)o->labels;
	sub.events = !o->no_events;
	sub.shared_memory = o->shared_memory;
	sub.stats_interval_ms = o->stats_ms;
	sub.top_n = o->top_n;
	sub.sort = (Mtrace__SortKey)o->sort;
	sub.label_stats = o->label_stats;
	sub.site_stats = o->site_stats;
	sub.include_finished = o->finished;
	if (o->fmt == CAT_FOLDED) {
		/* the sites' names come with the statistics */
		sub.site_stats = true;
		if (!sub.stats_interval_ms)
			sub.stats_interval_ms = 250;
	}
	return mtc_subscribe(c, &sub);
}

static struct mtc *connect_live(const struct cat_opts *o)
{
	char err[512];
	struct mtc *c = mtc_open(
	    o->socket, "mtrace-cat " MTRACE_VERSION, subscribe, (void *)o, err, sizeof(err));

	if (!c)
		fprintf(stderr, "mtrace-cat: %s\n", err);
	return c;
}

/* -t and signals end the wait for mtraced too. */
static bool give_up(void *arg)
{
	(void)arg;
	return stop_signal || (deadline > 0 && now_s() >= deadline);
}

int main(int argc, char **argv)
{
	static struct cat_opts o;
	struct sigaction sa = { .sa_handler = on_signal };
	struct recording *rec = NULL;
	struct mtc *c = NULL;
	FILE *in = NULL, *wfile = NULL;
	char err[512];
	int r, status = 0;

	malloc_tune();
	if (cat_parse_args(argc, argv, &o) < 0)
		return 2;
	/* Writes to a closed pipe fail with EPIPE and end the run cleanly. */
	signal(SIGPIPE, SIG_IGN);
	/* No SA_RESTART: the wait in mtc_next must return on ^C. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	out = stdout;
	if (o.input) {
		in = strcmp(o.input, "-") ? fopen(o.input, "rb") : stdin;
		if (!in) {
			fprintf(
			    stderr, "mtrace-cat: cannot open %s: %s\n", o.input, strerror(errno));
			return 1;
		}
		rec =
		    recording_open(in, strcmp(o.input, "-") ? o.input : "stdin", err, sizeof(err));
		if (!rec) {
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return 1;
		}
		filter_from_opts(&o);
	} else if (o.nats) {
		if (cat_nats_open(&o, err, sizeof(err)) < 0) {
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return 1;
		}
		filter_from_opts(&o);
	} else if (!(c = connect_live(&o))) {
		return 1;
	}
	if (o.fmt == CAT_CTF) {
		if (cat_ctf_open(o.output, err, sizeof(err)) < 0) {
			fprintf(stderr, "mtrace-cat: %s\n", err);
			return 1;
		}
		if (c)
			cat_ctf_hello(mtc_server_hello(c));
	} else if (o.output && !(out = fopen(o.output, "wb"))) {
		fprintf(stderr, "mtrace-cat: cannot create %s: %s\n", o.output, strerror(errno));
		return 1;
	}
	/* One thread writes: stdio need not lock per call (a third of the converters' time) */
	__fsetlocking(out, FSETLOCKING_BYCALLER);
	if (o.fmt == CAT_PROTO)
		sinks[n_sinks++] = out;
	if (o.record) {
		if (!(wfile = fopen(o.record, "wb"))) {
			fprintf(stderr, "mtrace-cat: cannot create %s: %s\n", o.record,
			    strerror(errno));
			return 1;
		}
		sinks[n_sinks++] = wfile;
	}
	/* Live, the daemon's Hello went to the client library: it opens the recording.
	 * From a file, its own Hello frame is copied through. */
	for (size_t i = 0; i < n_sinks; i++)
		recording_write_header(sinks[i], c ? mtc_server_hello(c) : NULL);
	if (o.fmt == CAT_CHROME)
		cat_chrome_begin(out);
	if (o.fmt == CAT_FOLDED)
		folded_init(o.frames, o.weight);
	deadline = o.seconds > 0 ? now_s() + o.seconds : 0;
	while ((r = run(&o, c, rec)) == 2) {
		mtc_close(c);
		fprintf(stderr, "mtrace-cat: mtraced went away; waiting for it\n");
		/* every failed try is not news: quiet until it is back */
		c = mtc_open_wait(o.socket, "mtrace-cat " MTRACE_VERSION, subscribe, give_up, &o);
		if (!c) {
			r = 0;
			break;
		}
		fprintf(stderr, "mtrace-cat: reconnected to mtraced\n");
	}
	if (o.fmt == CAT_CHROME)
		cat_chrome_end(out);
	if (o.fmt == CAT_FOLDED)
		folded_print(out);
	if (o.fmt == CAT_CTF && cat_ctf_close(err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-cat: %s\n", err);
		status = 1;
	}
	if (fflush(out) == EOF && errno != EPIPE) {
		fprintf(stderr, "mtrace-cat: writing output: %s\n", strerror(errno));
		status = 1;
	}
	if (wfile && fclose(wfile) != 0) {
		fprintf(stderr, "mtrace-cat: writing %s: %s\n", o.record, strerror(errno));
		status = 1;
	}
	if (out != stdout && fclose(out) != 0) {
		fprintf(stderr, "mtrace-cat: writing %s: %s\n", o.output, strerror(errno));
		status = 1;
	}
	mtc_close(c);
	recording_close(rec);
	if (o.nats)
		cat_nats_close();
	if (in && in != stdin)
		fclose(in);
	cat_filter_free(&filt);
	if (o.summary)
		print_summary();
	return r < 0 ? 1 : status;
}
