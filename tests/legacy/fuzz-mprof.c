/*
 * fuzz-mprof.c - libFuzzer target for daemon/mprof.c: packet headers, events and ref
 * lists.  The first byte chooses:
 *   even: a ref list (the rest), parsed with a cap taken from the second byte;
 *   odd:  two buffer copies A and B (the rest, split in halves) polled A, B, B, A by one
 *         reader, so the two-poll stability rule, counter ordering and loss accounting
 *         all see hostile input.
 * ASan checks that nothing reads outside the copies; the callback checks every event
 * it is handed lies inside the copy and is well-formed.
 *
 * Built with -fsanitize=fuzzer under clang (meson -Dfuzzer=enabled); for other builds
 * tests/lib/fuzz-main.c supplies main() and replays the corpus plus mutations.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mprof.h"

struct bounds {
	const uint8_t *lo, *hi;
};

static void
check_event(const struct mtrace_event *ev, void *arg)
{
	const struct bounds *b = arg;

	if (ev->op >= MTRACE_OP_COUNT_MIRAGE)
		abort();
	if (ev->str) {
		const uint8_t *s = (const uint8_t *)ev->str;

		if (s < b->lo || s + ev->str_len >= b->hi || s[ev->str_len] != 0 ||
		    memchr(s, 0, ev->str_len) != NULL || ev->str_len > MTRACE_STR_MAX)
			abort();
	}
}

static void
poll_one(struct mprof_reader *r, const uint8_t *src, size_t len)
{
	/* An exact-size heap copy, so ASan sees any read past it. */
	uint8_t *copy = malloc(len);
	struct bounds b = { copy, copy + len };

	if (!copy)
		return;
	memcpy(copy, src, len);
	mprof_reader_poll(r, copy, len, check_event, &b);
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	if (!(data[0] & 1)) {
		uint32_t refs[MPROF_MAX_PAGES];
		char err[128];
		char *val = malloc(size - 2 ? size - 2 : 1);
		int n;

		if (!val)
			return 0;
		memcpy(val, data + 2, size - 2);
		n = mprof_parse_refs(val, size - 2, refs, data[1] ? data[1] : MPROF_MAX_PAGES,
				     err, sizeof(err));
		if (n == 0 || n > (int)MPROF_MAX_PAGES)
			abort();
		free(val);
		return 0;
	}
	size_t half = (size - 1) / 2;
	struct mprof_reader *r = mprof_reader_new(half);

	if (!r)
		return 0;
	poll_one(r, data + 1, half);
	poll_one(r, data + 1 + half, half);
	poll_one(r, data + 1 + half, half);
	poll_one(r, data + 1, half);
	mprof_reader_free(r);
	return 0;
}
