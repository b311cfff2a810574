/*
 * feed-nats.c - mtrace-web --nats: the fleet stream MTRACE (docs/fleet.md), read by an
 * ordered push consumer per --host (mtrace.<host>.>) or one on every host (mtrace.>),
 * each message one recording frame of the host its subject names.
 *
 * libnats calls back on its own threads and mtrace-web is one libevent loop: the
 * messages wait in one queue bounded by bytes, and an eventfd wakes the loop, which
 * hands them to feed.c (through the ops it gave) a budget per turn.  While the queue is full the callback waits,
 * so JetStream's flow control holds the server back and nothing is dropped here.
 * Connecting (and subscribing, which needs the stream) is retried on a thread of its
 * own, so that the page is served meanwhile; once connected, libnats reconnects.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#include "frame.h"
#include "nats-servers.h"
#include "session.h"
#include "subject.h"
#include "unpack-arena.h"
#include "web.h"

#define QUEUE_BYTES     (16u << 20) /* of frames waiting for the loop */
#define RETRY_S         2           /* between attempts to connect and subscribe */
#define BAD_WARNINGS    10          /* messages not ours said in the log, at most */
#define CONNECT_TIMEOUT 2000        /* ms */

/* A message, or the link going up (1) or down (0). */
struct item {
	struct item *next;
	natsMsg *msg;
	int link;
	size_t len;
};

static struct {
	const struct web_opts *o;
	const struct feed_nats_ops *ops;
	struct event *wake;
	int efd;
	pthread_t connector;
	bool started;
	/* shared with libnats' threads, under mu */
	pthread_mutex_t mu;
	pthread_cond_t room, retry;
	struct item *head, **tail;
	size_t queued;
	bool stop;
	/* made by the connector, freed by feed_nats_stop after it has ended */
	natsConnection *nc;
	jsCtx *js;
	natsSubscription *subs[32];
	unsigned nsubs;
	/* the loop's */
	bool up;
	uint64_t bad;
} n = { .mu = PTHREAD_MUTEX_INITIALIZER,
	.room = PTHREAD_COND_INITIALIZER,
	.retry = PTHREAD_COND_INITIALIZER,
	.efd = -1 };

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* On a libnats thread: into the queue, waiting while it is full (a message is taken
 * into an empty queue whatever its size). */
static void enqueue(natsMsg *msg, int link)
{
	struct item *it = malloc(sizeof(*it));
	size_t len = msg ? (size_t)natsMsg_GetDataLength(msg) : 0;
	bool wake;

	pthread_mutex_lock(&n.mu);
	while (!n.stop && n.queued && n.queued + len > QUEUE_BYTES)
		pthread_cond_wait(&n.room, &n.mu);
	if (n.stop || !it) {
		pthread_mutex_unlock(&n.mu);
		natsMsg_Destroy(msg);
		free(it);
		return;
	}
	it->next = NULL;
	it->msg = msg;
	it->link = link;
	it->len = len;
	wake = !n.head;
	*n.tail = it;
	n.tail = &it->next;
	n.queued += len;
	pthread_mutex_unlock(&n.mu);
	if (wake)
		eventfd_write(n.efd, 1);
}

static void on_nats_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *arg)
{
	(void)nc;
	(void)sub;
	(void)arg;
	enqueue(msg, -1);
}

static void on_disconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	enqueue(NULL, 0);
}

static void on_reconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	enqueue(NULL, 1);
}

static struct item *dequeue(void)
{
	struct item *it;

	pthread_mutex_lock(&n.mu);
	it = n.head;
	if (it) {
		n.head = it->next;
		if (!n.head)
			n.tail = &n.head;
		n.queued -= it->len;
		pthread_cond_signal(&n.room);
	}
	pthread_mutex_unlock(&n.mu);
	return it;
}

static void bad(const char *subject, const char *why)
{
	if (n.bad++ < BAD_WARNINGS)
		fprintf(stderr, "mtrace-web: a message on %s skipped: %s\n", subject, why);
}

/* In the loop: one message of the stream to feed.c.  The subject names the host
 * (mtrace.<host>.<domain>.<kind>, the host escaped into one token). */
static unsigned take(natsMsg *msg)
{
	const char *subject = natsMsg_GetSubject(msg), *p, *e;
	const uint8_t *d = (const uint8_t *)natsMsg_GetData(msg);
	size_t len = (size_t)natsMsg_GetDataLength(msg), hl, ml;
	char tok[SUBJECT_TOKEN_MAX], host[WEB_HOST_MAX];
	jsMsgMetaData *meta = NULL;
	uint64_t at = 0;
	Mtrace__ServerMsg *m;
	unsigned r;

	if (strncmp(subject, "mtrace.", 7) != 0 || !(e = strchr(p = subject + 7, '.')) ||
	    (size_t)(e - p) >= sizeof(tok)) {
		bad(subject, "not a subject of the fleet stream");
		return 0;
	}
	memcpy(tok, p, (size_t)(e - p));
	tok[e - p] = 0;
	if (subject_token_unescape(tok, host, sizeof(host)) < 0) {
		bad(subject, "its host token is not one mtrace-ship makes");
		return 0;
	}
	if (frame_parse(d, len, len, &hl, &ml) != FRAME_OK || hl + ml != len ||
	    !(m = arena_msg_unpack(d + hl, ml))) {
		bad(subject, "not one recording frame");
		return 0;
	}
	/* When the stream stored it, about when mtraced sent it: a history read from the
	 * stream lines up on the page as it happened, host beside host. */
	if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
		if (meta->Timestamp > 0)
			at = (uint64_t)meta->Timestamp / 1000000;
		jsMsgMetaData_Destroy(meta);
	}
	r = n.ops->take(host, m, at ? at : wall_ms());
	if (!(r & MTC_MSG_KEPT))
		arena_msg_free(m);
	return r;
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	eventfd_t v;
	struct item *it;

	(void)what;
	(void)arg;
	eventfd_read(fd, &v);
	while ((it = dequeue())) {
		unsigned r = 0;

		if (it->link >= 0) {
			n.up = it->link;
			n.ops->link(n.up);
		} else {
			r = take(it->msg);
			natsMsg_Destroy(it->msg);
		}
		free(it);
		if (r & MTC_MSG_YIELD) {
			/* HTTP and the browsers' sockets between: on at the next turn */
			event_active(n.wake, EV_READ, 0);
			break;
		}
	}
	n.ops->turn_done();
}

/* One attempt: connected and subscribed, or everything undone and a sentence. */
static int attempt(char *err, size_t errlen)
{
	const struct web_opts *o = n.o;
	natsOptions *no = NULL;
	natsStatus st;

	st = nats_options_new(&no, o->nats, o->creds);
	if (st == NATS_OK)
		st = natsOptions_SetTimeout(no, CONNECT_TIMEOUT);
	if (st == NATS_OK)
		st = natsOptions_SetMaxReconnect(no, -1); /* a viewer waits for NATS */
	if (st == NATS_OK)
		st = natsOptions_SetReconnectWait(no, 1000);
	if (st == NATS_OK)
		st = natsOptions_SetDisconnectedCB(no, on_disconnected, NULL);
	if (st == NATS_OK)
		st = natsOptions_SetReconnectedCB(no, on_reconnected, NULL);
	if (st == NATS_OK)
		st = natsConnection_Connect(&n.nc, no);
	natsOptions_Destroy(no);
	if (st == NATS_OK)
		st = natsConnection_JetStream(&n.js, n.nc, NULL);
	if (st != NATS_OK) {
		snprintf(err, errlen, "NATS %s: %s", o->nats, natsStatus_GetText(st));
		goto undo;
	}
	for (unsigned i = 0; i < (o->n_hosts ? o->n_hosts : 1); i++) {
		char tok[SUBJECT_TOKEN_MAX], subject[SUBJECT_TOKEN_MAX + 16];
		jsSubOptions so;
		jsErrCode jerr = 0;

		if (o->n_hosts) {
			subject_token_escape(o->hosts[i], tok, sizeof(tok));
			snprintf(subject, sizeof(subject), "mtrace.%s.>", tok);
		} else {
			snprintf(subject, sizeof(subject), "mtrace.>");
		}
		jsSubOptions_Init(&so);
		so.Stream = "MTRACE";
		so.Ordered = true;
		if (o->since_ns) {
			so.Config.DeliverPolicy = js_DeliverByStartTime;
			so.Config.OptStartTime = o->since_ns;
		} else {
			so.Config.DeliverPolicy = o->from_start ? js_DeliverAll : js_DeliverNew;
		}
		st = js_Subscribe(
		    &n.subs[n.nsubs], n.js, subject, on_nats_msg, NULL, NULL, &so, &jerr);
		if (st != NATS_OK) {
			snprintf(err, errlen, "subscribe to %s in the stream MTRACE: %s (%d)",
			    subject, natsStatus_GetText(st), (int)jerr);
			goto undo;
		}
		n.nsubs++;
	}
	return 0;
undo:
	for (unsigned i = 0; i < n.nsubs; i++)
		natsSubscription_Destroy(n.subs[i]);
	n.nsubs = 0;
	jsCtx_Destroy(n.js);
	natsConnection_Destroy(n.nc);
	n.js = NULL;
	n.nc = NULL;
	return -1;
}

static void *connector(void *arg)
{
	char err[1024], said[1024] = "";

	(void)arg;
	for (;;) {
		struct timespec until;

		if (attempt(err, sizeof(err)) == 0) {
			if (*said)
				fprintf(stderr, "mtrace-web: subscribed to the fleet stream\n");
			enqueue(NULL, 1);
			return NULL;
		}
		if (strcmp(err, said) != 0) /* each new reason once */
			fprintf(stderr, "mtrace-web: %s; trying again every %d s\n", err, RETRY_S);
		snprintf(said, sizeof(said), "%s", err);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += RETRY_S;
		pthread_mutex_lock(&n.mu);
		while (!n.stop && pthread_cond_timedwait(&n.retry, &n.mu, &until) != ETIMEDOUT)
			;
		if (n.stop) {
			pthread_mutex_unlock(&n.mu);
			return NULL;
		}
		pthread_mutex_unlock(&n.mu);
	}
}

int feed_nats_start(struct event_base *base, const struct web_opts *o,
    const struct feed_nats_ops *ops, char *err, size_t errlen)
{
	n.o = o;
	n.ops = ops;
	n.tail = &n.head;
	n.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n.efd < 0 || !(n.wake = event_new(base, n.efd, EV_READ | EV_PERSIST, on_wake, NULL)) ||
	    event_add(n.wake, NULL) < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return -1;
	}
	if (pthread_create(&n.connector, NULL, connector, NULL) != 0) {
		snprintf(err, errlen, "cannot start a thread");
		return -1;
	}
	n.started = true;
	return 0;
}

void feed_nats_stop(void)
{
	struct item *it;

	pthread_mutex_lock(&n.mu);
	n.stop = true;
	pthread_cond_broadcast(&n.room);
	pthread_cond_broadcast(&n.retry);
	pthread_mutex_unlock(&n.mu);
	if (n.started)
		pthread_join(n.connector, NULL);
	for (unsigned i = 0; i < n.nsubs; i++) {
		natsSubscription_Unsubscribe(n.subs[i]);
		natsSubscription_Destroy(n.subs[i]);
	}
	jsCtx_Destroy(n.js);
	natsConnection_Destroy(n.nc);
	/* stopped: whatever libnats still delivers is dropped in enqueue */
	while ((it = dequeue())) {
		natsMsg_Destroy(it->msg);
		free(it);
	}
	nats_CloseAndWait(2000);
	if (n.wake)
		event_free(n.wake);
	if (n.efd >= 0)
		close(n.efd);
	n.wake = NULL;
	n.efd = -1;
	n.nsubs = 0;
	n.js = NULL;
	n.nc = NULL;
	n.started = false;
}

bool feed_nats_connected(void)
{
	return n.up;
}
