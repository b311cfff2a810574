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

static bool first = true; /* no separator before the array's first object */

void chrome_emit_reset(void)
{
	first = true;
}

void cat_json_str(FILE *f, const char *str)
{
	static struct evbuffer *b;

	if (!b)
		b = evbuffer_new();
	json_str(b, str);
	json_write(f, b);
}

void chrome_sep(FILE *f)
{
	if (!first)
		fputs(",\n", f);
	first = false;
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
void chrome_head(FILE *f, const char *ph, uint32_t pid, uint32_t tid, uint64_t ts, const char *name,
    const char *cat)
{
	char buf[128], *p = buf;

	if (!first) {
		*p++ = ',';
		*p++ = '\n';
	}
	first = false;
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
	cat_json_str(f, name);
	if (cat)
		fprintf(f, ",\"cat\":\"%s\"", cat);
}

void chrome_thread_name(FILE *f, uint32_t pid, uint32_t tid, const char *name)
{
	chrome_sep(f);
	fprintf(f,
	    "{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_name\","
	    "\"args\":{\"name\":",
	    pid, tid);
	cat_json_str(f, name);
	fputs("}}", f);
}

void chrome_instant(
    FILE *f, uint32_t domid, uint32_t tid, uint64_t ts, const char *name, const char *cat)
{
	chrome_head(f, "i", domid, tid, ts, name, cat);
	fputs(",\"s\":\"t\"", f);
}
