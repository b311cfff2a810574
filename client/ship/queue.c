/*
 * queue.c - the publish queue (queue.h).  A ring of entries in publish order; each holds
 * its natsMsg (subject, data, Nats-Msg-Id header), which is the library's while in
 * flight and comes back with its completion.  Entries leave from the head only
 * (acknowledged, or set aside), so that a spooled record leaves the file only once
 * every one before it has.
 *
 * Every event ends in pump(): take the completions, drop the settled head, read ahead
 * from the spool, then send what the state allows.  The states:
 *   live    nothing failed: publish in order, up to max_pending out;
 *   hold    a failure (or a new connection while publishes are out): wait until nothing
 *           is out, then send the oldest entry alone (the probe) every 25..400 ms until
 *           it is acknowledged (live again) or retry_ms have passed (away);
 *   away    given up: every entry to the spool (or dropped), the queue empty; a new try
 *           every 250 ms while NATS is connected, the spool first.
 * A message no server will take (over max_payload and not to be cut, a subject the
 * user may not publish to, an id the stream already had) is set aside instead: counted,
 * told downstream as a loss, and the queue goes on (queue-aside.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue-int.h"
#include "queue.h"
#include "xalloc.h"

#define FIRST_PAUSE_MS 25u
#define MAX_PAUSE_MS   400u
#define TRY_AGAIN_S    0.25 /* away: the next try */
#define READ_AHEAD     1024 /* spool records read in one turn at most */

static const char *subject_of(natsMsg *m)
{
	const char *s = m ? natsMsg_GetSubject(m) : NULL;

	return s ? s : "?";
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
	q_lose(q, events);
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

/*
 * e was refused or not answered in time (or could not be sent).  What no retry can
 * change is set aside: a message over max_payload, one the stream refuses for its size,
 * one not acknowledged because the server refused its subject since it was sent.  The
 * rest holds the queue (ordered retry), the server's other refusals to the spool.
 */
static void failed(struct ship_queue *q, struct entry *e, natsStatus st, jsErrCode jerr, double now)
{
	bool transient = jsl_transient(st, jerr);

	if (st == NATS_MAX_PAYLOAD || jerr == JSStreamMessageExceedsMaximumErr) {
		q_aside(q, e, W_TOO_BIG, now);
		return;
	}
	if (st == NATS_TIMEOUT && jsl_refused(q->js, subject_of(e->m), e->sent_at)) {
		q_aside(q, e, W_REFUSED, now);
		return;
	}
	e->state = E_FAILED;
	if (!q->hold && !q->was_away)
		fprintf(stderr, "mtrace-ship: publish to %s: %s (%d)%s\n", subject_of(e->m),
		    natsStatus_GetText(st), (int)jerr, transient ? "; sending it again" : "");
	start_hold(q, now);
	if (!transient)
		q->refused = true; /* not worth waiting for: to the spool */
}

/* Send e: 0, or -1 with e failed (and the queue holding) or set aside. */
static int publish(struct ship_queue *q, struct entry *e, double now)
{
	natsMsg *m = e->m; /* the library's on success; e->m stays its name */
	natsStatus st = jsl_publish(q->js, &m);

	if (e->tries)
		q->fig.retried++;
	if (e->tries < UINT8_MAX)
		e->tries++;
	e->sent_at = now;
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
		struct entry *e = q_at(q, i);
		const uint8_t *data;
		const char *id = NULL;

		if (e->spooled) {
			rewind = true; /* read again, and settled again, from the file */
		} else if (e->state == E_ASIDE) {
			q_leave(q, e, now);
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

/* Settled entries leave from the head, spooled records from the file with them. */
static void pop_settled(struct ship_queue *q, double now)
{
	while (q->n && (q_at(q, 0)->state == E_ACKED || q_at(q, 0)->state == E_ASIDE)) {
		struct entry *e = q_at(q, 0);

		q_leave(q, e, now);
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
		if (q_at(q, i)->state == E_FLIGHT && q_at(q, i)->m == d->m)
			e = q_at(q, i);
	if (!e) {
		natsMsg_Destroy(d->m); /* cannot be: each publish completes once */
		return;
	}
	q->in_flight--;
	if (d->st == NATS_OK && d->duplicate && e->tries == 1 && !e->spooled) {
		/* the stream had this id before its first publish: someone else's message
		 * took it, and this one was dropped (ids cannot be guessed, msgid.h) */
		q_aside(q, e, W_TAKEN, now);
	} else if (d->st == NATS_OK) {
		e->state = E_ACKED;
		q->acked_since_try = true;
		if (!e->spooled) {
			q->fig.shipped++;
			q->fig.shipped_bytes += e->len;
		}
		if (e->loss) {
			q_say(q, SAY_LOSS, now, "published a loss of %" PRIu64 " events", e->loss);
			q->fig.loss_published += e->loss;
			q->loss_queued = false;
		}
		natsMsg_Destroy(e->m);
		e->m = NULL;
	} else {
		bool probe = q->probing;

		q->probing = false;
		failed(q, e, d->st, d->jerr, now);
		if (probe && e->state == E_ASIDE)
			q->next_probe = now; /* the next one is the probe, at once */
		else if (probe)
			back_off(q, now);
		return;
	}
	if (q->probing) {
		/* the oldest is settled: the rest follow in order */
		q->probing = q->hold = q->refused = false;
		q->next = 0;
	}
}

/* Spooled records read ahead into the queue while there is room, once the host is
 * known (each is checked against it). */
static void read_ahead(struct ship_queue *q, double now)
{
	for (unsigned k = 0; q->spool && q->host_tok[0] && k < READ_AHEAD &&
	     spool_unread(q->spool) && (q->bytes < q->c.queue_max || !q->n);
	     k++) {
		int r = q_read_spooled(q, now);

		if (r <= 0) {
			if (r < 0 && !q->spool_broken)
				perror("mtrace-ship: spool unreadable");
			q->spool_broken = r < 0;
			/* what was read ahead goes out; the rest at the next try */
			if (r < 0 && !q->n)
				give_up(q, now);
			return;
		}
		q->spool_broken = false;
	}
}

/* A failure being resolved: the probe, or the give-up. */
static void resolve(struct ship_queue *q, double now)
{
	if (q->in_flight)
		return; /* every publish out there answers first */
	/* a head that cannot be sent is set aside, and the next one is the probe */
	while (q->n && q_fit(q, 0, now))
		pop_settled(q, now);
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
	if (publish(q, q_at(q, 0), now) == 0) {
		q->probing = true;
		q->next = 1;
	} else if (q_at(q, 0)->state == E_ASIDE) {
		q->next_probe = now; /* the next one at once */
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
		struct entry *e = q_at(q, q->next);

		if ((e->state == E_WAIT || e->state == E_FAILED) && q_fit(q, q->next, now) == 0 &&
		    publish(q, q_at(q, q->next), now) < 0 && q->hold)
			return;
		q->next++;
	}
}

/* The timer for what no completion will wake: the probe, the give-up, the next try,
 * the end. */
static void arm(struct ship_queue *q, double now)
{
	double t = 0;
	struct timeval tv;

	if (q->away)
		t = jsl_up(q->js) ? q->next_try : now + 1; /* a reconnection wakes us too */
	else if (q->hold && !q->in_flight)
		t = q->next_probe < q->hold_until ? q->next_probe : q->hold_until;
	if (q->flushing && q->done && now < q->flush_until && (!t || q->flush_until < t))
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
	/* the spool is sent once the host is known: without it, it stays for the next run */
	bool spooled = q->spool && spool_records(q->spool) && q->host_tok[0];

	if (!q->flushing || !done)
		return;
	/* nothing left; or NATS still away, or only a Loss notice it will not take, when
	 * its time is over */
	if ((q->n || spooled || q->pending_loss) && now < q->flush_until)
		return;
	if ((q->n || spooled) && !(q->away && !jsl_up(q->js)))
		return;
	q->done = NULL;
	done(q->done_arg);
}

static void pump(struct ship_queue *q)
{
	double now = q_mono();
	char text[256];
	unsigned k;

	while ((k = (unsigned)jsl_take(q->js, q->took, q->c.max_pending)) > 0)
		for (unsigned i = 0; i < k; i++)
			completed(q, &q->took[i], now);
	if ((k = jsl_take_errors(q->js, text, sizeof(text))))
		q_say(q, SAY_NATS, now, "the NATS server says: %s%s", text,
		    k > 1 ? " (and more)" : "");
	pop_settled(q, now);
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
			q_put_loss(q, now);
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
    size_t len, uint32_t events, bool spare)
{
	natsMsg *m;
	uint64_t room = spare ? q->c.queue_max : 2 * q->c.queue_max;

	if (q->away || (q->spool && spool_records(q->spool))) {
		/* behind what is spooled, in order */
		put_aside(q, subject, id, data, len, events);
	} else {
		q_put_loss(q, q_mono());
		if (q->n && q->bytes + len > room) {
			if (!q->queue_full_said)
				fprintf(stderr,
				    "mtrace-ship: publish queue full (%" PRIu64
				    " bytes wait); dropping (counted)\n",
				    q->bytes);
			q->queue_full_said = true;
			q_lose(q, events);
		} else if (!(m = q_message(subject, id, data, len))) {
			q_lose(q, events);
		} else {
			if (q->bytes + len <= q->c.queue_max)
				q->queue_full_said = false;
			q_push(q, m, events, 0, false);
		}
	}
	pump(q);
}

void queue_set_host(struct ship_queue *q, const char *host_tok, const char *id_base)
{
	snprintf(q->host_tok, sizeof(q->host_tok), "%s", host_tok);
	snprintf(q->loss_subject, sizeof(q->loss_subject), "mtrace.%s._.events", host_tok);
	snprintf(q->id_base, sizeof(q->id_base), "%s", id_base);
	q->loss_seq = 0;
}

void queue_flush(struct ship_queue *q, void (*done)(void *arg), void *arg)
{
	q->flushing = true;
	q->flush_until = q_mono() + q->c.retry_ms / 1e3;
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
	    " loss_published=%" PRIu64 " retried=%" PRIu64 " in_flight_max=%u split=%" PRIu64
	    " set_aside=%" PRIu64 " taken=%" PRIu64 " spool_bad=%" PRIu64 "%s\n",
	    when, f.shipped, f.shipped_bytes, f.spooled, f.drained, f.in_spool, f.dropped_msgs,
	    f.dropped_events, f.loss_published, f.retried, f.acks_pending_max, f.split, f.set_aside,
	    f.taken, f.spool_bad, q->away ? " (NATS away)" : "");
}

struct ship_queue *queue_new(
    struct event_base *base, struct jsl *l, struct spool *sp, const struct queue_config *c)
{
	struct ship_queue *q = xcalloc(1, sizeof(*q));

	q->base = base;
	q->js = l;
	q->spool = sp;
	q->c.max_pending = c->max_pending;
	q->c.queue_max = c->queue_max;
	q->c.retry_ms = c->retry_ms;
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
		if (q_at(q, i)->state != E_FLIGHT) /* in flight: the library's, until jsl_close */
			natsMsg_Destroy(q_at(q, i)->m);
	if (q->wake)
		event_free(q->wake);
	if (q->timer)
		event_free(q->timer);
	free(q->v);
	free(q->took);
	free(q);
}
