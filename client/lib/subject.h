/*
 * subject.h - NATS subjects of the fleet stream (docs/fleet.md): mtrace.<host>.<domain>.
 * events|stats, with host and domain names escaped into one safe token each, so that
 * no name a guest chooses can form a wildcard or another token.
 */
#ifndef MTRACE_SUBJECT_H
#define MTRACE_SUBJECT_H

#include <stdbool.h>
#include <stddef.h>

/* Longest token: a name of 255 bytes, each escaped to 3. */
#define SUBJECT_TOKEN_MAX (3 * 255 + 1)

/*
 * Escape name into out: bytes A-Z a-z 0-9 and '-' stay, every other byte (including
 * '_', '%', '.', '*', '>', spaces, controls, and all bytes >= 0x80, so that invalid
 * UTF-8 cannot reach the server) becomes %XX (upper-case hex).  The result is never
 * empty and never "_" or "_<digits>", which name the host itself and domains without
 * a name.  Reversible with subject_token_unescape.  A name longer than 255 bytes is cut.
 */
void subject_token_escape(const char *name, char *out, size_t outlen);
/* The exact inverse: 0, or -1 if tok is not one subject_token_escape makes (so that no
 * two tokens name one host): the empty token, an escape of NUL or of a byte escape keeps
 * (%31), lower-case hex, a lone or short %, a byte escape never keeps, over 255 bytes. */
int subject_token_unescape(const char *tok, char *out, size_t outlen);
/* Whether the n bytes at tok are "_" (the host itself) or "_<domid>" (a domain without a
 * name) as mtrace-ship writes them: decimal, no leading zero, 32 bits. */
bool subject_token_is_numbered(const char *tok, size_t n);

#endif
