/*
 * utf8.h - validity of UTF-8 sequences in guest-written strings: protobuf string
 * fields and JSON output must carry valid UTF-8, guests may write anything.
 */
#ifndef MTRACE_UTF8_H
#define MTRACE_UTF8_H

#include <stddef.h>

/* Length (1..4) of the valid UTF-8 sequence at s (NUL-terminated), or 0. */
size_t utf8_len(const unsigned char *s);

/* Replace every byte that is not part of valid UTF-8 with '?', in place (s may be
 * NULL). */
void utf8_fix(char *s);

#endif
