/*
 * bench-expo - the exporter's two costs, in one process: unpacking one Stats message
 * (once per --interval) and rendering it (once per scrape), text and OpenMetrics, and
 * gzipping the text (Prometheus asks for gzip), for
 * D domains x L labels (default 100 x 50, 4 counters and 15 ops each).  Thread CPU time,
 * medians of R runs.
 *   bench-expo [-d DOMAINS] [-l LABELS] [-r RUNS] [-n RENDERS_PER_RUN]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "exporter.h"
#include "unpack-arena.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A Stats message like mtraced's for nd domains of nl labels, packed as ServerMsg. */
static uint8_t *make_stats(unsigned nd, unsigned nl, size_t *len)
{
	static const unsigned ops[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 64, 65, 66 };
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Stats s = MTRACE__STATS__INIT;
	uint8_t *buf;

	s.n_domains = nd;
	s.domains = calloc(nd, sizeof(*s.domains));
	s.n_labels = (size_t)nd * nl;
	s.labels = calloc(s.n_labels, sizeof(*s.labels));
	for (unsigned i = 0; i < nd; i++) {
		Mtrace__DomainStats *d = calloc(1, sizeof(*d));
		char *name = malloc(32);
		mtrace__domain_stats__init(d);
		snprintf(name, 32, "guest-%03u.example", i);
		d->domid = i + 1;
		d->name = name;
		d->alive = 1;
		d->state = "running";
		d->rings = 2;
		d->events = 123456789u + i;
		d->lost = 12;
		d->threads_total = 987654;
		d->live_threads = 321;
		d->wakeups = 55555;
		d->rate_1s = 1234.5;
		d->n_op_events = sizeof(ops) / sizeof(ops[0]);
		d->op_events = calloc(d->n_op_events, sizeof(*d->op_events));
		for (size_t k = 0; k < d->n_op_events; k++) {
			d->op_events[k] = calloc(1, sizeof(Mtrace__OpEvents));
			mtrace__op_events__init(d->op_events[k]);
			d->op_events[k]->op = ops[k];
			d->op_events[k]->events = 1000000u + k;
		}
		d->n_counters = 4;
		d->counters = calloc(4, sizeof(*d->counters));
		for (int k = 0; k < 4; k++) {
			char *cn = malloc(32);
			d->counters[k] = calloc(1, sizeof(Mtrace__Counter));
			mtrace__counter__init(d->counters[k]);
			snprintf(cn, 32, "net.rx_bytes.%d", k);
			d->counters[k]->name = cn;
			d->counters[k]->value = 1234567890123 + k;
		}
		s.domains[i] = d;
		for (unsigned j = 0; j < nl; j++) {
			Mtrace__LabelStats *l = calloc(1, sizeof(*l));
			char *ln = malloc(48);
			mtrace__label_stats__init(l);
			snprintf(ln, 48, "Tcp.Flow.input-%02u", j);
			l->domid = d->domid;
			l->label = ln;
			l->count = 100000u + j;
			l->live = j;
			l->lifetime_p50_ns = 1234567;
			l->lifetime_p99_ns = 987654321;
			l->lifetime_sum_ns = 123456789012345u;
			l->lifetime_count = 99990u + j;
			s.labels[(size_t)i * nl + j] = l;
		}
	}
	m.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
	m.stats = &s;
	*len = mtrace__server_msg__get_packed_size(&m);
	buf = malloc(*len);
	mtrace__server_msg__pack(&m, buf);
	return buf; /* the message itself is left to the process's exit */
}

int main(int argc, char **argv)
{
	unsigned nd = 100, nl = 50, runs = 5, n = 50;
	struct expo_caps caps = { 64, 64 };
	struct expo_self self = { .up = true, .stats_age_s = 0.5, .connects = 1 };
	double *unpack_t, *text_t, *om_t, *gz_t;
	size_t len, text_bytes = 0, om_bytes = 0, gz_bytes = 0;
	uint8_t *packed;
	int c;

	while ((c = getopt(argc, argv, "d:l:r:n:")) != -1) {
		switch (c) {
		case 'd':
			nd = (unsigned)atoi(optarg);
			break;
		case 'l':
			nl = (unsigned)atoi(optarg);
			break;
		case 'r':
			runs = (unsigned)atoi(optarg);
			break;
		case 'n':
			n = (unsigned)atoi(optarg);
			break;
		default:
			fprintf(stderr,
			    "usage: bench-expo [-d DOMAINS] [-l LABELS] [-r RUNS] [-n N]\n");
			return 2;
		}
	}
	if (nl > caps.labels)
		caps.labels = nl;
	packed = make_stats(nd, nl, &len);
	unpack_t = calloc(runs, sizeof(double));
	text_t = calloc(runs, sizeof(double));
	om_t = calloc(runs, sizeof(double));
	gz_t = calloc(runs, sizeof(double));
	for (unsigned r = 0; r < runs; r++) {
		Mtrace__ServerMsg *m = NULL;
		double t0 = cpu_s();
		for (unsigned i = 0; i < n; i++) {
			arena_msg_free(m);
			m = arena_msg_unpack(packed, len);
		}
		unpack_t[r] = (cpu_s() - t0) / n;
		for (int fmt = 0; fmt < 2; fmt++) {
			t0 = cpu_s();
			for (unsigned i = 0; i < n; i++) {
				struct evbuffer *b = evbuffer_new();
				expo_render(
				    b, fmt ? EXPO_OPENMETRICS : EXPO_TEXT, m->stats, &self, &caps);
				*(fmt ? &om_bytes : &text_bytes) = evbuffer_get_length(b);
				evbuffer_free(b);
			}
			(fmt ? om_t : text_t)[r] = (cpu_s() - t0) / n;
		}
		/* gzip of the text rendering, as a scrape with Accept-Encoding: gzip */
		{
			struct evbuffer *b = evbuffer_new();
			expo_render(b, EXPO_TEXT, m->stats, &self, &caps);
			t0 = cpu_s();
			for (unsigned i = 0; i < n; i++) {
				struct evbuffer *z = evbuffer_new();
				gzip_evbuffer(b, z);
				gz_bytes = evbuffer_get_length(z);
				evbuffer_free(z);
			}
			gz_t[r] = (cpu_s() - t0) / n;
			evbuffer_free(b);
		}
		arena_msg_free(m);
	}
	qsort(gz_t, runs, sizeof(double), cmp_d);
	qsort(unpack_t, runs, sizeof(double), cmp_d);
	qsort(text_t, runs, sizeof(double), cmp_d);
	qsort(om_t, runs, sizeof(double), cmp_d);
	printf("# bench-expo -d %u -l %u -r %u -n %u   (thread CPU, median of %u runs)\n", nd, nl,
	    runs, n, runs);
	printf("Stats message: %zu bytes, unpack %.2f ms (once per --interval)\n", len,
	    unpack_t[runs / 2] * 1e3);
	printf("render text:        %.2f ms, %zu bytes (min %.2f, max %.2f ms)\n",
	    text_t[runs / 2] * 1e3, text_bytes, text_t[0] * 1e3, text_t[runs - 1] * 1e3);
	printf("render OpenMetrics: %.2f ms, %zu bytes (min %.2f, max %.2f ms)\n",
	    om_t[runs / 2] * 1e3, om_bytes, om_t[0] * 1e3, om_t[runs - 1] * 1e3);
	printf("gzip of the text:   %.2f ms, %zu bytes (min %.2f, max %.2f ms)\n",
	    gz_t[runs / 2] * 1e3, gz_bytes, gz_t[0] * 1e3, gz_t[runs - 1] * 1e3);
	return 0;
}
