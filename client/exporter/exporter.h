/*
 * exporter.h - mtrace-exporter: mtraced's statistics as Prometheus metrics.
 * session.c keeps a statistics-only subscription to mtraced (reconnecting when it
 * goes), expo.c renders the latest Stats in the text or OpenMetrics exposition format,
 * main.c serves it with evhttp and writes it for node_exporter's textfile collector.
 */
#ifndef MTRACE_EXPORTER_H
#define MTRACE_EXPORTER_H

#include <stdbool.h>
#include <stdint.h>

#include "mtrace.pb-c.h"

struct event_base;
struct evbuffer;
struct tl;

/* ---- expo.c ---- */

enum expo_format {
	EXPO_TEXT,
	EXPO_OPENMETRICS
};

#define EXPO_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define EXPO_OM_TYPE   "application/openmetrics-text; version=1.0.0; charset=utf-8"

struct expo_caps {
	unsigned labels;   /* label series per domain; the rest fold into label="other" */
	unsigned counters; /* counter series per domain; the rest fold into counter="other" */
};

/* What the exporter knows besides the daemon's Stats. */
struct expo_self {
	bool up;            /* connected to mtraced, statistics arriving */
	double stats_age_s; /* since the last Stats (negative: none yet) */
	uint64_t connects;  /* sessions opened with mtraced */
	uint64_t stats_received;
	struct tl *clocks; /* the clock maps mtraced told (timeline.h); NULL: none */
};

/* The format an HTTP Accept header asks for (NULL or unparsable: text). */
enum expo_format expo_negotiate(const char *accept);

/* Whether an Accept-Encoding header takes gzip. */
bool expo_accepts_gzip(const char *accept_encoding);

/* Render everything: s may be NULL (mtraced down: only the exporter's own metrics). */
int expo_render(struct evbuffer *out, enum expo_format fmt, const Mtrace__Stats *s,
    const struct expo_self *self, const struct expo_caps *caps);

/* ---- gzip.c ---- */

/* in, gzipped, appended to out; in is left as it was.  0, or -1 on failure. */
int gzip_evbuffer(struct evbuffer *in, struct evbuffer *out);

/* ---- session.c ---- */

struct session;

struct session *session_new(struct event_base *base, const char *socket_path, unsigned interval_ms,
    void (*on_stats)(void *), void *arg);
void session_free(struct session *s);
/* The latest Stats, NULL while disconnected or before the first. */
const Mtrace__Stats *session_stats(const struct session *s);
void session_self(const struct session *s, struct expo_self *out);

#endif
