/*
 * fake-state.c - a test double of daemon/state.h for stream-harness ONLY (never
 * linked into mtraced).  Domains are registered by the harness; a thread's label is
 * derived from its id so that label filters select a known subset.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-state.h"
#include "mtrace.pb-c.h"
#include "state.h"

static struct fake_domain doms[FAKE_MAX_DOMAINS];
static unsigned ndoms;

void
fake_state_add(uint32_t domid, const char *name, uint32_t rings)
{
	if (ndoms == FAKE_MAX_DOMAINS)
		return;
	doms[ndoms].domid = domid;
	snprintf(doms[ndoms].name, sizeof(doms[ndoms].name), "%s", name);
	doms[ndoms].rings = rings;
	doms[ndoms].alive = true;
	ndoms++;
}

void
fake_state_remove(uint32_t domid)
{
	for (unsigned i = 0; i < ndoms; i++)
		if (doms[i].domid == domid)
			doms[i].alive = false;
}

void
fake_state_count(uint32_t domid, uint64_t n)
{
	for (unsigned i = 0; i < ndoms; i++)
		if (doms[i].domid == domid)
			doms[i].events += n;
}

const char *
fake_label_of(uint64_t thread)
{
	static const char *const labels[] = { "net/rx", "net/tx", "disk/read", NULL };

	if (thread == UINT64_MAX)
		return NULL;
	return labels[thread % 4];
}

const char *
state_thread_label(uint32_t domid, uint64_t thread)
{
	return fake_label_of(thread);
}

static const struct fake_domain *
find(uint32_t domid)
{
	for (unsigned i = 0; i < ndoms; i++)
		if (doms[i].domid == domid)
			return &doms[i];
	return NULL;
}

bool
state_domain_matches(uint32_t domid, const Mtrace__Subscribe *sub)
{
	const struct fake_domain *d = find(domid);
	size_t i;

	if (sub->n_domids == 0 && sub->n_domain_names == 0)
		return true;
	for (i = 0; i < sub->n_domids; i++)
		if (sub->domids[i] == domid)
			return true;
	for (i = 0; d && i < sub->n_domain_names; i++)
		if (strcmp(sub->domain_names[i], d->name) == 0)
			return true;
	return false;
}

void
state_foreach_domain(state_domain_cb cb, void *arg)
{
	for (unsigned i = 0; i < ndoms; i++)
		if (doms[i].alive)
			cb(doms[i].domid, doms[i].name, doms[i].rings, 1, false, arg);
}

Mtrace__Stats *
state_stats(const Mtrace__Subscribe *sub, uint64_t dropped_for_client)
{
	Mtrace__Stats *s = calloc(1, sizeof(*s));
	struct timespec ts;
	unsigned i, n = 0;

	if (!s)
		return NULL;
	mtrace__stats__init(s);
	clock_gettime(CLOCK_REALTIME, &ts);
	s->time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	s->dropped_for_client = dropped_for_client;
	s->domains = calloc(ndoms ? ndoms : 1, sizeof(*s->domains));
	for (i = 0; s->domains && i < ndoms; i++) {
		Mtrace__DomainStats *d;

		if (!state_domain_matches(doms[i].domid, sub))
			continue;
		d = calloc(1, sizeof(*d));
		if (!d)
			break;
		mtrace__domain_stats__init(d);
		d->domid = doms[i].domid;
		d->name = strdup(doms[i].name);
		d->alive = doms[i].alive;
		d->rings = doms[i].rings;
		d->events = doms[i].events;
		d->state = strdup(doms[i].alive ? "running" : "dead");
		s->domains[n++] = d;
	}
	s->n_domains = n;
	return s;
}

void
state_stats_free(Mtrace__Stats *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_domains; i++) {
		free(s->domains[i]->name);
		free(s->domains[i]->state);
		free(s->domains[i]);
	}
	free(s->domains);
	free(s);
}

unsigned
state_guest_count(void)
{
	return ndoms;
}

uint64_t
state_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
