/*
 * fuzz-nats.c - libFuzzer target for the NATS frame path of every fleet reader
 * (client/lib/fleet-hosts.c): one message of the stream, its subject and its data, as
 * anyone allowed to publish on mtrace.> may store it — the subject parsed and its tokens
 * unescaped, the frame checked, unpacked within its bound and matched to its subject,
 * the bad ones counted per host (the table of 256 making room) and logged at a rate.
 * Nothing may crash, read out of bounds, leak or loop, and:
 *   - a message taken names a host whose escape is exactly its subject's host token
 *     (no two tokens are one host), and is of a kind mtrace-ship publishes;
 *   - every message is counted once, taken or skipped, and the skipped ones add up:
 *     per host + no host + folded away = total (while nothing saturated).
 *
 * Input: one byte for the subject's length, the subject, then the data.  The seeds are
 * in fuzz-nats-corpus/ (made by fuzz_nats_seeds.py).  Built with -fsanitize=fuzzer
 * under clang (meson -Dfuzzer=enabled), fleet-hosts.c, subject.c and unpack-arena.c
 * with it so that their coverage guides it; elsewhere tests/lib/fuzz-main.c replays the
 * corpus and its mutations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet-hosts.h"
#include "fuzz.h"
#include "subject.h"
#include "unpack-arena.h"

static struct fleet_hosts hosts;
static struct evbuffer *json;
static int64_t clock_ms = 1;

static void check_sums(void)
{
	uint64_t sum = hosts.unknown + hosts.evicted_bad;

	for (unsigned i = 0; i < hosts.n; i++)
		sum += hosts.hosts[i].bad;
	if (hosts.n > FLEET_BAD_HOSTS || sum != hosts.total)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char subject[256], tok[SUBJECT_TOKEN_MAX];
	uint64_t total, good;
	Mtrace__ServerMsg *m;
	size_t sl;

	if (!json) {
		/* the log's lines are made, and go nowhere */
		fleet_hosts_init(&hosts, "fuzz-nats", fopen("/dev/null", "w"));
		json = evbuffer_new();
	}
	if (size < 1)
		return 0;
	sl = data[0];
	if (size < 1 + sl)
		return 0;
	memcpy(subject, data + 1, sl);
	subject[sl] = 0;
	total = hosts.total;
	good = hosts.good;
	clock_ms += 997; /* the log's summary every ten inputs or so */
	if (fleet_decode(&hosts, subject, data + 1 + sl, size - 1 - sl, clock_ms, &m) == 0) {
		const char *p = subject + 7, *e = strchr(p, '.');

		subject_token_escape(hosts.host, tok, sizeof(tok));
		if (!m || hosts.good != good + 1 || hosts.total != total || !e ||
		    strlen(tok) != (size_t)(e - p) || memcmp(tok, p, (size_t)(e - p)) != 0)
			abort();
		switch (m->msg_case) {
		case MTRACE__SERVER_MSG__MSG_STATS:
			if (strcmp(subject + strlen(subject) - 6, ".stats") != 0)
				abort();
			break;
		case MTRACE__SERVER_MSG__MSG_EVENTS:
		case MTRACE__SERVER_MSG__MSG_HELLO:
		case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		case MTRACE__SERVER_MSG__MSG_LOSS:
		case MTRACE__SERVER_MSG__MSG_ERROR:
		case MTRACE__SERVER_MSG__MSG_GOODBYE:
		case MTRACE__SERVER_MSG__MSG_CLOCK_MAP:
		case MTRACE__SERVER_MSG__MSG_EVTCHN_LINK:
			if (strcmp(subject + strlen(subject) - 7, ".events") != 0)
				abort();
			break;
		default:
			abort();
		}
		arena_msg_free(m);
	} else if (m || hosts.total != total + 1 || hosts.good != good) {
		abort();
	}
	check_sums();
	if ((hosts.total + hosts.good) % 64 == 0) {
		fleet_hosts_json(&hosts, json);
		evbuffer_drain(json, evbuffer_get_length(json));
	}
	return 0;
}
