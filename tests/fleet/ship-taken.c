/*
 * ship-taken.c URL ID - mtrace-ship's publish queue (client/ship/queue.h) over a real
 * JetStream link, on a stream that already holds a message with id ID: a message
 * published with that id, never sent before, is acknowledged as a duplicate and dropped
 * by the stream.  The queue must count it as taken and lost, never as shipped, and tell
 * its events downstream in a Loss notice; the next message ships.  Run by
 * test-taken.sh, which starts the server and stores ID first.
 */
#include <inttypes.h>
#include <stdio.h>
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

	REQUIRE(argc == 3 && base, "usage: ship-taken URL ID");
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
	len = mtrace__server_msg__get_packed_size(&m);
	len += frame_put_len(frame, len);
	mtrace__server_msg__pack(&m, frame + len - mtrace__server_msg__get_packed_size(&m));
	queue_put(q, "mtrace.h1.d.events", argv[2], frame, len, 5);
	msgid_make(id, sizeof(id), id_base, "", 2);
	queue_put(q, "mtrace.h1.d.events", id, frame, len, 5);
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
