/*
 * stream-probe - a scriptable misbehaving (or slow) client for the stream tests.
 *
 *   stream-probe -s|--socket SOCK [-H] [-S] [-M] [-W] [-I STATS_MS] [-x HEX]... [-a EVENTS]
 *                [-P COOKIE] [-w MS] [-c] [-p SECONDS] [-z MS] [-T|--time SECONDS] [-d DOMID]
 *
 * -H: do not answer the daemon's Hello; -S: subscribe to all events (-I: and to
 * statistics every STATS_MS, printed as "stats DROPPED_FOR_CLIENT"; -M: through shared
 * memory, printed as "shared 1" (or 0) at the end; -W: woken by SharedWake messages, not
 * the region's eventfd, as clients before it were); -x: send these
 * bytes as they are (-a: only once this many events came; -w: MS after the Hello, a request
 * begun late in the handshake); -P: send a Ping; -c: close right after sending (a client gone
 * mid-frame); -p: sleep before reading (a stalled client); -z: sleep MS after each message
 * (a slow but steady reader); -T: give up reading after
 * this long without a message; -d: stop after DOMID's DomainDown, which follows the
 * domain's last events (a test's end that no loaded machine can make come early).  Prints one line per message received ("error 1 ...", "events 123",
 * "loss 0 0 4567", "goodbye", "eof") and a final "summary events=N dropped=D".
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrace-client.h"

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (s[0] && s[1] && n < max) {
		unsigned v;
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *sock = NULL;
	unsigned flags = 0;
	bool subscribe = false, close_now = false, shm = false;
	double pause = 0, limit = 10;
	uint64_t events = 0, dropped = 0, ping = 0, send_after = 0;
	unsigned stats_ms = 0, nap_ms = 0, late_ms = 0;
	long until_down = -1;
	static uint8_t sendbuf[1 << 20];
	size_t sendlen = 0;
	struct mtc *c;
	char err[256];
	int ch;

	/* Line by line: tests watch this output while the probe runs. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "time", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	while ((ch = getopt_long(argc, argv, "s:HSMWI:x:a:P:w:cp:z:T:d:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'I':
			stats_ms = (unsigned)atoi(optarg);
			break;
		case 's':
			sock = optarg;
			break;
		case 'H':
			flags |= MTC_NO_HELLO;
			break;
		case 'S':
			subscribe = true;
			break;
		case 'M':
			shm = true;
			break;
		case 'W':
			flags |= MTC_NO_WAKE_FD;
			break;
		case 'x':
			sendlen += unhex(optarg, sendbuf + sendlen, sizeof(sendbuf) - sendlen);
			break;
		case 'P':
			ping = strtoull(optarg, NULL, 10);
			break;
		case 'a':
			send_after = strtoull(optarg, NULL, 10);
			break;
		case 'c':
			close_now = true;
			break;
		case 'p':
			pause = atof(optarg);
			break;
		case 'z':
			nap_ms = (unsigned)atoi(optarg);
			break;
		case 'w':
			late_ms = (unsigned)atoi(optarg);
			break;
		case 'T':
			limit = atof(optarg);
			break;
		case 'd':
			until_down = atol(optarg);
			break;
		default:
			return 2;
		}
	}
	c = mtc_connect_flags(sock, "stream-probe", flags, err, sizeof(err));
	if (!c) {
		printf("connect-failed %s\n", err);
		return 1;
	}
	printf("hello\n");
	if (subscribe) {
		Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
		sub.events = true;
		sub.stats_interval_ms = stats_ms;
		sub.shared_memory = shm;
		if (mtc_subscribe(c, &sub) < 0)
			printf("send-failed %s\n", strerror(errno));
	}
	if (ping) {
		Mtrace__ClientMsg m = MTRACE__CLIENT_MSG__INIT;
		Mtrace__Ping p = MTRACE__PING__INIT;
		p.cookie = ping;
		m.msg_case = MTRACE__CLIENT_MSG__MSG_PING;
		m.ping = &p;
		mtc_send(c, &m);
	}
	if (sendlen && late_ms)
		usleep(late_ms * 1000u);
	if (sendlen && !send_after && mtc_send_raw(c, sendbuf, sendlen) < 0)
		printf("send-failed %s\n", strerror(errno));
	if (close_now) {
		mtc_close(c);
		printf("closed\n");
		return 0;
	}
	if (pause > 0)
		usleep((useconds_t)(pause * 1e6));
	for (;;) {
		Mtrace__ServerMsg *m;
		int r = mtc_next(c, (int)(limit * 1000), &m, NULL, NULL, err, sizeof(err));

		if (r == 0) {
			printf("timeout\n");
			break;
		}
		if (r < 0) {
			printf(errno ? "read-error %s\n" : "eof\n", err);
			break;
		}
		switch (m->msg_case) {
		case MTRACE__SERVER_MSG__MSG_ERROR:
			printf("error %d %s\n", (int)m->error->code, m->error->message);
			break;
		case MTRACE__SERVER_MSG__MSG_EVENTS:
			events += m->events->n_op;
			if (sendlen && send_after && events >= send_after) {
				if (mtc_send_raw(c, sendbuf, sendlen) < 0)
					printf("send-failed %s\n", strerror(errno));
				send_after = 0;
				sendlen = 0;
			}
			break;
		case MTRACE__SERVER_MSG__MSG_LOSS:
			dropped += m->loss->dropped_for_client;
			printf("loss %u %u %" PRIu64 " %" PRIu64 "\n", m->loss->domid,
			    m->loss->ring, m->loss->lost_in_ring, m->loss->dropped_for_client);
			break;
		case MTRACE__SERVER_MSG__MSG_STATS:
			printf("stats %" PRIu64 "\n", m->stats->dropped_for_client);
			break;
		case MTRACE__SERVER_MSG__MSG_PONG:
			printf("pong %" PRIu64 "\n", m->pong->cookie);
			break;
		case MTRACE__SERVER_MSG__MSG_GOODBYE:
			printf("goodbye\n");
			break;
		case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
			printf("domain_up %u\n", m->domain_up->domid);
			break;
		case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
			printf("domain_down %u\n", m->domain_down->domid);
			if ((long)m->domain_down->domid == until_down) {
				mtc_msg_free(m);
				goto done;
			}
			break;
		default:
			break;
		}
		mtc_msg_free(m);
		if (nap_ms)
			usleep((useconds_t)nap_ms * 1000);
	}
done:
	if (shm)
		printf("shared %d\n", mtc_shared(c));
	printf("summary events=%" PRIu64 " dropped=%" PRIu64 "\n", events, dropped);
	mtc_close(c);
	return 0;
}
