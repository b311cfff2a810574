/*
 * jetstream.c - the link to NATS JetStream (jetstream.h): libnats' connection with its
 * own reconnection, js_PublishMsgAsync with a MaxWait per publish, and the inbox its
 * threads fill: one jsl_done per publish (the ack handler is called exactly once for
 * each, with the acknowledgement, the server's refusal or the timeout), and a wake-up
 * for every connection change.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "jetstream.h"
#include "nats-servers.h"
#include "xalloc.h"

#define REFUSALS 16 /* subjects refused lately, remembered */

struct jsl {
	struct jsl_config c;
	natsConnection *nc;
	jsCtx *js;
	natsStatistics *stats;
	int efd;
	/* the inbox: filled by libnats' threads, emptied by the loop */
	pthread_mutex_t mu;
	struct jsl_done *done;
	size_t n_done, cap_done;
	bool woken; /* the eventfd was written since the loop last took */
	struct {
		char *subject;
		double at;
	} refused[REFUSALS];
	unsigned n_refusals, n_errors;
	char error[256];
	/* the loop's */
	bool stream_checked;
	double next_stream_check;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Under mu: the loop is told once until it takes what waits. */
static void wake_locked(struct jsl *l)
{
	if (!l->woken) {
		l->woken = true;
		eventfd_write(l->efd, 1);
	}
}

/* libnats' subscription thread: every asynchronous publish ends here once. */
static void on_ack(jsCtx *js, natsMsg *m, jsPubAck *pa, jsPubAckErr *pae, void *arg)
{
	struct jsl *l = arg;

	(void)js;
	pthread_mutex_lock(&l->mu);
	/* at most max_pending are out, so this rarely grows; when it must, memory it is */
	if (l->n_done == l->cap_done) {
		l->cap_done = l->cap_done ? 2 * l->cap_done : 64;
		l->done = xreallocarray(l->done, l->cap_done, sizeof(*l->done));
	}
	l->done[l->n_done++] = (struct jsl_done){
		.m = m,
		.st = pae ? pae->Err : NATS_OK,
		.jerr = pae ? pae->ErrCode : 0,
		.duplicate = !pae && pa && pa->Duplicate,
	};
	wake_locked(l);
	pthread_mutex_unlock(&l->mu);
}

/* libnats' callback thread: connected, disconnected, reconnected, closed. */
static void on_conn_change(natsConnection *nc, void *arg)
{
	struct jsl *l = arg;

	(void)nc;
	pthread_mutex_lock(&l->mu);
	wake_locked(l);
	pthread_mutex_unlock(&l->mu);
}

/*
 * libnats' callback thread: an error the server sent that did not close the connection.
 * A publish the user's permissions do not allow is one ("Permissions Violation for
 * Publish to \"SUBJECT\""): the server drops it and says so, and the publish is never
 * acknowledged.  The subject is kept for the loop to tell that timeout from others.
 */
static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *arg)
{
	static const char pv[] = "Permissions Violation for Publish to \"";
	struct jsl *l = arg;
	const char *text = NULL, *subj, *end;

	(void)sub;
	natsConnection_GetLastError(nc, &text);
	pthread_mutex_lock(&l->mu);
	l->n_errors++;
	snprintf(l->error, sizeof(l->error), "%s (%s)", text && *text ? text : "-",
	    natsStatus_GetText(err));
	if (text && (subj = strstr(text, pv)) && (end = strchr(subj + sizeof(pv) - 1, '"'))) {
		unsigned i = l->n_refusals++ % REFUSALS;
		char *copy;

		subj += sizeof(pv) - 1;
		if ((copy = strndup(subj, (size_t)(end - subj)))) {
			free(l->refused[i].subject);
			l->refused[i].subject = copy;
			l->refused[i].at = mono();
		}
	}
	wake_locked(l);
	pthread_mutex_unlock(&l->mu);
}

bool jsl_refused(struct jsl *l, const char *subject, double since)
{
	bool r = false;

	pthread_mutex_lock(&l->mu);
	for (unsigned i = 0; i < REFUSALS && !r; i++)
		r = l->refused[i].subject && l->refused[i].at >= since &&
		    !strcmp(l->refused[i].subject, subject);
	pthread_mutex_unlock(&l->mu);
	return r;
}

unsigned jsl_take_errors(struct jsl *l, char *buf, size_t len)
{
	unsigned n;

	pthread_mutex_lock(&l->mu);
	n = l->n_errors;
	l->n_errors = 0;
	snprintf(buf, len, "%s", l->error);
	pthread_mutex_unlock(&l->mu);
	return n;
}

size_t jsl_max_payload(struct jsl *l)
{
	int64_t v = natsConnection_GetMaxPayload(l->nc);

	return v > 0 ? (size_t)v : 0;
}

int jsl_wake_fd(const struct jsl *l)
{
	return l->efd;
}

size_t jsl_take(struct jsl *l, struct jsl_done *out, size_t max)
{
	eventfd_t v;
	size_t n;

	pthread_mutex_lock(&l->mu);
	n = l->n_done < max ? l->n_done : max;
	if (n) {
		memcpy(out, l->done, n * sizeof(*out));
		memmove(l->done, l->done + n, (l->n_done - n) * sizeof(*out));
		l->n_done -= n;
	}
	if (!l->n_done && l->woken) {
		l->woken = false;
		eventfd_read(l->efd, &v);
	}
	pthread_mutex_unlock(&l->mu);
	return n;
}

bool jsl_up(struct jsl *l)
{
	return natsConnection_Status(l->nc) == NATS_CONN_STATUS_CONNECTED;
}

uint64_t jsl_generation(struct jsl *l)
{
	uint64_t reconnects = 0;

	if (natsConnection_GetStats(l->nc, l->stats) == NATS_OK)
		natsStatistics_GetCounts(l->stats, NULL, NULL, NULL, NULL, &reconnects);
	return reconnects;
}

bool jsl_transient(natsStatus st, jsErrCode jerr)
{
	switch (st) {
	case NATS_NO_RESPONDERS: /* no stream leader to answer (an election) */
	case NATS_TIMEOUT:
	/* the connection is down or moving: with no reconnect buffer (jsl_open) a publish
	 * meanwhile is refused at once */
	case NATS_INSUFFICIENT_BUFFER:
	case NATS_CONNECTION_DISCONNECTED:
	case NATS_NOT_YET_CONNECTED:
	case NATS_NO_SERVER:
	case NATS_IO_ERROR:
	case NATS_STALE_CONNECTION:
		return true;
	default:
		/* while a cluster elects the stream's leader, "JetStream not enabled" (no
		 * responders, as libnats reports it) or "cluster not available" */
		return jerr == JSNotEnabledErr || jerr == JSClusterNotAvailErr;
	}
}

natsStatus jsl_publish(struct jsl *l, natsMsg **m)
{
	jsPubOptions po;

	jsPubOptions_Init(&po);
	po.MaxWait = l->c.ack_ms;
	return js_PublishMsgAsync(l->js, m, &po);
}

void jsl_check_stream(struct jsl *l)
{
	jsStreamInfo *si = NULL;
	jsStreamConfig sc;
	jsErrCode jerr = 0;
	const char *subjects[] = { "mtrace.>" };
	natsStatus st;

	if (l->stream_checked || l->c.no_stream || !jsl_up(l) || mono() < l->next_stream_check)
		return;
	/* a cluster still electing its leader is asked again, at most every 2 s (each try
	 * can wait for the server) */
	l->next_stream_check = mono() + 2;
	st = js_GetStreamInfo(&si, l->js, "MTRACE", NULL, &jerr);
	if (st == NATS_OK) {
		l->stream_checked = true;
		jsStreamInfo_Destroy(si);
		return;
	}
	jsStreamConfig_Init(&sc);
	sc.Name = "MTRACE";
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Storage = js_FileStorage;
	sc.Replicas = (int64_t)l->c.replicas;
	sc.Duplicates = 10ll * 60 * 1000000000; /* 10 min of ids kept: long outages */
	st = js_AddStream(&si, l->js, &sc, NULL, &jerr);
	if (st == NATS_OK) {
		l->stream_checked = true;
		fprintf(stderr, "mtrace-ship: created the stream MTRACE (replicas %u)\n",
		    l->c.replicas);
		jsStreamInfo_Destroy(si);
	} else {
		fprintf(stderr, "mtrace-ship: cannot create the stream MTRACE: %s (%d)\n",
		    natsStatus_GetText(st), (int)jerr);
	}
}

static natsStatus set_options(struct jsl *l, natsOptions **no)
{
	const struct jsl_config *c = &l->c;
	natsStatus st = nats_options_new(no, c->url, c->creds);

	if (st == NATS_OK)
		st = natsOptions_SetMaxReconnect(*no, -1);
	if (st == NATS_OK)
		st = natsOptions_SetReconnectWait(*no, 250);
	/* Nothing is buffered across a reconnect: a publish while the connection is down
	 * fails at once, so none goes out on the next connection ahead of what the last one
	 * lost (ordered retry, queue.c). */
	if (st == NATS_OK)
		st = natsOptions_SetReconnectBufSize(*no, 0);
	/* With a callback the library connects in the background (without one, Connect
	 * would retry in the call): the loop learns of it through the inbox. */
	if (st == NATS_OK)
		st = natsOptions_SetRetryOnFailedConnect(*no, true, on_conn_change, l);
	if (st == NATS_OK)
		st = natsOptions_SetDisconnectedCB(*no, on_conn_change, l);
	if (st == NATS_OK)
		st = natsOptions_SetReconnectedCB(*no, on_conn_change, l);
	if (st == NATS_OK)
		st = natsOptions_SetClosedCB(*no, on_conn_change, l);
	if (st == NATS_OK)
		st = natsOptions_SetErrorHandler(*no, on_error, l);
	/* a host's own reply subjects: its user may then subscribe to those only, and not
	 * read another's acknowledgements (docs/fleet.md, per-host users) */
	if (st == NATS_OK && c->inbox_prefix)
		st = natsOptions_SetCustomInboxPrefix(*no, c->inbox_prefix);
	for (size_t i = 0; st == NATS_OK && i < c->n_ca; i++) {
		st = natsOptions_SetSecure(*no, true);
		if (st == NATS_OK)
			st = natsOptions_LoadCATrustedCertificates(*no, c->ca[i]);
	}
	return st;
}

struct jsl *jsl_open(const struct jsl_config *c, char *err, size_t errlen)
{
	struct jsl *l = xcalloc(1, sizeof(*l));
	natsOptions *no = NULL;
	jsOptions jo;
	natsStatus st;

	l->c = *c;
	pthread_mutex_init(&l->mu, NULL);
	if ((l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		jsl_close(l);
		return NULL;
	}
	st = natsStatistics_Create(&l->stats);
	if (st == NATS_OK)
		st = set_options(l, &no);
	if (st == NATS_OK)
		st = natsConnection_Connect(&l->nc, no);
	/* not connected yet is fine: the library goes on trying, the queue waits */
	if (st == NATS_NOT_YET_CONNECTED)
		st = NATS_OK;
	if (st == NATS_OK)
		st = jsOptions_Init(&jo);
	if (st == NATS_OK) {
		/* the library's own bound, a backstop: the queue keeps at most max_pending
		 * out, so a publish never waits in it (StallWait) */
		jo.PublishAsync.MaxPending = (int64_t)c->max_pending + 16;
		jo.PublishAsync.AckHandler = on_ack;
		jo.PublishAsync.AckHandlerClosure = l;
		st = natsConnection_JetStream(&l->js, l->nc, &jo);
	}
	natsOptions_Destroy(no);
	if (st != NATS_OK) {
		snprintf(err, errlen, "NATS %s: %s", c->url, natsStatus_GetText(st));
		jsl_close(l);
		return NULL;
	}
	return l;
}

void jsl_close(struct jsl *l)
{
	if (!l)
		return;
	jsCtx_Destroy(l->js);
	natsConnection_Destroy(l->nc);
	natsStatistics_Destroy(l->stats);
	/* libnats' threads gone before the inbox they write to (the program's only NATS
	 * user: the library closes with it) */
	nats_CloseAndWait(2000);
	/* completions that came after the caller's last look: their messages are ours */
	for (size_t i = 0; i < l->n_done; i++)
		natsMsg_Destroy(l->done[i].m);
	free(l->done);
	for (unsigned i = 0; i < REFUSALS; i++)
		free(l->refused[i].subject);
	if (l->efd >= 0)
		close(l->efd);
	pthread_mutex_destroy(&l->mu);
	free(l);
}
