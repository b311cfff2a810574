/*
 * mtrace-ship - the fleet's event stream: subscribe to mtraced and publish every message
 * it sends, as it sends it (the recording framing of docs/recording.md: one delimited
 * ServerMsg per NATS message), to NATS JetStream on mtrace.<host>.<domain>.events and
 * mtrace.<host>._.stats (docs/fleet.md).  Each message carries an id (host, this run,
 * the connection to mtraced, a sequence) so that JetStream drops what is published twice
 * after a reconnect; every publish waits for its acknowledgement.  While NATS is away
 * messages go to a bounded spool on disk, drained in order when it is back; what does
 * not fit is counted and published as a Loss notice, never lost silently.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#include "nats-servers.h"
#include "frame.h"
#include "metrics.h"
#include "mtrace-client.h"
#include "session.h"
#include "ship-args.h"
#include "spool.h"
#include "subject.h"

#define SUBJECT_MAX (16 + 2 * SUBJECT_TOKEN_MAX)
#define MAX_DOMID   65536u

static struct ship_opts o;

static volatile sig_atomic_t stop_signal;

/* The figures in the log. */
static struct {
	uint64_t shipped, shipped_bytes, spooled, drained, dropped_msgs, dropped_events;
	uint64_t loss_published, retried;
} fig;

static natsConnection *nc;
static jsCtx *js;
static struct spool *spool;
static struct ship_metrics *metrics;
static unsigned acks_pending; /* 1 while a publish waits for its acknowledgement */
static bool mtraced_up;
static bool away;             /* NATS is (or was at the last try) unreachable */
static uint64_t pending_loss; /* events dropped, not yet published as a Loss */
static char host_tok[SUBJECT_TOKEN_MAX];
static char *dom_tok[MAX_DOMID];
static char id_base[SUBJECT_TOKEN_MAX + 64];
static uint64_t seq;
static bool stream_checked;

static double next_stream_check;

static void ensure_stream(void);
static double mono(void);

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void log_figures(const char *when)
{
	fprintf(stderr,
	    "mtrace-ship: %s: shipped=%" PRIu64 " bytes=%" PRIu64 " spooled=%" PRIu64
	    " drained=%" PRIu64 " in_spool=%" PRIu64 " dropped=%" PRIu64 " dropped_events=%" PRIu64
	    " loss_published=%" PRIu64 " retried=%" PRIu64 "%s\n",
	    when, fig.shipped, fig.shipped_bytes, fig.spooled, fig.drained,
	    spool ? spool_records(spool) : 0, fig.dropped_msgs, fig.dropped_events,
	    fig.loss_published, fig.retried, away ? " (NATS away)" : "");
}

/* The figures to the next scrape of --metrics (a copy under a lock: cheap next to the
 * round trip of each publish). */
static void figures_out(void)
{
	struct ship_figures f = {
		.shipped = fig.shipped,
		.shipped_bytes = fig.shipped_bytes,
		.spooled = fig.spooled,
		.drained = fig.drained,
		.dropped_msgs = fig.dropped_msgs,
		.dropped_events = fig.dropped_events,
		.loss_published = fig.loss_published,
		.retried = fig.retried,
		.in_spool = spool ? spool_records(spool) : 0,
		.spool_bytes = spool ? spool_bytes(spool) : 0,
		.acks_pending = acks_pending,
		.nats_up = !away && nc && natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED,
		.mtraced_up = mtraced_up,
	};

	ship_metrics_update(metrics, &f);
}

/* A refusal that passes: while a cluster elects the stream's leader nobody answers its
 * subject (no responders, which libnats reports as "JetStream not enabled"), the system
 * says it is unavailable, or the acknowledgement comes too late. */
static bool transient(natsStatus st, jsErrCode jerr)
{
	return st == NATS_NO_RESPONDERS || st == NATS_TIMEOUT || jerr == JSNotEnabledErr ||
	    jerr == JSClusterNotAvailErr;
}

/* One publish with its acknowledgement: 0, or -1 (NATS is away or refused it).  With
 * retry, a transient refusal, or the connection moving to another server, is waited out
 * and the message sent again with the same id (the stream keeps it once however many
 * tries reached it), for up to --retry-ms. */
static int publish(const char *subject, const char *id, const uint8_t *data, size_t len, bool retry)
{
	double give_up = mono() + o.retry_ms / 1e3;
	unsigned pause_ms = 25;
	jsPubOptions po;
	jsPubAck *ack = NULL;
	jsErrCode jerr = 0;
	natsStatus st;

	for (;;) {
		if (natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED) {
			/* the library moving to another server of the list: as a refusal */
			if (!retry || stop_signal || mono() + pause_ms / 1e3 > give_up)
				return -1;
			fig.retried++;
			nats_Sleep(pause_ms);
			if (pause_ms < 400)
				pause_ms *= 2;
			continue;
		}
		if (!stream_checked)
			ensure_stream();
		jsPubOptions_Init(&po);
		po.MsgId = id;
		po.MaxWait = o.ack_ms;
		jerr = 0;
		acks_pending = 1;
		figures_out();
		st = js_Publish(&ack, js, subject, data, (int)len, &po, &jerr);
		acks_pending = 0;
		if (st == NATS_OK)
			break;
		if (!retry || !transient(st, jerr) || stop_signal ||
		    mono() + pause_ms / 1e3 > give_up) {
			if (!away)
				fprintf(stderr, "mtrace-ship: publish to %s: %s (%d)\n", subject,
				    natsStatus_GetText(st), (int)jerr);
			return -1;
		}
		fig.retried++;
		if (pause_ms == 25) /* once per message */
			fprintf(stderr, "mtrace-ship: publish to %s: %s (%d); sending it again\n",
			    subject, natsStatus_GetText(st), (int)jerr);
		nats_Sleep(pause_ms);
		if (pause_ms < 400)
			pause_ms *= 2;
	}
	jsPubAck_Destroy(ack);
	fig.shipped++;
	fig.shipped_bytes += len;
	return 0;
}

/* Lose one message: counted, and said downstream once NATS takes a Loss notice. */
static void lose(uint32_t events)
{
	if (!fig.dropped_msgs)
		fprintf(stderr, "mtrace-ship: spool full; dropping (counted)\n");
	fig.dropped_msgs++;
	fig.dropped_events += events;
	pending_loss += events;
}

static void put_aside(
    const char *subject, const char *id, const uint8_t *data, size_t len, uint32_t events)
{
	int r = spool ? spool_put(spool, subject, id, data, len, events) : 1;

	if (r == 0)
		fig.spooled++;
	else
		lose(events);
}

/* The Loss notice of what this shipper dropped: domid 0 ring 0, as mtraced's own for a
 * client that reads too slowly, on the host's subject. */
static int publish_loss(void)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;
	uint8_t buf[64];
	char subject[SUBJECT_MAX], id[SUBJECT_TOKEN_MAX + 128];
	size_t hl, len;

	l.dropped_for_client = pending_loss;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	len = mtrace__server_msg__get_packed_size(&m);
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(&m, buf + hl);
	snprintf(subject, sizeof(subject), "mtrace.%s._.events", host_tok);
	snprintf(id, sizeof(id), "%s-loss-%" PRIu64, id_base, ++seq);
	if (publish(subject, id, buf, hl + len, false) < 0)
		return -1;
	fprintf(stderr, "mtrace-ship: published a loss of %" PRIu64 " events\n", pending_loss);
	fig.loss_published += pending_loss;
	pending_loss = 0;
	return 0;
}

/* NATS back: the spool first, in order, then the loss; false while NATS is away. */
static bool drain(void)
{
	const char *subject, *id;
	const uint8_t *data;
	size_t len;
	uint32_t events;
	uint64_t n = 0;
	int r;

	if (natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED)
		return false;
	if (!stream_checked)
		ensure_stream();
	while (spool && (r = spool_peek(spool, &subject, &id, &data, &len, &events)) != 0) {
		if (r < 0) {
			fprintf(stderr, "mtrace-ship: spool unreadable: %s\n", strerror(errno));
			return false;
		}
		if (publish(subject, id, data, len, false) < 0)
			return false;
		spool_pop(spool);
		fig.drained++;
		n++;
	}
	if (pending_loss && publish_loss() < 0)
		return false;
	if (away || n) {
		away = false; /* before the figures: they say whether NATS is away */
		fprintf(
		    stderr, "mtrace-ship: NATS is back; %" PRIu64 " spooled messages sent\n", n);
		log_figures("drained");
	}
	away = false;
	return true;
}

/* The subject token of a domain: its escaped name, or _<domid> before we know it. */
static const char *domain_token(uint32_t domid, char *tmp, size_t tmplen)
{
	if (domid < MAX_DOMID && dom_tok[domid])
		return dom_tok[domid];
	snprintf(tmp, tmplen, "_%" PRIu32, domid);
	return tmp;
}

static void note_domain(uint32_t domid, const char *name)
{
	char tok[SUBJECT_TOKEN_MAX];

	if (domid >= MAX_DOMID)
		return;
	subject_token_escape(name ? name : "", tok, sizeof(tok));
	free(dom_tok[domid]);
	dom_tok[domid] = strdup(tok);
}

static void ship(const Mtrace__ServerMsg *m, const uint8_t *raw, size_t len)
{
	char subject[SUBJECT_MAX], id[SUBJECT_TOKEN_MAX + 128], tmp[24];
	const char *dom = "_", *kind = "events";
	uint32_t events = 0;

	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		dom = domain_token(m->events->domid, tmp, sizeof(tmp));
		events = (uint32_t)m->events->n_op;
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		note_domain(m->domain_up->domid, m->domain_up->name);
		dom = domain_token(m->domain_up->domid, tmp, sizeof(tmp));
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		dom = domain_token(m->domain_down->domid, tmp, sizeof(tmp));
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		if (m->loss->domid || m->loss->ring)
			dom = domain_token(m->loss->domid, tmp, sizeof(tmp));
		break;
	case MTRACE__SERVER_MSG__MSG_STATS:
		kind = "stats";
		break;
	default:
		break;
	}
	snprintf(subject, sizeof(subject), "mtrace.%s.%s.%s", host_tok, dom, kind);
	snprintf(id, sizeof(id), "%s-%" PRIu64, id_base, ++seq);
	if (!away && spool && spool_records(spool) && !drain())
		away = true;
	if (!away && publish(subject, id, raw, len, true) == 0)
		return;
	if (!away)
		fprintf(stderr, "mtrace-ship: NATS is away; spooling\n");
	away = true;
	put_aside(subject, id, raw, len, events);
}

static int subscribe(struct mtc *c, void *arg)
{
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;

	(void)arg;
	sub.n_domids = o.n_domids;
	sub.domids = o.domids;
	sub.n_domain_names = o.n_names;
	sub.domain_names = o.names;
	sub.n_labels = o.n_labels;
	sub.labels = o.labels;
	sub.events = true;
	sub.stats_interval_ms = o.stats_ms;
	return mtc_subscribe(c, &sub);
}

static bool give_up(void *arg)
{
	(void)arg;
	return stop_signal != 0;
}

/* With a callback the library connects in the background (without one, Connect
 * would retry in the call, deaf to SIGTERM): the main loop sees the status. */
static void on_connected(natsConnection *conn, void *arg)
{
	(void)conn;
	(void)arg;
}

static int nats_connect(void)
{
	natsOptions *no = NULL;
	natsStatus st;

	st = nats_options_new(&no, o.nats, o.creds);
	if (st == NATS_OK)
		st = natsOptions_SetMaxReconnect(no, -1);
	if (st == NATS_OK)
		st = natsOptions_SetReconnectWait(no, 250);
	if (st == NATS_OK)
		st = natsOptions_SetRetryOnFailedConnect(no, true, on_connected, NULL);
	for (size_t i = 0; st == NATS_OK && i < o.n_ca; i++) {
		st = natsOptions_SetSecure(no, true);
		if (st == NATS_OK)
			st = natsOptions_LoadCATrustedCertificates(no, o.ca[i]);
	}
	if (st == NATS_OK)
		st = natsConnection_Connect(&nc, no);
	/* not connected yet is fine: the library goes on trying, we spool */
	if (st == NATS_NOT_YET_CONNECTED)
		st = NATS_OK;
	if (st == NATS_OK)
		st = natsConnection_JetStream(&js, nc, NULL);
	natsOptions_Destroy(no);
	if (st != NATS_OK) {
		fprintf(stderr, "mtrace-ship: NATS %s: %s\n", o.nats, natsStatus_GetText(st));
		return -1;
	}
	return 0;
}

/* The stream MTRACE (subjects mtrace.>), created if missing and allowed. */
static void ensure_stream(void)
{
	jsStreamInfo *si = NULL;
	jsStreamConfig sc;
	jsErrCode jerr = 0;
	const char *subjects[] = { "mtrace.>" };
	natsStatus st;

	if (o.no_stream || natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED)
		return;
	/* Checked once it worked; a cluster still electing its leader is asked again, at
	 * most every 2 s (each try can wait for the server). */
	if (mono() < next_stream_check)
		return;
	next_stream_check = mono() + 2;
	st = js_GetStreamInfo(&si, js, "MTRACE", NULL, &jerr);
	if (st == NATS_OK) {
		stream_checked = true;
		jsStreamInfo_Destroy(si);
		return;
	}
	jsStreamConfig_Init(&sc);
	sc.Name = "MTRACE";
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Storage = js_FileStorage;
	sc.Replicas = (int64_t)o.replicas;
	sc.Duplicates = 10ll * 60 * 1000000000; /* 10 min of ids kept: long outages */
	st = js_AddStream(&si, js, &sc, NULL, &jerr);
	if (st == NATS_OK) {
		stream_checked = true;
		fprintf(
		    stderr, "mtrace-ship: created the stream MTRACE (replicas %u)\n", o.replicas);
		jsStreamInfo_Destroy(si);
	} else {
		fprintf(stderr, "mtrace-ship: cannot create the stream MTRACE: %s (%d)\n",
		    natsStatus_GetText(st), (int)jerr);
	}
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Per connection to mtraced: a new id base, so ids never repeat across connections. */
static void new_id_base(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(id_base, sizeof(id_base), "%s-%ld-%lld%09ld", host_tok, (long)getpid(),
	    (long long)ts.tv_sec, ts.tv_nsec);
	seq = 0;
}

/* SIGTERM: what mtraced has already sent or queued for us is shipped, or spooled, before
 * the exit: read until nothing comes for 50 ms (it refills the socket from its queue),
 * for at most 3 s; what it sends afterwards is the gap of any client's restart. */
static void ship_tail(struct mtc *c)
{
	double end = mono() + 3;
	char err[512];

	while (mono() < end) {
		Mtrace__ServerMsg *m;
		const uint8_t *raw;
		size_t len;
		int r = mtc_next(c, 50, &m, &raw, &len, err, sizeof(err));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		ship(m, raw, len);
		mtc_msg_free(m);
	}
}

static int run(struct mtc *c)
{
	double next_log = o.log_s ? mono() + o.log_s : 0;
	char err[512];

	for (;;) {
		Mtrace__ServerMsg *m;
		const uint8_t *raw;
		size_t len;
		int r;

		if (stop_signal) {
			ship_tail(c);
			return 0;
		}
		figures_out();
		if (next_log && mono() >= next_log) {
			log_figures("figures");
			next_log = mono() + o.log_s;
		}
		if (away || (spool && spool_records(spool)) || pending_loss)
			away = !drain();
		r = mtc_next(c, 250, &m, &raw, &len, err, sizeof(err));
		if (r == 0)
			continue;
		if (r < 0 && stop_signal) {
			ship_tail(c);
			return 0;
		}
		if (r < 0)
			return 2;
		if (m->msg_case == MTRACE__SERVER_MSG__MSG_GOODBYE ||
		    m->msg_case == MTRACE__SERVER_MSG__MSG_ERROR) {
			ship(m, raw, len);
			mtc_msg_free(m);
			return 2;
		}
		ship(m, raw, len);
		mtc_msg_free(m);
	}
}

/* The daemon's Hello, first on every connection: readers know where frames come from. */
static void ship_hello(const Mtrace__Hello *h)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	size_t len, hl;
	uint8_t *buf;

	m.msg_case = MTRACE__SERVER_MSG__MSG_HELLO;
	m.hello = (Mtrace__Hello *)h;
	len = mtrace__server_msg__get_packed_size(&m);
	if (!(buf = malloc(len + FRAME_VARINT_MAX)))
		return;
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(&m, buf + hl);
	ship(&m, buf, hl + len);
	free(buf);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t stop_sigs;
	char err[512];
	struct mtc *c;
	int r;

	if (ship_parse_args(argc, argv, &o) < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o.spool_dir && !(spool = spool_open(o.spool_dir, o.spool_max, err, sizeof(err)))) {
		fprintf(stderr, "mtrace-ship: %s\n", err);
		return 1;
	}
	if (o.metrics && !(metrics = ship_metrics_start(o.metrics, err, sizeof(err)))) {
		fprintf(stderr, "mtrace-ship: %s\n", err);
		return 1;
	}
	/* SIGTERM is for the main thread's waits only, not for libnats' threads (the
	 * connection was seen down right after a SIGTERM, the last messages spooled):
	 * blocked while the library makes its threads, so that they inherit the mask. */
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
	r = nats_connect();
	pthread_sigmask(SIG_UNBLOCK, &stop_sigs, NULL);
	if (r < 0)
		return 1;
	/* the library connects in the background: give it a moment before the stream */
	for (int i = 0; i < 50 && natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED; i++)
		nats_Sleep(100);
	if (natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED)
		fprintf(stderr, "mtrace-ship: NATS %s not reachable yet; spooling until it is\n",
		    o.nats);
	ensure_stream();
	c = mtc_open_wait(o.socket, "mtrace-ship " MTRACE_VERSION, subscribe, give_up, NULL);
	while (c) {
		const Mtrace__Hello *h = mtc_server_hello(c);

		subject_token_escape(o.host        ? o.host
		        : h && h->host && *h->host ? h->host
		                                   : "localhost",
		    host_tok, sizeof(host_tok));
		new_id_base();
		mtraced_up = true;
		fprintf(stderr, "mtrace-ship: connected to mtraced; publishing as mtrace.%s.>\n",
		    host_tok);
		if (h)
			ship_hello(h);
		r = run(c);
		mtc_close(c);
		c = NULL;
		mtraced_up = false;
		figures_out();
		if (r != 2 || stop_signal)
			break;
		fprintf(stderr, "mtrace-ship: mtraced went away; waiting for it\n");
		c = mtc_open_wait(
		    o.socket, "mtrace-ship " MTRACE_VERSION, subscribe, give_up, NULL);
	}
	/* a last try at what is spooled (NATS given up to --retry-ms to be back), then the
	 * figures */
	for (double end = mono() + o.retry_ms / 1e3;
	     ((spool && spool_records(spool)) || pending_loss) && mono() < end &&
	     natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED;)
		nats_Sleep(50);
	if (natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED)
		drain();
	log_figures("exit");
	ship_metrics_stop(metrics);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	spool_close(spool);
	for (size_t i = 0; i < MAX_DOMID; i++)
		free(dom_tok[i]);
	nats_Close();
	return 0;
}
