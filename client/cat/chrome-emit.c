/*
 * chrome-emit.c - the trace-event objects of mtrace-cat -f chrome, written by hand:
 * printf is most of a converter's time, and timestamps are written from integer ns as
 * µs with three decimals, which Perfetto reads back exactly (from the text).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include <event2/buffer.h>

#include "chrome-emit.h"
#include "json.h"

void chrome_emit_reset(struct chrome_emit *e)
{
	e->first = true;
	e->flow_id = 0;
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
