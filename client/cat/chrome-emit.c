/*
 * chrome-emit.c - the trace-event objects of mtrace-cat -f chrome, written by hand:
 * printf is most of a converter's time, and timestamps are written from integer ns as
 * µs with three decimals, which Perfetto reads back exactly (from the text).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "chrome-emit.h"
#include "json.h"

#define COUNTERS_MAX 65536 /* distinct counter names with a running sum */

struct counter {
	char *name;
	int64_t sum;
	uint64_t last_ts;
};

void chrome_emit_reset(struct chrome_emit *e)
{
	e->first = true;
	e->flow_id = 0;
	e->min_ts = 0;
	e->any_ts = false;
}

static void note_ts(struct chrome_emit *e, uint64_t ns)
{
	if (!e->any_ts || ns < e->min_ts)
		e->min_ts = ns;
	e->any_ts = true;
}

void chrome_emit_free(struct chrome_emit *e)
{
	if (e->str)
		evbuffer_free(e->str);
	e->str = NULL;
}

void chrome_str(struct chrome_emit *e, FILE *f, const char *str)
{
	if (!e->str && !(e->str = evbuffer_new())) {
		fputs("\"\"", f); /* out of memory: still valid JSON */
		return;
	}
	json_str(e->str, str);
	json_write(f, e->str);
}

void chrome_sep(struct chrome_emit *e, FILE *f)
{
	if (!e->first)
		fputs(",\n", f);
	e->first = false;
}

/* Decimal digits of v at p; returns the end.  printf is most of a converter's time. */
static char *digits(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/* µs with three decimals, from integer ns: exact. */
static char *ts_digits(char *p, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);

	p = digits(p, ns / 1000);
	*p++ = '.';
	*p++ = (char)('0' + frac / 100);
	*p++ = (char)('0' + frac / 10 % 10);
	*p++ = (char)('0' + frac % 10);
	return p;
}

void chrome_put_ts(FILE *f, uint64_t ns)
{
	char buf[32];

	fwrite(buf, 1, (size_t)(ts_digits(buf, ns) - buf), f);
}

/* Open an event object up to (not including) its args and closing brace. */
void chrome_head(struct chrome_emit *e, FILE *f, const char *ph, uint32_t pid, uint32_t tid,
    uint64_t ts, const char *name, const char *cat)
{
	char buf[128], *p = buf;

	if (!e->first) {
		*p++ = ',';
		*p++ = '\n';
	}
	e->first = false;
	memcpy(p, "{\"ph\":\"", 7);
	p += 7;
	*p++ = ph[0];
	memcpy(p, "\",\"pid\":", 8);
	p = digits(p + 8, pid);
	memcpy(p, ",\"tid\":", 7);
	p = digits(p + 7, tid);
	memcpy(p, ",\"ts\":", 6);
	p = ts_digits(p + 6, ts);
	note_ts(e, ts);
	fwrite(buf, 1, (size_t)(p - buf), f);
	fputs(",\"name\":", f);
	chrome_str(e, f, name);
	if (cat)
		fprintf(f, ",\"cat\":\"%s\"", cat);
}

void chrome_thread_name(
    struct chrome_emit *e, FILE *f, uint32_t pid, uint32_t tid, const char *name)
{
	chrome_sep(e, f);
	fprintf(f,
	    "{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_name\","
	    "\"args\":{\"name\":",
	    pid, tid);
	chrome_str(e, f, name);
	fputs("}}", f);
}

void chrome_instant(struct chrome_emit *e, FILE *f, uint32_t domid, uint32_t tid, uint64_t ts,
    const char *name, const char *cat)
{
	chrome_head(e, f, "i", domid, tid, ts, name, cat);
	fputs(",\"s\":\"t\"", f);
}

void chrome_process_name(struct chrome_emit *e, FILE *f, uint32_t pid, const char *name)
{
	chrome_sep(e, f);
	fprintf(f, "{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":{\"name\":", pid);
	chrome_str(e, f, name);
	fputs("}}", f);
}

void chrome_counter(
    struct chrome_emit *e, FILE *f, uint32_t pid, uint64_t ts, const char *name, int64_t v)
{
	chrome_sep(e, f);
	fprintf(f, "{\"ph\":\"C\",\"pid\":%u,\"ts\":", pid);
	chrome_put_ts(f, ts);
	note_ts(e, ts);
	fputs(",\"name\":", f);
	chrome_str(e, f, name);
	fprintf(f, ",\"args\":{\"value\":%" PRId64 "}}", v);
}

void chrome_flow(struct chrome_emit *e, FILE *f, uint32_t pid, uint32_t from, uint32_t to,
    uint64_t ts, const char *cat)
{
	uint64_t id = ++e->flow_id;

	chrome_head(e, f, "s", pid, from, ts, cat, cat);
	fprintf(f, ",\"id\":%" PRIu64 "}", id);
	chrome_head(e, f, "f", pid, to, ts, cat, cat);
	fprintf(f, ",\"id\":%" PRIu64 ",\"bp\":\"e\"}", id);
}

void chrome_flow_between(struct chrome_emit *e, FILE *f, uint32_t pid_a, uint32_t tid_a,
    uint64_t ts_a, uint32_t pid_b, uint32_t tid_b, uint64_t ts_b, const char *cat)
{
	uint64_t id = ++e->flow_id;

	chrome_head(e, f, "s", pid_a, tid_a, ts_a, cat, cat);
	fprintf(f, ",\"id\":%" PRIu64 "}", id);
	chrome_head(e, f, "f", pid_b, tid_b, ts_b, cat, cat);
	fprintf(f, ",\"id\":%" PRIu64 ",\"bp\":\"e\"", id);
}

/*
 * The "ts" of the objects chrome_head and chrome_counter wrote: always after a comma
 * (never first in an object), and never inside a string, where a quote is escaped.
 */
static const char TS_KEY[] = ",\"ts\":";

/* ns from "123.456" (µs, three decimals, as ts_digits writes); false if it is not. */
static bool parse_ts(const char **p, const char *end, uint64_t *ns)
{
	const char *s = *p;
	uint64_t us = 0;

	if (s == end || *s < '0' || *s > '9')
		return false;
	while (s < end && *s >= '0' && *s <= '9')
		us = us * 10 + (uint64_t)(*s++ - '0');
	if (end - s < 4 || *s != '.' || s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9' ||
	    s[3] < '0' || s[3] > '9')
		return false;
	*ns = us * 1000 + (uint64_t)(s[1] - '0') * 100 + (uint64_t)(s[2] - '0') * 10 +
	    (uint64_t)(s[3] - '0');
	*p = s + 4;
	return true;
}

int chrome_rebase(FILE *in, FILE *out, uint64_t base)
{
	char *line = NULL, num[32];
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	rewind(in);
	while ((n = getline(&line, &cap, in)) > 0) {
		const char *p = line, *end = line + n, *k;
		while ((k = memmem(p, (size_t)(end - p), TS_KEY, sizeof(TS_KEY) - 1))) {
			const char *v = k + sizeof(TS_KEY) - 1;
			uint64_t ns;
			fwrite(p, 1, (size_t)(v - p), out);
			p = v;
			if (!parse_ts(&p, end, &ns))
				continue; /* not ours: left as it is */
			ns = ns >= base ? ns - base : 0;
			fwrite(num, 1, (size_t)(ts_digits(num, ns) - num), out);
		}
		fwrite(p, 1, (size_t)(end - p), out);
	}
	if (ferror(in) || ferror(out))
		rc = -1;
	free(line);
	return rc;
}

void chrome_counters_init(struct chrome_counters *cs)
{
	ttab_init(&cs->t, sizeof(struct counter));
}

static void counter_free(void *p)
{
	free(((struct counter *)p)->name);
}

void chrome_counters_free(struct chrome_counters *cs)
{
	ttab_free(&cs->t, counter_free);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void chrome_counter_event(struct chrome_emit *e, struct chrome_counters *cs, FILE *f,
    uint32_t domid, const char *name, int64_t v, bool delta, uint64_t ts)
{
	uint64_t h = name_hash(name);
	struct counter *c = ttab_get(&cs->t, domid, h);
	int fresh = 0;

	if (!c && cs->t.n < COUNTERS_MAX) {
		c = ttab_put(&cs->t, domid, h, &fresh);
		if (c && fresh && !(c->name = strdup(name))) {
			ttab_del(&cs->t, domid, h, NULL);
			c = NULL;
		}
	}
	if (c && strcmp(c->name, name) != 0)
		c = NULL; /* a hash collision: no running sum for this one */
	if (c) {
		if (ts < c->last_ts)
			ts = c->last_ts;
		c->last_ts = ts;
		c->sum = delta ? (int64_t)((uint64_t)c->sum + (uint64_t)v) : v;
		v = c->sum;
	}
	chrome_counter(e, f, domid, ts, name, v);
}
