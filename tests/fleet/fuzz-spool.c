/*
 * fuzz-spool.c - libFuzzer target for what mtrace-ship does with a record it reads back
 * from its spool, a file whoever had the directory's rights may have written: the check
 * against what this shipper publishes (client/ship/record.c) and the cut under a
 * server's max_payload (client/ship/split.c), at a limit the input chooses.  Nothing may
 * crash, read out of bounds or loop; a cut's parts must each fit the limit, unpack, be of
 * the message's kind and, for a batch, hold its events.
 *
 * Input: one byte for the limit (64 + 64 * b bytes), one each for the subject's and the
 * id's lengths, then the subject, the id and the payload; the seeds are in
 * fuzz-spool-corpus/ (made by fuzz_spool_seeds.py).  Built with -fsanitize=fuzzer under
 * clang (meson -Dfuzzer=enabled), record.c and split.c with it so that their coverage
 * guides it; elsewhere tests/lib/fuzz-main.c replays the corpus and its mutations.
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz.h"
#include "mtrace.pb-c.h"
#include "record.h"
#include "split.h"

static Mtrace__ServerMsg *unpack(const uint8_t *f, size_t len)
{
	size_t hdr, msg;

	if (frame_parse(f, len, FRAME_MAX_TO_CLIENT, &hdr, &msg) != FRAME_OK || hdr + msg != len)
		return NULL;
	return mtrace__server_msg__unpack(NULL, msg, f + hdr);
}

static void check_cut(const uint8_t *payload, size_t len, size_t limit)
{
	Mtrace__ServerMsg *m = unpack(payload, len), *p;
	uint64_t events = 0;
	struct split sp;
	int r = split_frame(payload, len, limit, &sp);

	if (r == 1 && !m)
		abort(); /* cut what is not a message */
	for (size_t k = 0; r == 1 && k < sp.n; k++) {
		if (sp.len[k] > limit || !(p = unpack(sp.frame[k], sp.len[k])) ||
		    p->msg_case != m->msg_case)
			abort();
		events += sp.events[k];
		mtrace__server_msg__free_unpacked(p, NULL);
	}
	if (r == 1 && m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS && events != m->events->n_op)
		abort();
	split_free(&sp);
	if (m)
		mtrace__server_msg__free_unpacked(m, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char subject[256], id[256];
	size_t sl, il, limit;
	uint32_t events;

	if (size < 3)
		return 0;
	limit = 64 + 64 * (size_t)data[0];
	sl = data[1];
	il = data[2];
	if (size < 3 + sl + il)
		return 0;
	memcpy(subject, data + 3, sl);
	subject[sl] = 0;
	memcpy(id, data + 3 + sl, il);
	id[il] = 0;
	data += 3 + sl + il;
	size -= 3 + sl + il;
	record_invalid("h1", subject, id, data, size, &events);
	check_cut(data, size, limit);
	return 0;
}
