/*
 * metrics.c - mtrace-ship's /metrics (metrics.h): the HTTP front on the shipper's own
 * loop, the figures asked for at each scrape.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "http-front.h"
#include "metrics.h"

struct ship_metrics {
	struct http_front *front;
	void (*fill)(void *arg, struct ship_figures *f);
	void *arg;
};

static void metric(
    struct evbuffer *b, const char *name, const char *type, const char *help, uint64_t v)
{
	evbuffer_add_printf(
	    b, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", name, help, name, type, name, v);
}

static void render(struct evbuffer *b, const struct ship_figures *f)
{
	metric(b, "mtrace_ship_shipped_messages_total", "counter",
	    "Messages published and acknowledged by JetStream, the spool's included.", f->shipped);
	metric(b, "mtrace_ship_shipped_bytes_total", "counter",
	    "Bytes of the messages acknowledged.", f->shipped_bytes);
	metric(b, "mtrace_ship_spooled_messages_total", "counter",
	    "Messages put in the spool while NATS could not take them.", f->spooled);
	metric(b, "mtrace_ship_drained_messages_total", "counter",
	    "Spooled messages published since.", f->drained);
	metric(b, "mtrace_ship_dropped_messages_total", "counter",
	    "Messages neither published nor spooled (spool full or none).", f->dropped_msgs);
	metric(b, "mtrace_ship_dropped_events_total", "counter", "Events in the dropped messages.",
	    f->dropped_events);
	metric(b, "mtrace_ship_loss_published_events_total", "counter",
	    "Dropped events published downstream as a Loss notice.", f->loss_published);
	metric(b, "mtrace_ship_retried_publishes_total", "counter",
	    "Publishes sent again after a transient refusal (a leader election).", f->retried);
	metric(b, "mtrace_ship_split_messages_total", "counter",
	    "Messages cut into parts under the NATS server's max_payload.", f->split);
	metric(b, "mtrace_ship_set_aside_messages_total", "counter",
	    "Messages no retry would publish (over max_payload and not to be cut, a subject "
	    "the server refuses), counted as dropped.",
	    f->set_aside);
	metric(b, "mtrace_ship_taken_ids_total", "counter",
	    "Messages the stream dropped as duplicates of an id it had before they were sent, "
	    "counted as dropped.",
	    f->taken);
	metric(b, "mtrace_ship_spool_invalid_records_total", "counter",
	    "Spooled records skipped: not a message this shipper may publish.", f->spool_bad);
	metric(b, "mtrace_ship_spool_messages", "gauge", "Messages in the spool now.", f->in_spool);
	metric(
	    b, "mtrace_ship_spool_bytes", "gauge", "Bytes of the spool file now.", f->spool_bytes);
	metric(b, "mtrace_ship_acks_pending", "gauge",
	    "Publishes waiting for their JetStream acknowledgement.", f->acks_pending);
	metric(b, "mtrace_ship_acks_pending_max", "gauge",
	    "The most publishes waiting for their acknowledgement at once since the start.",
	    f->acks_pending_max);
	metric(b, "mtrace_ship_nats_up", "gauge",
	    "1 while NATS takes the publishes, 0 while mtrace-ship spools.", f->nats_up);
	metric(
	    b, "mtrace_ship_mtraced_up", "gauge", "1 while connected to mtraced.", f->mtraced_up);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct ship_metrics *m = arg;
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;
	struct ship_figures f;
	struct evbuffer *out;

	if (!path || strcmp(path, "/metrics")) {
		hf_send_text(req, 404, "Not Found", "the metrics are at /metrics");
		return;
	}
	if (!(out = evbuffer_new())) {
		hf_send_text(req, 500, "Internal Server Error", "out of memory");
		return;
	}
	m->fill(m->arg, &f);
	render(out, &f);
	hf_common_headers(req, "text/plain; version=0.0.4; charset=utf-8");
	hf_reply(m->front, req, 200, "OK", out);
	evbuffer_free(out);
}

struct ship_metrics *ship_metrics_start(struct event_base *base, const char *spec,
    void (*fill)(void *arg, struct ship_figures *f), void *arg, char *err, size_t errlen)
{
	/* a scraper's few requests: small caps, the exporter's deadlines */
	const struct hf_limits lim = {
		.max_conns = 8,
		.max_per_source = 4,
		.request_timeout_s = 10,
		.idle_timeout_s = 10,
		.max_headers = 16384,
		.max_body = 0,
		.out_conn = 1u << 20,
		.out_total = 4u << 20,
	};
	const struct hf_token none = { .len = 0 };
	struct ship_metrics *m = calloc(1, sizeof(*m));
	struct hf_listen la;

	if (!m) {
		snprintf(err, errlen, "--metrics: out of memory");
		return NULL;
	}
	m->fill = fill;
	m->arg = arg;
	if (hf_parse_listen(spec, &la, err, errlen) < 0)
		goto fail;
	m->front = hf_new(base, "mtrace-ship", &la, &lim, &none, on_request, m, err, errlen);
	if (!m->front)
		goto fail;
	if (la.unix_socket)
		fprintf(stderr, "mtrace-ship: metrics on unix:%s (/metrics)\n", la.host);
	else
		fprintf(stderr, "mtrace-ship: metrics on http://%s%s%s:%u/metrics\n",
		    la.ss.ss_family == AF_INET6 ? "[" : "", la.host,
		    la.ss.ss_family == AF_INET6 ? "]" : "", hf_port(m->front));
	return m;
fail:
	free(m);
	return NULL;
}

void ship_metrics_stop(struct ship_metrics *m)
{
	if (!m)
		return;
	hf_free(m->front);
	free(m);
}
