/*
 * expo-sb.h - a growing byte buffer (the whole exposition is built in one and handed
 * over once) and what the exposition formats need written into it: exact integers,
 * nanoseconds as exact decimal seconds, label values escaped.  expo.c's.
 */
#ifndef MTRACE_EXPO_SB_H
#define MTRACE_EXPO_SB_H

#include <stddef.h>
#include <stdint.h>

struct sb {
	char *p;
	size_t n, cap;
};

void sb_need(struct sb *b, size_t more); /* room for more bytes (aborts when out of memory) */
void sb_add(struct sb *b, const char *s, size_t n);
void sb_str(struct sb *b, const char *s);
void sb_u64(struct sb *b, uint64_t v);
void sb_i64(struct sb *b, int64_t v);
void sb_ns_as_s(struct sb *b, uint64_t ns); /* exact decimal seconds */
void sb_sns_as_s(struct sb *b, int64_t ns); /* the same, signed */
void sb_double(struct sb *b, double v);     /* three decimals */
/* A label value's body (without quotes): backslash, double quote and line feed
 * escaped, bytes that are not UTF-8 written '?'. */
void label_value(struct sb *b, const char *str);

#endif
