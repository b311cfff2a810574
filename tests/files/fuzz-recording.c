/*
 * fuzz-recording.c - libFuzzer target for the recording reader (client/lib/recording.c)
 * and what mtrace-cat -i does with each message it yields: the selection of stored
 * records (client/lib/select.c), the host timeline (client/lib/timeline.c: maps, links,
 * pairs) and the text, JSON and Chrome printers (to /dev/null).  A recording is a file from anywhere:
 * nothing in it may crash the reader, make it read past its buffers or loop.
 *
 * Built with -fsanitize=fuzzer under clang (meson -Dfuzzer=enabled); for other builds
 * tests/lib/fuzz-main.c supplies main() and replays the corpus plus mutations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat-chrome.h"
#include "cat-format.h"
#include "fuzz.h"
#include "ops.h"
#include "recording.h"
#include "select.h"
#include "timeline.h"

static FILE *null_out;
static struct tl *tl;

static void print_part(const Mtrace__EventBatch *b, void *arg)
{
	uint64_t ts = b->base_ts;
	size_t si = 0;
	const struct tl_clock *tc = tl_clock(tl, "", b->domid, b->clock);

	(void)arg;
	for (size_t i = 0; i < b->n_op; i++) {
		const char *str = NULL;
		struct tl_time at;
		uint64_t written = 0;
		uint32_t track;

		ts += (uint64_t)b->ts_delta[i];
		tl_map(tc, ts, &at);
		if (mtrace_op_has_string(b->op[i]) && si < b->n_str_ref &&
		    b->str_ref[si++] < b->n_str)
			str = b->str[b->str_ref[si - 1]];
		cat_event(null_out, CAT_TEXT, b, i, ts, &at, str);
		cat_event(null_out, CAT_JSON, b, i, ts, &at, str);
		track = cat_chrome_event(null_out, b, i, &at, str, &written);
		if (b->op[i] == MTRACE_OP_EVTCHN_SEND || b->op[i] == MTRACE_OP_EVTCHN_RECV) {
			struct tl_end e = { b->domid, (uint32_t)b->arg[i], b->ring, ts, at, track,
				written, b->thread[i] };
			struct tl_pair p;
			if (tl_evtchn(tl, "", b->op[i] == MTRACE_OP_EVTCHN_SEND, &e, &p)) {
				cat_pair(null_out, CAT_JSON, &p);
				cat_pair(null_out, CAT_TEXT, &p);
				cat_chrome_pair(null_out, &p);
			}
		}
	}
}

/* What mtrace-cat does with a selected message (columns checked as it checks them). */
static void print_msg(Mtrace__ServerMsg *m, enum mtc_select_how how, void *arg)
{
	(void)how;
	(void)arg;
	tl_msg(tl, "", m);
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS) {
		const Mtrace__EventBatch *b = m->events;
		size_t k = b->n_op;
		if (b->n_ts_delta == k && b->n_thread == k && b->n_arg == k &&
		    (b->n_type == k || b->n_type == 0))
			print_part(b, NULL);
		return;
	}
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_UP) {
		cat_names_note(m->domain_up->domid, m->domain_up->name);
		cat_chrome_domain_up(null_out, m->domain_up->domid, m->domain_up->name);
	}
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN)
		cat_chrome_domain_down(null_out, m->domain_down->domid);
	cat_other(null_out, CAT_JSON, m);
	cat_other(null_out, CAT_TEXT, m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint32_t ops[] = { MTRACE_OP_LABEL, MTRACE_OP_FAILS, MTRACE_OP_SWITCH };
	static char *labels[] = { "a" };
	static char *names[] = { "g1" };
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	struct mtc_select *sel;
	struct recording *r;
	Mtrace__ServerMsg *m;
	char err[512];
	FILE *f;
	int n = 0;

	if (!null_out && !(null_out = fopen("/dev/null", "w")))
		abort();
	f = fmemopen((void *)data, size ? size : 1, "rb");
	if (!f)
		return 0;
	if (!size)
		fgetc(f); /* fmemopen needs a non-empty buffer: read it past */
	/* The first byte (after the header) picks filters, as -D/-o/--label would. */
	sub.events = true;
	if (size > 16 && (data[16] & 1)) {
		sub.ops = ops;
		sub.n_ops = 3;
	}
	if (size > 16 && (data[16] & 2)) {
		sub.labels = labels;
		sub.n_labels = 1;
	}
	if (size > 16 && (data[16] & 4)) {
		sub.domain_names = names;
		sub.n_domain_names = 1;
	}
	if (!(sel = mtc_select_new(&sub)))
		abort();
	if (!(tl = tl_new()))
		abort();
	r = recording_open(f, "fuzz", err, sizeof(err));
	cat_chrome_begin(null_out);
	while (r && recording_next(r, &m, NULL, NULL, err, sizeof(err)) > 0) {
		mtc_select_msg(sel, "", m, print_msg, NULL);
		recording_msg_free(m);
		if (++n > 100000)
			break;
	}
	cat_chrome_end(null_out, tl);
	tl_free(tl);
	mtc_select_free(sel);
	recording_close(r);
	fclose(f);
	return 0;
}
