/*
 * cat-ctf-tsdl.c - the text of mtrace-cat -f ctf's metadata (TSDL, CTF 1.8): the
 * mirage-profile layout with the version babeltrace2 requires, a clock, the event
 * classes of every op and of the vCPU records, and the escaping of what goes into its
 * string literals.  cat-ctf.c writes the streams and puts these pieces together.
 */
#include <stdbool.h>
#include <stdio.h>

#include "cat-ctf.h"
#include "ops.h"
#include "utf8.h"

/*
 * A TSDL string literal's contents.  babeltrace2 prints some environment strings
 * (the hostname) as they are, so control characters (C0, DEL, C1) and bytes that
 * are not UTF-8 become '?'; the quote and the backslash are escaped, other non-ASCII
 * characters written as octal escapes of their UTF-8 bytes.
 */
void ctf_tsdl_escape(char *out, size_t len, const char *in)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t o = 0;

	while (*s && o + 17 < len) {
		size_t n = *s >= 0x80 ? utf8_len(s) : 1;

		if (n == 0 || *s < 0x20 || *s == 0x7f || (*s == 0xc2 && s[1] < 0xa0)) {
			out[o++] = '?';
			s += n ? n : 1;
		} else if (*s == '"' || *s == '\\') {
			out[o++] = '\\';
			out[o++] = (char)*s++;
		} else if (*s >= 0x80) {
			for (; n > 0; n--)
				o += (size_t)snprintf(out + o, len - o, "\\%03o", *s++);
		} else {
			out[o++] = (char)*s++;
		}
	}
	out[o] = 0;
}

static const char metadata_vcpu[] =
    "enum vcpu_state : uint8_t { running = 0, runnable = 1, blocked = 2, offline = 3, "
    "mixed = 4 };\n\n"
    "event {\n\tname = vcpu_interval;\n\tid = 250;\n\tfields := struct {\n"
    "\t\tuint64_t vcpu;\n\t\tenum vcpu_state state;\n\t\tuint64_t dur_ns;\n"
    "\t\tint64_t pcpu;\n\t\tuint64_t running_ns;\n\t\tuint64_t runnable_ns;\n"
    "\t\tuint64_t blocked_ns;\n\t};\n};\n\n"
    "event {\n\tname = vcpu_wake;\n\tid = 251;\n\tfields := struct {\n"
    "\t\tuint64_t vcpu;\n\t};\n};\n\n";

static const char metadata_head[] =
    "/* CTF 1.8 */\n"
    "/* mirage-profile's trace layout (mirage/mirage-profile metadata), with the\n"
    " * version babeltrace2 requires, a clock and mtrace's extra event types. */\n"
    "typealias integer { size = 8; align = 8; signed = false; base = 10; } := uint8_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; base = 10; } := uint16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; base = hex; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; base = 10; } := uint64_t;\n"
    "typealias integer { size = 64; align = 8; signed = true; base = 10; } := int64_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; base = 10;\n"
    "\tmap = clock.host.value; } := uint64_clock_t;\n"
    "\n"
    "trace {\n"
    "\tmajor = 1;\n"
    "\tminor = 8;\n"
    "\tuuid = \"05883b8d-521a-487b-b397-456ab150680c\";\n"
    "\tbyte_order = le;\n"
    "\tpacket.header := struct {\n"
    "\t\tuint32_t magic;\n"
    "\t\tuint8_t  uuid[16];\n"
    "\t};\n"
    "};\n"
    "\n";

static const char metadata_types[] =
    "enum thread_type : uint8_t {\n"
    "\tWait = 0, Task = 1, Bind = 2, Try = 3, Choose = 4, Pick = 5, Join = 6, Map = 7,\n"
    "\tCondition = 8, On_success = 9, On_failure = 10, On_termination = 11, On_any = 12,\n"
    "\tIgnore_result = 13, Async = 14, Promise = 15, Semaphore = 16, Switch = 17,\n"
    "\tStream = 18, Mutex = 19, Unknown = 99\n"
    "};\n"
    "\n";

static const char metadata_stream[] =
    "/* thread ids are signed here (mirage-profile: unsigned): -1 is \"no thread\" */\n"
    "struct thread_context {\n"
    "\tint64_t thread;\n"
    "} align(8);\n"
    "\n"
    "stream {\n"
    "\tpacket.context := struct {\n"
    "\t\tuint32_t packet_size;\n"
    "\t\tuint16_t stream_packet_count;\n"
    "\t\tuint32_t content_size;\n"
    "\t};\n"
    "\tevent.header := struct event_header;\n"
    "};\n"
    "\n";

/* mirage-profile's names for the other thread of an event (its metadata's fields). */
static const char *field_name(unsigned op)
{
	switch (op) {
	case MTRACE_OP_READ:
	case MTRACE_OP_SIGNAL:
	case MTRACE_OP_TRY_READ:
	case MTRACE_OP_READ_LATER:
	case MTRACE_OP_SIGNAL_NEW:
		return "source";
	case MTRACE_OP_FULFILLS:
	case MTRACE_OP_FAILS:
		return "resolvee";
	case MTRACE_OP_BECOMES:
		return "sleeper";
	default:
		return mtrace_ops[op].arg; /* "child", "amount", "duration_ns", "port", ... */
	}
}

/* An event class for each op of the table, in the layout cat_ctf_event writes. */
void ctf_tsdl_events(FILE *f)
{
	unsigned op;

	fputs("struct event_header {\n\tuint64_clock_t timestamp;\n\tenum : uint8_t {", f);
	for (op = 0; op < 256; op++)
		if (mtrace_op_known(op))
			fprintf(f, "%s\n\t\t%s = %u", op ? "," : "", mtrace_ops[op].name, op);
	fprintf(
	    f, ",\n\t\tvcpu_interval = %u,\n\t\tvcpu_wake = %u", EV_VCPU_INTERVAL, EV_VCPU_WAKE);
	fputs("\n\t} id;\n} align(8);\n\n", f);
	fputs(metadata_stream, f);
	fputs(metadata_vcpu, f);
	for (op = 0; op < 256; op++) {
		const struct mtrace_op_info *in = &mtrace_ops[op];
		bool wide = in->arg_kind == MTRACE_ARG_NS || in->arg_kind == MTRACE_ARG_PORT ||
		    in->arg_kind == MTRACE_ARG_RING;

		if (!mtrace_op_known(op))
			continue;
		fprintf(f, "event {\n\tname = %s;\n\tid = %u;\n", in->name, op);
		if (op != MTRACE_OP_GC)
			fputs("\tcontext := struct thread_context;\n", f);
		if (in->arg || in->str) {
			fputs("\tfields := struct {\n", f);
			if (in->arg)
				fprintf(f, "\t\t%s %s;\n", wide ? "uint64_t" : "int64_t",
				    field_name(op));
			if (op == MTRACE_OP_CREATES)
				fputs("\t\tenum thread_type thread_type;\n", f);
			if (in->str)
				fprintf(f, "\t\tstring %s;\n", in->str);
			fputs("\t};\n", f);
		}
		fputs("};\n\n", f);
	}
}

void ctf_tsdl_head(FILE *f)
{
	fputs(metadata_head, f);
}

void ctf_tsdl_types(FILE *f)
{
	fputs(metadata_types, f);
}

const char *ctf_clock_name(uint32_t c)
{
	switch (c) {
	case MTRACE_CLOCK_MONOTONIC:
		return "monotonic";
	case MTRACE_CLOCK_XEN:
		return "xen";
	case MTRACE_CLOCK_REALTIME:
		return "realtime";
	case MTRACE_CLOCK_TSC:
		return "tsc";
	default:
		return "unknown";
	}
}
