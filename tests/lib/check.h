/*
 * check.h - the checks of the C test programs: a failed CHECK says where and what, and
 * counts; the test goes on, so that one run shows every failure.  REQUIRE stops the
 * program where going on makes no sense.  main returns check_status(name).
 *
 *   CHECK(cond);
 *   CHECK(cond, "got %d", n);	(printf-style detail, optional)
 */
#ifndef MTRACE_TEST_CHECK_H
#define MTRACE_TEST_CHECK_H

#include <stdint.h>
#include <stdlib.h>

/* Checks failed so far in this process. */
extern int check_failures;

void check_fail(const char *file, int line, const char *func, const char *cond, const char *fmt,
    ...) __attribute__((format(printf, 5, 6)));

/* " " is the empty detail (a zero-length format would be a warning). */
#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		if (!(cond))                                                              \
			check_fail(__FILE__, __LINE__, __func__, #cond, " " __VA_ARGS__); \
	} while (0)

/* cond is evaluated once: it may have side effects (pthread_create). */
#define REQUIRE(cond, ...)                                                                \
	do {                                                                              \
		if (!(cond)) {                                                            \
			check_fail(__FILE__, __LINE__, __func__, #cond, " " __VA_ARGS__); \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

/* Prints "NAME: ok" or "NAME: N check(s) failed"; the exit status for main. */
int check_status(const char *name);

/* The tests' pseudo-random numbers (xorshift64): fast, repeatable from the seed in
 * *state (never 0), and the values need only be arbitrary. */
static inline uint64_t check_xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#endif
