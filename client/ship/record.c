/*
 * record.c - a spooled record checked against what this shipper publishes (record.h):
 * the same subject grammar as its own subject builder (frames.c with subject.h), ids
 * as msgid.c makes them, and a payload that is one frame mtraced could have sent.
 */
#include <stdbool.h>
#include <string.h>

#include "frame.h"
#include "msgid.h"
#include "mtrace.pb-c.h"
#include "record.h"
#include "spool.h"
#include "subject.h"

static bool kept(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '-';
}

static int unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* tok[0..n) is a token subject_token_escape makes: "%" (the empty name), or kept bytes
 * and %XX escapes of bytes it does not keep (never NUL), 255 bytes of name at most. */
static bool escaped_token(const char *tok, size_t n)
{
	size_t bytes = 0;

	if (n == 1 && tok[0] == '%')
		return true;
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; bytes++) {
		if (kept(tok[i])) {
			i++;
			continue;
		}
		if (tok[i] != '%' || i + 3 > n)
			return false;
		int h = unhex(tok[i + 1]), l = unhex(tok[i + 2]);
		int c = h < 0 || l < 0 ? -1 : h << 4 | l;
		if (c <= 0 || kept((char)c))
			return false; /* not a byte escape would write as %XX */
		i += 3;
	}
	return bytes <= 255;
}

static const char *subject_invalid(const char *host_tok, const char *subject, bool *stats)
{
	size_t hl = strlen(host_tok);
	const char *dom, *kind;

	if (strncmp(subject, "mtrace.", 7) || strncmp(subject + 7, host_tok, hl) ||
	    subject[7 + hl] != '.')
		return "not on this host's subjects";
	dom = subject + 8 + hl;
	if (!(kind = strchr(dom, '.')))
		return "no kind";
	kind++;
	*stats = !strcmp(kind, "stats");
	if (!*stats && strcmp(kind, "events"))
		return "neither events nor stats";
	if (!subject_token_is_numbered(dom, (size_t)(kind - 1 - dom)) &&
	    (*stats || !escaped_token(dom, (size_t)(kind - 1 - dom))))
		return "not a domain token of this shipper's";
	return NULL;
}

static const char *id_invalid(const char *host_tok, const char *id)
{
	size_t hl = strlen(host_tok), n = strlen(id);

	if (n > MSGID_MAX || strncmp(id, host_tok, hl) || id[hl] != '-')
		return "an id not of this host's";
	for (size_t i = hl; i < n; i++)
		if (!kept(id[i]) && id[i] != '/' && id[i] != '%')
			return "an id with bytes ids do not have";
	return NULL;
}

static const char *data_invalid(const uint8_t *data, size_t len, bool stats, uint32_t *events)
{
	size_t hdr, msg;
	Mtrace__ServerMsg *m;
	const char *why = NULL;

	if (frame_parse(data, len, FRAME_MAX_TO_CLIENT, &hdr, &msg) != FRAME_OK || hdr + msg != len)
		return "a payload that is not one frame";
	if (!(m = mtrace__server_msg__unpack(NULL, msg, data + hdr)))
		return "a payload that is not a message";
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
		why = stats ? NULL : "a Stats not on the stats subject";
		break;
	case MTRACE__SERVER_MSG__MSG_EVENTS:
		*events = (uint32_t)m->events->n_op;
		__attribute__((fallthrough));
	case MTRACE__SERVER_MSG__MSG_HELLO:
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP:
	case MTRACE__SERVER_MSG__MSG_EVTCHN_LINK:
	case MTRACE__SERVER_MSG__MSG_LOSS:
	case MTRACE__SERVER_MSG__MSG_ERROR:
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		why = stats ? "not a Stats on the stats subject" : NULL;
		break;
	default:
		why = "a message mtrace-ship does not publish";
	}
	mtrace__server_msg__free_unpacked(m, NULL);
	return why;
}

const char *record_invalid(const char *host_tok, const char *subject, const char *id,
    const uint8_t *data, size_t len, uint32_t *events)
{
	const char *why;
	bool stats = false;

	*events = 0;
	if (!*host_tok)
		return "no host yet";
	if ((why = subject_invalid(host_tok, subject, &stats)) || (why = id_invalid(host_tok, id)))
		return why;
	return data_invalid(data, len, stats, events);
}
