/*
 * queue-ring.c - the publish queue's ring of entries (queue-int.h): entries in publish
 * order, appended at the tail, taken from the head; and the messages they hold.
 */
#include <stdlib.h>
#include <time.h>

#include "queue-int.h"
#include "xalloc.h"

double q_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct entry *q_at(struct ship_queue *q, size_t i)
{
	return &q->v[(q->head + i) % q->cap];
}

/* Append an entry owning m (NULL: one settled already); the ring grows as needed (the
 * bytes are bounded by the caller). */
struct entry *q_push(struct ship_queue *q, natsMsg *m, uint32_t events, uint64_t loss, bool spooled)
{
	struct entry *e;

	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 1024;
		struct entry *v = xreallocarray(NULL, cap, sizeof(*v));

		for (size_t i = 0; i < q->n; i++)
			v[i] = *q_at(q, i);
		free(q->v);
		q->v = v;
		q->cap = cap;
		q->head = 0;
	}
	e = q_at(q, q->n++);
	*e = (struct entry){
		.m = m,
		.loss = loss,
		.len = m ? (uint32_t)natsMsg_GetDataLength(m) : 0,
		.events = events,
		.spooled = spooled,
		.pops = spooled,
	};
	q->bytes += e->len;
	return e;
}

/* A message with its id, or NULL (no memory: the caller counts it lost). */
natsMsg *q_message(const char *subject, const char *id, const uint8_t *data, size_t len)
{
	natsMsg *m = NULL;

	if (natsMsg_Create(&m, subject, NULL, (const char *)data, (int)len) != NATS_OK)
		return NULL;
	if (natsMsgHeader_Set(m, MSG_ID_HDR, id) != NATS_OK) {
		natsMsg_Destroy(m);
		return NULL;
	}
	return m;
}
