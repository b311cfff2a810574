/*
 * ring.c - the producer's slow paths: making room (overwrite the oldest records, pad
 * to the end of the data area), notifying, and the ops that carry a string.
 * The fast path is inline in mtrace-guest.h.
 */
#include <string.h>

#include "mtrace-guest.h"

/*
 * Extra bytes freed whenever we must overwrite, so that a ring in flight-recorder
 * steady state takes this slow path once per slack bytes instead of once per event.
 * Those records are dropped a little early; the reader counts them exactly (seq gaps).
 */
static uint64_t
overwrite_slack(uint64_t size)
{
	uint64_t s = size / 32;
	return s > MTRACE_REC_MAX ? MTRACE_REC_MAX : s;
}

/*
 * Advance the tail over whole records until `need` bytes fit after head, then
 * publish it.  The tail store comes first and a release fence keeps every later
 * store (the overwriting bytes) after it: a reader that copied those bytes and then
 * re-loads the tail (after an acquire fence) sees a tail past them and drops them.
 */
static void
free_space(struct mtrace_ring *r, uint64_t need)
{
	uint64_t size = r->mask + 1;
	uint64_t tail = r->tail;

	if (r->head + need - tail <= size)
		return;
	if (need > size)
		need = size;
	while (r->head + need - tail > size) {
		uint16_t len;
		uint64_t off = tail & r->mask;

		memcpy(&len, r->data + off, sizeof(len));
		/* Our own memory, but a garbage-writing test guest may have scribbled on it:
		 * never loop on a bad length, drop everything instead. */
		if (len < MTRACE_REC_ALIGN || len % MTRACE_REC_ALIGN != 0 ||
		    len > r->head - tail || off + len > size) {
			tail = r->head;
			break;
		}
		tail += len;
	}
	r->tail = tail;
	__atomic_store_n(&r->hdr->tail, tail, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void
mtrace_ring_kick(struct mtrace_ring *r)
{
	r->hdr->notifies++;
	if (r->notify != NULL)
		r->notify(r->guest);
}

/* Publish head (release) and notify if the reader's threshold lies in what we added. */
static void
publish(struct mtrace_ring *r, uint64_t added)
{
	uint64_t req;

	__atomic_store_n(&r->hdr->head, r->head, __ATOMIC_RELEASE);
	req = __atomic_load_n(&r->hdr->req_event, __ATOMIC_RELAXED);
	if (r->head - req < added)
		mtrace_ring_kick(r);
}

void
mtrace_ring_make_room(struct mtrace_ring *r, uint32_t len)
{
	uint64_t size = r->mask + 1;
	uint64_t off = r->head & r->mask;

	if (off + len > size) {
		/* Records never straddle the end: fill the gap with one PAD record
		 * (it is < len <= MTRACE_REC_MAX, so it fits the u16 length). */
		uint64_t pad = size - off;
		struct mtrace_rec *rec;

		free_space(r, pad);
		rec = (struct mtrace_rec *)(r->data + off);
		rec->len = (uint16_t)pad;
		rec->op = MTRACE_OP_PAD;
		rec->type = 0;
		rec->seq = 0;
		r->head += pad;
		/* Published now so the tail can never pass the published head below. */
		publish(r, pad);
	}
	free_space(r, len + overwrite_slack(size));
}

void
mtrace_emit_slow(struct mtrace_ring *r, uint8_t op, uint8_t type, uint64_t ts,
		 uint64_t thread, uint64_t arg, const char *str, size_t slen)
{
	uint32_t len;
	uint64_t off;
	uint8_t *p;
	struct mtrace_rec rec;

	if (str == NULL)
		slen = 0;
	if (slen > MTRACE_STR_MAX)
		slen = MTRACE_STR_MAX;
	len = (uint32_t)(MTRACE_REC_FIXED + slen + 1 + MTRACE_REC_ALIGN - 1) &
	      ~(MTRACE_REC_ALIGN - 1);
	if (r->head + len - r->tail > r->mask + 1 || (r->head & r->mask) + len > r->mask + 1)
		mtrace_ring_make_room(r, len);
	off = r->head & r->mask;
	p = r->data + off;
	rec.len = (uint16_t)len;
	rec.op = op;
	rec.type = type;
	rec.seq = r->seq++;
	rec.ts = ts;
	rec.thread = thread;
	rec.arg = arg;
	memcpy(p, &rec, sizeof(rec));
	if (slen > 0)
		memcpy(p + MTRACE_REC_FIXED, str, slen);
	/* NUL and zero padding: the reader needs the NUL, and stale bytes must not leak. */
	memset(p + MTRACE_REC_FIXED + slen, 0, len - MTRACE_REC_FIXED - slen);
	r->head += len;
	publish(r, len);
}

static size_t
str_len(const char *s)
{
	return s == NULL ? 0 : strnlen(s, MTRACE_STR_MAX);
}

void
mtrace_label(struct mtrace_ring *r, uint64_t thread, const char *label)
{
	mtrace_emit_slow(r, MTRACE_OP_LABEL, 0, mtrace_now(r), thread, 0, label,
			 str_len(label));
}

void
mtrace_fails(struct mtrace_ring *r, uint64_t thread, uint64_t resolvee, const char *exn)
{
	mtrace_emit_slow(r, MTRACE_OP_FAILS, 0, mtrace_now(r), thread, resolvee, exn,
			 str_len(exn));
}

void
mtrace_counter(struct mtrace_ring *r, uint64_t thread, const char *name, int64_t value)
{
	mtrace_emit_slow(r, MTRACE_OP_COUNTER, 0, mtrace_now(r), thread, (uint64_t)value, name,
			 str_len(name));
}

void
mtrace_increase(struct mtrace_ring *r, uint64_t thread, const char *name, int64_t amount)
{
	mtrace_emit_slow(r, MTRACE_OP_INCREASE, 0, mtrace_now(r), thread, (uint64_t)amount, name,
			 str_len(name));
}

void
mtrace_ring_start(struct mtrace_ring *r)
{
	mtrace_emit_slow(r, MTRACE_OP_RING_START, 0, mtrace_now(r), MTRACE_THREAD_NONE,
			 r->hdr->ring_index, r->hdr->name, strnlen(r->hdr->name,
			 sizeof(r->hdr->name) - 1));
}

void
mtrace_ring_init_local(struct mtrace_ring *r, struct mtrace_ring_hdr *hdr, void *data,
		       uint32_t data_pages, uint32_t clock, uint32_t index, const char *name)
{
	memset(hdr, 0, MTRACE_PAGE_SIZE);
	memset(data, 0, (size_t)data_pages * MTRACE_PAGE_SIZE);
	hdr->magic = MTRACE_RING_MAGIC;
	/* Version 1 unless the header needs the time block: older readers keep working. */
	hdr->version = clock == MTRACE_CLOCK_TSC ? MTRACE_RING_VERSION : 1;
	hdr->hdr_size = sizeof(*hdr);
	hdr->data_pages = data_pages;
	hdr->clock = clock ? clock : MTRACE_CLOCK_MONOTONIC;
	hdr->ring_index = index;
	if (name != NULL)
		strncpy(hdr->name, name, sizeof(hdr->name) - 1);
	memset(r, 0, sizeof(*r));
	r->hdr = hdr;
	r->data = data;
	r->mask = (uint64_t)data_pages * MTRACE_PAGE_SIZE - 1;
	r->clock = hdr->clock;
}
