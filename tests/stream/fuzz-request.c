/*
 * fuzz-request.c - the daemon's request path on any bytes a client could send: the
 * frames of a connection cut as stream-request.c cuts them (common/frame.c, at most
 * FRAME_MAX_TO_DAEMON each), each unpacked as a ClientMsg, and a Subscribe checked
 * by stream_subscribe_invalid (daemon/stream-msg.c); one it takes is copied as a group
 * keeps it (stream_sub_copy) and its label prefixes compiled and matched
 * (common/label-prefix.c).  A frame that is bad or too large
 * ends the input, as it ends the connection.  Beyond "no crash, no leak": a frame is
 * never said to end past the input, a refused Subscribe says why in printable text,
 * and an accepted one is inside every limit the server relies on afterwards.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz.h"
#include "label-prefix.h"
#include "mtrace.pb-c.h"
#include "stream-msg.h"

static void check_subscribe(const Mtrace__Subscribe *s)
{
	const char *why = stream_subscribe_invalid(s);

	if (why != NULL) {
		if (!why[0])
			abort();
		for (const char *p = why; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				abort();
		return;
	}
	if ((s->stats_interval_ms != 0 && s->stats_interval_ms < 100) ||
	    s->stats_interval_ms > 3600u * 1000)
		abort();
	if (s->n_domids > 256 || s->n_domain_names > 256 || s->n_ops > 256 || s->n_labels > 256)
		abort();
	for (size_t i = 0; i < s->n_ops; i++)
		if (s->ops[i] > 255)
			abort();
	for (size_t i = 0; i < s->n_domain_names; i++)
		if (strlen(s->domain_names[i]) > 256)
			abort();
	for (size_t i = 0; i < s->n_labels; i++)
		if (strlen(s->labels[i]) > 256)
			abort();
	if ((unsigned)s->sort > MTRACE__SORT_KEY__SORT_ID)
		abort();
	/* what a group then does with it: its copy, and the compiled label filter, which
	 * must agree with the plain definition (a label passes when it starts with one
	 * of the prefixes) */
	Mtrace__Subscribe *c = stream_sub_copy(s);
	struct label_filter f;
	static const char *const probes[] = { "", "a", "net/x", "disk", "label-1", "\xff" };
	if (!c || label_filter_compile(&f, c->labels, c->n_labels) < 0)
		abort();
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]) + c->n_labels; i++) {
		const char *l = i < sizeof(probes) / sizeof(probes[0])
		    ? probes[i]
		    : c->labels[i - sizeof(probes) / sizeof(probes[0])];
		bool want = label_prefix_match(l, c->labels, c->n_labels);
		if (label_filter_match(&f, l) != want)
			abort();
	}
	label_filter_free(&f);
	mtrace__subscribe__free_unpacked(c, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		size_t hdr = 0, msg = 0;
		enum frame_status st =
		    frame_parse(data + off, size - off, FRAME_MAX_TO_DAEMON, &hdr, &msg);
		Mtrace__ClientMsg *m;

		if (st == FRAME_TOO_LARGE &&
		    (hdr == 0 || hdr > FRAME_VARINT_MAX || msg <= FRAME_MAX_TO_DAEMON))
			abort();
		if (st != FRAME_OK)
			break;
		if (hdr == 0 || hdr > FRAME_VARINT_MAX || msg > FRAME_MAX_TO_DAEMON ||
		    msg > size - off - hdr)
			abort();
		m = mtrace__client_msg__unpack(NULL, msg, data + off + hdr);
		if (m == NULL)
			break; /* "request does not decode": the connection ends */
		if (m->msg_case == MTRACE__CLIENT_MSG__MSG_SUBSCRIBE && m->subscribe != NULL)
			check_subscribe(m->subscribe);
		mtrace__client_msg__free_unpacked(m, NULL);
		off += hdr + msg;
	}
	return 0;
}

/* One packed ClientMsg, framed, appended to buf at *n. */
static void put(uint8_t *buf, size_t *n, size_t cap, const Mtrace__ClientMsg *m)
{
	size_t len = mtrace__client_msg__get_packed_size(m);

	if (*n + FRAME_VARINT_MAX + len > cap)
		abort();
	*n += frame_put_len(buf + *n, len);
	*n += mtrace__client_msg__pack(m, buf + *n);
}

/* What real clients send: Hello, a Subscribe with every kind of filter, a Ping. */
void fuzz_seeds(void (*run)(const uint8_t *data, size_t size))
{
	static uint8_t buf[4096];
	Mtrace__ClientMsg hm = MTRACE__CLIENT_MSG__INIT, sm = MTRACE__CLIENT_MSG__INIT,
	                  pm = MTRACE__CLIENT_MSG__INIT;
	Mtrace__Hello h = MTRACE__HELLO__INIT;
	Mtrace__Subscribe s = MTRACE__SUBSCRIBE__INIT;
	Mtrace__Ping p = MTRACE__PING__INIT;
	uint32_t domids[] = { 1, 7 }, ops[] = { 0, 5, 64 };
	char *names[] = { "web", "guest2" }, *labels[] = { "net/", "disk" };
	size_t n = 0;

	h.version = 1;
	h.software = "mtrace-cat 0.1.0";
	hm.msg_case = MTRACE__CLIENT_MSG__MSG_HELLO;
	hm.hello = &h;
	s.n_domids = 2;
	s.domids = domids;
	s.n_domain_names = 2;
	s.domain_names = names;
	s.n_ops = 3;
	s.ops = ops;
	s.n_labels = 2;
	s.labels = labels;
	s.events = true;
	s.stats_interval_ms = 200;
	s.top_n = 20;
	s.sort = MTRACE__SORT_KEY__SORT_READS;
	s.label_stats = true;
	sm.msg_case = MTRACE__CLIENT_MSG__MSG_SUBSCRIBE;
	sm.subscribe = &s;
	p.cookie = 42;
	pm.msg_case = MTRACE__CLIENT_MSG__MSG_PING;
	pm.ping = &p;
	put(buf, &n, sizeof(buf), &hm);
	put(buf, &n, sizeof(buf), &sm);
	put(buf, &n, sizeof(buf), &pm);
	run(buf, n);
	/* A second Subscribe, statistics only, after the first. */
	s.events = false;
	s.n_labels = 0;
	s.stats_interval_ms = 100;
	put(buf, &n, sizeof(buf), &sm);
	run(buf, n);
}
