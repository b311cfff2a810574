/*
 * fleet-hosts.c - one message of the fleet stream decoded, the others counted per host
 * (fleet-hosts.h).  A message is one of ours when its subject is one mtrace-ship makes
 * (mtrace.<host>.<domain>.events|stats, each token as subject_token_escape writes it:
 * no two tokens name one host) and its data one frame, no larger than mtraced's frames,
 * whose message unpacks within FLEET_UNPACK_FACTOR times its bytes and is of a kind
 * mtrace-ship publishes on that subject.  Anything else is skipped and counted.
 */
#include <inttypes.h>
#include <string.h>

#include "fleet-hosts.h"
#include "frame.h"
#include "json.h"
#include "sat.h"
#include "subject.h"
#include "unpack-arena.h"

/* Hosts named in the log's summary line, at most. */
#define LOG_HOSTS 5

void fleet_hosts_init(struct fleet_hosts *h, const char *prog, FILE *log)
{
	memset(h, 0, sizeof(*h));
	h->prog = prog;
	h->log = log;
}

/* The token at *p, up to the next dot, into tok; *p past the dot. */
static bool token(const char **p, char *tok, size_t toklen)
{
	const char *e = strchr(*p, '.');

	if (!e || (size_t)(e - *p) >= toklen)
		return false;
	memcpy(tok, *p, (size_t)(e - *p));
	tok[e - *p] = 0;
	*p = e + 1;
	return true;
}

/* The host into name, and whether it is a stats subject; a sentence when the subject
 * is not one mtrace-ship makes (name "" when not even its host is). */
static const char *subject_check(const char *subject, char *name, bool *stats)
{
	char tok[SUBJECT_TOKEN_MAX], dom[FLEET_NAME_MAX];
	const char *p = subject + 7;

	*name = 0;
	if (strncmp(subject, "mtrace.", 7) != 0 || !token(&p, tok, sizeof(tok)))
		return "not a subject of the fleet stream";
	if (subject_token_unescape(tok, name, FLEET_NAME_MAX) < 0) {
		*name = 0;
		return "its host token is not one mtrace-ship makes";
	}
	if (!token(&p, tok, sizeof(tok)))
		return "no domain token";
	*stats = strcmp(p, "stats") == 0;
	if (!*stats && strcmp(p, "events") != 0)
		return "neither events nor stats";
	if (!subject_token_is_numbered(tok, strlen(tok)) &&
	    (*stats || subject_token_unescape(tok, dom, sizeof(dom)) < 0))
		return "its domain token is not one mtrace-ship makes";
	return NULL;
}

/* The message, unpacked within its bound and of a kind mtrace-ship publishes there. */
static const char *data_check(const uint8_t *d, size_t len, bool stats, Mtrace__ServerMsg **out)
{
	size_t hl, ml, max;
	Mtrace__ServerMsg *m;
	bool is_stats;

	if (len > FRAME_MAX_TO_CLIENT)
		return "larger than mtraced's frames";
	if (frame_parse(d, len, FRAME_MAX_TO_CLIENT, &hl, &ml) != FRAME_OK || hl + ml != len)
		return "not one recording frame";
	max = ml * FLEET_UNPACK_FACTOR + 4096;
	if (max > FLEET_UNPACK_MAX)
		max = FLEET_UNPACK_MAX;
	if (!(m = arena_msg_unpack_max(d + hl, ml, max)))
		return "its frame is not a message (or unpacks too large)";
	is_stats = m->msg_case == MTRACE__SERVER_MSG__MSG_STATS;
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
	case MTRACE__SERVER_MSG__MSG_EVENTS:
	case MTRACE__SERVER_MSG__MSG_HELLO:
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
	case MTRACE__SERVER_MSG__MSG_LOSS:
	case MTRACE__SERVER_MSG__MSG_ERROR:
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP:
	case MTRACE__SERVER_MSG__MSG_EVTCHN_LINK:
		if (is_stats == stats) {
			*out = m;
			return NULL;
		}
		arena_msg_free(m);
		return stats ? "not a Stats on a stats subject" : "a Stats not on a stats subject";
	default:
		arena_msg_free(m);
		return "a message mtrace-ship does not publish";
	}
}

/* Its count: the host's own, made room for by the least recently bad. */
static struct fleet_bad_host *bad_host(struct fleet_hosts *h, const char *name)
{
	struct fleet_bad_host *e = NULL;

	for (unsigned i = 0; i < h->n; i++)
		if (!strcmp(h->hosts[i].name, name))
			return &h->hosts[i];
	if (h->n < FLEET_BAD_HOSTS) {
		e = &h->hosts[h->n++];
	} else {
		e = &h->hosts[0];
		for (unsigned i = 1; i < h->n; i++)
			if (h->hosts[i].seen < e->seen)
				e = &h->hosts[i];
		sat_inc(&h->evicted, 1);
		sat_inc(&h->evicted_bad, e->bad);
	}
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->bad = 0;
	return e;
}

/* Hostile text on a terminal: printable ASCII only, the rest as \xHH, cut. */
static void put_safe(FILE *f, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
	if (s[i])
		fputs("...", f);
}

static void say_summary(struct fleet_hosts *h, int64_t now_ms)
{
	const struct fleet_bad_host *top[LOG_HOSTS] = { NULL };

	if (!h->log || !h->unsaid)
		return;
	for (unsigned i = 0; i < h->n; i++) {
		const struct fleet_bad_host *e = &h->hosts[i];
		for (unsigned k = 0; k < LOG_HOSTS; k++)
			if (!top[k] || e->bad > top[k]->bad) {
				memmove(&top[k + 1], &top[k], (LOG_HOSTS - k - 1) * sizeof(top[0]));
				top[k] = e;
				break;
			}
	}
	fprintf(h->log, "%s: %" PRIu64 " more bad messages skipped; %s%" PRIu64 " in all:", h->prog,
	    h->unsaid, sat_full(h->total) ? ">=" : "", h->total);
	for (unsigned k = 0; k < LOG_HOSTS && top[k]; k++) {
		fputs(k ? ", " : " ", h->log);
		put_safe(h->log, top[k]->name, 64);
		fprintf(h->log, " %" PRIu64, top[k]->bad);
	}
	if (h->unknown)
		fprintf(h->log, "%sno host %" PRIu64, top[0] ? ", " : " ", h->unknown);
	if (h->evicted)
		fprintf(h->log, " (%" PRIu64 " hosts' counts folded, %" PRIu64 " messages)",
		    h->evicted, h->evicted_bad);
	fputc('\n', h->log);
	h->unsaid = 0;
	h->logged_ms = now_ms;
}

static void count_bad(
    struct fleet_hosts *h, const char *subject, const char *name, const char *why, int64_t now_ms)
{
	sat_inc(&h->total, 1);
	if (*name) {
		struct fleet_bad_host *e = bad_host(h, name);
		sat_inc(&e->bad, 1);
		e->seen = ++h->tick;
	} else {
		sat_inc(&h->unknown, 1);
	}
	if (!h->log)
		return;
	if (!h->logged_ms) {
		/* the first one in full */
		fprintf(h->log, "%s: a message on ", h->prog);
		put_safe(h->log, subject, 200);
		fprintf(h->log,
		    " skipped: %s (such messages are counted per host, a summary every %d s)\n",
		    why, FLEET_LOG_EVERY_S);
		h->logged_ms = now_ms ? now_ms : 1;
		return;
	}
	sat_inc(&h->unsaid, 1);
	if (now_ms - h->logged_ms >= FLEET_LOG_EVERY_S * 1000)
		say_summary(h, now_ms);
}

int fleet_decode(struct fleet_hosts *h, const char *subject, const uint8_t *data, size_t len,
    int64_t now_ms, Mtrace__ServerMsg **m)
{
	char name[FLEET_NAME_MAX];
	const char *why;
	bool stats = false;

	*m = NULL;
	if ((why = subject_check(subject, name, &stats)) ||
	    (why = data_check(data, len, stats, m))) {
		count_bad(h, subject, name, why, now_ms);
		return -1;
	}
	memcpy(h->host, name, sizeof(name));
	sat_inc(&h->good, 1);
	return 0;
}

void fleet_hosts_flush(struct fleet_hosts *h, int64_t now_ms)
{
	say_summary(h, now_ms);
}

void fleet_hosts_json(const struct fleet_hosts *h, struct evbuffer *b)
{
	evbuffer_add_printf(b,
	    "{\"total\":%" PRIu64 ",\"saturated\":%s,\"unknown_host\":%" PRIu64
	    ",\"hosts_evicted\":%" PRIu64 ",\"evicted_hosts_bad\":%" PRIu64 ",\"hosts\":{",
	    h->total, sat_full(h->total) ? "true" : "false", h->unknown, h->evicted,
	    h->evicted_bad);
	for (unsigned i = 0; i < h->n; i++) {
		if (i)
			evbuffer_add(b, ",", 1);
		json_str(b, h->hosts[i].name);
		evbuffer_add_printf(b, ":%" PRIu64, h->hosts[i].bad);
	}
	evbuffer_add(b, "}}", 2);
}
