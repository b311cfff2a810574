/*
 * load-summary.c - the JSON summary mtrace-load prints of exactly what it wrote, which
 * tests compare with what the daemon and its clients counted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "utf8.h"

static void print_op_map(FILE *f, const uint64_t *per_op)
{
	bool first = true;
	static const char *const names[OPS] = {
		[MTRACE_OP_CREATES] = "creates",
		[MTRACE_OP_READ] = "read",
		[MTRACE_OP_FULFILLS] = "fulfills",
		[MTRACE_OP_FAILS] = "fails",
		[MTRACE_OP_BECOMES] = "becomes",
		[MTRACE_OP_LABEL] = "label",
		[MTRACE_OP_INCREASE] = "increase",
		[MTRACE_OP_SWITCH] = "switch",
		[MTRACE_OP_GC] = "gc",
		[MTRACE_OP_SIGNAL] = "signal",
		[MTRACE_OP_TRY_READ] = "try_read",
		[MTRACE_OP_COUNTER] = "counter",
		[MTRACE_OP_EVTCHN_SEND] = "evtchn_send",
		[MTRACE_OP_EVTCHN_RECV] = "evtchn_recv",
		[MTRACE_OP_RING_START] = "ring_start",
	};

	fputc('{', f);
	for (unsigned op = 0; op < OPS; op++) {
		if (per_op[op] == 0 || names[op] == NULL)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", names[op], per_op[op]);
		first = false;
	}
	fputc('}', f);
}

static void print_name_map(FILE *f, const char *prefix, const uint64_t *v, unsigned n)
{
	bool first = true;

	fputc('{', f);
	for (unsigned k = 0; k < n; k++) {
		if (v[k] == 0)
			continue;
		fprintf(f, "%s\"%s-%u\": %" PRIu64, first ? "" : ", ", prefix, k, v[k]);
		first = false;
	}
	fputc('}', f);
}

/* The labels a summary counts, keyed by the string a reader shows: what is not UTF-8
 * becomes '?' (as mtraced sends it), JSON-escaped. */
static void print_label_map(FILE *f, const struct opts *o, const uint64_t *v)
{
	bool first = true;

	if (!o->labels_from) {
		print_name_map(f, "label", v, MAX_NAMES);
		return;
	}
	fputc('{', f);
	for (unsigned k = 0; k < o->labels; k++) {
		if (v[k] == 0)
			continue;
		char *fixed = strdup(o->label_names[k]);
		if (!fixed)
			continue;
		utf8_fix(fixed);
		fputs(first ? "\"" : ", \"", f);
		for (const unsigned char *c = (const unsigned char *)fixed; *c; c++) {
			if (*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
				fprintf(f, "\\u%04x", *c);
			else
				fputc(*c, f);
		}
		fprintf(f, "\": %" PRIu64, v[k]);
		free(fixed);
		first = false;
	}
	fputc('}', f);
}

static const char *clock_str(uint32_t clock)
{
	static const char *const names[] = { "?", "monotonic", "xen", "realtime", "tsc" };
	return clock < sizeof(names) / sizeof(names[0]) ? names[clock] : "?";
}

void load_summary(FILE *f, const struct opts *o, struct mtrace_guest *g,
    const struct ring_job *jobs, double elapsed, bool reader_caught_up, unsigned reannounced)
{
	uint64_t total = 0, per_op[OPS] = { 0 }, labels[MAX_NAMES] = { 0 },
	         counters[MAX_NAMES] = { 0 };
	uint64_t garbage = 0, kicks = 0;

	for (unsigned i = 0; i < o->rings; i++) {
		total += jobs[i].events;
		garbage += jobs[i].garbage_writes;
		kicks += jobs[i].r->hdr->notifies;
		for (unsigned op = 0; op < OPS; op++)
			per_op[op] += jobs[i].per_op[op];
		for (unsigned k = 0; k < MAX_NAMES; k++) {
			labels[k] += jobs[i].labels[k];
			counters[k] += jobs[i].counters[k];
		}
	}
	fprintf(f,
	    "{\"program\": \"mtrace-load\", \"version\": \"%s\", \"domid\": %" PRIu32
	    ", \"event_channel\": %" PRIu32 ", \"seed\": %" PRIu64 ", \"rings\": %u, "
	    "\"pages\": %u, \"rate\": %" PRIu64 ", \"garbage\": \"%s\", "
	    "\"garbage_writes\": %" PRIu64 ", \"elapsed_s\": %.3f, \"kicks\": %" PRIu64
	    ", \"kicks_skipped\": %" PRIu64 ", \"reannounced\": %u, \"reader_caught_up\": %s,"
	    " \"clock\": \"%s\",\n"
	    " \"events\": %" PRIu64 ",\n \"per_op\": ",
	    MTRACE_VERSION, mtrace_guest_domid(g), mtrace_guest_port(g), o->seed, o->rings,
	    o->pages, o->rate, load_garbage_names[o->garbage], garbage, elapsed, kicks,
	    mtrace_guest_kicks_skipped(g), reannounced, reader_caught_up ? "true" : "false",
	    clock_str(mtrace_guest_clock(g)), total);
	print_op_map(f, per_op);
	fprintf(f, ",\n \"labels\": ");
	print_label_map(f, o, labels);
	fprintf(f, ",\n \"counters\": ");
	print_name_map(f, "counter", counters, MAX_NAMES);
	fprintf(f, ",\n \"per_ring\": [");
	for (unsigned i = 0; i < o->rings; i++) {
		fprintf(f,
		    "%s\n  {\"ring\": %u, \"events\": %" PRIu64 ", \"head\": %" PRIu64
		    ", \"per_op\": ",
		    i ? "," : "", i, jobs[i].events, jobs[i].r->head);
		print_op_map(f, jobs[i].per_op);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
}
