/*
 * deliver.h - the sink of every decoded event and every change of a traced domain:
 * the state first (statistics, labels the stream's filters look up), then the stream
 * to clients.  Ring guests (drain.c) and legacy guests (legacy.c) both deliver here.
 */
#ifndef MTRACED_DELIVER_H
#define MTRACED_DELIVER_H

#include <stdbool.h>
#include <stdint.h>

/* Events a batch holds: the stream gets runs of at most this many. */
#define DELIVER_BATCH_MAX 1024u

struct deliver;
struct mtrace_event;
struct state_domain;
struct stream;

/* The sink of one guests context, into stream; NULL when out of memory. */
struct deliver *deliver_new(struct stream *stream);
void deliver_free(struct deliver *dl);

/*
 * Events of one ring, in batches: ev->str need only be valid during deliver_event
 * (the reader's copy window moves, the legacy poller's copy is reused); the batch
 * keeps its own copies until deliver_end.
 */
void deliver_begin(struct deliver *dl, struct state_domain *sd, uint32_t domid, uint32_t ring,
    uint32_t clock, void *owner);
void deliver_event(const struct mtrace_event *ev, void *arg); /* a ring_event_cb, arg dl */
void deliver_end(struct deliver *dl);
/*
 * A ring's events straight from the decoder: each copy window is decoded into an
 * array that the state and then the stream read in place (no per-event callback, no
 * copy of events or strings).  Between deliver_begin and deliver_end.
 */
struct ring_reader;
size_t deliver_ring(struct deliver *dl, struct ring_reader *rr, size_t budget, bool *more);

/*
 * Called with deliver_begin's owner (the guest) and the port of every event-channel
 * send and receive, before the events go to the stream: what it sends first (an
 * EvtchnLink) reaches clients before the event that needs it.
 */
void deliver_port_hook(struct deliver *dl, void (*fn)(void *owner, uint32_t port));

/* A new clock map or event-channel link (clockmap.h) to clients. */
struct clockmap_rec;
struct evlink;
void deliver_clock_map(struct deliver *dl, const struct clockmap_rec *r);
void deliver_evtchn_link(struct deliver *dl, const struct evlink *l);

/* Decoder deltas of one ring: lost events are also told to clients. */
void deliver_counts(struct deliver *dl, struct state_domain *sd, uint32_t domid, uint32_t ring,
    uint64_t lost, uint64_t corrupt, uint64_t unknown);

/* The domain is traced (DomainUp), or no longer (DomainDown with reason). */
void deliver_domain_up(struct deliver *dl, struct state_domain *sd, uint32_t domid,
    const char *name, uint32_t rings, uint32_t clock, bool legacy);
void deliver_domain_down(struct deliver *dl, uint32_t domid, const char *reason);

#endif
