/*
 * session.c - mtrace-top's side of the stream: one statistics subscription (no events:
 * a thin client never needs them) and the model the views draw from.  The same for
 * every source (client/lib/source.h): live, mtraced selects by the subscription; from
 * a recording or the fleet stream, the client library does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtrace-client.h"
#include "mtrace-ring.h"
#include "timeline.h"
#include "top.h"

void session_subscription(Mtrace__Subscribe *sub, struct top_opts *o)
{
	const struct top_table *tab = fields_table(o->view);
	int sf = o->sort[o->view];

	sub->events = false;
	/* The daemon refuses intervals under 100 ms. */
	sub->stats_interval_ms = o->delay_ms < 100 ? 100 : o->delay_ms;
	/* The label view draws no thread rows: do not make the daemon rank them. */
	sub->top_n = o->view == VIEW_LABELS || o->view == VIEW_SITES ? 0 : o->top_n;
	/*
	 * The daemon picks the top N by its own key; when our column has one, ask for it so
	 * the N we get are the N that column ranks first.  Other columns sort what we get.
	 */
	sub->sort = MTRACE__SORT_KEY__SORT_EVENTS;
	if (o->view != VIEW_LABELS && o->view != VIEW_SITES && sf >= 0 && (unsigned)sf < tab->n &&
	    tab->f[sf].server_sort >= 0) {
		sub->sort = (Mtrace__SortKey)tab->f[sf].server_sort;
		sub->sort_reverse = o->reverse;
	}
	/* A tree needs the finished parents too, or every child becomes a root; the site
	 * tree names the manual labels of the threads (finished too) made at each site. */
	sub->include_finished = o->finished || o->view == VIEW_TREE || o->view == VIEW_SITE_TREE;
	sub->label_stats = o->view == VIEW_LABELS;
	sub->site_stats = o->view == VIEW_SITES || o->view == VIEW_SITE_TREE;
	if (o->domid >= 0) {
		o->sub_domid = (uint32_t)o->domid;
		sub->n_domids = 1;
		sub->domids = &o->sub_domid;
	} else if (o->domname[0]) {
		o->sub_name = o->domname;
		sub->n_domain_names = 1;
		sub->domain_names = &o->sub_name;
	}
}

int session_apply(struct top_model *m, Mtrace__ServerMsg *msg)
{
	switch (msg->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
		vcpu_rates(m, m->stats, msg->stats);
		if (m->msg)
			mtc_msg_free(m->msg);
		m->msg = msg;
		m->stats = msg->stats;
		m->updates++;
		return 1;
	case MTRACE__SERVER_MSG__MSG_HELLO:
		/* stored records: the daemon they came from (live, on_up says it) */
		snprintf(m->host, sizeof(m->host), "%s", msg->hello->host ? msg->hello->host : "");
		snprintf(m->software, sizeof(m->software), "%s",
		    msg->hello->software ? msg->hello->software : "");
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		snprintf(m->note, sizeof(m->note), "domain %" PRIu32 " (%s) up",
		    msg->domain_up->domid, msg->domain_up->name ? msg->domain_up->name : "?");
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		snprintf(m->note, sizeof(m->note), "domain %" PRIu32 " down: %s",
		    msg->domain_down->domid,
		    msg->domain_down->reason ? msg->domain_down->reason : "?");
		if (m->tl)
			tl_msg(m->tl, NULL, msg); /* its clock maps are forgotten */
		break;
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP:
		/* how the domain's clock lies on the host timeline: the domain table says */
		if (!m->tl && (m->tl = tl_new()))
			tl_forget_gone(m->tl);
		if (m->tl)
			tl_msg(m->tl, NULL, msg);
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		/* stored records: that daemon stopped then (live, the session ends the link) */
		snprintf(m->note, sizeof(m->note), "mtraced said goodbye: %s",
		    msg->goodbye->reason ? msg->goodbye->reason : "?");
		break;
	default:
		/* Losses, pongs and errors are not for a statistics view. */
		break;
	}
	mtc_msg_free(msg);
	return 0;
}

void session_model_free(struct top_model *m)
{
	if (m->msg)
		mtc_msg_free(m->msg);
	m->msg = NULL;
	m->stats = NULL;
	free(m->vcpu);
	m->vcpu = NULL;
	m->nvcpu = 0;
	tl_free(m->tl);
	m->tl = NULL;
}

const Mtrace__ClockMap *session_clock_map(const struct top_model *m, const Mtrace__DomainStats *d)
{
	const Mtrace__ClockMap *c = NULL;

	if (!m->tl)
		return NULL;
	/* the ring's clock (1..3); a TSC ring's batches carry its timeline's, 1 or 2 */
	if (d->clock >= MTRACE_CLOCK_MONOTONIC && d->clock <= MTRACE_CLOCK_REALTIME)
		c = tl_clock_last(tl_clock(m->tl, NULL, d->domid, d->clock));
	for (uint32_t k = MTRACE_CLOCK_MONOTONIC; !c && k <= MTRACE_CLOCK_REALTIME; k++)
		c = tl_clock_last(tl_clock(m->tl, NULL, d->domid, k));
	return c;
}

const char *session_peer(const struct top_opts *o)
{
	return o->src.nats ? "NATS" : "mtraced";
}
