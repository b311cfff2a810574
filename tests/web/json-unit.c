/*
 * json-unit - client/lib/json.c on input no live run produces (mtraced makes guest
 * strings valid UTF-8 before any client sees them, and computes finite rates), for
 * check_json_unit.py:
 *   json-unit str    stdin's bytes (up to NUL) as one JSON string
 *   json-unit stats  a Stats with NaN and infinite rates and hostile names
 *   json-unit web    mtrace-web's own objects, one a line, with hostile host names,
 *                    daemon names and peers: hello, daemon, dropped, a domain_up
 *                    given its host (json_put_host), [web_domain], [web_host], browsers
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

#define HOSTILE "h\"\\\n\xff\xe2\x80\xa8</script>"

static int web(struct evbuffer *b)
{
	Mtrace__DomainUp u = MTRACE__DOMAIN_UP__INIT;
	Mtrace__Stats s = MTRACE__STATS__INIT;
	struct evbuffer *one = evbuffer_new();

	if (!one)
		return 1;
	json_hello(b,
	    &(struct json_hello){ .instance = 0xfeedu,
	        .server = "mtrace-web x",
	        .daemon = HOSTILE,
	        .connected = true,
	        .fleet = true,
	        .browser = 3 });
	evbuffer_add(b, "\n", 1);
	json_daemon(b, HOSTILE, false, HOSTILE);
	evbuffer_add(b, "\n", 1);
	json_dropped(b, 5, 7);
	evbuffer_add(b, "\n", 1);
	u.domid = 4;
	u.name = "guest";
	/* json_put_host rewrites the one object its buffer holds */
	json_domain_up(one, &u);
	if (json_put_host(one, HOSTILE) < 0)
		return 1;
	evbuffer_add_buffer(b, one);
	evbuffer_add(b, "\n", 1);
	json_list_begin(b);
	json_web_domain(b, 0, NULL, 1, true, "a", "");
	json_web_domain(b, 1, HOSTILE, 2, false, HOSTILE, HOSTILE);
	json_list_end(b);
	evbuffer_add(b, "\n", 1);
	json_list_begin(b);
	json_web_host(b, 0,
	    &(struct json_web_host){ .host = HOSTILE,
	        .connected = true,
	        .events = 9,
	        .daemon = HOSTILE,
	        .last_seen_ms = 5 });
	json_web_host(b, 1,
	    &(struct json_web_host){
	        .host = "b", .daemon = "", .stats = &s, .stats_max = SIZE_MAX });
	json_list_end(b);
	evbuffer_add(b, "\n", 1);
	json_browsers_begin(b, 2, 11);
	json_browser(b, 0, 1, HOSTILE, 1, 2, 3, 4);
	json_browser(b, 1, 2, "127.0.0.1:5", 0, 0, 0, 0);
	json_browsers_end(b);
	evbuffer_add(b, "\n", 1);
	evbuffer_free(one);
	return 0;
}

int main(int argc, char **argv)
{
	struct evbuffer *b = evbuffer_new();
	int rc = argc == 2 && !strcmp(argv[1], "str") ? one_str(b)
	    : argc == 2 && !strcmp(argv[1], "stats")  ? stats(b)
	    : argc == 2 && !strcmp(argv[1], "web")    ? web(b)
	                                              : 2;

	if (rc == 2) {
		fputs("usage: json-unit str|stats|web\n", stderr);
		return 2;
	}
	json_write(stdout, b);
	evbuffer_free(b);
	return rc;
}
