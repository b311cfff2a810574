/*
 * trace.h - a 2014 mirage-profile sexp trace (brief/mirage-profile.md §5.3) loaded into
 * memory and mapped onto the mtrace vocabulary (proto/mtrace-ring.h).
 *
 *   ((time 1413637708.834171)(op(Creates 0 1 Task)))
 *
 * Creates a b T -> CREATES (T by name; the Oct-2014 two-argument form gets Unknown),
 * Reads a b -> READ, Resolves a b () -> FULFILLS, Resolves a b (exn) -> FAILS exn,
 * Becomes a b -> BECOMES, Label a s -> LABEL, Switch a -> SWITCH, Gc secs -> GC (ns),
 * Increases a s n -> INCREASE.  Lines that do not parse are counted, not fatal.
 */
#ifndef MTRACE_REPLAY_TRACE_H
#define MTRACE_REPLAY_TRACE_H

#include <stdint.h>
#include <stdio.h>

#define TRACE_LINE_MAX 65536 /* longer lines are bad lines */

struct trace_ev {
	uint64_t t_ns;    /* recorded time, ns (Unix epoch for the 2014 traces) */
	int64_t thread;   /* -1: idle / none */
	int64_t arg;      /* other thread, amount or GC duration in ns */
	uint32_t str_off; /* into trace.pool; valid when str_len or op carries a string */
	uint16_t str_len;
	uint8_t op;   /* enum mtrace_op */
	uint8_t type; /* thread type for CREATES */
};

struct trace {
	struct trace_ev *ev;
	size_t n, cap;
	char *pool; /* strings, each NUL-terminated */
	size_t pool_len, pool_cap;
	uint64_t lines; /* non-blank lines read */
	uint64_t bad;   /* lines rejected */
	uint64_t per_op[256];
	int64_t max_thread; /* largest thread id seen (-1 if none) */
};

/*
 * Load a whole trace.  Each bad line is reported on diag as "name:line: reason" (at
 * most max_report of them, then a count).  Returns 0, or -1 with errno set when the
 * file cannot be read or memory runs out (bad lines alone never fail the load).
 */
int trace_load(struct trace *t, FILE *in, const char *name, FILE *diag, unsigned max_report);
void trace_free(struct trace *t);

static inline const char *trace_str(const struct trace *t, const struct trace_ev *e)
{
	return t->pool + e->str_off;
}

/* Parse one line into *ev (strings appended to t's pool).  0, or -1 with a reason. */
int trace_parse_line(
    struct trace *t, const char *line, size_t len, struct trace_ev *ev, char *err, size_t errlen);

#endif
