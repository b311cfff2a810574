/*
 * deliver.c - state, then stream.  The state sees every event as it is decoded (its
 * label table is what the stream's label filters read); the stream gets them in runs
 * of up to DELIVER_BATCH_MAX, which it encodes once per group of clients.
 */
#include <string.h>

#include "deliver.h"
#include "mtrace-ring.h"
#include "ring-reader.h"
#include "state.h"
#include "stream.h"

/* An event's string points into the reader's copy window, which the next window of
 * the same drain call overwrites: a batch keeps its own copies. */
#define BATCH_STR (64u * 1024)
_Static_assert(BATCH_STR >= MTRACE_STR_MAX + 1, "a batch holds any string");

static struct {
	struct state_domain *sd;
	uint32_t domid, ring, clock;
	size_t n, str_len;
	struct mtrace_event ev[DELIVER_BATCH_MAX];
	char str[BATCH_STR];
} batch;

static void batch_flush(void)
{
	if (batch.n)
		stream_events(batch.domid, batch.ring, batch.clock, batch.ev, batch.n);
	batch.n = 0;
	batch.str_len = 0;
}

void deliver_begin(struct state_domain *sd, uint32_t domid, uint32_t ring, uint32_t clock)
{
	batch.sd = sd;
	batch.domid = domid;
	batch.ring = ring;
	batch.clock = clock;
	batch.n = 0;
	batch.str_len = 0;
}

void deliver_event(const struct mtrace_event *ev, void *arg)
{
	(void)arg;
	state_apply(batch.sd, ev);
	if (batch.n == DELIVER_BATCH_MAX ||
	    (ev->str && batch.str_len + ev->str_len + 1u > sizeof(batch.str)))
		batch_flush();
	batch.ev[batch.n] = *ev;
	if (ev->str) {
		char *s = batch.str + batch.str_len;

		memcpy(s, ev->str, ev->str_len);
		s[ev->str_len] = '\0';
		batch.ev[batch.n].str = s;
		batch.str_len += ev->str_len + 1u;
	}
	batch.n++;
}

/* Decoded events handed over per array: small enough to stay in L1 while the state
 * and then the stream's columns read it. */
#define RING_BATCH 512u
static struct mtrace_event ring_ev[RING_BATCH];

static void deliver_array(const struct mtrace_event *ev, size_t n, void *arg)
{
	(void)arg;
	/* what a batch already holds came first */
	batch_flush();
	state_apply_batch(batch.sd, ev, n);
	stream_events(batch.domid, batch.ring, batch.clock, ev, n);
}

size_t deliver_ring(struct ring_reader *rr, size_t budget, bool *more)
{
	return ring_reader_drain_batch(rr, budget, ring_ev, RING_BATCH, deliver_array, NULL, more);
}

void deliver_end(void)
{
	batch_flush();
	batch.sd = NULL;
}

void deliver_counts(struct state_domain *sd, uint32_t domid, uint32_t ring, uint64_t lost,
    uint64_t corrupt, uint64_t unknown)
{
	if (!lost && !corrupt && !unknown)
		return;
	state_domain_add_counts(sd, lost, corrupt, unknown);
	if (lost)
		stream_ring_loss(domid, ring, lost);
}

void deliver_domain_up(struct state_domain *sd, uint32_t domid, const char *name, uint32_t rings,
    uint32_t clock, bool legacy)
{
	state_domain_attached(sd, rings, clock, legacy);
	stream_domain_up(domid, name, rings, clock, legacy);
}

void deliver_domain_down(uint32_t domid, const char *reason)
{
	stream_domain_down(domid, reason);
}
