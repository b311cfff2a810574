/*
 * trace.c - load a 2014 sexp trace and map it onto the mtrace vocabulary (see trace.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mtrace-ring.h"
#include "ops.h"
#include "sexp.h"
#include "trace.h"

static int bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return -1;
}

static bool atom_is(const struct sexp *s, const char *word)
{
	return s && !s->is_list && s->len == strlen(word) && memcmp(s->atom, word, s->len) == 0;
}

static bool parse_i64(const struct sexp *s, int64_t *out)
{
	if (!s || s->is_list || s->quoted || s->len == 0)
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s->atom, &end, 10);
	if (errno || *end || end != s->atom + s->len)
		return false;
	*out = v;
	return true;
}

/*
 * Seconds as printed by the 2014 producer ("%.15f" or Sexplib's float) into ns.
 * Digits are taken exactly rather than through a double, which would blur the
 * microseconds of an epoch time; exponent forms fall back to strtod.
 */
static bool parse_seconds(const struct sexp *s, uint64_t *ns)
{
	if (!s || s->is_list || s->len == 0 || s->len > 64)
		return false;
	const char *p = s->atom;
	if (strpbrk(p, "eE")) {
		char *end;
		errno = 0;
		double d = strtod(p, &end);
		if (errno || *end || !(d >= 0) || d > 1.8e10)
			return false;
		*ns = (uint64_t)(d * 1e9);
		return true;
	}
	uint64_t sec = 0, frac = 0;
	unsigned fdigits = 0;
	bool any = false;
	for (; *p >= '0' && *p <= '9'; p++, any = true) {
		if (sec > 18000000000ull) /* past year 2500: not a trace time */
			return false;
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, any = true)
			if (fdigits < 9) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				fdigits++;
			}
	}
	if (*p || !any)
		return false;
	while (fdigits++ < 9)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return true;
}

static bool parse_seconds_float(const struct sexp *s, int64_t *ns)
{
	uint64_t v;
	if (!parse_seconds(s, &v) || v > INT64_MAX)
		return false;
	*ns = (int64_t)v;
	return true;
}

static int add_string(
    struct trace *t, const struct sexp *s, struct trace_ev *ev, char *err, size_t errlen)
{
	if (!s || s->is_list)
		return bad(err, errlen, "expected a string");
	if (s->len > MTRACE_STR_MAX)
		return bad(err, errlen, "string too long for a ring record");
	if (memchr(s->atom, '\0', s->len))
		return bad(err, errlen, "string contains NUL");
	if (t->pool_len + s->len + 1 > UINT32_MAX)
		return bad(err, errlen, "trace strings exceed 4 GiB");
	if (t->pool_len + s->len + 1 > t->pool_cap) {
		size_t cap = t->pool_cap ? t->pool_cap * 2 : 65536;
		while (cap < t->pool_len + s->len + 1)
			cap *= 2;
		char *p = realloc(t->pool, cap);
		if (!p)
			return bad(err, errlen, "out of memory");
		t->pool = p;
		t->pool_cap = cap;
	}
	memcpy(t->pool + t->pool_len, s->atom, s->len + 1);
	ev->str_off = (uint32_t)t->pool_len;
	ev->str_len = (uint16_t)s->len;
	t->pool_len += s->len + 1;
	return 0;
}

static uint8_t thread_type(const struct sexp *s)
{
	if (s && !s->is_list)
		for (unsigned i = 0; i < MTRACE_TT_COUNT; i++)
			if (strcasecmp(s->atom, mtrace_thread_type_name(i)) == 0)
				return (uint8_t)i;
	return MTRACE_TT_UNKNOWN;
}

/* The (Op args...) list.  Argument counts are exact so that a garbled line is not
 * half-understood. */
static int map_op(
    struct trace *t, const struct sexp *op, struct trace_ev *ev, char *err, size_t errlen)
{
	const struct sexp *name = sexp_nth(op, 0);
	unsigned argc = sexp_list_len(op) - 1;
	const struct sexp *a1 = sexp_nth(op, 1), *a2 = sexp_nth(op, 2), *a3 = sexp_nth(op, 3);
	if (!name || name->is_list)
		return bad(err, errlen, "op has no name");
	ev->thread = -1;
	ev->arg = 0;
	if (atom_is(name, "Creates")) {
		if ((argc != 3 && argc != 2) || !parse_i64(a1, &ev->thread) ||
		    !parse_i64(a2, &ev->arg))
			return bad(err, errlen, "Creates wants: parent child [type]");
		ev->op = MTRACE_OP_CREATES;
		ev->type = argc == 3 ? thread_type(a3) : MTRACE_TT_UNKNOWN;
	} else if (atom_is(name, "Reads")) {
		if (argc != 2 || !parse_i64(a1, &ev->thread) || !parse_i64(a2, &ev->arg))
			return bad(err, errlen, "Reads wants: reader source");
		ev->op = MTRACE_OP_READ;
	} else if (atom_is(name, "Resolves")) {
		if (argc != 3 || !parse_i64(a1, &ev->thread) || !parse_i64(a2, &ev->arg) ||
		    !a3->is_list || sexp_list_len(a3) > 1)
			return bad(err, errlen, "Resolves wants: resolver resolvee (exn option)");
		if (sexp_list_len(a3) == 0) {
			ev->op = MTRACE_OP_FULFILLS;
		} else {
			ev->op = MTRACE_OP_FAILS;
			if (add_string(t, sexp_nth(a3, 0), ev, err, errlen) < 0)
				return -1;
		}
	} else if (atom_is(name, "Becomes")) {
		if (argc != 2 || !parse_i64(a1, &ev->thread) || !parse_i64(a2, &ev->arg))
			return bad(err, errlen, "Becomes wants: thread other");
		ev->op = MTRACE_OP_BECOMES;
	} else if (atom_is(name, "Label")) {
		if (argc != 2 || !parse_i64(a1, &ev->thread))
			return bad(err, errlen, "Label wants: thread label");
		ev->op = MTRACE_OP_LABEL;
		if (add_string(t, a2, ev, err, errlen) < 0)
			return -1;
	} else if (atom_is(name, "Switch")) {
		if (argc != 1 || !parse_i64(a1, &ev->thread))
			return bad(err, errlen, "Switch wants: thread");
		ev->op = MTRACE_OP_SWITCH;
	} else if (atom_is(name, "Gc")) {
		if (argc != 1 || !parse_seconds_float(a1, &ev->arg))
			return bad(err, errlen, "Gc wants: duration in seconds");
		ev->op = MTRACE_OP_GC;
	} else if (atom_is(name, "Increases")) {
		if (argc != 3 || !parse_i64(a1, &ev->thread) || !parse_i64(a3, &ev->arg))
			return bad(err, errlen, "Increases wants: thread counter amount");
		ev->op = MTRACE_OP_INCREASE;
		if (add_string(t, a2, ev, err, errlen) < 0)
			return -1;
	} else {
		snprintf(err, errlen, "unknown op %.40s", name->atom);
		return -1;
	}
	if (ev->thread < -1 ||
	    (ev->op != MTRACE_OP_GC && ev->op != MTRACE_OP_INCREASE && ev->op != MTRACE_OP_LABEL &&
	        ev->op != MTRACE_OP_SWITCH && ev->arg < -1))
		return bad(err, errlen, "negative thread id");
	return 0;
}

int trace_parse_line(
    struct trace *t, const char *line, size_t len, struct trace_ev *ev, char *err, size_t errlen)
{
	static struct sexp_doc doc; /* 20 KiB: keep it off the stack; one loader at a time */
	struct sexp *root = sexp_parse(&doc, line, len, err, errlen);
	if (!root)
		return -1;
	memset(ev, 0, sizeof(*ev));
	const struct sexp *time = NULL, *op = NULL;
	if (!root->is_list)
		return bad(err, errlen, "not a record");
	/* A record: ((time T)(op (...))), fields in any order, unknown fields ignored. */
	for (const struct sexp *f = root->child; f; f = f->next) {
		if (sexp_list_len(f) != 2)
			return bad(err, errlen, "record field is not (name value)");
		const struct sexp *key = sexp_nth(f, 0);
		if (atom_is(key, "time"))
			time = sexp_nth(f, 1);
		else if (atom_is(key, "op"))
			op = sexp_nth(f, 1);
	}
	if (!time || !op)
		return bad(err, errlen, "record lacks time or op");
	if (!parse_seconds(time, &ev->t_ns))
		return bad(err, errlen, "bad time");
	if (!op->is_list || sexp_list_len(op) == 0)
		return bad(err, errlen, "op is not (Name args...)");
	size_t pool_mark = t->pool_len;
	if (map_op(t, op, ev, err, errlen) < 0) {
		t->pool_len = pool_mark;
		return -1;
	}
	return 0;
}

static int push(struct trace *t, const struct trace_ev *ev)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct trace_ev *p = realloc(t->ev, cap * sizeof(*p));
		if (!p)
			return -1;
		t->ev = p;
		t->cap = cap;
	}
	t->ev[t->n++] = *ev;
	return 0;
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

/*
 * One line into buf, its '\n' kept: at most TRACE_LINE_MAX bytes before it (the rest of
 * a longer line is read and dropped, *too_long); its length, or -1 at the end of input.
 * getc, not fgets: a line may hold NUL bytes, and fgets' caller cannot tell a NUL from
 * the line's end (a binary line starting with one read as blank, and was skipped unsaid).
 */
static long read_line(FILE *in, char *buf, bool *too_long, bool *nul)
{
	size_t len = 0;
	int c;

	*too_long = *nul = false;
	while ((c = getc_unlocked(in)) != EOF) {
		if (c == '\n')
			break;
		if (c == 0)
			*nul = true;
		if (len < TRACE_LINE_MAX)
			buf[len++] = (char)c;
		else
			*too_long = true;
	}
	if (c == EOF && len == 0 && !*too_long)
		return -1;
	if (c == '\n')
		buf[len++] = '\n';
	buf[len] = 0;
	return (long)len;
}

int trace_load(struct trace *t, FILE *in, const char *name, FILE *diag, unsigned max_report)
{
	memset(t, 0, sizeof(*t));
	t->max_thread = -1;
	char *buf = malloc(TRACE_LINE_MAX + 2);
	if (!buf)
		return -1;
	uint64_t lineno = 0;
	char err[160];
	bool too_long, nul;
	long n;
	/* A fixed buffer bounds memory whatever the file holds. */
	while ((n = read_line(in, buf, &too_long, &nul)) >= 0) {
		size_t len = (size_t)n;
		lineno++;
		if (!too_long && !nul && blank(buf, len))
			continue;
		t->lines++;
		struct trace_ev ev;
		int rc;
		if (too_long) {
			snprintf(err, sizeof(err), "line longer than %u bytes", TRACE_LINE_MAX);
			rc = -1;
		} else if (nul) {
			snprintf(err, sizeof(err), "a NUL byte in the line");
			rc = -1;
		} else {
			rc = trace_parse_line(t, buf, len, &ev, err, sizeof(err));
		}
		if (rc < 0) {
			if (diag && t->bad < max_report)
				fprintf(diag, "%s:%" PRIu64 ": bad event: %s\n", name, lineno, err);
			t->bad++;
			continue;
		}
		if (push(t, &ev) < 0) {
			free(buf);
			errno = ENOMEM;
			return -1;
		}
		t->per_op[ev.op]++;
		if (ev.thread > t->max_thread)
			t->max_thread = ev.thread;
		if (ev.op != MTRACE_OP_GC && ev.op != MTRACE_OP_INCREASE && ev.arg > t->max_thread)
			t->max_thread = ev.arg;
	}
	int rd_err = ferror(in);
	free(buf);
	if (rd_err) {
		errno = EIO;
		return -1;
	}
	if (diag && t->bad > max_report)
		fprintf(
		    diag, "%s: %" PRIu64 " more bad events not shown\n", name, t->bad - max_report);
	return 0;
}

void trace_free(struct trace *t)
{
	free(t->ev);
	free(t->pool);
	memset(t, 0, sizeof(*t));
}
