/*
 * msgid.c - unguessable message ids (msgid.h).  The random bits come from getrandom(2)
 * in blocks of 4 KiB, 8 bytes a message: one system call per 512 messages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "msgid.h"

static struct {
	uint8_t buf[4096];
	size_t used;
} pool = { .used = sizeof(pool.buf) };

static int fill(void *out, size_t n)
{
	uint8_t *p = out;

	while (n) {
		ssize_t r = getrandom(p, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* n random bytes as hex into out (2n + 1 bytes). */
static void random_hex(char *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		if (pool.used == sizeof(pool.buf)) {
			/* msgid_init saw the source work: a failure now is the kernel's; an id
			 * that others could guess is not an option */
			if (fill(pool.buf, sizeof(pool.buf)) < 0) {
				perror("mtrace-ship: getrandom");
				abort();
			}
			pool.used = 0;
		}
		uint8_t b = pool.buf[pool.used];
		pool.buf[pool.used++] = 0; /* used bits are not kept */
		out[2 * i] = hex[b >> 4];
		out[2 * i + 1] = hex[b & 15];
	}
	out[2 * n] = 0;
}

int msgid_init(void)
{
	uint8_t probe[8];

	return fill(probe, sizeof(probe));
}

void msgid_base(char *out, size_t outlen, const char *host_tok)
{
	char nonce[33];

	random_hex(nonce, 16);
	snprintf(out, outlen, "%s-%s", host_tok, nonce);
}

void msgid_make(char *out, size_t outlen, const char *base, const char *kind, uint64_t n)
{
	char tag[17];

	random_hex(tag, 8);
	snprintf(out, outlen, "%s-%s%" PRIu64 "-%s", base, kind, n, tag);
}
