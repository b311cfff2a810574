/*
 * ops.h - the op vocabulary of a trace record (proto/mtrace-ring.h's MTRACE_OP_*),
 * described once: its name, whether it carries a string and what that string and
 * the argument mean.  The decoder (ring-reader.c), the stream server, mtrace-cat's
 * text form and the Python tests (common/mtrace_ops.py parses ops.c) all read it.
 */
#ifndef MTRACE_OPS_H
#define MTRACE_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtrace-ring.h"

/* What the 64-bit argument is. */
enum mtrace_arg_kind {
	MTRACE_ARG_UNUSED, /* 0 by the vocabulary (shown when it is not) */
	MTRACE_ARG_THREAD, /* another thread's id */
	MTRACE_ARG_INT,    /* a signed counter amount or value */
	MTRACE_ARG_NS,     /* a duration in ns */
	MTRACE_ARG_PORT,   /* an event-channel port */
	MTRACE_ARG_RING,   /* a ring index */
	MTRACE_ARG_SITE,   /* a code address, site id or load bias (shown in hex) */
};

struct mtrace_op_info {
	const char *name; /* "creates"; NULL: not an op of the vocabulary */
	const char *arg;  /* the argument's name in text output ("child"), NULL if unused */
	const char *str;  /* the string's name ("label"), NULL: the op carries none */
	enum mtrace_arg_kind arg_kind;
	bool str_first; /* text output names the string before the argument */
	bool event;     /* a decoded event (pad is a filler, not an event) */
};

/* Indexed by op (ops are a byte): read per record by the decoder, hence inline. */
extern const struct mtrace_op_info mtrace_ops[256];

/* The description of op (never NULL; name NULL when op is unknown). */
const struct mtrace_op_info *mtrace_op_info(unsigned op);

static inline bool mtrace_op_has_string(unsigned op)
{
	return op < 256 && mtrace_ops[op].str != NULL;
}

/*
 * The same, one byte an op, for the loops that look at every record or event (the
 * decoder, the stream's columns): mtrace_ops[] has wide rows.  Filled from
 * mtrace_ops[] before main.
 */
enum {
	MTRACE_OPF_STR = 1,   /* carries a NUL-terminated string after the fixed part */
	MTRACE_OPF_EVENT = 2, /* a decoded event of the vocabulary */
};
extern uint8_t mtrace_op_flags[256];

/* An event op of the vocabulary. */
static inline bool mtrace_op_known(unsigned op)
{
	return op < 256 && mtrace_ops[op].event;
}

const char *mtrace_op_name(unsigned op);            /* "creates", ..., NULL if unknown */
const char *mtrace_thread_type_name(unsigned type); /* "Task", ..., "Unknown" */

#endif
