/*
 * queue.c - the publish queue (queue.h).  A ring of entries in publish order; each holds
 * its natsMsg (subject, data, Nats-Msg-Id header), which is the library's while in
 * flight and comes back with its completion.  Acknowledged entries leave from the head
 * only, so that a spooled record leaves the file only once every one before it has.
 *
 * Every event ends in pump(): take the completions, drop the acknowledged head, read
 * ahead from the spool, then send what the state allows.  The states:
 *   live    nothing failed: publish in order, up to max_pending out;
 *   hold    a failure (or a new connection while publishes are out): wait until nothing
 *           is out, then send the oldest entry alone (the probe) every 25..400 ms until
 *           it is acknowledged (live again) or retry_ms have passed (away);
 *   away    given up: every entry to the spool (or dropped), the queue empty; a new try
 *           every 250 ms while NATS is connected, the spool first.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>

#include "frame.h"
#include "mtrace.pb-c.h"
#include "queue.h"
#include "subject.h"
#include "xalloc.h"

#define FIRST_PAUSE_MS 25u
#define MAX_PAUSE_MS   400u
#define TRY_AGAIN_S    0.25 /* away: the next try */
#define READ_AHEAD     1024 /* spool records read in one turn at most */
#define MSG_ID_HDR     "Nats-Msg-Id"

enum {
	E_WAIT,
	E_FLIGHT,
	E_FAILED,
	E_ACKED
};

struct entry {
	natsMsg *m;    /* NULL once acknowledged; the library's while in flight */
	uint64_t loss; /* a Loss notice of this many events (0: one of mtraced's messages) */
	uint32_t len, events;
	uint8_t state;
	bool spooled; /* read from the spool: leaves it once acknowledged */
	bool sent;    /* published before: once more is a retry */
};

struct ship_queue {
	struct event_base *base;
	struct jsl *js;
	struct spool *spool;
	struct queue_config c;
	struct event *wake, *timer;
	/* entries [head, head + n) of the ring, in publish order; [0, next) of them were
	 * sent in this pass (in flight or acknowledged) */
	struct entry *v;
	size_t cap, head, n, next;
	uint64_t bytes;
	unsigned in_flight;
	uint64_t flight_gen; /* the connection those in flight went out on */
	/* hold */
	bool hold, probing, refused;
	double hold_until, next_probe;
	unsigned pause_ms;
	/* away */
	bool away, was_away, acked_since_try, spool_broken;
	double next_try;
	uint64_t drained_at_away;
	/* this shipper's own losses */
	uint64_t pending_loss, loss_seq;
	bool loss_queued, queue_full_said;
	char loss_subject[16 + SUBJECT_TOKEN_MAX], id_base[SUBJECT_TOKEN_MAX + 64];
	/* the end */
	bool flushing;
	double flush_until;
	void (*done)(void *);
	void *done_arg;
	struct jsl_done *took;
	struct ship_figures fig;
};

static void pump(struct ship_queue *q);

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct entry *at(struct ship_queue *q, size_t i)
{
	return &q->v[(q->head + i) % q->cap];
}

static const char *subject_of(natsMsg *m)
{
	const char *s = natsMsg_GetSubject(m);

	return s ? s : "?";
}

/* Append an entry owning m; the ring grows as needed (the bytes are bounded by the
 * caller). */
static void push(struct ship_queue *q, natsMsg *m, uint32_t events, uint64_t loss, bool spooled)
{
	struct entry *e;

	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 1024;
		struct entry *v = xreallocarray(NULL, cap, sizeof(*v));

		for (size_t i = 0; i < q->n; i++)
			v[i] = *at(q, i);
		free(q->v);
		q->v = v;
		q->cap = cap;
		q->head = 0;
	}
	e = at(q, q->n++);
	*e = (struct entry){
		.m = m,
		.loss = loss,
		.len = (uint32_t)natsMsg_GetDataLength(m),
		.events = events,
		.spooled = spooled,
	};
	q->bytes += e->len;
}

/* A message with its id, or NULL (no memory: the caller counts it lost). */
static natsMsg *message(const char *subject, const char *id, const uint8_t *data, size_t len)
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

static void lose(struct ship_queue *q, uint32_t events)
{
	q->fig.dropped_msgs++;
	q->fig.dropped_events += events;
	q->pending_loss += events;
}

/* To the spool, or lost. */
static void put_aside(struct ship_queue *q, const char *subject, const char *id,
    const uint8_t *data, size_t len, uint32_t events)
{
	int r = q->spool ? spool_put(q->spool, subject, id, data, len, events) : 1;

	if (r == 0) {
		q->fig.spooled++;
		return;
	}
	if (q->spool && !q->fig.dropped_msgs)
		fprintf(stderr, "mtrace-ship: spool full; dropping (counted)\n");
	lose(q, events);
}

/* The Loss notice of what this shipper dropped: domid 0 ring 0, as mtraced's own for a
 * client that reads too slowly, on the host's subject; after everything before it. */
static void put_loss(struct ship_queue *q)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;
	uint8_t buf[64];
	char id[sizeof(q->id_base) + 32];
	size_t hl, len;
	natsMsg *msg;

	if (!q->pending_loss || q->loss_queued || !q->loss_subject[0])
		return;
	l.dropped_for_client = q->pending_loss;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	len = mtrace__server_msg__get_packed_size(&m);
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(&m, buf + hl);
	snprintf(id, sizeof(id), "%s-loss-%" PRIu64, q->id_base, ++q->loss_seq);
	if (!(msg = message(q->loss_subject, id, buf, hl + len)))
		return;
	push(q, msg, 0, q->pending_loss, false);
	q->pending_loss = 0;
	q->loss_queued = true;
}

/* The first failure of a pass: nothing new goes out until it is resolved. */
static void start_hold(struct ship_queue *q, double now)
{
	if (q->hold)
		return;
	q->hold = true;
	q->probing = q->refused = false;
	q->hold_until = now + q->c.retry_ms / 1e3;
	q->next_probe = now + FIRST_PAUSE_MS / 1e3;
	q->pause_ms = FIRST_PAUSE_MS;
}

static void back_off(struct ship_queue *q, double now)
{
	q->next_probe = now + q->pause_ms / 1e3;
	if (q->pause_ms < MAX_PAUSE_MS)
		q->pause_ms *= 2;
}

/* e was refused or not answered in time (or could not be sent). */
static void failed(struct ship_queue *q, struct entry *e, natsStatus st, jsErrCode jerr, double now)
{
	bool transient = jsl_transient(st, jerr);

	e->state = E_FAILED;
	if (!q->hold && !q->was_away)
		fprintf(stderr, "mtrace-ship: publish to %s: %s (%d)%s\n", subject_of(e->m),
		    natsStatus_GetText(st), (int)jerr, transient ? "; sending it again" : "");
	start_hold(q, now);
	if (!transient)
		q->refused = true; /* not worth waiting for: to the spool */
}

/* Send e: 0, or -1 with e failed (and the queue holding). */
static int publish(struct ship_queue *q, struct entry *e, double now)
{
	natsMsg *m = e->m; /* the library's on success; e->m stays its name */
	natsStatus st = jsl_publish(q->js, &m);

	if (e->sent)
		q->fig.retried++;
	e->sent = true;
	if (st != NATS_OK) {
		failed(q, e, st, 0, now);
		return -1;
	}
	e->state = E_FLIGHT;
	if (++q->in_flight > q->fig.acks_pending_max)
		q->fig.acks_pending_max = q->in_flight;
	return 0;
}

/* NATS away: every entry to the spool (read-ahead records back to it), or dropped. */
static void give_up(struct ship_queue *q, double now)
{
	bool rewind = false;

	if (!q->was_away) {
		fprintf(stderr, "mtrace-ship: NATS is away; %s\n",
		    q->spool ? "spooling" : "no spool: dropping (counted)");
		q->drained_at_away = q->fig.drained;
	}
	q->away = q->was_away = true;
	q->hold = q->probing = q->refused = false;
	q->next_try = now + TRY_AGAIN_S;
	for (size_t i = 0; i < q->n; i++) {
		struct entry *e = at(q, i);
		const uint8_t *data;
		const char *id = NULL;

		if (e->spooled) {
			rewind = true;
		} else if (e->loss && e->state != E_ACKED) {
			/* told again, with what is lost meanwhile, when NATS is back */
			q->pending_loss += e->loss;
			q->loss_queued = false;
		} else if (e->state != E_ACKED) {
			data = (const uint8_t *)natsMsg_GetData(e->m);
			natsMsgHeader_Get(e->m, MSG_ID_HDR, &id);
			put_aside(q, subject_of(e->m), id ? id : "", data, e->len, e->events);
		}
		natsMsg_Destroy(e->m);
	}
	if (rewind)
		spool_rewind(q->spool);
	q->n = q->next = 0;
	q->bytes = 0;
	if (q->flushing && q->done) {
		/* the end comes with NATS away: what is left stays in the spool */
		void (*done)(void *) = q->done;
		q->done = NULL;
		done(q->done_arg);
	}
}

/* Acknowledged entries leave from the head, spooled records from the file with them. */
static void pop_acked(struct ship_queue *q)
{
	while (q->n && at(q, 0)->state == E_ACKED) {
		struct entry *e = at(q, 0);

		if (e->spooled) {
			/* counted here, not at the acknowledgement: a record acknowledged
			 * behind one that failed is read and sent again after a give-up */
			spool_pop(q->spool);
			q->fig.drained++;
			q->fig.shipped++;
			q->fig.shipped_bytes += e->len;
		}
		q->bytes -= e->len;
		q->head = (q->head + 1) % q->cap;
		q->n--;
		if (q->next)
			q->next--;
	}
	if (q->was_away && !q->away && !q->hold && q->acked_since_try &&
	    (!q->spool || !spool_records(q->spool))) {
		q->was_away = false;
		fprintf(stderr, "mtrace-ship: NATS is back; %" PRIu64 " spooled messages sent\n",
		    q->fig.drained - q->drained_at_away);
		queue_log(q, "drained");
	}
}

static void completed(struct ship_queue *q, const struct jsl_done *d, double now)
{
	struct entry *e = NULL;

	/* in flight are among the first `next`, the oldest usually first */
	for (size_t i = 0; i < q->next && !e; i++)
		if (at(q, i)->state == E_FLIGHT && at(q, i)->m == d->m)
			e = at(q, i);
	if (!e) {
		natsMsg_Destroy(d->m); /* cannot be: each publish completes once */
		return;
	}
	q->in_flight--;
	if (d->st == NATS_OK) {
		e->state = E_ACKED;
		q->acked_since_try = true;
		if (!e->spooled) {
			q->fig.shipped++;
			q->fig.shipped_bytes += e->len;
		}
		if (e->loss) {
			fprintf(stderr, "mtrace-ship: published a loss of %" PRIu64 " events\n",
			    e->loss);
			q->fig.loss_published += e->loss;
			q->loss_queued = false;
		}
		natsMsg_Destroy(e->m);
		e->m = NULL;
		if (q->probing) {
			/* the oldest is in: the rest follow in order */
			q->probing = q->hold = q->refused = false;
			q->next = 0;
		}
		return;
	}
	if (q->probing) {
		q->probing = false;
		back_off(q, now);
	}
	failed(q, e, d->st, d->jerr, now);
}

/* Spooled records read ahead into the queue while there is room. */
static void read_ahead(struct ship_queue *q, double now)
{
	for (unsigned k = 0; q->spool && k < READ_AHEAD && spool_unread(q->spool) &&
	     (q->bytes < q->c.queue_max || !q->n);
	     k++) {
		const char *subject, *id;
		const uint8_t *data;
		size_t len;
		uint32_t events;
		natsMsg *m;
		int r = spool_next(q->spool, &subject, &id, &data, &len, &events);

		if (r <= 0) {
			if (r < 0 && !q->spool_broken)
				perror("mtrace-ship: spool unreadable");
			q->spool_broken = r < 0;
			/* what was read ahead goes out; the rest at the next try */
			if (r < 0 && !q->n)
				give_up(q, now);
			return;
		}
		/* the record was read: an entry must stand for it (spool_pop follows them) */
		if (!(m = message(subject, id, data, len))) {
			fprintf(stderr, "mtrace-ship: out of memory\n");
			abort();
		}
		q->spool_broken = false;
		push(q, m, events, 0, true);
	}
}

/* A failure being resolved: the probe, or the give-up. */
static void resolve(struct ship_queue *q, double now)
{
	if (q->in_flight)
		return; /* every publish out there answers first */
	if (!q->n) {
		q->hold = false; /* all that was out came in */
		return;
	}
	if (q->refused || now >= q->hold_until) {
		give_up(q, now);
		return;
	}
	if (now < q->next_probe)
		return;
	if (!jsl_up(q->js)) {
		back_off(q, now); /* a reconnection wakes us too */
		return;
	}
	q->flight_gen = jsl_generation(q->js);
	if (publish(q, at(q, 0), now) == 0) {
		q->probing = true;
		q->next = 1;
	} else {
		back_off(q, now);
	}
}

static void send_next(struct ship_queue *q, double now)
{
	uint64_t gen;

	if (q->hold) {
		resolve(q, now);
		return;
	}
	if (q->next >= q->n)
		return;
	if (!jsl_up(q->js)) {
		start_hold(q, now);
		return;
	}
	/* on a new connection nothing overtakes what is still out on the old */
	gen = jsl_generation(q->js);
	if (q->in_flight && gen != q->flight_gen) {
		start_hold(q, now);
		return;
	}
	q->flight_gen = gen;
	while (q->next < q->n && q->in_flight < q->c.max_pending) {
		struct entry *e = at(q, q->next);

		if (e->state != E_FLIGHT && e->state != E_ACKED && publish(q, e, now) < 0)
			return;
		q->next++;
	}
}

/* The timer for what no completion will wake: the probe, the give-up, the next try. */
static void arm(struct ship_queue *q, double now)
{
	double t = 0;
	struct timeval tv;

	if (q->away)
		t = jsl_up(q->js) ? q->next_try : now + 1; /* a reconnection wakes us too */
	else if (q->hold && !q->in_flight)
		t = q->next_probe < q->hold_until ? q->next_probe : q->hold_until;
	if (q->flushing && q->away && (!t || q->flush_until < t))
		t = q->flush_until;
	if (!t) {
		evtimer_del(q->timer);
		return;
	}
	t = t > now ? t - now : 0;
	tv.tv_sec = (time_t)t;
	tv.tv_usec = (suseconds_t)((t - (double)tv.tv_sec) * 1e6);
	evtimer_add(q->timer, &tv);
}

static void check_flush(struct ship_queue *q, double now)
{
	void (*done)(void *) = q->done;

	if (!q->flushing || !done)
		return;
	/* nothing left, or NATS still away when its time to come back is over */
	if ((q->n || (q->spool && spool_records(q->spool)) || q->pending_loss) &&
	    !(q->away && !jsl_up(q->js) && now >= q->flush_until))
		return;
	q->done = NULL;
	done(q->done_arg);
}

static void pump(struct ship_queue *q)
{
	double now = mono();
	size_t k;

	while ((k = jsl_take(q->js, q->took, q->c.max_pending)) > 0)
		for (size_t i = 0; i < k; i++)
			completed(q, &q->took[i], now);
	pop_acked(q);
	if (q->away && jsl_up(q->js) && now >= q->next_try) {
		/* a new try: the spool first, then the loss; one message alone until NATS
		 * takes it (a cluster still electing would refuse a whole window) */
		q->away = q->acked_since_try = false;
		start_hold(q, now);
		q->next_probe = now;
	}
	if (!q->away) {
		jsl_check_stream(q->js); /* the first time NATS is there (paced, then once) */
		read_ahead(q, now);
		if (!q->hold && (!q->spool || !spool_records(q->spool)))
			put_loss(q);
		send_next(q, now);
	}
	arm(q, now);
	check_flush(q, now);
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pump(arg);
}

void queue_put(struct ship_queue *q, const char *subject, const char *id, const uint8_t *data,
    size_t len, uint32_t events)
{
	natsMsg *m;

	if (q->away || (q->spool && spool_records(q->spool))) {
		/* behind what is spooled, in order */
		put_aside(q, subject, id, data, len, events);
	} else {
		put_loss(q);
		if (q->n && q->bytes + len > q->c.queue_max) {
			if (!q->queue_full_said)
				fprintf(stderr,
				    "mtrace-ship: publish queue full (%" PRIu64
				    " bytes wait); dropping (counted)\n",
				    q->bytes);
			q->queue_full_said = true;
			lose(q, events);
		} else if (!(m = message(subject, id, data, len))) {
			lose(q, events);
		} else {
			q->queue_full_said = false;
			push(q, m, events, 0, false);
		}
	}
	pump(q);
}

void queue_set_host(struct ship_queue *q, const char *host_tok, const char *id_base)
{
	snprintf(q->loss_subject, sizeof(q->loss_subject), "mtrace.%s._.events", host_tok);
	snprintf(q->id_base, sizeof(q->id_base), "%s", id_base);
	q->loss_seq = 0;
}

void queue_flush(struct ship_queue *q, void (*done)(void *arg), void *arg)
{
	q->flushing = true;
	q->flush_until = mono() + q->c.retry_ms / 1e3;
	q->next_try = 0; /* away: try at once if NATS is there */
	q->done = done;
	q->done_arg = arg;
	pump(q);
}

void queue_figures(struct ship_queue *q, struct ship_figures *f)
{
	*f = q->fig;
	f->in_spool = q->spool ? spool_records(q->spool) : 0;
	f->spool_bytes = q->spool ? spool_bytes(q->spool) : 0;
	f->acks_pending = q->in_flight;
	f->nats_up = !q->away && jsl_up(q->js);
}

void queue_log(struct ship_queue *q, const char *when)
{
	struct ship_figures f;

	queue_figures(q, &f);
	fprintf(stderr,
	    "mtrace-ship: %s: shipped=%" PRIu64 " bytes=%" PRIu64 " spooled=%" PRIu64
	    " drained=%" PRIu64 " in_spool=%" PRIu64 " dropped=%" PRIu64 " dropped_events=%" PRIu64
	    " loss_published=%" PRIu64 " retried=%" PRIu64 " in_flight_max=%u%s\n",
	    when, f.shipped, f.shipped_bytes, f.spooled, f.drained, f.in_spool, f.dropped_msgs,
	    f.dropped_events, f.loss_published, f.retried, f.acks_pending_max,
	    q->away ? " (NATS away)" : "");
}

struct ship_queue *queue_new(
    struct event_base *base, struct jsl *l, struct spool *sp, const struct queue_config *c)
{
	struct ship_queue *q = xcalloc(1, sizeof(*q));

	q->base = base;
	q->js = l;
	q->spool = sp;
	q->c = *c;
	q->took = xreallocarray(NULL, c->max_pending, sizeof(*q->took));
	q->wake = event_new(base, jsl_wake_fd(l), EV_READ | EV_PERSIST, on_wake, q);
	q->timer = evtimer_new(base, on_wake, q);
	if (!q->wake || !q->timer || event_add(q->wake, NULL) < 0) {
		queue_free(q);
		return NULL;
	}
	return q;
}

void queue_free(struct ship_queue *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		if (at(q, i)->state != E_FLIGHT) /* in flight: the library's, until jsl_close */
			natsMsg_Destroy(at(q, i)->m);
	if (q->wake)
		event_free(q->wake);
	if (q->timer)
		event_free(q->timer);
	free(q->v);
	free(q->took);
	free(q);
}
