/*
 * fuzz-recording.c - libFuzzer target for the recording reader (client/lib/recording.c)
 * and what mtrace-cat -i does with each message it yields: the -i filters and the
 * text, JSON and Chrome printers (to /dev/null).  A recording is a file from anywhere:
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
#include "cat-filter.h"
#include "cat-format.h"
#include "fuzz.h"
#include "ops.h"
#include "recording.h"

static FILE *null_out;

static void print_part(const Mtrace__EventBatch *b, void *arg)
{
	uint64_t ts = b->base_ts;
	size_t si = 0;

	(void)arg;
	for (size_t i = 0; i < b->n_op; i++) {
		const char *str = NULL;

		ts += (uint64_t)b->ts_delta[i];
		if (mtrace_op_has_string(b->op[i]) && si < b->n_str_ref &&
		    b->str_ref[si++] < b->n_str)
			str = b->str[b->str_ref[si - 1]];
		cat_event(null_out, CAT_TEXT, b, i, ts, str);
		cat_event(null_out, CAT_JSON, b, i, ts, str);
		cat_event(null_out, CAT_CHROME, b, i, ts, str);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t ops[] = { MTRACE_OP_LABEL, MTRACE_OP_FAILS, MTRACE_OP_SWITCH };
	static const char *const labels[] = { "a" };
	struct cat_filter filt = { 0 };
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
	/* The first byte (after the header) picks filters, as -d/-o/-l would. */
	filt.all_ops = !(size > 16 && (data[16] & 1));
	for (size_t i = 0; i < 3 && !filt.all_ops; i++)
		filt.ops[ops[i] >> 3] |= (uint8_t)(1u << (ops[i] & 7));
	if (size > 16 && (data[16] & 2)) {
		filt.labels = labels;
		filt.n_labels = 1;
	}
	r = recording_open(f, "fuzz", err, sizeof(err));
	cat_chrome_begin(null_out);
	while (r && recording_next(r, &m, NULL, NULL, err, sizeof(err)) > 0) {
		if (m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS) {
			const Mtrace__EventBatch *b = m->events;
			size_t k = b->n_op;
			if (b->n_ts_delta == k && b->n_thread == k && b->n_arg == k &&
			    (b->n_type == k || b->n_type == 0))
				cat_filter_batch(&filt, b, print_part, NULL);
		} else if (m->msg_case == MTRACE__SERVER_MSG__MSG_STATS) {
			struct cat_stats_view v;
			if (cat_filter_stats(&filt, m->stats, &v) == 0) {
				Mtrace__ServerMsg vm = *m;
				vm.stats = &v.s;
				cat_other(null_out, CAT_JSON, &vm);
				cat_other(null_out, CAT_TEXT, &vm);
				cat_filter_stats_free(&v);
			}
		} else {
			if (m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_UP) {
				cat_names_note(m->domain_up->domid, m->domain_up->name);
				cat_chrome_domain_up(
				    null_out, m->domain_up->domid, m->domain_up->name);
			}
			if (m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN)
				cat_chrome_domain_down(null_out, m->domain_down->domid);
			cat_other(null_out, CAT_JSON, m);
			cat_other(null_out, CAT_TEXT, m);
		}
		recording_msg_free(m);
		if (++n > 100000)
			break;
	}
	cat_chrome_end(null_out);
	cat_filter_free(&filt);
	recording_close(r);
	fclose(f);
	return 0;
}
