/*
 * sexp.c - bounded S-expression reader (see sexp.h).
 */
#include <stdio.h>
#include <string.h>

#include "sexp.h"

struct parser {
	struct sexp_doc *doc;
	const char *start;
	const char *p;
	const char *end;
	char *err;
	size_t errlen;
};

static void *fail(struct parser *ps, const char *why)
{
	/* Column helps whoever has to fix the trace file. */
	snprintf(ps->err, ps->errlen, "%s at column %zu", why, (size_t)(ps->p - ps->start) + 1);
	return NULL;
}

static struct sexp *new_node(struct parser *ps)
{
	if (ps->doc->used >= SEXP_MAX_NODES)
		return fail(ps, "too many elements");
	struct sexp *n = &ps->doc->nodes[ps->doc->used++];
	memset(n, 0, sizeof(*n));
	return n;
}

static bool put(struct parser *ps, char c)
{
	if (ps->doc->arena_used >= SEXP_ARENA) {
		fail(ps, "atoms too long");
		return false;
	}
	ps->doc->arena[ps->doc->arena_used++] = c;
	return true;
}

static void skip_blank(struct parser *ps)
{
	while (ps->p < ps->end) {
		char c = *ps->p;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
			ps->p++;
		} else if (c == ';') {
			/* A comment runs to the end of the line, i.e. of our input. */
			ps->p = ps->end;
		} else {
			break;
		}
	}
}

static bool is_atom_char(char c)
{
	return !(c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '(' ||
	    c == ')' || c == '"' || c == ';');
}

static int digit_val(char c, int base)
{
	int v;
	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'f')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		v = c - 'A' + 10;
	else
		return -1;
	return v < base ? v : -1;
}

/* \DDD (decimal), \xHH, \oOOO: OCaml's numeric escapes, value must fit a byte. */
static bool numeric_escape(struct parser *ps, int base, int digits)
{
	int v = 0;
	for (int i = 0; i < digits; i++) {
		if (ps->p >= ps->end)
			return fail(ps, "truncated escape"), false;
		int d = digit_val(*ps->p, base);
		if (d < 0)
			return fail(ps, "bad numeric escape"), false;
		v = v * base + d;
		ps->p++;
	}
	if (v > 255)
		return fail(ps, "escape out of range"), false;
	return put(ps, (char)v);
}

static bool quoted_body(struct parser *ps)
{
	ps->p++; /* opening quote */
	while (ps->p < ps->end) {
		char c = *ps->p++;
		if (c == '"')
			return put(ps, '\0');
		if (c != '\\') {
			if (!put(ps, c))
				return false;
			continue;
		}
		if (ps->p >= ps->end)
			break;
		char e = *ps->p++;
		switch (e) {
		case 'n':
			if (!put(ps, '\n'))
				return false;
			break;
		case 't':
			if (!put(ps, '\t'))
				return false;
			break;
		case 'r':
			if (!put(ps, '\r'))
				return false;
			break;
		case 'b':
			if (!put(ps, '\b'))
				return false;
			break;
		case '\\':
		case '"':
		case '\'':
		case ' ':
			if (!put(ps, e))
				return false;
			break;
		case 'x':
			if (!numeric_escape(ps, 16, 2))
				return false;
			break;
		case 'o':
			if (!numeric_escape(ps, 8, 3))
				return false;
			break;
		case '\n':
			/* Line continuation: the newline and the next line's indent vanish. */
			while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
				ps->p++;
			break;
		default:
			if (e >= '0' && e <= '9') {
				ps->p--;
				if (!numeric_escape(ps, 10, 3))
					return false;
			} else if (!put(ps, '\\') || !put(ps, e)) {
				/* Sexplib keeps an unknown escape as written. */
				return false;
			}
		}
	}
	fail(ps, "unterminated string");
	return false;
}

static struct sexp *parse_any(struct parser *ps, unsigned depth);

static struct sexp *parse_list(struct parser *ps, unsigned depth)
{
	if (depth >= SEXP_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	struct sexp *list = new_node(ps);
	if (!list)
		return NULL;
	list->is_list = true;
	ps->p++; /* '(' */
	struct sexp **tailp = &list->child;
	for (;;) {
		skip_blank(ps);
		if (ps->p >= ps->end)
			return fail(ps, "unbalanced '('");
		if (*ps->p == ')') {
			ps->p++;
			return list;
		}
		struct sexp *el = parse_any(ps, depth + 1);
		if (!el)
			return NULL;
		*tailp = el;
		tailp = &el->next;
	}
}

static struct sexp *parse_any(struct parser *ps, unsigned depth)
{
	char c = *ps->p;
	if (c == '(')
		return parse_list(ps, depth);
	if (c == ')')
		return fail(ps, "unexpected ')'");
	struct sexp *a = new_node(ps);
	if (!a)
		return NULL;
	size_t start = ps->doc->arena_used;
	if (c == '"') {
		a->quoted = true;
		if (!quoted_body(ps))
			return NULL;
	} else {
		while (ps->p < ps->end && is_atom_char(*ps->p))
			if (!put(ps, *ps->p++))
				return NULL;
		if (!put(ps, '\0'))
			return NULL;
	}
	a->atom = ps->doc->arena + start;
	a->len = ps->doc->arena_used - start - 1;
	return a;
}

struct sexp *sexp_parse(
    struct sexp_doc *doc, const char *text, size_t len, char *err, size_t errlen)
{
	struct parser ps = { doc, text, text, text + len, err, errlen };
	doc->used = 0;
	doc->arena_used = 0;
	skip_blank(&ps);
	if (ps.p >= ps.end) {
		snprintf(err, errlen, "empty");
		return NULL;
	}
	struct sexp *root = parse_any(&ps, 0);
	if (!root)
		return NULL;
	skip_blank(&ps);
	if (ps.p < ps.end)
		return fail(&ps, "trailing text");
	return root;
}

unsigned sexp_list_len(const struct sexp *s)
{
	unsigned n = 0;
	if (s && s->is_list)
		for (const struct sexp *c = s->child; c; c = c->next)
			n++;
	return n;
}

const struct sexp *sexp_nth(const struct sexp *s, unsigned i)
{
	if (!s || !s->is_list)
		return NULL;
	const struct sexp *c = s->child;
	while (c && i--)
		c = c->next;
	return c;
}
