/*
 * stream-msg.c - protocol messages checked and built without a connection: the
 * checks of a client's Subscribe, the guest-written strings of what we send made
 * valid UTF-8 (proto3 strings must be, or Google's parsers reject the whole message),
 * and a Stats cut to fit a frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockmap.h"
#include "mtrace-proto.h"
#include "stream-msg.h"
#include "utf8.h"

#define MAX_FILTER_ITEMS 256
#define MAX_LABEL_LEN    256

static bool valid_str(const char *s, size_t max)
{
	return s && strnlen(s, max + 1) <= max;
}

/* Check a Subscribe completely before anything of it is used. */
const char *stream_subscribe_invalid(const Mtrace__Subscribe *s)
{
	size_t i;

	if (s->stats_interval_ms != 0 && s->stats_interval_ms < 100)
		return "stats_interval_ms must be 0 or >= 100";
	if (s->stats_interval_ms > 3600u * 1000)
		return "stats_interval_ms above one hour";
	if (s->n_domids > MAX_FILTER_ITEMS || s->n_domain_names > MAX_FILTER_ITEMS ||
	    s->n_ops > MAX_FILTER_ITEMS || s->n_labels > MAX_FILTER_ITEMS)
		return "too many filter entries";
	for (i = 0; i < s->n_ops; i++)
		if (s->ops[i] > 255)
			return "op out of range";
	for (i = 0; i < s->n_domain_names; i++)
		if (!valid_str(s->domain_names[i], MAX_LABEL_LEN))
			return "domain name too long";
	for (i = 0; i < s->n_labels; i++)
		if (!valid_str(s->labels[i], MAX_LABEL_LEN))
			return "label prefix too long";
	if ((unsigned)s->sort > MTRACE__SORT_KEY__SORT_ID)
		return "unknown sort key";
	return NULL;
}

void stream_msg_domain_up(Mtrace__ServerMsg *m, Mtrace__DomainUp *u, char nm[static 256],
    uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy)
{
	snprintf(nm, 256, "%s", name ? name : "");
	utf8_fix(nm);
	u->domid = domid;
	u->name = nm;
	u->rings = rings;
	u->clock = clock;
	u->legacy = legacy;
	m->msg_case = MTRACE__SERVER_MSG__MSG_DOMAIN_UP;
	m->domain_up = u;
}

_Static_assert((int)CLOCKMAP_SAME_KERNEL == (int)MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL &&
        (int)CLOCKMAP_XEN_SYSTEM_TIME == (int)MTRACE__CLOCK_MAP__SOURCE__XEN_SYSTEM_TIME &&
        (int)CLOCKMAP_UNKNOWN == (int)MTRACE__CLOCK_MAP__SOURCE__UNKNOWN,
    "clockmap.h's sources are ClockMap.Source");

void stream_msg_clock_map(Mtrace__ServerMsg *m, Mtrace__ClockMap *cm, const struct clockmap_rec *r)
{
	mtrace__clock_map__init(cm);
	cm->domid = r->domid;
	cm->clock = r->clock;
	cm->offset_ns = r->offset_ns;
	cm->uncertainty_ns = r->uncertainty_ns;
	cm->source = (Mtrace__ClockMap__Source)r->source;
	cm->since_host_ns = r->since_host_ns;
	cm->seq = r->seq;
	m->msg_case = MTRACE__SERVER_MSG__MSG_CLOCK_MAP;
	m->clock_map = cm;
}

void stream_msg_evtchn_link(Mtrace__ServerMsg *m, Mtrace__EvtchnLink *el, const struct evlink *l)
{
	mtrace__evtchn_link__init(el);
	el->domid = l->domid;
	el->port = l->port;
	el->remote_domid = l->remote_domid;
	el->remote_port = l->remote_port;
	m->msg_case = MTRACE__SERVER_MSG__MSG_EVTCHN_LINK;
	m->evtchn_link = el;
}

/* Names and labels come from guests (xenstore, rings): keep the message valid proto3. */
void stream_stats_fix_strings(Mtrace__Stats *s)
{
	size_t i, k;

	for (i = 0; i < s->n_domains; i++) {
		utf8_fix(s->domains[i]->name);
		utf8_fix(s->domains[i]->state);
		for (k = 0; k < s->domains[i]->n_counters; k++)
			utf8_fix(s->domains[i]->counters[k]->name);
	}
	for (i = 0; i < s->n_threads; i++) {
		utf8_fix(s->threads[i]->label);
		utf8_fix(s->threads[i]->failure);
		utf8_fix(s->threads[i]->site);
	}
	for (i = 0; i < s->n_labels; i++)
		utf8_fix(s->labels[i]->label);
	/* site names come from the guest; frames from debug files, checked all the same */
	for (i = 0; i < s->n_sites; i++) {
		utf8_fix(s->sites[i]->site);
		utf8_fix(s->sites[i]->module);
		for (k = 0; k < s->sites[i]->n_frames; k++) {
			utf8_fix(s->sites[i]->frames[k]->function);
			utf8_fix(s->sites[i]->frames[k]->file);
		}
	}
}

Mtrace__Subscribe *stream_sub_copy(const Mtrace__Subscribe *sub)
{
	/* Without the fields we do not know: none of them is used, and a copy packed
	 * from what protobuf-c kept of them need not unpack again (issue 13 saw one with
	 * a non-minimal tag fail; a copy that fails anyway gets the client an Error). */
	Mtrace__Subscribe known = *sub;
	size_t len;
	uint8_t *buf;
	Mtrace__Subscribe *c;

	known.base.n_unknown_fields = 0;
	known.base.unknown_fields = NULL;
	len = mtrace__subscribe__get_packed_size(&known);
	buf = malloc(len ? len : 1);
	if (!buf)
		return NULL;
	mtrace__subscribe__pack(&known, buf);
	c = mtrace__subscribe__unpack(NULL, len, buf);
	free(buf);
	return c;
}

/*
 * Guests choose how large their tables are (labels, counters, threads, sites): a Stats
 * that would not fit the frame is cut, the table with the most entries first, and
 * says how much it left out (labels_omitted, threads_omitted, sites_omitted,
 * site_edges_omitted, counters_omitted) rather than not being sent.
 */
void stream_stats_fit(const Mtrace__ServerMsg *m, Mtrace__Stats *s)
{
	const size_t target = FRAME_MAX_TO_CLIENT - FRAME_MAX_TO_CLIENT / 16;
	size_t len;

	while ((len = mtrace__server_msg__get_packed_size(m)) > FRAME_MAX_TO_CLIENT) {
		/* keep the share of the largest table that would bring the whole under
		 * target (a site's edges name it by index: the edges go with their sites) */
		size_t *tabs[] = { &s->n_labels, &s->n_threads, &s->n_sites, &s->n_site_edges };
		uint32_t *omitted[] = { &s->labels_omitted, &s->threads_omitted, &s->sites_omitted,
			&s->site_edges_omitted };
		size_t *n = NULL, keep;
		unsigned t = 0;

		for (unsigned i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++)
			if (*tabs[i] && (!n || *tabs[i] > *n))
				n = tabs[i], t = i;
		if (n) {
			keep = (size_t)((double)*n * ((double)target / (double)len));
			if (keep >= *n)
				keep = *n - 1;
			*omitted[t] += (uint32_t)(*n - keep);
			*n = keep;
			continue;
		}
		/* then the counters of every domain, the longest lists first */
		size_t most = 0;
		for (size_t i = 0; i < s->n_domains; i++)
			if (s->domains[i]->n_counters > most)
				most = s->domains[i]->n_counters;
		if (most == 0)
			return; /* domains alone: cannot happen below max_guests */
		most = (size_t)((double)most * ((double)target / (double)len));
		for (size_t i = 0; i < s->n_domains; i++) {
			Mtrace__DomainStats *d = s->domains[i];
			if (d->n_counters > most) {
				d->counters_omitted += (uint32_t)(d->n_counters - most);
				d->n_counters = most;
			}
		}
	}
}
