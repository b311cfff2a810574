/*
 * announce.c - parsing a guest's data/mtrace announcement.  Everything there is
 * written by the guest, so nothing is trusted: numbers are strict decimals with
 * ranges, and the first bad value refuses the whole announcement with a reason that
 * shows the value escaped (it reaches the log and the domain's status).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "announce.h"

int announce_parse_dec(const char *v, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t n = 0;

	if (!v || len == 0 || len > 10 || (len > 1 && v[0] == '0'))
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (uint64_t)(v[i] - '0');
	}
	if (n > max)
		return -1;
	*out = n;
	return 0;
}

static bool val_is(const char *v, size_t len, const char *want)
{
	return v && len == strlen(want) && !memcmp(v, want, len);
}

/* A short printable rendering of a guest value for the log ("(missing)" for NULL). */
static const char *announce_show(const char *v, size_t len, char *buf, size_t blen)
{
	size_t o = 0;

	if (!v)
		return "(missing)";
	buf[o++] = '"';
	for (size_t i = 0; i < len && o + 6 < blen; i++)
		o += (size_t)snprintf(buf + o, blen - o,
		    (v[i] >= 0x20 && v[i] < 0x7f && v[i] != '"' && v[i] != '\\') ? "%c" : "\\x%02x",
		    (unsigned char)v[i]);
	if (len && o + 6 >= blen)
		o += (size_t)snprintf(buf + o, blen - o, "...");
	snprintf(buf + o, blen - o, "\"");
	return buf;
}

unsigned announce_pages(const struct announce *a)
{
	unsigned total = 0;

	for (uint32_t i = 0; i < a->rings; i++)
		total += 1 + a->pages[i];
	return total;
}

/* One key at a time: v holds the last value read, freed before the next. */
struct reader {
	announce_read_fn read;
	void *arg;
	char *v;
	size_t len;
};

static const char *get(struct reader *r, const char *key)
{
	free(r->v);
	r->len = 0;
	r->v = r->read(key, &r->len, r->arg);
	return r->v;
}

static enum announce_status parse(struct announce *a, struct reader *r, char *why, size_t wl)
{
	char key[64], sh[64];
	uint64_t n;

	get(r, "state");
	if (!r->v || val_is(r->v, r->len, "closed"))
		return ANNOUNCE_NONE;
	if (!val_is(r->v, r->len, "ready")) {
		snprintf(why, wl, "state: %s", announce_show(r->v, r->len, sh, sizeof(sh)));
		return ANNOUNCE_BAD;
	}
	get(r, "version");
	bool v2 = val_is(r->v, r->len, "2");
	if (!val_is(r->v, r->len, "1") && !v2) {
		snprintf(why, wl, "version: %s is not 1 or 2",
		    announce_show(r->v, r->len, sh, sizeof(sh)));
		return ANNOUNCE_BAD;
	}
	get(r, "clock");
	if (val_is(r->v, r->len, "monotonic"))
		a->clock = MTRACE_CLOCK_MONOTONIC;
	else if (val_is(r->v, r->len, "xen"))
		a->clock = MTRACE_CLOCK_XEN;
	else if (val_is(r->v, r->len, "realtime"))
		a->clock = MTRACE_CLOCK_REALTIME;
	else if (v2 && val_is(r->v, r->len, "tsc"))
		a->clock = MTRACE_CLOCK_TSC; /* ticks + a time block: ring header version 2 */
	else {
		snprintf(why, wl, "clock: %s", announce_show(r->v, r->len, sh, sizeof(sh)));
		return ANNOUNCE_BAD;
	}
	get(r, "event-channel");
	if (announce_parse_dec(r->v, r->len, ANNOUNCE_MAX_PORT - 1, &n) || n == 0) {
		snprintf(why, wl, "event-channel: %s", announce_show(r->v, r->len, sh, sizeof(sh)));
		return ANNOUNCE_BAD;
	}
	a->port = (uint32_t)n;
	get(r, "rings");
	if (announce_parse_dec(r->v, r->len, MTRACE_MAX_RINGS, &n) || n == 0) {
		snprintf(why, wl, "rings: %s not in 1..%u",
		    announce_show(r->v, r->len, sh, sizeof(sh)), MTRACE_MAX_RINGS);
		return ANNOUNCE_BAD;
	}
	a->rings = (uint32_t)n;
	for (uint32_t i = 0; i < a->rings; i++) {
		snprintf(key, sizeof(key), "ring/%" PRIu32 "/ref", i);
		get(r, key);
		if (announce_parse_dec(r->v, r->len, UINT32_MAX, &n)) {
			snprintf(why, wl, "ring/%u/ref: %s", i,
			    announce_show(r->v, r->len, sh, sizeof(sh)));
			return ANNOUNCE_BAD;
		}
		a->ref[i] = (uint32_t)n;
		snprintf(key, sizeof(key), "ring/%" PRIu32 "/pages", i);
		get(r, key);
		if (announce_parse_dec(r->v, r->len, MTRACE_RING_MAX_PAGES, &n) ||
		    n < MTRACE_RING_MIN_PAGES || (n & (n - 1))) {
			snprintf(why, wl, "ring/%u/pages: %s not a power of two in %u..%u", i,
			    announce_show(r->v, r->len, sh, sizeof(sh)), MTRACE_RING_MIN_PAGES,
			    MTRACE_RING_MAX_PAGES);
			return ANNOUNCE_BAD;
		}
		a->pages[i] = (uint32_t)n;
	}
	return ANNOUNCE_OK;
}

enum announce_status announce_parse(
    struct announce *a, announce_read_fn read, void *arg, char *why, size_t whylen)
{
	struct reader r = { read, arg, NULL, 0 };
	struct announce tmp;
	enum announce_status st;

	memset(&tmp, 0, sizeof(tmp));
	st = parse(&tmp, &r, why, whylen);
	free(r.v);
	if (st == ANNOUNCE_OK)
		*a = tmp;
	return st;
}
