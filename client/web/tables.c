/*
 * tables.c - what mtrace-web's feed keeps between messages (web.h): the hosts (with
 * --nats) and the domains as their messages said, and each host's last Stats, all
 * within fixed bounds, since with --nats whoever may publish on mtrace.> writes them.
 *
 * Both tables make room for a host or domain that is heard from by letting go of the
 * one heard from least recently (its domains with a host), counted and said at a rate:
 * a flood of made-up host names cannot hide a real host that starts later, live or read
 * from the start.  A host's Stats is kept as its parts (mtrace-ship cuts one under the
 * server's max_payload: the parts of one have its time) up to TAB_HOST_STATS bytes
 * unpacked, and all hosts' to TAB_STATS, the least recently heard host's let go first;
 * its JSON in /api/state is held to TAB_HOST_JSON, all hosts' to TAB_JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtrace-client.h"
#include "sat.h"
#include "unpack-arena.h"
#include "web.h"

#define LOG_EVERY_S 10

static struct {
	struct tab_dom doms[TAB_DOMS];
	size_t ndoms;
	struct tab_host hosts[TAB_HOSTS];
	unsigned nhosts; /* slots used so far (a slot let go is taken again) */
	uint64_t tick;
	size_t stats_bytes; /* every host's parts */
	uint64_t hosts_evicted, doms_evicted, stats_dropped;
	uint64_t unsaid;  /* evictions since the log's last line */
	int64_t logged_s; /* monotonic; 0: nothing said yet */
} t;

static int64_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

/* The first eviction said, then a line every LOG_EVERY_S while they go on. */
static void say_evicted(const char *what, const char *name)
{
	int64_t now = mono_s();

	if (!t.logged_s) {
		fprintf(stderr,
		    "mtrace-web: %s table full (%u hosts, %u domains): the one heard from least "
		    "recently let go for %s%s (counted in /api/state; said every %d s)\n",
		    what, TAB_HOSTS, TAB_DOMS, *name ? "" : "a new one", name, LOG_EVERY_S);
		t.logged_s = now;
		return;
	}
	t.unsaid++;
	if (now - t.logged_s >= LOG_EVERY_S) {
		fprintf(stderr,
		    "mtrace-web: %" PRIu64
		    " more let go for newer hosts or domains; in all %" PRIu64 " hosts, %" PRIu64
		    " domains, %" PRIu64 " hosts' stats\n",
		    t.unsaid, t.hosts_evicted, t.doms_evicted, t.stats_dropped);
		t.unsaid = 0;
		t.logged_s = now;
	}
}

static void stats_clear(struct tab_host *h)
{
	for (unsigned i = 0; i < h->nparts; i++)
		arena_msg_free(h->parts[i]);
	t.stats_bytes -= h->stats_bytes;
	h->stats_bytes = 0;
	h->nparts = 0;
	free(h->doms);
	h->doms = NULL;
	memset(&h->merged, 0, sizeof(h->merged));
}

static void dom_drop(size_t k)
{
	memmove(&t.doms[k], &t.doms[k + 1], (t.ndoms - k - 1) * sizeof(t.doms[0]));
	t.ndoms--;
}

static void host_drop(unsigned k)
{
	struct tab_host *h = &t.hosts[k];

	stats_clear(h);
	for (size_t i = t.ndoms; i-- > 0;)
		if (t.doms[i].host == k)
			dom_drop(i);
	memset(h, 0, sizeof(*h));
}

int tab_host(const char *name)
{
	unsigned k = TAB_HOSTS;

	for (unsigned i = 0; i < t.nhosts; i++)
		if (t.hosts[i].used && !strcmp(t.hosts[i].name, name)) {
			t.hosts[i].seen = ++t.tick;
			return (int)i;
		}
	for (unsigned i = 0; i < t.nhosts && k == TAB_HOSTS; i++)
		if (!t.hosts[i].used)
			k = i;
	if (k == TAB_HOSTS && t.nhosts < TAB_HOSTS)
		k = t.nhosts++;
	if (k == TAB_HOSTS) {
		k = 0;
		for (unsigned i = 1; i < t.nhosts; i++)
			if (t.hosts[i].seen < t.hosts[k].seen)
				k = i;
		host_drop(k);
		sat_inc(&t.hosts_evicted, 1);
		say_evicted("the host", "");
	}
	t.hosts[k].used = true;
	t.hosts[k].seen = ++t.tick;
	snprintf(t.hosts[k].name, sizeof(t.hosts[k].name), "%s", name);
	return (int)k;
}

struct tab_host *tab_host_at(unsigned i)
{
	return &t.hosts[i];
}

struct tab_dom *tab_dom(unsigned host, uint32_t domid, bool make)
{
	size_t k = 0;

	for (size_t i = 0; i < t.ndoms; i++)
		if (t.doms[i].domid == domid && t.doms[i].host == host) {
			t.doms[i].seen = ++t.tick;
			return &t.doms[i];
		}
	if (!make)
		return NULL;
	if (t.ndoms == TAB_DOMS) {
		for (size_t i = 1; i < t.ndoms; i++)
			if (t.doms[i].seen < t.doms[k].seen)
				k = i;
		dom_drop(k);
		sat_inc(&t.doms_evicted, 1);
		say_evicted("the domain", "");
	}
	memset(&t.doms[t.ndoms], 0, sizeof(t.doms[0]));
	t.doms[t.ndoms].domid = domid;
	t.doms[t.ndoms].host = host;
	t.doms[t.ndoms].seen = ++t.tick;
	return &t.doms[t.ndoms++];
}

void tab_host_gone(unsigned host)
{
	for (size_t i = 0; i < t.ndoms; i++)
		if (t.doms[i].host == host)
			t.doms[i].alive = false;
}

/* The parts as one Stats: the first's figures and tables, every part's domains. */
static void merge(struct tab_host *h)
{
	size_t n = 0;

	free(h->doms);
	h->doms = NULL;
	h->merged = *h->parts[0]->stats;
	for (unsigned i = 0; i < h->nparts; i++)
		n += h->parts[i]->stats->n_domains;
	if (h->nparts == 1 || !(h->doms = malloc((n + 1) * sizeof(*h->doms))))
		return; /* one part (or no memory: the first part's) */
	n = 0;
	for (unsigned i = 0; i < h->nparts; i++)
		for (size_t k = 0; k < h->parts[i]->stats->n_domains; k++)
			h->doms[n++] = h->parts[i]->stats->domains[k];
	h->merged.domains = h->doms;
	h->merged.n_domains = n;
}

bool tab_stats(unsigned host, Mtrace__ServerMsg *m)
{
	struct tab_host *h = &t.hosts[host];
	size_t bytes = arena_msg_bytes(m);
	bool part = h->nparts && h->parts[0]->stats->time_ns == m->stats->time_ns;

	if (part && (h->nparts == TAB_PARTS || h->stats_bytes + bytes > TAB_HOST_STATS)) {
		h->stats_cut = true; /* a part past the host's bound: left out */
		return false;
	}
	if (!part) {
		stats_clear(h);
		h->stats_cut = false;
	}
	if (bytes > TAB_HOST_STATS) {
		h->stats_cut = true;
		return false;
	}
	/* room among all hosts: the least recently heard one's let go first */
	while (t.stats_bytes + bytes > TAB_STATS) {
		unsigned k = TAB_HOSTS;
		for (unsigned i = 0; i < t.nhosts; i++)
			if (i != host && t.hosts[i].nparts &&
			    (k == TAB_HOSTS || t.hosts[i].seen < t.hosts[k].seen))
				k = i;
		if (k == TAB_HOSTS) {
			h->stats_cut = true;
			return false;
		}
		stats_clear(&t.hosts[k]);
		sat_inc(&t.stats_dropped, 1);
		say_evicted("the statistics", "");
	}
	h->parts[h->nparts++] = m;
	h->stats_bytes += bytes;
	t.stats_bytes += bytes;
	merge(h);
	return true;
}

const Mtrace__Stats *tab_stats_of(unsigned host)
{
	return host < t.nhosts && t.hosts[host].used && t.hosts[host].nparts ? &t.hosts[host].merged
	                                                                     : NULL;
}

void tab_domains_json(struct evbuffer *b, bool fleet)
{
	json_list_begin(b);
	for (size_t i = 0; i < t.ndoms; i++)
		json_web_domain(b, i, fleet ? t.hosts[t.doms[i].host].name : NULL, t.doms[i].domid,
		    t.doms[i].alive, t.doms[i].name, t.doms[i].reason);
	json_list_end(b);
}

void tab_hosts_json(struct evbuffer *b)
{
	size_t room = TAB_JSON;
	size_t n = 0;

	json_list_begin(b);
	for (unsigned i = 0; i < t.nhosts; i++) {
		const struct tab_host *h = &t.hosts[i];
		size_t before = evbuffer_get_length(b),
		       max = room < TAB_HOST_JSON ? room : TAB_HOST_JSON;
		struct json_web_host wh = {
			.host = h->name,
			.connected = h->up,
			.events = h->events,
			.daemon = h->daemon,
			.last_seen_ms = h->last_ms,
			.stats = tab_stats_of(i),
			.stats_max = max,
			.stats_cut = h->stats_cut,
			.skew_ns = h->skew.skew_ns,
			.skew_spread_ns = h->skew.spread_ns,
			.skew_samples = h->skew.samples,
		};

		if (!h->used)
			continue;
		json_web_host(b, n++, &wh);
		before = evbuffer_get_length(b) - before;
		room = before < room ? room - before : 0;
	}
	json_list_end(b);
}

void tab_counts(uint64_t *hosts, uint64_t *doms, uint64_t *stats)
{
	*hosts = t.hosts_evicted;
	*doms = t.doms_evicted;
	*stats = t.stats_dropped;
}

void tab_free(void)
{
	for (unsigned i = 0; i < t.nhosts; i++)
		stats_clear(&t.hosts[i]);
	memset(&t, 0, sizeof(t));
}
