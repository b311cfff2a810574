/*
 * hist.c - the shared history of SSE messages.  Every browser reads it through its
 * own cursor, so a message is formatted once however many browsers there are, and a
 * browser that reconnects with Last-Event-ID resumes where it stopped as long as its
 * next message is still held.  Bounded by bytes and by count; the oldest go first.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web.h"

#define HIST_SLOTS (1u << 17) /* messages held at most (a power of two) */

static struct {
	struct hmsg *slot[HIST_SLOTS];
	uint64_t tail, head;    /* ids held: [tail, head) */
	uint64_t events, bytes; /* totals over every message pushed */
	size_t held, max;
	uint64_t instance;
} h;

void hist_init(size_t max_bytes, uint64_t instance)
{
	h.tail = h.head = 1;
	h.max = max_bytes;
	h.instance = instance;
}

static void evict_one(void)
{
	struct hmsg **s = &h.slot[h.tail & (HIST_SLOTS - 1)];

	h.held -= (*s)->len;
	free(*s);
	*s = NULL;
	h.tail++;
}

void hist_free(void)
{
	while (h.tail < h.head)
		evict_one();
}

uint64_t hist_push(const char *event, const char *data, size_t len, uint32_t events)
{
	char head[128];
	int hl;
	struct hmsg *m;

	/* The id says which instance and how many events came so far: a browser that
	 * reconnects after this history lost its place is told exactly how many. */
	hl = snprintf(head, sizeof(head),
	    "id: %" PRIx64 ".%" PRIu64 ".%" PRIu64 "\nevent: %s\ndata: ", h.instance, h.head,
	    h.events + events, event);
	m = malloc(sizeof(*m) + (size_t)hl + len + 2);
	if (!m)
		return 0;
	m->id = h.head;
	m->ev_before = h.events;
	m->bytes_before = h.bytes;
	m->events = events;
	m->len = (uint32_t)((size_t)hl + len + 2);
	memcpy(m->data, head, (size_t)hl);
	memcpy(m->data + hl, data, len);
	memcpy(m->data + hl + len, "\n\n", 2);
	while (h.tail < h.head && (h.head - h.tail >= HIST_SLOTS || h.held + m->len > h.max))
		evict_one();
	h.slot[h.head & (HIST_SLOTS - 1)] = m;
	h.held += m->len;
	h.events += events;
	h.bytes += m->len;
	return h.head++;
}

const struct hmsg *hist_get(uint64_t id)
{
	if (id < h.tail || id >= h.head)
		return NULL;
	return h.slot[id & (HIST_SLOTS - 1)];
}

uint64_t hist_tail(void)
{
	return h.tail;
}
uint64_t hist_head(void)
{
	return h.head;
}
uint64_t hist_events_total(void)
{
	return h.events;
}
uint64_t hist_bytes_total(void)
{
	return h.bytes;
}
size_t hist_bytes_held(void)
{
	return h.held;
}
uint64_t hist_instance(void)
{
	return h.instance;
}

/* What came before message id, as its header says (id == head: everything). */
uint64_t hist_events_before(uint64_t id)
{
	const struct hmsg *m = hist_get(id);

	return m ? m->ev_before : h.events;
}

uint64_t hist_bytes_before(uint64_t id)
{
	return id >= h.tail && id < h.head ? h.slot[id & (HIST_SLOTS - 1)]->bytes_before : h.bytes;
}
