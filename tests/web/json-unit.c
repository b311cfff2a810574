/*
 * json-unit - client/lib/json.c on input no live run produces (mtraced makes guest
 * strings valid UTF-8 before any client sees them, and computes finite rates), for
 * check_json_unit.py:
 *   json-unit str    stdin's bytes (up to NUL) as one JSON string
 *   json-unit stats  a Stats with NaN and infinite rates and hostile names
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

static int one_str(struct evbuffer *b)
{
	static char in[1 << 16];
	size_t n = fread(in, 1, sizeof(in) - 1, stdin);

	in[n] = 0;
	json_str(b, in);
	return 0;
}

static int stats(struct evbuffer *b)
{
	Mtrace__Stats s = MTRACE__STATS__INIT;
	Mtrace__DomainStats d = MTRACE__DOMAIN_STATS__INIT, *dp = &d;
	Mtrace__ThreadStats t = MTRACE__THREAD_STATS__INIT, *tp = &t;
	Mtrace__LabelStats l = MTRACE__LABEL_STATS__INIT, *lp = &l;
	Mtrace__Counter c = MTRACE__COUNTER__INIT, *cp[2] = { &c, &c };

	d.name = "dom\xff\xe2\x80\xa8";
	d.state = "";
	d.rate_1s = NAN;
	d.rate_10s = INFINITY;
	d.rate_60s = -INFINITY;
	c.name = "\"dup\"";
	d.counters = cp;
	d.n_counters = 2;
	t.label = "\x01\x7f\xc0\xaf";
	t.site = "";
	t.failure = "</script>";
	t.events_rate = NAN;
	l.label = "\xed\xa0\x80";
	l.creation_rate = INFINITY;
	s.domains = &dp;
	s.n_domains = 1;
	s.threads = &tp;
	s.n_threads = 1;
	s.labels = &lp;
	s.n_labels = 1;
	json_stats(b, &s, true);
	return 0;
}

int main(int argc, char **argv)
{
	struct evbuffer *b = evbuffer_new();
	int rc = argc == 2 && !strcmp(argv[1], "str") ? one_str(b)
	    : argc == 2 && !strcmp(argv[1], "stats")  ? stats(b)
	                                              : 2;

	if (rc == 2) {
		fputs("usage: json-unit str|stats\n", stderr);
		return 2;
	}
	json_write(stdout, b);
	evbuffer_free(b);
	return 0;
}
