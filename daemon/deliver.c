/*
 * deliver.c - state, then stream.  The state sees every event as it is decoded (its
 * label table is what the stream's label filters read); the stream gets them in runs
 * of up to DELIVER_BATCH_MAX, which it encodes once per group of clients.
 */
#include <stdlib.h>
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

/* Decoded events handed over per array: small enough to stay in L1 while the state
 * and then the stream's columns read it. */
#define RING_BATCH 512u

/* The sink of one guests context: the stream it feeds, the batch of the ring being
 * delivered (between deliver_begin and deliver_end), the decoder's array. */
struct deliver {
	struct stream *stream;
	void (*port_hook)(void *owner, uint32_t port);
	struct {
		void *owner;
		struct state_domain *sd;
		uint32_t domid, ring, clock;
		size_t n, str_len;
		struct mtrace_event ev[DELIVER_BATCH_MAX];
		char str[BATCH_STR];
	} batch;
	struct mtrace_event ring_ev[RING_BATCH];
};

struct deliver *deliver_new(struct stream *stream)
{
	struct deliver *dl = calloc(1, sizeof(*dl));

	if (dl)
		dl->stream = stream;
	return dl;
}

void deliver_free(struct deliver *dl)
{
	free(dl);
}

static void batch_flush(struct deliver *dl)
{
	if (dl->batch.n)
		stream_events(dl->stream, dl->batch.domid, dl->batch.ring, dl->batch.clock,
		    dl->batch.ev, dl->batch.n);
	dl->batch.n = 0;
	dl->batch.str_len = 0;
}

void deliver_begin(struct deliver *dl, struct state_domain *sd, uint32_t domid, uint32_t ring,
    uint32_t clock, void *owner)
{
	dl->batch.owner = owner;
	dl->batch.sd = sd;
	dl->batch.domid = domid;
	dl->batch.ring = ring;
	dl->batch.clock = clock;
	dl->batch.n = 0;
	dl->batch.str_len = 0;
}

void deliver_event(const struct mtrace_event *ev, void *arg)
{
	struct deliver *dl = arg;
	__typeof__(dl->batch) *batch = &dl->batch;

	state_apply(batch->sd, ev);
	if (dl->port_hook && (ev->op == MTRACE_OP_EVTCHN_SEND || ev->op == MTRACE_OP_EVTCHN_RECV))
		dl->port_hook(batch->owner, (uint32_t)ev->arg);
	if (batch->n == DELIVER_BATCH_MAX ||
	    (ev->str && batch->str_len + ev->str_len + 1u > sizeof(batch->str)))
		batch_flush(dl);
	batch->ev[batch->n] = *ev;
	if (ev->str) {
		char *s = batch->str + batch->str_len;

		memcpy(s, ev->str, ev->str_len);
		s[ev->str_len] = '\0';
		batch->ev[batch->n].str = s;
		batch->str_len += ev->str_len + 1u;
	}
	batch->n++;
}

static void deliver_array(const struct mtrace_event *ev, size_t n, void *arg)
{
	struct deliver *dl = arg;

	/* what a batch already holds came first */
	batch_flush(dl);
	state_apply_batch(dl->batch.sd, ev, n);
	/* the ports the state saw, each asked about before the events go out (a link
	 * precedes its channel's events in the stream) */
	if (dl->port_hook) {
		const uint32_t *ports;
		bool more;
		size_t np = state_batch_ports(dl->batch.sd, &ports, &more);

		for (size_t i = 0; i < np; i++)
			dl->port_hook(dl->batch.owner, ports[i]);
		for (size_t i = 0; more && i < n; i++)
			if (ev[i].op == MTRACE_OP_EVTCHN_SEND || ev[i].op == MTRACE_OP_EVTCHN_RECV)
				dl->port_hook(dl->batch.owner, (uint32_t)ev[i].arg);
	}
	stream_events(dl->stream, dl->batch.domid, dl->batch.ring, dl->batch.clock, ev, n);
}

size_t deliver_ring(struct deliver *dl, struct ring_reader *rr, size_t budget, bool *more)
{
	return ring_reader_drain_batch(
	    rr, budget, dl->ring_ev, RING_BATCH, deliver_array, dl, more);
}

void deliver_end(struct deliver *dl)
{
	batch_flush(dl);
	dl->batch.sd = NULL;
}

void deliver_port_hook(struct deliver *dl, void (*fn)(void *owner, uint32_t port))
{
	dl->port_hook = fn;
}

void deliver_clock_map(struct deliver *dl, const struct clockmap_rec *r)
{
	/* events delivered before it were the old map's */
	batch_flush(dl);
	stream_clock_map(dl->stream, r);
}

void deliver_evtchn_link(struct deliver *dl, const struct evlink *l)
{
	batch_flush(dl);
	stream_evtchn_link(dl->stream, l);
}

void deliver_counts(struct deliver *dl, struct state_domain *sd, uint32_t domid, uint32_t ring,
    uint64_t lost, uint64_t corrupt, uint64_t unknown)
{
	if (!lost && !corrupt && !unknown)
		return;
	state_domain_add_counts(sd, lost, corrupt, unknown);
	if (lost)
		stream_ring_loss(dl->stream, domid, ring, lost);
}

void deliver_domain_up(struct deliver *dl, struct state_domain *sd, uint32_t domid,
    const char *name, uint32_t rings, uint32_t clock, bool legacy)
{
	state_domain_attached(sd, rings, clock, legacy);
	stream_domain_up(dl->stream, domid, name, rings, clock, legacy);
}

void deliver_domain_down(struct deliver *dl, uint32_t domid, const char *reason)
{
	stream_domain_down(dl->stream, domid, reason);
}
