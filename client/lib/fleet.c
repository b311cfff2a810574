/*
 * fleet.c - the fleet stream as a source (source.h, docs/fleet.md): the stream MTRACE
 * in NATS JetStream that mtrace-ship fills, read by one ordered push consumer per
 * --host (subject mtrace.<host>.>) or one on every host (mtrace.>); each NATS message
 * is one recording frame of the host its subject names.  The one copy of this for
 * mtrace-cat, mtrace-top and mtrace-web.
 *
 * libnats delivers on its own threads, a reader reads from one loop: the messages wait
 * in one queue bounded by bytes (an eventfd says when it has some); while it is full the
 * delivery waits, so JetStream's flow control holds the server back, nothing dropped.
 * A thread of ours connects (at once, or in the background every 2 s) and watches the
 * consumers: an ordered consumer lives on one server and, its stream's leader killed
 * while libnats makes it again, can fall silent for good (seen in the cluster test).
 * Silent 5 s with messages pending (or gone), it is made again from the next stream
 * sequence, a message given twice across that skipped by its sequence.  Without
 * --follow the read ends once each consumer has had what the stream held.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#include "clock.h"
#include "fleet-hosts.h"
#include "fleet-skew.h"
#include "nats-servers.h"
#include "source.h"
#include "subject.h"

#define QUEUE_BYTES     (16u << 20) /* of frames waiting for the reader */
#define RETRY_S         2           /* between tries to connect and subscribe (background) */
#define CONNECT_TIMEOUT 2000        /* ms */
#define WATCH_MS        250         /* the watcher's period */
#define STALL_MS        5000        /* silent this long: is the consumer still there? */
#define FIRST_WAIT_MS   2000 /* no consumer info, silent from the start: nothing (not --follow) */
#define SUBSCRIBE_TRIES 6    /* see subscribe */
#define mono_ms()       ((int64_t)(clock_mono_ns() / 1000000u))
#define BAD_WARNINGS    10 /* messages not ours said on stderr, at most */

enum item_kind {
	IT_MSG,
	IT_UP,
	IT_AWAY,
	IT_END
};

struct item {
	struct item *next;
	natsMsg *msg;
	enum item_kind kind;
	size_t len;
	int64_t stored_ns; /* the server's clock */
};

struct fleet;

/* One ordered consumer. */
struct slot {
	struct fleet *f;
	char subject[SUBJECT_TOKEN_MAX + 16];
	natsSubscription *sub; /* the watcher's (and open's before it runs) */
	/* under f->mu */
	uint64_t last_seq; /* the stream sequence of the last message queued */
	int64_t heard_ms;  /* monotonic: the last message, or the last look */
	int64_t since_ms;  /* subscribed */
	bool got_any, done, no_info;
	bool at_end;        /* a message said nothing was pending after it (see_end) */
	uint64_t last_cseq; /* its consumer's sequence of the last message delivered */
};

struct fleet {
	struct mtc_source src;
	struct mtc_source_spec spec; /* nats, creds and prog are our copies */
	int efd;
	pthread_t thread;
	bool thread_on;
	pthread_mutex_t mu;
	pthread_cond_t room, poke;
	/* under mu */
	struct item *head, **tail;
	size_t queued;
	bool stop, end_queued;
	/* made by open or the watcher, undone by close after the watcher ended */
	natsConnection *nc;
	jsCtx *js;
	struct slot slots[MTC_SOURCE_HOSTS_MAX];
	unsigned nslots;
	/* the reader's */
	natsMsg *held; /* the message whose bytes the reader holds */
	bool ended;
	struct fleet_hosts hosts; /* each message decoded, the bad ones counted per host */
	struct fleet_skews skews; /* each host's clock against the server's */
};

/* Under mu: onto the queue; the reader is woken when it was empty. */
static void push(struct fleet *f, struct item *it)
{
	bool wake = !f->head;

	it->next = NULL;
	*f->tail = it;
	f->tail = &it->next;
	f->queued += it->len;
	if (wake)
		eventfd_write(f->efd, 1);
}

static void push_kind(struct fleet *f, enum item_kind kind)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it)
		return;
	it->kind = kind;
	pthread_mutex_lock(&f->mu);
	if (!f->stop)
		push(f, it);
	else
		free(it);
	pthread_mutex_unlock(&f->mu);
}

/* Under mu: sl has had what the stream held; the end once all have (not --follow). */
static void mark_done(struct fleet *f, struct slot *sl)
{
	struct item *it;

	sl->done = true;
	if (f->spec.follow || f->end_queued)
		return;
	for (unsigned i = 0; i < f->nslots; i++)
		if (!f->slots[i].done)
			return;
	if ((it = calloc(1, sizeof(*it)))) {
		it->kind = IT_END;
		push(f, it);
		f->end_queued = true;
	}
}

/* On a libnats thread: into the queue, waiting while it is full (a message is taken
 * into an empty queue whatever its size). */
static void on_nats_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
	struct slot *sl = closure;
	struct fleet *f = sl->f;
	size_t len = (size_t)natsMsg_GetDataLength(msg);
	jsMsgMetaData *meta = NULL;
	uint64_t seq = 0, cseq = 0, pending = 1;
	int64_t at = 0;
	struct item *it = calloc(1, sizeof(*it));

	(void)nc;
	(void)sub;
	if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
		seq = meta->Sequence.Stream;
		cseq = meta->Sequence.Consumer;
		pending = meta->NumPending;
		at = meta->Timestamp > 0 ? meta->Timestamp : 0;
		jsMsgMetaData_Destroy(meta);
	}
	pthread_mutex_lock(&f->mu);
	while (!f->stop && f->queued && f->queued + len > QUEUE_BYTES)
		pthread_cond_wait(&f->room, &f->mu);
	if (f->stop || !it) {
		pthread_mutex_unlock(&f->mu);
		natsMsg_Destroy(msg);
		free(it);
		return;
	}
	sl->heard_ms = mono_ms();
	sl->got_any = true;
	if (seq && seq <= sl->last_seq) {
		/* made again after a silence: libnats can hand over a message it had already
		 * given (measured: one in the cluster test) */
		fprintf(stderr, "%s: stream message %" PRIu64 " delivered again; skipped\n",
		    f->spec.prog, seq);
		natsMsg_Destroy(msg);
		free(it);
	} else {
		if (seq)
			sl->last_seq = seq;
		it->msg = msg;
		it->len = len;
		it->stored_ns = at;
		push(f, it);
	}
	sl->at_end = pending == 0; /* not yet the end for all that: see_end */
	sl->last_cseq = cseq;
	pthread_mutex_unlock(&f->mu);
}

static void on_disconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	push_kind(arg, IT_AWAY);
}

static void on_reconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	push_kind(arg, IT_UP);
}

/* Make sl's consumer, from after its last message when it had one.  An ordered consumer has
 * one replica, on a peer of the stream picked at random (nats-server 2.9), a dead one too:
 * it never answers.  Made again, it lands elsewhere; each try waits longer (a slow server). */
static natsStatus subscribe(
    struct fleet *f, struct slot *sl, natsSubscription **out, jsErrCode *jerr)
{
	jsSubOptions so;
	jsOptions jo;
	uint64_t after;
	natsStatus st = NATS_TIMEOUT;

	jsSubOptions_Init(&so);
	so.Stream = "MTRACE";
	so.Ordered = true;
	if (f->spec.since_ns) {
		so.Config.DeliverPolicy = js_DeliverByStartTime;
		so.Config.OptStartTime = f->spec.since_ns;
	} else if (f->spec.follow && !f->spec.from_start) {
		so.Config.DeliverPolicy = js_DeliverNew;
	} else {
		so.Config.DeliverPolicy = js_DeliverAll;
	}
	pthread_mutex_lock(&f->mu);
	after = sl->last_seq;
	sl->heard_ms = sl->since_ms = mono_ms();
	sl->at_end = true; /* until a message says what is pending */
	sl->last_cseq = 0;
	pthread_mutex_unlock(&f->mu);
	if (after) {
		so.Config.DeliverPolicy = js_DeliverByStartSequence;
		so.Config.OptStartSeq = after + 1;
		so.Config.OptStartTime = 0;
	}
	jsOptions_Init(&jo);
	for (int i = 0; i < SUBSCRIBE_TRIES && st == NATS_TIMEOUT; i++) {
		jo.Wait = i < 3 ? 2000 + 1000 * i : 5000; /* ms */
		st = js_Subscribe(out, f->js, sl->subject, on_nats_msg, sl, &jo, &so, jerr);
	}
	return st;
}

/* Not --follow: sl is read to its end once nothing is pending for it and the server
 * delivered nothing we have not queued (NumPending leaves out what is sent but not
 * yet read: the last message but one can say 0).  Asked when subscribed (a consumer
 * with nothing at all is done at once), then by the watcher after a message said 0 --
 * or after STALL_MS of silence with our queue empty: a message libnats dropped (a slow
 * consumer, on a loaded machine) leaves the last one saying more is pending and the
 * server's count past ours, and no message will ever say otherwise. */
static void see_end(struct fleet *f, struct slot *sl)
{
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	uint64_t delivered;
	bool pending, silent;

	pthread_mutex_lock(&f->mu);
	silent = !f->head && mono_ms() - sl->heard_ms >= STALL_MS;
	pending = !f->spec.follow && (sl->at_end || silent) && !sl->done;
	pthread_mutex_unlock(&f->mu);
	if (!pending)
		return;
	if (natsSubscription_GetConsumerInfo(&ci, sl->sub, NULL, &jerr) != NATS_OK) {
		sl->no_info = !sl->got_any; /* then FIRST_WAIT_MS */
		return;
	}
	pending = ci->NumPending != 0;
	/* by the consumer's own count: its stream sequence runs on past messages of other
	 * subjects */
	delivered = ci->Delivered.Consumer;
	jsConsumerInfo_Destroy(ci);
	pthread_mutex_lock(&f->mu);
	if (!pending && delivered > sl->last_cseq && silent && !sl->done)
		fprintf(stderr,
		    "%s: %s: the server delivered %" PRIu64 " messages this reader never got "
		    "(dropped by the NATS client); the end of what it did get\n",
		    f->spec.prog, sl->subject, delivered - sl->last_cseq);
	if (!pending && (delivered <= sl->last_cseq || silent))
		mark_done(f, sl);
	pthread_mutex_unlock(&f->mu);
}

static void undo(struct fleet *f)
{
	for (unsigned i = 0; i < f->nslots; i++) {
		if (f->slots[i].sub) {
			natsSubscription_Unsubscribe(f->slots[i].sub);
			natsSubscription_Destroy(f->slots[i].sub);
		}
		f->slots[i].sub = NULL;
	}
	jsCtx_Destroy(f->js);
	natsConnection_Destroy(f->nc);
	f->js = NULL;
	f->nc = NULL;
}

/* One try: connected and subscribed, or everything undone and a sentence. */
static int attempt(struct fleet *f, char *err, size_t errlen)
{
	natsOptions *no = NULL;
	natsStatus st;
	jsErrCode jerr = 0;
	unsigned i;

	st = nats_options_new(&no, f->spec.nats, f->spec.creds);
	if (st == NATS_OK)
		st = natsOptions_SetTimeout(no, CONNECT_TIMEOUT);
	if (st == NATS_OK)
		st = natsOptions_SetMaxReconnect(no, -1); /* a reader waits for NATS */
	if (st == NATS_OK)
		st = natsOptions_SetReconnectWait(no, 1000);
	if (st == NATS_OK)
		st = natsOptions_SetDisconnectedCB(no, on_disconnected, f);
	if (st == NATS_OK)
		st = natsOptions_SetReconnectedCB(no, on_reconnected, f);
	if (st == NATS_OK)
		st = natsConnection_Connect(&f->nc, no);
	natsOptions_Destroy(no);
	if (st == NATS_OK)
		st = natsConnection_JetStream(&f->js, f->nc, NULL);
	if (st != NATS_OK) {
		snprintf(err, errlen, "NATS %s: %s", f->spec.nats, natsStatus_GetText(st));
		undo(f);
		return -1;
	}
	for (i = 0; i < f->nslots; i++) {
		if ((st = subscribe(f, &f->slots[i], &f->slots[i].sub, &jerr)) != NATS_OK) {
			snprintf(err, errlen, "subscribe to %s in the stream MTRACE: %s (%d)",
			    f->slots[i].subject, natsStatus_GetText(st), (int)jerr);
			undo(f);
			return -1;
		}
	}
	for (i = 0; !f->spec.follow && i < f->nslots; i++)
		see_end(f, &f->slots[i]); /* a consumer with nothing at all is done at once */
	return 0;
}

/* The watcher: sl silent for STALL_MS is idle (nothing pending: fine), stuck with
 * messages pending, or gone; for the last two, made again. */
static void watch_slot(struct fleet *f, struct slot *sl)
{
	jsConsumerInfo *ci = NULL;
	natsSubscription *s = NULL, *old;
	jsErrCode jerr = 0;
	int64_t now = mono_ms();
	bool look;
	natsStatus st;

	pthread_mutex_lock(&f->mu);
	if (!f->spec.follow && !sl->done && !sl->got_any && sl->no_info &&
	    now - sl->since_ms >= FIRST_WAIT_MS)
		mark_done(f, sl);
	/* a queue with messages: the reader is behind, not the consumer */
	look = !f->head && !(sl->done && !f->spec.follow) && now - sl->heard_ms >= STALL_MS;
	if (look)
		sl->heard_ms = now;
	pthread_mutex_unlock(&f->mu);
	if (!look)
		return;
	st = natsSubscription_GetConsumerInfo(&ci, sl->sub, NULL, &jerr);
	if (st == NATS_OK) {
		bool idle = ci->NumPending == 0;

		jsConsumerInfo_Destroy(ci);
		if (idle)
			return;
	}
	st = subscribe(f, sl, &s, &jerr);
	if (st == NATS_OK) {
		old = sl->sub;
		sl->sub = s;
		natsSubscription_Unsubscribe(old);
		natsSubscription_Destroy(old);
	}
	fprintf(stderr, "%s: the stream's consumer is silent; made again (%s): %s\n", f->spec.prog,
	    sl->subject, st == NATS_OK ? "ok" : natsStatus_GetText(st));
}

static bool stopping(struct fleet *f, int wait_ms)
{
	struct timespec until;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	until.tv_sec += wait_ms / 1000 + until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&f->mu);
	while (!f->stop && pthread_cond_timedwait(&f->poke, &f->mu, &until) != ETIMEDOUT)
		;
	stop = f->stop;
	pthread_mutex_unlock(&f->mu);
	return stop;
}

static void *watcher(void *arg)
{
	struct fleet *f = arg;
	char err[1024], said[1024] = "";

	while (!f->nc) { /* background: until connected and subscribed */
		if (attempt(f, err, sizeof(err)) == 0) {
			if (*said)
				fprintf(
				    stderr, "%s: subscribed to the fleet stream\n", f->spec.prog);
			push_kind(f, IT_UP);
			break;
		}
		if (strcmp(err, said) != 0) /* each new reason once */
			fprintf(stderr, "%s: %s; trying again every %d s\n", f->spec.prog, err,
			    RETRY_S);
		snprintf(said, sizeof(said), "%s", err);
		if (stopping(f, RETRY_S * 1000))
			return NULL;
	}
	while (!stopping(f, WATCH_MS))
		for (unsigned i = 0; i < f->nslots; i++) {
			see_end(f, &f->slots[i]);
			watch_slot(f, &f->slots[i]);
		}
	return NULL;
}

static int fleet_open(struct mtc_source *s, const Mtrace__Subscribe *sub, char *err, size_t errlen)
{
	struct fleet *f = (struct fleet *)s;

	(void)sub; /* stored records: the session selects */
	if (f->thread_on || f->stop) {
		snprintf(err, errlen, "the fleet stream is read once");
		return -1;
	}
	if (!f->spec.background && attempt(f, err, errlen) < 0)
		return -1;
	if (pthread_create(&f->thread, NULL, watcher, f) != 0) {
		snprintf(err, errlen, "cannot start a thread");
		undo(f);
		return -1;
	}
	f->thread_on = true;
	return f->spec.background ? 1 : 0;
}

static struct item *dequeue(struct fleet *f)
{
	struct item *it;

	pthread_mutex_lock(&f->mu);
	if ((it = f->head)) {
		if (!(f->head = it->next))
			f->tail = &f->head;
		f->queued -= it->len;
		pthread_cond_signal(&f->room);
	}
	pthread_mutex_unlock(&f->mu);
	return it;
}

/* A message of the stream into r (fleet-hosts.h): -1, counted, when it is not ours. */
static int take(struct fleet *f, natsMsg *msg, int64_t stored_ns, struct mtc_rec *r)
{
	const uint8_t *d = (const uint8_t *)natsMsg_GetData(msg);
	size_t len = (size_t)natsMsg_GetDataLength(msg);

	if (fleet_decode(&f->hosts, natsMsg_GetSubject(msg), d, len, mono_ms(), &r->msg) < 0)
		return -1;
	r->raw = d;
	r->raw_len = len;
	r->host = f->hosts.host;
	r->stored_ms = (uint64_t)stored_ns / 1000000u;
	r->skew = fleet_skew_msg(&f->skews, r->host, r->msg, stored_ns);
	return 0;
}

static int fleet_next(
    struct mtc_source *s, int timeout_ms, struct mtc_rec *r, char *err, size_t errlen)
{
	struct fleet *f = (struct fleet *)s;
	struct item *it;
	eventfd_t v;

	natsMsg_Destroy(f->held);
	f->held = NULL;
	for (;;) {
		enum item_kind kind;

		if (f->ended) {
			snprintf(err, errlen, "the stream read to its end");
			return MTC_NEXT_END;
		}
		if (!(it = dequeue(f))) {
			/* emptied: the next push wakes the reader again */
			eventfd_read(f->efd, &v);
			it = dequeue(f);
		}
		if (!it) {
			struct pollfd pfd = { .fd = f->efd, .events = POLLIN };

			if (timeout_ms == 0 || poll(&pfd, 1, timeout_ms) <= 0)
				return MTC_NEXT_NONE;
			continue;
		}
		kind = it->kind;
		if (kind == IT_MSG && take(f, it->msg, it->stored_ns, r) < 0) {
			natsMsg_Destroy(it->msg);
			free(it);
			continue;
		}
		if (kind == IT_MSG)
			f->held = it->msg;
		free(it);
		switch (kind) {
		case IT_MSG:
			return MTC_NEXT_REC;
		case IT_UP:
			return MTC_NEXT_UP;
		case IT_AWAY:
			snprintf(err, errlen, "lost NATS; the client library reconnects");
			return MTC_NEXT_AWAY;
		case IT_END:
			f->ended = true; /* said at the loop's top */
			continue;
		}
	}
}

static int fleet_fd(const struct mtc_source *s)
{
	return ((const struct fleet *)s)->efd;
}

static void fleet_close(struct mtc_source *s)
{
	struct fleet *f = (struct fleet *)s;
	struct item *it;

	pthread_mutex_lock(&f->mu);
	f->stop = true;
	pthread_cond_broadcast(&f->room);
	pthread_cond_broadcast(&f->poke);
	pthread_mutex_unlock(&f->mu);
	if (f->thread_on)
		pthread_join(f->thread, NULL);
	f->thread_on = false;
	undo(f);
	/* stopped: whatever libnats still delivers is dropped in on_nats_msg */
	while ((it = dequeue(f))) {
		natsMsg_Destroy(it->msg);
		free(it);
	}
	natsMsg_Destroy(f->held);
	f->held = NULL;
	fleet_hosts_flush(&f->hosts, mono_ms());
}

static void fleet_bad_json(const struct mtc_source *s, struct evbuffer *b)
{
	fleet_hosts_json(&((const struct fleet *)s)->hosts, b);
}

static void fleet_skew_json(const struct mtc_source *s, struct evbuffer *b)
{
	fleet_skews_json(&((const struct fleet *)s)->skews, b);
}

static void fleet_free(struct mtc_source *s)
{
	struct fleet *f = (struct fleet *)s;

	fleet_close(s);
	/* libnats' own threads end here: nothing of theirs outlives the source */
	nats_CloseAndWait(2000);
	if (f->efd >= 0)
		close(f->efd);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->room);
	pthread_cond_destroy(&f->poke);
	free((char *)f->spec.nats);
	free((char *)f->spec.creds);
	free((char *)f->spec.prog);
	free(f);
}

static const struct mtc_source_ops fleet_ops = {
	.kind = "fleet",
	.stored = true,
	.open = fleet_open,
	.next = fleet_next,
	.fd = fleet_fd,
	.close = fleet_close,
	.free = fleet_free,
	.bad_json = fleet_bad_json,
	.skew_json = fleet_skew_json,
};

struct mtc_source *mtc_source_fleet(const struct mtc_source_spec *spec, char *err, size_t errlen)
{
	struct fleet *f = calloc(1, sizeof(*f));
	char tok[SUBJECT_TOKEN_MAX];

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->src.ops = &fleet_ops;
	f->spec = *spec;
	f->spec.nats = strdup(spec->nats);
	f->spec.creds = spec->creds ? strdup(spec->creds) : NULL;
	f->spec.prog = strdup(spec->prog ? spec->prog : "mtrace");
	f->tail = &f->head;
	fleet_hosts_init(&f->hosts, f->spec.prog ? f->spec.prog : "mtrace", stderr);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->room, NULL);
	pthread_cond_init(&f->poke, NULL);
	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!f->spec.nats || !f->spec.prog || (spec->creds && !f->spec.creds) || f->efd < 0) {
		if (f->efd < 0)
			snprintf(err, errlen, "eventfd: %s", strerror(errno));
		else
			snprintf(err, errlen, "out of memory");
		fleet_free(&f->src);
		return NULL;
	}
	f->nslots = spec->n_hosts ? spec->n_hosts : 1;
	for (unsigned i = 0; i < f->nslots; i++) {
		struct slot *sl = &f->slots[i];

		sl->f = f;
		if (spec->n_hosts) {
			subject_token_escape(spec->hosts[i], tok, sizeof(tok));
			snprintf(sl->subject, sizeof(sl->subject), "mtrace.%s.>", tok);
		} else {
			snprintf(sl->subject, sizeof(sl->subject), "mtrace.>");
		}
	}
	return &f->src;
}
