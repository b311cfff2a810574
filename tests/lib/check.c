/*
 * check.c - the failure report of CHECK and REQUIRE (check.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

int check_failures;

void check_fail(
    const char *file, int line, const char *func, const char *cond, const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	check_failures++;
	fprintf(stderr, "%s:%d: %s: CHECK(%s) failed", file, line, func, cond);
	if (strcmp(fmt, " ") != 0) {
		fputs(":", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	/* A failed system call's reason, when there is one to say. */
	if (e != 0)
		fprintf(stderr, " (errno %d %s)", e, strerror(e));
	fputc('\n', stderr);
	errno = e;
}

int check_status(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}
