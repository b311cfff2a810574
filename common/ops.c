/*
 * ops.c - the op vocabulary, one line per op (ops.h).  common/mtrace_ops.py reads
 * this table for the Python tests: keep one op per line, in this form.
 */
#include "ops.h"

/* clang-format off */
const struct mtrace_op_info mtrace_ops[256] = {
	/* op                        name           arg            str        arg kind           str first event */
	[MTRACE_OP_CREATES]      = { "creates",     "child",       NULL,      MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_READ]         = { "read",        "other",       NULL,      MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_FULFILLS]     = { "fulfills",    "other",       NULL,      MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_FAILS]        = { "fails",       "other",       "exn",     MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_BECOMES]      = { "becomes",     "other",       NULL,      MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_LABEL]        = { "label",       NULL,          "label",   MTRACE_ARG_UNUSED, true,  true },
	[MTRACE_OP_INCREASE]     = { "increase",    "amount",      "counter", MTRACE_ARG_INT,    true,  true },
	[MTRACE_OP_SWITCH]       = { "switch",      NULL,          NULL,      MTRACE_ARG_UNUSED, false, true },
	[MTRACE_OP_GC]           = { "gc",          "duration_ns", NULL,      MTRACE_ARG_NS,     false, true },
	[MTRACE_OP_SIGNAL]       = { "signal",      "other",       NULL,      MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_TRY_READ]     = { "try_read",    "other",       NULL,      MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_COUNTER]      = { "counter",     "value",       "counter", MTRACE_ARG_INT,    true,  true },
	[MTRACE_OP_READ_LATER]   = { "read_later",  "other",       NULL,      MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_SIGNAL_NEW]   = { "signal_new",  "other",       NULL,      MTRACE_ARG_THREAD, false, true },
	[MTRACE_OP_EVTCHN_SEND]  = { "evtchn_send", "port",        NULL,      MTRACE_ARG_PORT,   false, true },
	[MTRACE_OP_EVTCHN_RECV]  = { "evtchn_recv", "port",        NULL,      MTRACE_ARG_PORT,   false, true },
	[MTRACE_OP_RING_START]   = { "ring_start",  "ring_index",  "name",    MTRACE_ARG_RING,   false, true },
	[MTRACE_OP_SITE]         = { "site",        "site",        NULL,      MTRACE_ARG_SITE,   false, true },
	[MTRACE_OP_SITE_NAME]    = { "site_name",   "site",        "name",    MTRACE_ARG_SITE,   false, true },
	[MTRACE_OP_MODULE]       = { "module",      "bias",        "module",  MTRACE_ARG_SITE,   false, true },
	[MTRACE_OP_PAD]          = { "pad",         "arg",           NULL,      MTRACE_ARG_UNUSED, false, false },
};
/* clang-format on */

uint8_t mtrace_op_flags[256];

static void __attribute__((constructor)) op_flags_init(void)
{
	for (unsigned op = 0; op < 256; op++)
		mtrace_op_flags[op] = (uint8_t)((mtrace_ops[op].str ? MTRACE_OPF_STR : 0) |
		    (mtrace_ops[op].event ? MTRACE_OPF_EVENT : 0));
}

const struct mtrace_op_info *mtrace_op_info(unsigned op)
{
	static const struct mtrace_op_info unknown;

	return op < 256 ? &mtrace_ops[op] : &unknown;
}

const char *mtrace_op_name(unsigned op)
{
	return mtrace_op_info(op)->name;
}

static const char *const tt_names[MTRACE_TT_COUNT] = {
	"Wait",
	"Task",
	"Bind",
	"Try",
	"Choose",
	"Pick",
	"Join",
	"Map",
	"Condition",
	"On_success",
	"On_failure",
	"On_termination",
	"On_any",
	"Ignore_result",
	"Async",
	"Promise",
	"Semaphore",
	"Switch",
	"Stream",
	"Mutex",
};

const char *mtrace_thread_type_name(unsigned type)
{
	return type < MTRACE_TT_COUNT ? tt_names[type] : "Unknown";
}
