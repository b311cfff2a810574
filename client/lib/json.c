/*
 * json.c - the one JSON encoding of ServerMsg (schema: docs/json.md), shared by
 * mtrace-cat -f json and mtrace-web.  Every object carries "v" and "type".  Guest
 * strings are hostile: the escaper gives valid JSON (and JS) for any bytes.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "timeline.h"
#include "ops.h"
#include "utf8.h"

/* A literal, without counting its bytes by hand ("" makes anything else, whose sizeof
 * would be a pointer's, fail to compile). */
#define ADD(b, lit) evbuffer_add((b), "" lit, sizeof(lit) - 1)

void json_str(struct evbuffer *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	const unsigned char *run = s;

	ADD(b, "\"");
	while (*s) {
		size_t n = 1;

		if (*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\') {
			s++;
			continue;
		}
		if (s > run)
			evbuffer_add(b, run, (size_t)(s - run));
		if (*s == '"' || *s == '\\') {
			evbuffer_add_printf(b, "\\%c", *s);
		} else if (*s == '\n') {
			ADD(b, "\\n");
		} else if (*s == '\t') {
			ADD(b, "\\t");
		} else if (*s >= 0x80 && (n = utf8_len(s)) > 0) {
			/* U+2028/2029 are valid JSON but end a line in older JavaScript. */
			if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 &&
			    (s[2] == 0xa8 || s[2] == 0xa9))
				evbuffer_add_printf(b, "\\u%04x", 0x2000 + (s[2] - 0x80));
			else
				evbuffer_add(b, s, n);
		} else {
			/* a control byte, DEL, or a byte that is not UTF-8 (read as Latin-1) */
			n = 1;
			evbuffer_add_printf(b, "\\u%04x", *s);
		}
		s += n;
		run = s;
	}
	if (s > run)
		evbuffer_add(b, run, (size_t)(s - run));
	ADD(b, "\"");
}

void json_write(FILE *f, struct evbuffer *b)
{
	size_t len = evbuffer_get_length(b);

	fwrite(evbuffer_pullup(b, -1), 1, len, f);
	evbuffer_drain(b, len);
}

/* printf's %f writes nan and inf, which are not JSON; a peer or a recording file may
 * carry them: written 0. */
static double fin(double x)
{
	return isfinite(x) ? x : 0;
}

/* The column types of an EventBatch. */
enum col {
	COL_S64,
	COL_U32,
	COL_S32
};

/* Decimal, backwards from end; returns the first digit (or the sign). */
static char *put_i64(char *end, int64_t v)
{
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do
		*--end = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--end = '-';
	return end;
}

/* ,"name":[v0,v1,...] of n values; numbers by hand: this is the per-event cost. */
static void num_col(struct evbuffer *b, const char *name, enum col k, const void *v, size_t n)
{
	char tmp[4096], num[24];
	size_t used = 0;

	evbuffer_add_printf(b, ",\"%s\":[", name);
	for (size_t i = 0; i < n; i++) {
		int64_t x = k == COL_S64 ? ((const int64_t *)v)[i]
		    : k == COL_U32       ? (int64_t)((const uint32_t *)v)[i]
		                         : (int64_t)((const int32_t *)v)[i];
		char *p = put_i64(num + sizeof(num), x);
		size_t len = (size_t)(num + sizeof(num) - p);

		if (used + len + 1 > sizeof(tmp)) {
			evbuffer_add(b, tmp, used);
			used = 0;
		}
		if (i)
			tmp[used++] = ',';
		memcpy(tmp + used, p, len);
		used += len;
	}
	evbuffer_add(b, tmp, used);
	ADD(b, "]");
}

int json_batch(
    struct evbuffer *b, const Mtrace__EventBatch *eb, uint64_t recv_ms, const struct tl_time *base)
{
	size_t n = eb->n_op;

	/* Columns of unequal length come from a broken or hostile peer: refuse them. */
	if (eb->n_ts_delta != n || eb->n_thread != n || eb->n_arg != n ||
	    (eb->n_type != n && eb->n_type != 0))
		return -1;
	/* base_ts as a string: guest clocks may pass 2^53 ns, a JavaScript number's
	 * exact range; the page keeps times relative to a BigInt origin. */
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"batch\",\"d\":%" PRIu32 ",\"r\":%" PRIu32
	    ",\"t\":\"%" PRIu64 "\",\"c\":%" PRIu32 ",\"q\":%" PRIu64 ",\"w\":%" PRIu64,
	    eb->domid, eb->ring, eb->base_ts, eb->clock, eb->first_seq, recv_ms);
	/* the host timeline: host = guest + ho for the whole batch (its map at base_ts);
	 * a string for the same reason as t */
	if (base && base->known)
		evbuffer_add_printf(b, ",\"ho\":\"%" PRId64 "\",\"hu\":%" PRIu64,
		    (int64_t)((uint64_t)base->host_ns - eb->base_ts), base->uncertainty_ns);
	num_col(b, "dt", COL_S32, eb->ts_delta, n);
	num_col(b, "op", COL_U32, eb->op, n);
	num_col(b, "th", COL_S64, eb->thread, n);
	num_col(b, "a", COL_S64, eb->arg, n);
	if (eb->n_type == n)
		num_col(b, "ty", COL_U32, eb->type, n);
	ADD(b, ",\"s\":[");
	for (size_t i = 0; i < eb->n_str; i++) {
		if (i)
			ADD(b, ",");
		json_str(b, eb->str[i]);
	}
	ADD(b, "]");
	/* Per event, its string's index or -1: the page need not know which ops carry
	 * one.  A reference past the dictionary is the peer's bug: no string. */
	int32_t *si = malloc(n ? n * sizeof(*si) : 1);
	if (!si)
		return -1;
	for (size_t i = 0, k = 0; i < n; i++) {
		si[i] = -1;
		if (mtrace_op_has_string(eb->op[i]) && k < eb->n_str_ref) {
			if (eb->str_ref[k] < eb->n_str)
				si[i] = (int32_t)eb->str_ref[k];
			k++;
		}
	}
	num_col(b, "si", COL_S32, si, n);
	free(si);
	ADD(b, "}");
	return 0;
}

void json_domain_up(struct evbuffer *b, const Mtrace__DomainUp *u)
{
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"domain_up\",\"domid\":%" PRIu32 ",\"name\":", u->domid);
	json_str(b, u->name);
	evbuffer_add_printf(b, ",\"rings\":%" PRIu32 ",\"clock\":%" PRIu32 ",\"legacy\":%s}",
	    u->rings, u->clock, u->legacy ? "true" : "false");
}

void json_domain_down(struct evbuffer *b, const Mtrace__DomainDown *d)
{
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"domain_down\",\"domid\":%" PRIu32 ",\"reason\":",
	    d->domid);
	json_str(b, d->reason);
	ADD(b, "}");
}

void json_loss(struct evbuffer *b, const Mtrace__Loss *l)
{
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"loss\",\"domid\":%" PRIu32 ",\"ring\":%" PRIu32
	    ",\"lost_in_ring\":%" PRIu64 ",\"dropped_for_client\":%" PRIu64 "}",
	    l->domid, l->ring, l->lost_in_ring, l->dropped_for_client);
}

/* json_stats_within's bound: once b is longer than end, the entries of the tables still
 * to come are left out (counted), so a Stats of any size makes at most about end bytes
 * (one entry more). */
static struct {
	size_t end;
	uint64_t left;
} cap = { SIZE_MAX, 0 };

static bool over(struct evbuffer *b)
{
	if (evbuffer_get_length(b) <= cap.end)
		return false;
	cap.left++;
	return true;
}

static void json_domain_stats(struct evbuffer *b, const Mtrace__DomainStats *d)
{
	evbuffer_add_printf(b, "{\"domid\":%" PRIu32 ",\"name\":", d->domid);
	json_str(b, d->name);
	evbuffer_add_printf(b,
	    ",\"alive\":%s,\"legacy\":%s,\"rings\":%" PRIu32 ",\"events\":%" PRIu64
	    ",\"lost\":%" PRIu64 ",\"corrupt\":%" PRIu64 ",\"rate_1s\":%.1f"
	    ",\"rate_10s\":%.1f,\"rate_60s\":%.1f,\"live_threads\":%" PRIu64
	    ",\"threads_total\":%" PRIu64 ",\"threads_evicted\":%" PRIu64
	    ",\"threads_ended\":%" PRIu64 ",\"threads_labelled\":%" PRIu64
	    ",\"labels_dropped\":%" PRIu64 ",\"clock\":%" PRIu32 ",\"unknown\":%" PRIu64
	    ",\"wakeups\":%" PRIu64 ",\"ratelimited\":%" PRIu64 ",\"clock_sync_bad\":%" PRIu64
	    ",\"state\":",
	    d->alive ? "true" : "false", d->legacy ? "true" : "false", d->rings, d->events, d->lost,
	    d->corrupt, fin(d->rate_1s), fin(d->rate_10s), fin(d->rate_60s), d->live_threads,
	    d->threads_total, d->threads_evicted, d->threads_ended, d->threads_labelled,
	    d->labels_dropped, d->clock, d->unknown, d->wakeups, d->ratelimited, d->clock_sync_bad);
	json_str(b, d->state);
	ADD(b, ",\"counters\":[");
	for (size_t i = 0; i < d->n_counters; i++) {
		if (over(b))
			continue;
		if (i)
			ADD(b, ",");
		ADD(b, "{\"name\":");
		json_str(b, d->counters[i]->name);
		evbuffer_add_printf(b, ",\"value\":%" PRId64 "}", d->counters[i]->value);
	}
	/* keyed by op name: a fixed vocabulary, never guest-written */
	ADD(b, "],\"op_events\":{");
	for (size_t k = 0; k < d->n_op_events; k++) {
		const char *op = mtrace_op_name(d->op_events[k]->op);
		if (op)
			evbuffer_add_printf(
			    b, "%s\"%s\":%" PRIu64, k ? "," : "", op, d->op_events[k]->events);
		else
			evbuffer_add_printf(b, "%s\"op_%u\":%" PRIu64, k ? "," : "",
			    d->op_events[k]->op, d->op_events[k]->events);
	}
	ADD(b, "}");
	json_domain_vcpu(b, d);
	ADD(b, "}");
}

static const char *const state_names[] = { "pending", "resolved", "failed" };

static void json_thread(struct evbuffer *b, const Mtrace__ThreadStats *t)
{
	evbuffer_add_printf(
	    b, "{\"domid\":%" PRIu32 ",\"id\":%" PRId64 ",\"label\":", t->domid, t->id);
	json_str(b, t->label);
	evbuffer_add_printf(b,
	    ",\"type\":\"%s\",\"state\":\"%s\",\"parent\":%" PRId64 ",\"created_ns\":%" PRIu64
	    ",\"resolved_ns\":%" PRIu64 ",\"reads\":%" PRIu64 ",\"resolves\":%" PRIu64
	    ",\"children\":%" PRIu64 ",\"running_ns\":%" PRIu64 ",\"pending_ns\":%" PRIu64
	    ",\"events\":%" PRIu64 ",\"becomes\":%" PRId64 ",\"failure\":",
	    mtrace_thread_type_name(t->type),
	    (unsigned)t->state < 3 ? state_names[t->state] : "unknown", t->parent, t->created_ns,
	    t->resolved_ns, t->reads, t->resolves, t->children, t->running_ns, t->pending_ns,
	    t->events, t->becomes);
	json_str(b, t->failure);
	ADD(b, ",\"site\":");
	json_str(b, t->site);
	evbuffer_add_printf(b, ",\"site_index\":%" PRId32 ",\"events_rate\":%.1f}", t->site_index,
	    fin(t->events_rate));
}

static void json_label(struct evbuffer *b, const Mtrace__LabelStats *l)
{
	evbuffer_add_printf(b, "{\"domid\":%" PRIu32 ",\"label\":", l->domid);
	json_str(b, l->label);
	evbuffer_add_printf(b,
	    ",\"count\":%" PRIu64 ",\"current\":%" PRIu64 ",\"live\":%" PRIu64
	    ",\"creation_rate\":%.2f,\"lifetime_p50_ns\":%" PRIu64 ",\"lifetime_p99_ns\":%" PRIu64,
	    l->count, l->current, l->live, fin(l->creation_rate), l->lifetime_p50_ns,
	    l->lifetime_p99_ns);
	json_waits(b, l->waits, l->wait_ns, l->wait_steal_ns, l->wait_blocked_ns);
	ADD(b, "}");
}

/* ,"sites":[...],"site_drops":[...],"site_edges":[...] of the creation graph. */
static void json_sites(struct evbuffer *b, const Mtrace__Stats *s)
{
	size_t i, k;

	ADD(b, ",\"sites\":[");
	for (i = 0; i < s->n_sites; i++) {
		const Mtrace__SiteStats *x = s->sites[i];

		if (over(b))
			continue;
		evbuffer_add_printf(
		    b, "%s{\"domid\":%u,\"index\":%u,\"site\":", i ? "," : "", x->domid, x->index);
		json_str(b, x->site);
		evbuffer_add_printf(b, ",\"named\":%s,\"address\":%" PRIu64 ",\"module\":",
		    x->named ? "true" : "false", x->address);
		json_str(b, x->module);
		evbuffer_add_printf(b, ",\"offset\":%" PRIu64 ",\"resolved\":%s,\"frames\":[",
		    x->offset, x->resolved ? "true" : "false");
		for (k = 0; k < x->n_frames; k++) {
			if (over(b))
				continue;
			if (k)
				ADD(b, ",");
			ADD(b, "{\"function\":");
			json_str(b, x->frames[k]->function);
			ADD(b, ",\"file\":");
			json_str(b, x->frames[k]->file);
			evbuffer_add_printf(b, ",\"line\":%u}", x->frames[k]->line);
		}
		evbuffer_add_printf(b,
		    "],\"count\":%" PRIu64 ",\"live\":%" PRIu64 ",\"creation_rate\":%.2f"
		    ",\"lifetime_p50_ns\":%" PRIu64 ",\"lifetime_p99_ns\":%" PRIu64
		    ",\"pending_p50_ns\":%" PRIu64 ",\"pending_p99_ns\":%" PRIu64,
		    x->count, x->live, fin(x->creation_rate), x->lifetime_p50_ns,
		    x->lifetime_p99_ns, x->pending_p50_ns, x->pending_p99_ns);
		json_waits(b, x->waits, x->wait_ns, x->wait_steal_ns, x->wait_blocked_ns);
		ADD(b, "}");
	}
	ADD(b, "],\"site_drops\":[");
	for (i = 0; i < s->n_domains; i++) {
		const Mtrace__DomainStats *d = s->domains[i];
		if (over(b))
			continue;
		evbuffer_add_printf(b,
		    "%s{\"domid\":%u,\"sites_dropped\":%" PRIu64 ",\"sites_bad\":%" PRIu64
		    ",\"site_edges_dropped\":%" PRIu64 ",\"modules_dropped\":%" PRIu64 "}",
		    i ? "," : "", d->domid, d->sites_dropped, d->sites_bad, d->site_edges_dropped,
		    d->modules_dropped);
	}
	ADD(b, "],\"site_edges\":[");
	for (i = 0; i < s->n_site_edges; i++) {
		const Mtrace__SiteEdge *e = s->site_edges[i];
		if (over(b))
			continue;
		evbuffer_add_printf(b,
		    "%s{\"domid\":%u,\"parent\":%d,\"child\":%u,\"count\":%" PRIu64 "}",
		    i ? "," : "", e->domid, e->parent, e->child, e->count);
	}
	ADD(b, "]");
}

void json_stats(struct evbuffer *b, const Mtrace__Stats *s, bool threads)
{
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"stats\",\"time_ns\":%" PRIu64 ",\"clients\":%" PRIu32
	    ",\"dropped_for_client\":%" PRIu64 ",\"sites_omitted\":%" PRIu32
	    ",\"site_edges_omitted\":%" PRIu32 ",\"domains\":[",
	    s->time_ns, s->clients, s->dropped_for_client, s->sites_omitted, s->site_edges_omitted);
	for (size_t i = 0; i < s->n_domains; i++) {
		if (over(b))
			continue;
		if (i)
			ADD(b, ",");
		json_domain_stats(b, s->domains[i]);
	}
	ADD(b, "]");
	json_stats_vcpu(b, s);
	if (threads) {
		ADD(b, ",\"threads\":[");
		for (size_t i = 0; i < s->n_threads; i++) {
			if (over(b))
				continue;
			if (i)
				ADD(b, ",");
			json_thread(b, s->threads[i]);
		}
		ADD(b, "],\"labels\":[");
		for (size_t i = 0; i < s->n_labels; i++) {
			if (over(b))
				continue;
			if (i)
				ADD(b, ",");
			json_label(b, s->labels[i]);
		}
		ADD(b, "]");
		json_sites(b, s);
	}
	ADD(b, "}");
}

uint64_t json_stats_within(struct evbuffer *b, const Mtrace__Stats *s, bool full, size_t max)
{
	uint64_t left;

	cap.end = evbuffer_get_length(b) + max;
	cap.left = 0;
	json_stats(b, s, full);
	left = cap.left;
	cap.end = SIZE_MAX;
	cap.left = 0;
	return left;
}

void json_event(struct evbuffer *b, const Mtrace__EventBatch *eb, size_t i, uint64_t ts,
    const int64_t *host_ns, const char *str)
{
	const char *op = mtrace_op_name(eb->op[i]);
	char ob[16];

	if (!op) {
		snprintf(ob, sizeof(ob), "op%u", eb->op[i]);
		op = ob;
	}
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"event\",\"domid\":%u,\"ring\":%u,\"ts\":%" PRIu64
	    ",\"op\":\"%s\",\"op_code\":%u,\"thread\":%" PRId64 ",\"arg\":%" PRId64,
	    eb->domid, eb->ring, ts, op, eb->op[i], eb->thread[i], eb->arg[i]);
	if (eb->op[i] == MTRACE_OP_CREATES && i < eb->n_type)
		evbuffer_add_printf(
		    b, ",\"thread_type\":\"%s\"", mtrace_thread_type_name(eb->type[i]));
	if (host_ns)
		evbuffer_add_printf(b, ",\"host_ns\":%" PRId64, *host_ns);
	if (str) {
		ADD(b, ",\"str\":");
		json_str(b, str);
	}
	ADD(b, "}");
}

static void pair_end(struct evbuffer *b, const char *name, const struct tl_end *e)
{
	evbuffer_add_printf(b,
	    "\"%s\":{\"domid\":%" PRIu32 ",\"port\":%" PRIu32 ",\"ring\":%" PRIu32
	    ",\"ts\":%" PRIu64 ",\"thread\":%" PRId64,
	    name, e->domid, e->port, e->ring, e->guest_ns, e->thread);
	if (e->at.known)
		evbuffer_add_printf(b, ",\"host_ns\":%" PRId64, e->at.host_ns);
	ADD(b, "}");
}

void json_evtchn_pair(struct evbuffer *b, const struct tl_pair *p)
{
	ADD(b, "{\"v\":" JSON_V ",\"type\":\"evtchn_pair\",");
	pair_end(b, "send", &p->send);
	ADD(b, ",");
	pair_end(b, "recv", &p->recv);
	evbuffer_add_printf(b,
	    ",\"gap_ns\":%" PRId64 ",\"uncertainty_ns\":%" PRIu64 ",\"order\":\"%s\"}", p->gap_ns,
	    p->uncertainty_ns, tl_order_name(p->order));
}

const char *json_clock_source(int source)
{
	switch (source) {
	case MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL:
		return "same-kernel";
	case MTRACE__CLOCK_MAP__SOURCE__XEN_SYSTEM_TIME:
		return "xen-system-time";
	default:
		return "unknown";
	}
}

void json_clock_map(struct evbuffer *b, const Mtrace__ClockMap *c)
{
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"clock_map\",\"domid\":%" PRIu32 ",\"clock\":%" PRIu32
	    ",\"offset_ns\":%" PRId64 ",\"uncertainty_ns\":%" PRIu64 ",\"source\":\"%s\""
	    ",\"since_host_ns\":%" PRId64 ",\"seq\":%" PRIu64 "}",
	    c->domid, c->clock, c->offset_ns, c->uncertainty_ns, json_clock_source(c->source),
	    c->since_host_ns, c->seq);
}

int json_other(struct evbuffer *b, const Mtrace__ServerMsg *m)
{
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
		json_stats(b, m->stats, true);
		return 0;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		json_domain_up(b, m->domain_up);
		return 0;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		json_domain_down(b, m->domain_down);
		return 0;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		json_loss(b, m->loss);
		return 0;
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP:
		json_clock_map(b, m->clock_map);
		return 0;
	case MTRACE__SERVER_MSG__MSG_EVTCHN_LINK:
		evbuffer_add_printf(b,
		    "{\"v\":" JSON_V ",\"type\":\"evtchn_link\",\"domid\":%" PRIu32
		    ",\"port\":%" PRIu32 ",\"remote_domid\":%" PRIu32 ",\"remote_port\":%" PRIu32
		    "}",
		    m->evtchn_link->domid, m->evtchn_link->port, m->evtchn_link->remote_domid,
		    m->evtchn_link->remote_port);
		return 0;
	case MTRACE__SERVER_MSG__MSG_VCPU:
		return json_vcpu(b, m->vcpu);
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		ADD(b, "{\"v\":" JSON_V ",\"type\":\"goodbye\",\"reason\":");
		json_str(b, m->goodbye->reason);
		ADD(b, "}");
		return 0;
	case MTRACE__SERVER_MSG__MSG_ERROR:
		evbuffer_add_printf(b,
		    "{\"v\":" JSON_V ",\"type\":\"error\",\"code\":%d,\"message\":",
		    (int)m->error->code);
		json_str(b, m->error->message);
		ADD(b, "}");
		return 0;
	default:
		return -1;
	}
}
