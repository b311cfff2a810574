/*
 * queue-aside.c - what leaves mtrace-ship's publish queue other than acknowledged
 * (queue-int.h): messages set aside (over max_payload and not to be cut, a subject the
 * server refuses, an id the stream already had, a spooled record this shipper may not
 * publish), each counted and, when it held events, told downstream in the shipper's
 * Loss notice; messages cut to fit the server's max_payload; the spool's records read
 * back and checked; the log, its lines of a kind rate-limited.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "mtrace.pb-c.h"
#include "queue-int.h"
#include "record.h"
#include "split.h"

#define SAY_EVERY   10.0 /* s: at most SAY_BURST log lines of a kind in each */
#define SAY_BURST   5
#define LOSS_PAUSE  5.0 /* s before a Loss notice the server refused is tried again */
#define HEADER_ROOM 32  /* "NATS/1.0\r\nNats-Msg-Id: " ... "\r\n\r\n" besides the id */
#define PART_ROOM   16  /* "/<part>" after a part's id */

void q_say(struct ship_queue *q, unsigned k, double now, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (now >= q->say_window[k]) {
		q->say_window[k] = now + SAY_EVERY;
		q->say_n[k] = 0;
	}
	if (q->say_n[k] >= SAY_BURST) {
		q->say_unsaid[k]++;
		return;
	}
	q->say_n[k]++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (q->say_unsaid[k])
		fprintf(stderr, "mtrace-ship: %s (and %" PRIu64 " more not logged before it)\n",
		    line, q->say_unsaid[k]);
	else
		fprintf(stderr, "mtrace-ship: %s\n", line);
	q->say_unsaid[k] = 0;
}

/* Untrusted text (a spooled subject) fit for the log: printable ASCII, 80 bytes. */
static const char *printable(const char *s, char out[static 84])
{
	size_t o = 0;

	for (; *s && o < 80; s++)
		out[o++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
	strcpy(out + o, *s ? "..." : "");
	return out;
}

void q_lose(struct ship_queue *q, uint32_t events)
{
	q->fig.dropped_msgs++;
	q->fig.dropped_events += events;
	q->pending_loss += events;
}

/* The Loss notice of what this shipper dropped: domid 0 ring 0, as mtraced's own for a
 * client that reads too slowly, on the host's subject; after everything before it. */
void q_put_loss(struct ship_queue *q, double now)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;
	uint8_t buf[64];
	char id[MSGID_MAX];
	size_t hl, len;
	natsMsg *msg;

	if (!q->pending_loss || q->loss_queued || !q->loss_subject[0] || now < q->loss_pause_until)
		return;
	l.dropped_for_client = q->pending_loss;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	len = mtrace__server_msg__get_packed_size(&m);
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(&m, buf + hl);
	msgid_make(id, sizeof(id), q->id_base, "loss", ++q->loss_seq);
	if (!(msg = q_message(q->loss_subject, id, buf, hl + len)))
		return;
	q_push(q, msg, 0, q->pending_loss, false);
	q->pending_loss = 0;
	q->loss_queued = true;
}

void q_aside(struct ship_queue *q, struct entry *e, unsigned why, double now)
{
	const char *subject = e->m ? natsMsg_GetSubject(e->m) : NULL, *id = NULL;

	if (e->m)
		natsMsgHeader_Get(e->m, MSG_ID_HDR, &id);
	switch (why) {
	case W_TOO_BIG:
		q_say(q, SAY_TOO_BIG, now,
		    "a message of %" PRIu32 " bytes to %s does not fit the server's max_payload "
		    "(%zu) and cannot be cut: set aside (counted)",
		    e->len, subject ? subject : "?", jsl_max_payload(q->js));
		break;
	case W_REFUSED:
		q_say(q, SAY_REFUSED, now,
		    "the server refuses publishes to %s (the user's permissions): set aside "
		    "(counted)",
		    subject ? subject : "?");
		break;
	case W_TAKEN:
		q_say(q, SAY_TAKEN, now,
		    "the stream already had the id %s of a message never sent before (another "
		    "publisher took it): the message is lost (counted)",
		    id ? id : "?");
		break;
	}
	natsMsg_Destroy(e->m);
	e->m = NULL;
	e->state = E_ASIDE;
	e->why = (uint8_t)why;
}

void q_leave(struct ship_queue *q, struct entry *e, double now)
{
	if (e->pops)
		spool_pop(q->spool);
	if (e->state == E_ACKED) {
		if (e->pops)
			q->fig.drained++;
		if (e->spooled) {
			/* counted here, not at the acknowledgement: a record acknowledged
			 * behind one that failed is read and sent again after a give-up */
			q->fig.shipped++;
			q->fig.shipped_bytes += e->len;
		}
		return;
	}
	switch (e->why) {
	case W_BAD:
		q->fig.spool_bad++; /* nothing of it can be trusted, its events neither */
		return;
	case W_TAKEN:
		q->fig.taken++;
		break;
	default:
		q->fig.set_aside++;
	}
	if (e->loss) {
		/* the notice itself: told again later, with what is lost meanwhile */
		q->pending_loss += e->loss;
		q->loss_queued = false;
		q->loss_pause_until = now + LOSS_PAUSE;
		return;
	}
	q_lose(q, e->events);
}

/* Entry i replaced by the parts of sp, in order, ids <id>/1.. (the spool's record, if
 * it is one, leaves the file with the last). */
static void replace(struct ship_queue *q, size_t i, const struct split *sp)
{
	struct entry old = *q_at(q, i);
	const char *subject = natsMsg_GetSubject(old.m), *id = NULL;
	size_t extra = sp->n - 1;

	natsMsgHeader_Get(old.m, MSG_ID_HDR, &id);
	for (size_t k = 0; k < extra; k++)
		q_push(q, NULL, 0, 0, false); /* room at the end... */
	for (size_t j = q->n - 1; j >= i + 1 + extra; j--)
		*q_at(q, j) = *q_at(q, j - extra); /* ...made after i */
	for (size_t k = 0; k < sp->n; k++) {
		char pid[MSGID_MAX + PART_ROOM];
		struct entry *e = q_at(q, i + k);

		snprintf(pid, sizeof(pid), "%s/%zu", id ? id : "", k + 1);
		*e = (struct entry){
			.m = q_message(subject, pid, sp->frame[k], sp->len[k]),
			.len = (uint32_t)sp->len[k],
			.events = sp->events[k],
			.spooled = old.spooled,
			.pops = old.pops && k == extra,
		};
		if (!e->m) {
			/* the entries must stand for the spool's record, in order */
			fprintf(stderr, "mtrace-ship: out of memory\n");
			abort();
		}
		q->bytes += e->len;
	}
	q->bytes -= old.len;
	natsMsg_Destroy(old.m);
}

int q_fit(struct ship_queue *q, size_t i, double now)
{
	struct entry *e = q_at(q, i);
	size_t maxp = jsl_max_payload(q->js), room;
	const char *id = NULL;
	struct split sp;
	int r = -1;

	/* most messages are far below it: no need to look at their id */
	if (!maxp || !e->m || e->loss || e->len + HEADER_ROOM + MSGID_MAX + PART_ROOM <= maxp)
		return 0;
	natsMsgHeader_Get(e->m, MSG_ID_HDR, &id);
	room = HEADER_ROOM + (id ? strlen(id) : 0);
	if (e->len + room <= maxp)
		return 0;
	if (maxp > room + PART_ROOM)
		r = split_frame(
		    (const uint8_t *)natsMsg_GetData(e->m), e->len, maxp - room - PART_ROOM, &sp);
	if (r <= 0) {
		q_aside(q, e, W_TOO_BIG, now);
		return 1;
	}
	replace(q, i, &sp);
	split_free(&sp);
	q->fig.split++;
	return 0;
}

int q_read_spooled(struct ship_queue *q, double now)
{
	const char *subject, *id, *why;
	const uint8_t *data;
	size_t len;
	uint32_t events, spooled_events;
	natsMsg *m;
	char p[84];
	int r = spool_next(q->spool, &subject, &id, &data, &len, &spooled_events);

	if (r <= 0)
		return r;
	/* the record was read: an entry must stand for it (spool_pop follows them) */
	if ((why = record_invalid(q->host_tok, subject, id, data, len, &events))) {
		q_say(q, SAY_BAD, now, "spooled record to \"%s\" skipped: %s",
		    printable(subject, p), why);
		q_push(q, NULL, 0, 0, true)->state = E_ASIDE; /* why: W_BAD, 0 */
		return 1;
	}
	if (!(m = q_message(subject, id, data, len))) {
		fprintf(stderr, "mtrace-ship: out of memory\n");
		abort();
	}
	q_push(q, m, events, 0, true);
	return 1;
}
