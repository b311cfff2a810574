/*
 * guest-log.c - what guests cost the host's journal: the lines a guest causes come out
 * of an allowance of its own, and a refusal is told once per reason, whatever values
 * the guest puts in it.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"
#include "log.h"
#include "state.h"

/*
 * Log lines a guest causes (announcements, refusals, withdrawals) come out of a
 * per-domain allowance: GLOG_BURST at once, one more every GLOG_REFILL_S seconds, so
 * that a guest rewriting its xenstore keys thousands of times a second costs the
 * host's journal a line every few seconds, with a count of what was held back.
 */
#define GLOG_BURST    10
#define GLOG_REFILL_S 6
#define GLOG_SLOTS    1024 /* by domid modulo; a collision only shares an allowance */

struct glog_slot {
	uint32_t domid;
	unsigned tokens;
	uint64_t refill_ns;
	unsigned held;
	bool used;
};

int guest_log_init(struct guests_ctx *ctx)
{
	ctx->glog = calloc(GLOG_SLOTS, sizeof(*ctx->glog));
	return ctx->glog ? 0 : -1;
}

void guest_log_free(struct guests_ctx *ctx)
{
	free(ctx->glog);
	ctx->glog = NULL;
}

void guest_log_at(
    struct guests_ctx *ctx, uint32_t domid, unsigned level, const char *func, const char *fmt, ...)
{
	struct glog_slot *s = &ctx->glog[domid % GLOG_SLOTS];
	uint64_t now = state_now_ns(), step = (uint64_t)GLOG_REFILL_S * 1000000000u;
	char line[512], held[64] = "";
	va_list ap;

	if (level > log_get_level())
		return;
	if (!s->used || s->domid != domid) {
		s->used = true;
		s->domid = domid;
		s->tokens = GLOG_BURST;
		s->refill_ns = now;
		s->held = 0;
	}
	while (s->tokens < GLOG_BURST && now - s->refill_ns >= step) {
		s->tokens++;
		s->refill_ns += step;
	}
	if (s->tokens == GLOG_BURST)
		s->refill_ns = now;
	if (s->tokens == 0) {
		s->held++;
		return;
	}
	s->tokens--;
	if (s->held)
		snprintf(
		    held, sizeof(held), " (%u earlier lines of this domain held back)", s->held);
	s->held = 0;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_msg(level, 0, func, "%s%s", line, held);
}

/*
 * Whether two reasons are the same but for the values in them: digits and quoted
 * text come from the guest (or from the others' page counts), so a guest writing a
 * new value each time must not make a new reason each time.  A trailing "(...)" is
 * detail too.
 */
bool guest_reason_same(const char *a, const char *b)
{
	for (;;) {
		while (*a && (isdigit((unsigned char)*a) || *a == '"')) {
			if (*a++ == '"')
				while (*a && *a++ != '"')
					;
		}
		while (*b && (isdigit((unsigned char)*b) || *b == '"')) {
			if (*b++ == '"')
				while (*b && *b++ != '"')
					;
		}
		if (!strncmp(a, " (", 2) || !*a)
			return !strncmp(b, " (", 2) || !*b;
		if (*a != *b)
			return false;
		a++;
		b++;
	}
}
