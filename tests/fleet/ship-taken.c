/*
 * mtrace-ship's publish queue (client/ship/queue.h) over a real JetStream link:
 *
 * ship-taken URL ID - on a stream that already holds a message with id ID: a message
 * published with that id, never sent before, is acknowledged as a duplicate and dropped
 * by the stream.  The queue must count it as taken and lost, never as shipped, and tell
 * its events downstream in a Loss notice; the next message ships.  Run by
 * test-taken.sh, which starts the server and stores ID first.
 *
 * ship-taken URL --full - a queue of exactly 4 event batches' bytes, filled (nothing is
 * acknowledged while the loop does not run): a fifth batch and a Stats are dropped, and
 * the DomainDown that comes next is not -- a reader must learn the domain ended even
 * when its last events were lost (host hk; test-queue-full.sh reads the stream back).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "frame.h"
#include "jetstream.h"
#include "msgid.h"
#include "mtrace.pb-c.h"
#include "queue.h"

static void flushed(void *arg)
{
	event_base_loopbreak(arg);
}

/* m packed as one frame into frame (room for it): its length. */
static size_t framed(const Mtrace__ServerMsg *m, uint8_t *frame)
{
	size_t n = mtrace__server_msg__get_packed_size(m), hl = frame_put_len(frame, n);

	return hl + mtrace__server_msg__pack(m, frame + hl);
}

static void full(struct event_base *base, struct jsl *l, const Mtrace__ServerMsg *events)
{
	const char *subject = "mtrace.hk._11.events";
	Mtrace__ServerMsg down = MTRACE__SERVER_MSG__INIT, stats = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainDown dd = MTRACE__DOMAIN_DOWN__INIT;
	Mtrace__Stats st = MTRACE__STATS__INIT;
	uint8_t frame[256];
	char id_base[MSGID_BASE_MAX], id[MSGID_MAX];
	size_t len = framed(events, frame);
	const struct queue_config qc = {
		.max_pending = 16, .queue_max = 4 * len, .retry_ms = 2000
	};
	struct ship_queue *q = queue_new(base, l, NULL, &qc);
	struct ship_figures f;
	unsigned seq = 0;

	REQUIRE(q);
	msgid_base(id_base, sizeof(id_base), "hk");
	queue_set_host(q, "hk", id_base);
	for (int i = 0; i < 5; i++) { /* the fifth finds the queue full */
		msgid_make(id, sizeof(id), id_base, "", ++seq);
		queue_put(q, subject, id, frame, len, 5, true);
	}
	stats.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
	stats.stats = &st;
	msgid_make(id, sizeof(id), id_base, "", ++seq);
	queue_put(q, "mtrace.hk._.stats", id, frame, framed(&stats, frame), 0, true);
	dd.domid = 11;
	down.msg_case = MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN;
	down.domain_down = &dd;
	msgid_make(id, sizeof(id), id_base, "", ++seq);
	queue_put(q, subject, id, frame, framed(&down, frame), 0, false);
	queue_flush(q, flushed, base);
	event_base_dispatch(base);
	queue_figures(q, &f);
	printf("# full: shipped=%" PRIu64 " dropped=%" PRIu64 " dropped_events=%" PRIu64
	       " loss_published=%" PRIu64 "\n",
	    f.shipped, f.dropped_msgs, f.dropped_events, f.loss_published);
	/* 4 batches, the DomainDown and the Loss notice; the fifth batch and the Stats not */
	CHECK(f.shipped == 6, "shipped=%" PRIu64, f.shipped);
	CHECK(f.dropped_msgs == 2 && f.dropped_events == 5);
	CHECK(f.loss_published == 5, "loss_published=%" PRIu64, f.loss_published);
	queue_free(q);
}

int main(int argc, char **argv)
{
	const struct jsl_config jc = {
		.url = argv[1], .replicas = 1, .no_stream = true, .ack_ms = 2000, .max_pending = 16
	};
	const struct queue_config qc = {
		.max_pending = 16, .queue_max = 1u << 20, .retry_ms = 2000
	};
	int64_t thread[5] = { 1, 2, 3, 4, 5 }, arg[5] = { 0 };
	int32_t dts[5] = { 0, 1, 1, 1, 1 };
	uint32_t op[5] = { 7, 7, 7, 7, 7 }, type[5] = { 0 };
	Mtrace__EventBatch b = MTRACE__EVENT_BATCH__INIT;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	struct event_base *base = event_base_new();
	char err[256], id_base[MSGID_BASE_MAX], id[MSGID_MAX];
	uint8_t frame[256];
	struct ship_figures f;
	struct ship_queue *q;
	struct jsl *l;
	size_t len;

	REQUIRE(argc == 3 && base, "usage: ship-taken URL ID|--full");
	REQUIRE(msgid_init() == 0);
	REQUIRE((l = jsl_open(&jc, err, sizeof(err))), "%s", err);
	REQUIRE((q = queue_new(base, l, NULL, &qc)));
	for (int i = 0; i < 100 && !jsl_up(l); i++)
		usleep(50000);
	REQUIRE(jsl_up(l), "not connected to %s", argv[1]);
	msgid_base(id_base, sizeof(id_base), "h1");
	queue_set_host(q, "h1", id_base);
	/* one batch of 5 events, published twice: under the id the stream has, then anew */
	b.n_ts_delta = b.n_op = b.n_thread = b.n_arg = b.n_type = 5;
	b.ts_delta = dts;
	b.op = op;
	b.thread = thread;
	b.arg = arg;
	b.type = type;
	m.msg_case = MTRACE__SERVER_MSG__MSG_EVENTS;
	m.events = &b;
	if (strcmp(argv[2], "--full") == 0) {
		queue_free(q); /* full() makes the queue it needs */
		full(base, l, &m);
		jsl_close(l);
		event_base_free(base);
		return check_status("ship-full");
	}
	len = framed(&m, frame);
	queue_put(q, "mtrace.h1.d.events", argv[2], frame, len, 5, true);
	msgid_make(id, sizeof(id), id_base, "", 2);
	queue_put(q, "mtrace.h1.d.events", id, frame, len, 5, true);
	queue_flush(q, flushed, base);
	event_base_dispatch(base);
	queue_figures(q, &f);
	printf("# taken=%" PRIu64 " shipped=%" PRIu64 " dropped=%" PRIu64 " dropped_events=%" PRIu64
	       " loss_published=%" PRIu64 "\n",
	    f.taken, f.shipped, f.dropped_msgs, f.dropped_events, f.loss_published);
	CHECK(f.taken == 1, "taken=%" PRIu64, f.taken);
	/* the second message and the Loss notice */
	CHECK(f.shipped == 2, "shipped=%" PRIu64, f.shipped);
	CHECK(f.dropped_msgs == 1 && f.dropped_events == 5);
	CHECK(f.loss_published == 5, "loss_published=%" PRIu64, f.loss_published);
	queue_free(q);
	jsl_close(l);
	event_base_free(base);
	return check_status("ship-taken");
}
