/*
 * sexp.h - a bounded S-expression reader for one line of a 2014 mirage-profile trace.
 *
 * The trace is Sexplib output: lists, bare atoms and "quoted strings" with OCaml
 * escapes.  Traces come from anywhere, so parsing is bounded (node count, depth,
 * string bytes live in a fixed arena) and every failure is a reason string, never an
 * abort: the caller counts the line as bad and moves on.
 */
#ifndef MTRACE_REPLAY_SEXP_H
#define MTRACE_REPLAY_SEXP_H

#include <stdbool.h>
#include <stddef.h>

#define SEXP_MAX_NODES 256
#define SEXP_MAX_DEPTH 16
#define SEXP_ARENA     8192 /* decoded atom bytes, NULs included */

struct sexp {
	bool is_list;
	bool quoted;        /* atom written as "..." (so "()" is an atom, not a list) */
	const char *atom;   /* NUL-terminated, decoded; NULL for lists */
	size_t len;         /* atom length (an escape may put a NUL inside) */
	struct sexp *child; /* first element of a list */
	struct sexp *next;  /* next sibling */
};

struct sexp_doc {
	struct sexp nodes[SEXP_MAX_NODES];
	unsigned used;
	char arena[SEXP_ARENA];
	size_t arena_used;
};

/*
 * Parse exactly one S-expression from text[0..len) (trailing blanks and ';' comments
 * allowed).  Returns the root, or NULL with a reason in err.  Nodes live in doc.
 */
struct sexp *sexp_parse(
    struct sexp_doc *doc, const char *text, size_t len, char *err, size_t errlen);

/* Number of elements of a list (0 for an atom). */
unsigned sexp_list_len(const struct sexp *s);
/* Element i of a list, or NULL. */
const struct sexp *sexp_nth(const struct sexp *s, unsigned i);

#endif
