/*
 * expo-sb.c - the byte buffer the exporter builds an exposition in, and the writing of
 * numbers and label values into it as the text and OpenMetrics formats want them
 * (expo-sb.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo-sb.h"
#include "utf8.h"

/* Out of memory aborts: a scrape is never answered half written. */
void sb_need(struct sb *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 65536;

	if (b->n + more <= b->cap)
		return;
	while (cap < b->n + more)
		cap *= 2;
	b->p = realloc(b->p, cap);
	if (!b->p)
		abort();
	b->cap = cap;
}

void sb_add(struct sb *b, const char *s, size_t n)
{
	sb_need(b, n);
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

void sb_str(struct sb *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

void sb_u64(struct sb *b, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do
		tmp[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	sb_add(b, tmp + i, sizeof(tmp) - i);
}

void sb_i64(struct sb *b, int64_t v)
{
	if (v < 0) {
		sb_add(b, "-", 1);
		sb_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		sb_u64(b, (uint64_t)v);
	}
}

/* Nanoseconds as exact decimal seconds. */
void sb_ns_as_s(struct sb *b, uint64_t ns)
{
	char tmp[16];

	sb_u64(b, ns / 1000000000u);
	snprintf(tmp, sizeof(tmp), ".%09u", (unsigned)(ns % 1000000000u));
	sb_str(b, tmp);
}

void sb_sns_as_s(struct sb *b, int64_t ns)
{
	if (ns < 0) {
		sb_add(b, "-", 1);
		sb_ns_as_s(b, (uint64_t)0 - (uint64_t)ns);
	} else {
		sb_ns_as_s(b, (uint64_t)ns);
	}
}

void sb_double(struct sb *b, double v)
{
	char tmp[40];

	snprintf(tmp, sizeof(tmp), "%.3f", v);
	sb_str(b, tmp);
}

/* A label value's body (without quotes), as the exposition formats require. */
void label_value(struct sb *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	while (*s) {
		const unsigned char *run = s;
		size_t n;

		while (*s && *s != '\\' && *s != '"' && *s != '\n' && (n = utf8_len(s)) > 0)
			s += n;
		sb_add(b, (const char *)run, (size_t)(s - run));
		if (!*s)
			break;
		if (*s == '\\')
			sb_add(b, "\\\\", 2);
		else if (*s == '"')
			sb_add(b, "\\\"", 2);
		else if (*s == '\n')
			sb_add(b, "\\n", 2);
		else
			sb_add(b, "?", 1);
		s++;
	}
}
