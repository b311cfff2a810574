/*
 * state.c - mtrace-web's /api/state answers, within the output cap whatever the guests'
 * tables hold.
 *
 * Most of an answer is the feed's state (domains, hosts, the last statistics): with
 * full tables, megabytes.  Built for each request, every client that asks and never
 * reads held a copy: the front's caps close such connections, but a closed
 * connection's output is freed only once the loop turn is over, after the turn's other
 * requests were answered, so 500 unread requests of one turn held 500 copies (2.5 GB
 * for a 5 MB state).  So the state is built once per change of the feed and shared by
 * reference by the answers given until the next change; a change is a new message in
 * the history (hist_head: whatever the feed learns it tells the browsers there), and
 * the state is built again at least every STATE_MAX_AGE_MS.
 *
 * And every byte of the answers is counted here until the connection holding it lets
 * go of it (the references' clean-up), the states counted once however many answers
 * share them: past the cap, no new state is built (the answer is the last one built,
 * counted as stale, until older answers are read or their connections closed) and an
 * answer that would not fit even so is a 503.  What answers hold is thus at most the
 * cap, plus the one state being built.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "web.h"

#define STATE_MAX_AGE_MS 1000

/* Bytes shared by reference by answers: freed when the last one lets go. */
struct blob {
	unsigned refs;
	size_t len;
	uint64_t gen;    /* a state: the history's head when it was built */
	int64_t born_ms; /* ... and when */
	char data[];
};

static struct {
	struct http_front *front;
	const struct web_opts *o;
	size_t cap;         /* for the answers' bytes */
	size_t held;        /* bytes of blobs alive */
	struct blob *state; /* the last state built (holds one reference) */
	struct evbuffer *scratch;
	uint64_t built, stale, busy;
} st;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct blob *blob_new(struct evbuffer *from)
{
	size_t len = evbuffer_get_length(from);
	struct blob *b = malloc(sizeof(*b) + len);

	if (!b) {
		evbuffer_drain(from, len);
		return NULL;
	}
	b->refs = 1;
	b->len = len;
	b->gen = 0;
	b->born_ms = 0;
	evbuffer_remove(from, b->data, len);
	st.held += len;
	return b;
}

static void blob_unref(struct blob *b)
{
	if (b && --b->refs == 0) {
		st.held -= b->len;
		free(b);
	}
}

/* evbuffer's clean-up of a reference: the chain holding it was freed. */
static void ref_done(const void *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	blob_unref(arg);
}

static int add_ref(struct evbuffer *out, struct blob *b, size_t off, size_t len)
{
	if (!len)
		return 0;
	b->refs++;
	if (evbuffer_add_reference(out, b->data + off, len, ref_done, b) < 0) {
		b->refs--;
		return -1;
	}
	return 0;
}

/* The large part of an answer: domains, hosts, statistics. */
static void state_json(struct evbuffer *b)
{
	const Mtrace__Stats *s = feed_last_stats();

	evbuffer_add(b, ",\"domains\":", 11);
	feed_state_json(b);
	if (feed_fleet()) {
		evbuffer_add(b, ",\"hosts\":", 9);
		feed_hosts_json(b);
	}
	evbuffer_add(b, ",\"stats\":", 9);
	if (s)
		json_stats(b, s, true);
	else
		evbuffer_add(b, "null", 4);
}

/* The state as of now, or the last one built when a new one would not fit beside the
 * answers held (stale); NULL when there is none, or the state alone passes the cap. */
static struct blob *current_state(void)
{
	uint64_t gen = hist_head();
	int64_t now = now_ms();
	struct blob *b;

	if (st.state && st.state->gen == gen && now - st.state->born_ms < STATE_MAX_AGE_MS)
		return st.state;
	/* the one being replaced is freed with its last answer: a new one of its size
	 * must fit beside what is held */
	if (st.state && st.held + st.state->len > st.cap) {
		st.stale++;
		return st.state;
	}
	state_json(st.scratch);
	if (evbuffer_get_length(st.scratch) > st.cap) {
		/* never to be sent: a 503, not an older state for ever */
		evbuffer_drain(st.scratch, evbuffer_get_length(st.scratch));
		blob_unref(st.state);
		st.state = NULL;
		return NULL;
	}
	if (st.held + evbuffer_get_length(st.scratch) > st.cap || !(b = blob_new(st.scratch))) {
		evbuffer_drain(st.scratch, evbuffer_get_length(st.scratch));
		if (!st.state)
			return NULL;
		st.stale++;
		return st.state;
	}
	b->gen = gen;
	b->born_ms = now;
	st.built++;
	blob_unref(st.state);
	st.state = b;
	return b;
}

/* The answer's own parts around the state: what it is, and mtrace-web's counters. */
static void own_head(struct evbuffer *b)
{
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"state\",\"server\":\"mtrace-web " MTRACE_VERSION
	    "\",\"instance\":\"%" PRIx64 "\",\"connected\":%s,\"daemon\":",
	    hist_instance(), feed_connected() ? "true" : "false");
	json_str(b, feed_daemon());
}

static void own_tail(struct evbuffer *b)
{
	struct hf_stats fs;
	uint64_t hosts_ev, doms_ev, stats_dr;

	hf_stats(st.front, &fs);
	tab_counts(&hosts_ev, &doms_ev, &stats_dr);
	evbuffer_add_printf(b,
	    ",\"web\":{\"events_in\":%" PRIu64 ",\"malformed_batches\":%" PRIu64
	    ",\"history\":{\"first_event\":%" PRIu64 ",\"events\":%" PRIu64
	    ",\"bytes\":%zu,\"max_bytes\":%zu},\"connections\":%u"
	    ",\"refused_connections\":%" PRIu64 ",\"cut_connections\":%" PRIu64
	    ",\"requests\":%" PRIu64 ",\"busy_answers\":%" PRIu64 ",\"queued_bytes\":%zu"
	    ",\"answers\":{\"bytes\":%zu,\"max_bytes\":%zu,\"states_built\":%" PRIu64
	    ",\"stale\":%" PRIu64 "},\"hosts_evicted\":%" PRIu64 ",\"domains_evicted\":%" PRIu64
	    ",\"stats_dropped\":%" PRIu64 ",\"browsers\":",
	    feed_events(), feed_malformed(), hist_events_before(hist_tail()), hist_events_total(),
	    hist_bytes_held(), st.o->history_bytes, fs.live, fs.refused + fs.refused_source,
	    fs.cut + fs.cut_reader + fs.evicted, fs.requests, fs.busy + st.busy, fs.queued, st.held,
	    st.cap, st.built, st.stale, hosts_ev, doms_ev, stats_dr);
	sse_state_json(b);
	if (feed_fleet()) {
		evbuffer_add(b, ",\"bad_messages\":", 16);
		if (feed_bad_json(b) < 0)
			evbuffer_add(b, "null", 4);
	}
	evbuffer_add(b, "}}\n", 3);
}

/* As the front's own 503 (hf_reply): the headers of a JSON answer go. */
static void busy(struct evhttp_request *req)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);

	st.busy++;
	evhttp_clear_headers(out);
	hf_common_headers(req, "text/plain; charset=utf-8");
	evhttp_add_header(out, "Retry-After", "1");
	evhttp_add_header(out, "Connection", "close");
	hf_send_text(req, 503, "Service Unavailable",
	    "answers not read by their clients fill the output cap");
}

void state_serve(struct evhttp_request *req)
{
	struct blob *state = current_state(), *own;
	struct evbuffer *b;
	size_t head;

	if (!state) {
		busy(req);
		return;
	}
	own_head(st.scratch);
	head = evbuffer_get_length(st.scratch);
	own_tail(st.scratch);
	if (st.held + evbuffer_get_length(st.scratch) > st.cap || !(own = blob_new(st.scratch))) {
		evbuffer_drain(st.scratch, evbuffer_get_length(st.scratch));
		busy(req);
		return;
	}
	b = evbuffer_new();
	if (!b || add_ref(b, own, 0, head) < 0 || add_ref(b, state, 0, state->len) < 0 ||
	    add_ref(b, own, head, own->len - head) < 0) {
		if (b)
			evbuffer_free(b); /* the references taken let go */
		blob_unref(own);
		busy(req);
		return;
	}
	blob_unref(own); /* the answer's references hold it now */
	hf_reply(st.front, req, 200, "OK", b);
	evbuffer_free(b);
}

int state_init(struct http_front *front, const struct web_opts *o, size_t cap)
{
	st.front = front;
	st.o = o;
	st.cap = cap;
	st.scratch = evbuffer_new();
	return st.scratch ? 0 : -1;
}

void state_fini(void)
{
	blob_unref(st.state);
	if (st.scratch)
		evbuffer_free(st.scratch);
	memset(&st, 0, sizeof(st));
}
