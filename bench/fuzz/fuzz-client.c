/*
 * fuzz-client.c - the daemon's request path on hostile bytes: frames split as the
 * server splits them (frame_parse, FRAME_MAX_TO_DAEMON), each unpacked as a
 * ClientMsg, a Subscribe checked (stream_subscribe_invalid) and, if it passes, copied
 * as a group keeps it (stream_sub_copy) and its label prefixes compiled and matched
 * (label_filter_*): the code mtraced runs, daemon/stream-msg.c and
 * common/label-prefix.c.  libFuzzer target and
 * the body of fuzz-volume-client.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz-client.h"
#include "frame.h"
#include "label-prefix.h"
#include "stream-msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_client_counts fuzz_client_counts;

static void subscribe(const Mtrace__Subscribe *s)
{
	struct fuzz_client_counts *k = &fuzz_client_counts;
	static const char *const probes[] = { "", "a", "label-1", "zzzz", "\xff\xfe" };
	Mtrace__Subscribe *c;
	struct label_filter f;

	if (stream_subscribe_invalid(s)) {
		k->sub_refused++;
		return;
	}
	c = stream_sub_copy(s);
	if (!c) {
		k->sub_copy_failed++;
		return;
	}
	if (label_filter_compile(&f, c->labels, c->n_labels) == 0) {
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
			k->label_matches += label_filter_match(&f, probes[i]);
		for (size_t i = 0; i < c->n_labels; i++)
			k->label_matches += label_filter_match(&f, c->labels[i]);
		label_filter_free(&f);
	}
	mtrace__subscribe__free_unpacked(c, NULL);
	k->sub_taken++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_client_counts *k = &fuzz_client_counts;
	size_t off = 0;

	k->inputs++;
	while (off < size) {
		size_t hdr, mlen;
		enum frame_status st =
		    frame_parse(data + off, size - off, FRAME_MAX_TO_DAEMON, &hdr, &mlen);
		Mtrace__ClientMsg *m;

		if (st == FRAME_NEED_MORE) {
			k->partial++;
			break;
		}
		if (st != FRAME_OK) {
			k->bad_frames++;
			break; /* the server sends an Error and closes */
		}
		k->frames++;
		m = mtrace__client_msg__unpack(NULL, mlen, data + off + hdr);
		off += hdr + mlen;
		if (!m) {
			k->undecodable++;
			break;
		}
		switch (m->msg_case) {
		case MTRACE__CLIENT_MSG__MSG_HELLO:
			k->hellos++;
			break;
		case MTRACE__CLIENT_MSG__MSG_PING:
			k->pings++;
			break;
		case MTRACE__CLIENT_MSG__MSG_SUBSCRIBE:
			subscribe(m->subscribe);
			break;
		default:
			k->other++;
			break;
		}
		mtrace__client_msg__free_unpacked(m, NULL);
	}
	return 0;
}
