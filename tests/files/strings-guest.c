/*
 * strings-guest.c - a guest whose strings are hostile: labels, exceptions, counter
 * names and its ring name carry quotes, backslashes, control bytes, terminal escapes,
 * invalid UTF-8, valid multi-byte characters and a string of the longest length a
 * record takes.  The tests check that no output format of mtrace-cat breaks on them.
 *
 * Usage: strings-guest (under mtrace-simxen create, like mtrace-load)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtrace-guest.h"

static const char *const hostile[] = {
	"quote\"d \"label\"",
	"back\\slash \\\" \\u0000 \\n",
	"ctl \x01\x02\x07\x08\x0b\x0c\x0e\x1f\x7f end",
	"esc \x1b[31mred\x1b[0m \x1b]0;title\x07 \r\n\t",
	"bad utf8 \xff\xfe \xc3\x28 \xe2\x82 \xf0\x9f\x98 \xed\xa0\x80 \xc0\xaf",
	"ok utf8 \xc3\xbc\xc3\xb1\xc3\xae \xe2\x82\xac \xf0\x9f\x98\x80",
	"</script><b>html</b> & 'apos' ,;{}[]",
	"",
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int attached(const struct mtrace_ring *r)
{
	return __atomic_load_n(&r->hdr->req_event, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&r->hdr->reader_pos, __ATOMIC_RELAXED) != 0;
}

static int drained(const struct mtrace_ring *r)
{
	return __atomic_load_n(&r->hdr->reader_pos, __ATOMIC_RELAXED) >=
	    __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED);
}

int main(void)
{
	struct mtrace_guest_config cfg = { .rings = 1, .data_pages = 16 };
	struct mtrace_guest *g;
	struct mtrace_ring *r;
	char err[256], *longest;
	size_t n = sizeof(hostile) / sizeof(hostile[0]);
	uint64_t id = 1;
	int i;

	g = mtrace_guest_open(&cfg, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "strings-guest: %s\n", err);
		return 1;
	}
	r = mtrace_guest_ring(g, 0);
	for (i = 0; i < 200 && !attached(r); i++)
		sleep_ms(50);
	longest = malloc(MTRACE_STR_MAX + 1);
	if (!longest)
		return 1;
	memset(longest, 'x', MTRACE_STR_MAX);
	longest[0] = '"';
	longest[1] = '\\';
	longest[MTRACE_STR_MAX] = 0;
	for (size_t k = 0; k <= n; k++) {
		const char *s = k < n ? hostile[k] : longest;
		uint64_t child = ++id;

		mtrace_creates(r, 1, child, MTRACE_TT_TASK);
		mtrace_label(r, child, s);
		mtrace_switch(r, child);
		mtrace_counter(r, child, s, (int64_t)k);
		mtrace_increase(r, child, s, -1);
		mtrace_evtchn_send(r, child, mtrace_guest_port(g));
		mtrace_switch(r, 1);
		mtrace_read(r, 1, child);
		if (k % 2)
			mtrace_fails(r, 1, child, s);
		else
			mtrace_fulfills(r, 1, child);
		mtrace_switch(r, MTRACE_THREAD_NONE);
	}
	mtrace_ring_kick(r);
	for (i = 0; i < 200 && !drained(r); i++)
		sleep_ms(50);
	sleep_ms(300);
	mtrace_guest_close(g);
	free(longest);
	printf("{\"events\": %zu}\n", (n + 1) * 11 + 1);
	return 0;
}
