/*
 * json-web.c - mtrace-web's own JSON objects (/api/state, the page's stream: hello,
 * daemons, domains, hosts, browsers), beside json.c's encoding of ServerMsg; the same
 * schema (docs/json.md) and the same escaper for hostile strings.
 */
#include <inttypes.h>
#include <string.h>

#include "json.h"
#include "ops.h"

#define ADD(b, lit) evbuffer_add((b), "" lit, sizeof(lit) - 1)

static const char *tf(bool x)
{
	return x ? "true" : "false";
}

void json_list_begin(struct evbuffer *b)
{
	ADD(b, "[");
}

void json_list_end(struct evbuffer *b)
{
	ADD(b, "]");
}

/* The head every top-level object starts with: "v", then "host" (when given), then
 * "type". */
static void head(struct evbuffer *b, const char *host, const char *type)
{
	ADD(b, "{\"v\":" JSON_V ",");
	if (host) {
		ADD(b, "\"host\":");
		json_str(b, host);
		ADD(b, ",");
	}
	evbuffer_add_printf(b, "\"type\":\"%s\"", type);
}

int json_put_host(struct evbuffer *b, const char *host)
{
	static const char pre[] = "{\"v\":" JSON_V ",";
	struct evbuffer *t;

	if (evbuffer_get_length(b) < sizeof(pre) - 1 ||
	    memcmp(evbuffer_pullup(b, sizeof(pre) - 1), pre, sizeof(pre) - 1) != 0 ||
	    !(t = evbuffer_new()))
		return -1;
	evbuffer_add(t, pre, sizeof(pre) - 1);
	ADD(t, "\"host\":");
	json_str(t, host);
	ADD(t, ",");
	evbuffer_drain(b, sizeof(pre) - 1);
	evbuffer_prepend_buffer(b, t);
	evbuffer_free(t);
	return 0;
}

void json_hello(struct evbuffer *b, const struct json_hello *h)
{
	head(b, NULL, "hello");
	evbuffer_add_printf(b, ",\"instance\":\"%" PRIx64 "\",\"server\":", h->instance);
	json_str(b, h->server);
	evbuffer_add_printf(b,
	    ",\"connected\":%s,\"resumed\":%s,\"history_first_event\":%" PRIu64
	    ",\"browser\":%u,\"daemon\":",
	    tf(h->connected), tf(h->resumed), h->history_first_event, h->browser);
	json_str(b, h->daemon);
	if (h->fleet)
		ADD(b, ",\"fleet\":true");
	/* The thread types' names, from the one table (common/ops.c). */
	ADD(b, ",\"types\":[");
	for (unsigned t = 0; t < MTRACE_TT_COUNT; t++) {
		if (t)
			ADD(b, ",");
		json_str(b, mtrace_thread_type_name(t));
	}
	ADD(b, "]}");
}

void json_daemon(struct evbuffer *b, const char *host, bool connected, const char *daemon)
{
	head(b, host, "daemon");
	evbuffer_add_printf(b, ",\"connected\":%s,\"daemon\":", tf(connected));
	json_str(b, daemon);
	ADD(b, "}");
}

void json_dropped(struct evbuffer *b, uint64_t dropped, uint64_t total)
{
	head(b, NULL, "dropped");
	evbuffer_add_printf(b, ",\"dropped\":%" PRIu64 ",\"total\":%" PRIu64 "}", dropped, total);
}

void json_web_domain(struct evbuffer *b, size_t i, const char *host, uint32_t domid, bool alive,
    const char *name, const char *reason)
{
	if (i)
		ADD(b, ",");
	ADD(b, "{");
	if (host) {
		ADD(b, "\"host\":");
		json_str(b, host);
		ADD(b, ",");
	}
	evbuffer_add_printf(b, "\"domid\":%" PRIu32 ",\"alive\":%s,\"name\":", domid, tf(alive));
	json_str(b, name);
	ADD(b, ",\"reason\":");
	json_str(b, reason);
	ADD(b, "}");
}

void json_web_host(struct evbuffer *b, size_t i, const struct json_web_host *h)
{
	bool cut = h->stats_cut;

	if (i)
		ADD(b, ",");
	ADD(b, "{\"host\":");
	json_str(b, h->host);
	evbuffer_add_printf(b,
	    ",\"connected\":%s,\"events\":%" PRIu64 ",\"last_seen_ms\":%" PRIu64 ",\"daemon\":",
	    tf(h->connected), h->events, h->last_seen_ms);
	json_str(b, h->daemon);
	ADD(b, ",\"stats\":");
	if (h->stats)
		cut |= json_stats_within(b, h->stats, true, h->stats_max) != 0;
	else
		ADD(b, "null");
	evbuffer_add_printf(b, ",\"stats_cut\":%s,\"skew\":", tf(cut));
	if (h->skew_samples)
		json_host_skew(b, h->host, h->skew_ns, h->skew_spread_ns, h->skew_samples);
	else
		ADD(b, "null");
	ADD(b, "}");
}

void json_host_skew(
    struct evbuffer *b, const char *host, int64_t skew_ns, uint64_t spread_ns, uint32_t samples)
{
	head(b, host, "host_skew");
	evbuffer_add_printf(b,
	    ",\"skew_ns\":%" PRId64 ",\"spread_ns\":%" PRIu64 ",\"samples\":%" PRIu32 "}", skew_ns,
	    spread_ns, samples);
}

void json_browsers_begin(struct evbuffer *b, unsigned count, uint64_t dropped_total)
{
	evbuffer_add_printf(
	    b, "{\"count\":%u,\"dropped_total\":%" PRIu64 ",\"list\":[", count, dropped_total);
}

void json_browser(struct evbuffer *b, size_t i, unsigned browser, const char *peer,
    uint64_t sent_events, uint64_t dropped, uint64_t lag_bytes, uint64_t queued_bytes)
{
	evbuffer_add_printf(b, "%s{\"browser\":%u,\"peer\":", i ? "," : "", browser);
	json_str(b, peer);
	evbuffer_add_printf(b,
	    ",\"sent_events\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"lag_bytes\":%" PRIu64
	    ",\"queued_bytes\":%" PRIu64 "}",
	    sent_events, dropped, lag_bytes, queued_bytes);
}

void json_browsers_end(struct evbuffer *b)
{
	ADD(b, "]}");
}
