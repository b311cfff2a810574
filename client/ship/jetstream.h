/*
 * jetstream.h - mtrace-ship's link to NATS JetStream (libnats): the connection (it
 * connects and reconnects in the background), the stream check, asynchronous publishes
 * and their completions.
 *
 * libnats delivers acknowledgements, timeouts and connection changes on threads of its
 * own (a subscription's delivery thread, its callback thread).  Those threads touch only
 * a small inbox here, under a mutex, and wake the program's loop through an eventfd
 * (jsl_wake_fd); everything else, the completions included, is the loop's.
 */
#ifndef MTRACE_SHIP_JETSTREAM_H
#define MTRACE_SHIP_JETSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nats/nats.h>

struct jsl_config {
	const char *url, *creds;
	const char *inbox_prefix; /* of the reply subjects (acknowledgements); NULL: _INBOX */
	const char *const *ca;    /* CA files for TLS (n_ca of them) */
	size_t n_ca;
	unsigned replicas;    /* of the stream when it is created */
	bool no_stream;       /* neither check nor create it */
	unsigned ack_ms;      /* a publish without an acknowledgement by then fails */
	unsigned max_pending; /* publishes in flight the caller allows itself */
};

/* One publish answered: its message (the caller's again), NATS_OK or why not; with
 * NATS_OK, whether the stream said it had the message's id already (and dropped it). */
struct jsl_done {
	natsMsg *m;
	natsStatus st;
	jsErrCode jerr;
	bool duplicate;
};

struct jsl;

/* Start connecting (in the background); NULL with a sentence in err (bad options). */
struct jsl *jsl_open(const struct jsl_config *c, char *err, size_t errlen);
/* Close the connection and the library (nats_CloseAndWait: its threads are gone). */
void jsl_close(struct jsl *l);

/* Readable when completions or connection changes wait: then call jsl_take. */
int jsl_wake_fd(const struct jsl *l);
/* Up to max completions, in the order they came; the rest stay for the next call. */
size_t jsl_take(struct jsl *l, struct jsl_done *out, size_t max);

/* Connected now. */
bool jsl_up(struct jsl *l);
/* The server's max_payload (headers and data of one message), as it said when the
 * connection was made; 0 before the first connection. */
size_t jsl_max_payload(struct jsl *l);
/* The server refused a publish to subject (a permissions violation) at or after since
 * (CLOCK_MONOTONIC seconds): such a publish is never acknowledged, it times out. */
bool jsl_refused(struct jsl *l, const char *subject, double since);
/* The errors the server sent since the last call (refusals included): how many, and
 * the last one's text in buf. */
unsigned jsl_take_errors(struct jsl *l, char *buf, size_t len);
/* Connections made so far: a publish on a newer one than another's may overtake it. */
uint64_t jsl_generation(struct jsl *l);

/* The stream MTRACE checked, created if missing and allowed (once it worked; while it
 * does not, at most every 2 s: a JetStream API request, waited for). */
void jsl_check_stream(struct jsl *l);

/*
 * Publish *m (its subject, data and Nats-Msg-Id header) without waiting: NATS_OK and
 * *m NULL (the library's until its completion gives it back), or why not (*m kept).
 * Never blocks on the acknowledgement; with fewer than max_pending in flight it does
 * not stall either.
 */
natsStatus jsl_publish(struct jsl *l, natsMsg **m);

/* A refusal that passes: the connection moving to another server, a cluster electing
 * the stream's leader, an acknowledgement that came too late. */
bool jsl_transient(natsStatus st, jsErrCode jerr);

#endif
