/*
 * cat-nats.c - reading the fleet stream back: an ordered push consumer on
 * mtrace.<host>.> (or mtrace.>), each NATS message one recording frame.  Without
 * --follow the read ends once the consumer has caught up with the stream.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nats/nats.h>

#include "nats-servers.h"
#include "cat-nats.h"
#include "frame.h"
#include "subject.h"
#include "unpack-arena.h"

/* Not --follow: an empty stream (or none of our subjects) ends the read after this. */
#define FIRST_WAIT_MS 2000
/* Nothing for this long: ask the consumer whether it still has messages for us. */
#define STALL_MS 5000

static natsConnection *nc;
static jsCtx *js;
static natsSubscription *sub;
static natsMsg *held; /* the message whose bytes the caller holds */
static bool follow, caught_up, got_any;
static int idle_ms;
/* The stream sequence of the last message given out: when the ordered consumer is made
 * again after the stream's leader changed, libnats can hand over a message it had
 * already delivered (measured: one in the cluster test); it is skipped here. */
static uint64_t last_seq;
/* What the consumer is made from, to make it again (resubscribe). */
static char subject[SUBJECT_TOKEN_MAX + 16];
static jsSubOptions base_so;
static int64_t heard_ms; /* monotonic ms: the last message, or the last check */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The ordered consumer lives on one server: when the stream's leader is killed while
 * libnats makes it again, that can fail (no leader yet) and leave the subscription
 * silent for good (seen in the cluster test).  Made again here from the next stream
 * sequence, or as first asked when nothing came yet. */
static natsStatus resubscribe(jsErrCode *jerr)
{
	jsSubOptions so = base_so;
	natsSubscription *s = NULL;
	natsStatus st;

	if (last_seq) {
		so.Config.DeliverPolicy = js_DeliverByStartSequence;
		so.Config.OptStartSeq = last_seq + 1;
		so.Config.OptStartTime = 0;
	}
	st = js_SubscribeSync(&s, js, subject, NULL, &so, jerr);
	if (st != NATS_OK)
		return st;
	natsSubscription_Destroy(sub);
	sub = s;
	return NATS_OK;
}

/* Nothing came for STALL_MS: the consumer is idle (nothing pending: fine), stuck with
 * messages pending, or gone; for the last two, make it again. */
static void check_stall(void)
{
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	natsStatus st;

	st = natsSubscription_GetConsumerInfo(&ci, sub, NULL, &jerr);
	if (st == NATS_OK) {
		bool idle = ci->NumPending == 0;

		jsConsumerInfo_Destroy(ci);
		if (idle)
			return;
	}
	st = resubscribe(&jerr);
	fprintf(stderr,
	    "mtrace-cat: the stream's consumer is silent; made again after message %" PRIu64
	    ": %s\n",
	    last_seq, st == NATS_OK ? "ok" : natsStatus_GetText(st));
}

int cat_nats_open(const struct cat_opts *o, char *err, size_t errlen)
{
	natsOptions *no = NULL;
	jsSubOptions so;
	jsErrCode jerr = 0;
	char tok[SUBJECT_TOKEN_MAX];
	natsStatus st;

	if (o->nats_host) {
		subject_token_escape(o->nats_host, tok, sizeof(tok));
		snprintf(subject, sizeof(subject), "mtrace.%s.>", tok);
	} else {
		snprintf(subject, sizeof(subject), "mtrace.>");
	}
	st = nats_options_new(&no, o->nats, o->creds);
	if (st == NATS_OK)
		st = natsConnection_Connect(&nc, no);
	natsOptions_Destroy(no);
	if (st == NATS_OK)
		st = natsConnection_JetStream(&js, nc, NULL);
	if (st != NATS_OK) {
		snprintf(err, errlen, "NATS %s: %s", o->nats, natsStatus_GetText(st));
		return -1;
	}
	jsSubOptions_Init(&so);
	so.Stream = "MTRACE";
	so.Ordered = true;
	if (o->since_ns) {
		so.Config.DeliverPolicy = js_DeliverByStartTime;
		so.Config.OptStartTime = o->since_ns;
	} else if (o->follow && !o->from_start) {
		so.Config.DeliverPolicy = js_DeliverNew;
	} else {
		so.Config.DeliverPolicy = js_DeliverAll;
	}
	follow = o->follow;
	base_so = so;
	heard_ms = mono_ms();
	st = js_SubscribeSync(&sub, js, subject, NULL, &so, &jerr);
	if (st != NATS_OK) {
		snprintf(err, errlen, "subscribe to %s in the stream MTRACE: %s (%d)", subject,
		    natsStatus_GetText(st), (int)jerr);
		return -1;
	}
	return 0;
}

int cat_nats_next(int timeout_ms, Mtrace__ServerMsg **m, const uint8_t **raw, size_t *rlen,
    char *err, size_t errlen)
{
	natsMsg *msg = NULL;
	jsMsgMetaData *meta = NULL;
	const uint8_t *d;
	size_t len, hl, ml;
	natsStatus st;

	natsMsg_Destroy(held);
	held = NULL;
	if (caught_up && !follow) {
		errno = 0;
		return -1;
	}
	if (timeout_ms < 0)
		timeout_ms = 1000;
	if (timeout_ms == 0)
		timeout_ms = 1;
again:
	st = natsSubscription_NextMsg(&msg, sub, timeout_ms);
	if (st == NATS_TIMEOUT) {
		idle_ms += timeout_ms;
		if (mono_ms() - heard_ms >= STALL_MS) {
			check_stall();
			heard_ms = mono_ms();
		}
		if (!follow && !got_any && idle_ms >= FIRST_WAIT_MS) {
			errno = 0;
			return -1;
		}
		return 0;
	}
	if (st != NATS_OK) {
		snprintf(err, errlen, "NATS: %s", natsStatus_GetText(st));
		errno = EIO;
		return -1;
	}
	idle_ms = 0;
	heard_ms = mono_ms();
	got_any = true;
	if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
		uint64_t seq = meta->Sequence.Stream;

		caught_up = meta->NumPending == 0;
		jsMsgMetaData_Destroy(meta);
		if (seq && seq <= last_seq) {
			fprintf(stderr,
			    "mtrace-cat: stream message %" PRIu64 " delivered again; skipped\n",
			    seq);
			natsMsg_Destroy(msg);
			if (caught_up && !follow) {
				errno = 0;
				return -1;
			}
			goto again;
		}
		last_seq = seq;
	}
	d = (const uint8_t *)natsMsg_GetData(msg);
	len = (size_t)natsMsg_GetDataLength(msg);
	if (frame_parse(d, len, len, &hl, &ml) != FRAME_OK || hl + ml != len ||
	    !(*m = arena_msg_unpack(d + hl, ml))) {
		snprintf(err, errlen, "a message on %s is not one recording frame",
		    natsMsg_GetSubject(msg));
		natsMsg_Destroy(msg);
		errno = EPROTO;
		return -1;
	}
	held = msg;
	*raw = d;
	*rlen = len;
	return 1;
}

void cat_nats_close(void)
{
	natsMsg_Destroy(held);
	held = NULL;
	natsSubscription_Destroy(sub);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	sub = NULL;
	js = NULL;
	nc = NULL;
}
