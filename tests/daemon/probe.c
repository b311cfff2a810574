/*
 * probe.c - the daemon tests' client: prints what mtraced reports, in a form the shell
 * tests grep.  Unlike mtrace-cat it prints every DomainStats field the tests check
 * (ratelimited, evicted, state) and counts streamed events per domain.
 *
 *   mtraced-probe -s SOCKET stats           one Stats: a "dom" line per domain,
 *                                           "counter" and "label" lines, then "end"
 *   mtraced-probe -s SOCKET events SECONDS  stream events: "up"/"down" lines as they
 *                                           come, then a "count DOMID N" line per domain
 *                                           at the end
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtrace-client.h"

#define MAX_DOM 32768

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void print_stats(const Mtrace__Stats *s)
{
	for (size_t i = 0; i < s->n_domains; i++) {
		const Mtrace__DomainStats *d = s->domains[i];
		printf("dom %u name=%s alive=%d legacy=%d rings=%u events=%" PRIu64 " lost=%" PRIu64
		       " corrupt=%" PRIu64 " unknown=%" PRIu64 " wakeups=%" PRIu64
		       " ratelimited=%" PRIu64 " live=%" PRIu64 " total=%" PRIu64
		       " evicted=%" PRIu64 " ended=%" PRIu64 " labelled=%" PRIu64
		       " counters=%zu state=%s\n",
		    d->domid, d->name, d->alive, d->legacy, d->rings, d->events, d->lost,
		    d->corrupt, d->unknown, d->wakeups, d->ratelimited, d->live_threads,
		    d->threads_total, d->threads_evicted, d->threads_ended, d->threads_labelled,
		    d->n_counters, d->state);
	}
	for (size_t i = 0; i < s->n_domains; i++)
		for (size_t k = 0; k < s->domains[i]->n_counters; k++)
			printf("counter %u %s %" PRId64 "\n", s->domains[i]->domid,
			    s->domains[i]->counters[k]->name, s->domains[i]->counters[k]->value);
	for (size_t i = 0; i < s->n_labels; i++)
		printf("label %u %s count=%" PRIu64 " live=%" PRIu64 " current=%" PRIu64
		       " p50=%" PRIu64 " p99=%" PRIu64 "\n",
		    s->labels[i]->domid, s->labels[i]->label, s->labels[i]->count,
		    s->labels[i]->live, s->labels[i]->current, s->labels[i]->lifetime_p50_ns,
		    s->labels[i]->lifetime_p99_ns);
	printf("end clients=%u\n", s->clients);
}

int main(int argc, char **argv)
{
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	static uint64_t count[MAX_DOM];
	bool events;
	uint64_t deadline;
	char err[256];
	struct mtc *c;

	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL;
	int ch;

	while ((ch = getopt_long(argc, argv, "s:", longopts, NULL)) != -1) {
		if (ch != 's')
			goto usage;
		sock = optarg;
	}
	argc -= optind;
	argv += optind;
	if (sock == NULL || argc < 1 || (strcmp(argv[0], "stats") && strcmp(argv[0], "events")) ||
	    (!strcmp(argv[0], "events") && argc < 2)) {
usage:
		fprintf(stderr,
		    "usage: mtraced-probe -s SOCKET stats | "
		    "mtraced-probe -s SOCKET events SECONDS\n");
		return 2;
	}
	events = !strcmp(argv[0], "events");
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	c = mtc_connect(sock, "mtraced-probe", err, sizeof(err));
	if (!c) {
		fprintf(stderr, "probe: %s\n", err);
		return 1;
	}
	sub.events = events;
	sub.stats_interval_ms = events ? 0 : 100;
	sub.label_stats = !events;
	if (mtc_subscribe(c, &sub) < 0) {
		fprintf(stderr, "probe: subscribe failed\n");
		return 1;
	}
	deadline = now_ms() + (events ? (uint64_t)(atof(argv[1]) * 1000) : 10000);
	for (;;) {
		Mtrace__ServerMsg *m;
		uint64_t t = now_ms();
		int r;

		if (t >= deadline || stop)
			break;
		/* short waits: SIGTERM ends the run with the counts printed */
		r = mtc_next(c, deadline - t < 100 ? (int)(deadline - t) : 100, &m, NULL, NULL, err,
		    sizeof(err));
		if (r == 0)
			continue;
		if (r < 0) {
			if (events)
				break; /* the daemon stopped: report what came */
			fprintf(stderr, "probe: %s\n", err[0] ? err : "connection closed");
			mtc_close(c);
			return 1;
		}
		switch (m->msg_case) {
		case MTRACE__SERVER_MSG__MSG_STATS:
			if (!events) {
				print_stats(m->stats);
				mtc_msg_free(m);
				mtc_close(c);
				return 0;
			}
			break;
		case MTRACE__SERVER_MSG__MSG_EVENTS:
			if (m->events->domid < MAX_DOM)
				count[m->events->domid] += m->events->n_op;
			break;
		case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
			printf("up %u %s legacy=%d\n", m->domain_up->domid, m->domain_up->name,
			    m->domain_up->legacy);
			break;
		case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
			printf("down %u %s\n", m->domain_down->domid, m->domain_down->reason);
			break;
		case MTRACE__SERVER_MSG__MSG_GOODBYE:
			printf("goodbye %s\n", m->goodbye->reason);
			break;
		default:
			break;
		}
		fflush(stdout);
		mtc_msg_free(m);
	}
	for (uint32_t d = 0; d < MAX_DOM; d++)
		if (count[d])
			printf("count %u %" PRIu64 "\n", d, count[d]);
	mtc_close(c);
	return events ? 0 : 1;
}
