/* xalloc.c - see xalloc.h for the out-of-memory policy. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static void oom(size_t n, size_t size)
{
	fprintf(stderr, "out of memory allocating %zu * %zu bytes\n", n, size);
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		oom(1, size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(n, size);
	return p;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
	void *q;

	if (n && size > SIZE_MAX / n)
		oom(n, size);
	q = realloc(p, n && size ? n * size : 1);
	if (!q)
		oom(n, size);
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}
