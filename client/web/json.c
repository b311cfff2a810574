/*
 * json.c - what the page and /api/state read, as JSON.  Guest-written strings
 * (labels, counter names, exceptions, domain names) are escaped here and shown by
 * the page as text only; invalid UTF-8 bytes become \u00XX so JSON.parse never fails.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "utf8.h"
#include "web.h"

/* A literal, without counting its bytes by hand. */
#define ADD(b, lit) evbuffer_add((b), (lit), sizeof(lit) - 1)

void json_str(struct evbuffer *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	const unsigned char *run = s;

	ADD(b, "\"");
	while (*s) {
		size_t n;

		if (*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\') {
			s++;
			continue;
		}
		if (s > run)
			evbuffer_add(b, run, (size_t)(s - run));
		if (*s == '"' || *s == '\\') {
			evbuffer_add_printf(b, "\\%c", *s);
			s++;
		} else if (*s >= 0x80 && (n = utf8_len(s)) > 0) {
			evbuffer_add(b, s, n);
			s += n;
		} else {
			evbuffer_add_printf(b, "\\u%04x", *s);
			s++;
		}
		run = s;
	}
	if (s > run)
		evbuffer_add(b, run, (size_t)(s - run));
	ADD(b, "\"");
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

int json_batch(struct evbuffer *b, const Mtrace__EventBatch *eb, uint64_t recv_ms)
{
	size_t n = eb->n_op;

	/* Columns of unequal length come from a broken or hostile peer: refuse them. */
	if (eb->n_ts_delta != n || eb->n_thread != n || eb->n_arg != n ||
	    (eb->n_type != n && eb->n_type != 0))
		return -1;
	/* base_ts as a string: guest clocks may pass 2^53 ns, a JavaScript number's
	 * exact range; the page keeps times relative to a BigInt origin. */
	evbuffer_add_printf(b,
	    "{\"d\":%" PRIu32 ",\"r\":%" PRIu32 ",\"t\":\"%" PRIu64 "\",\"c\":%" PRIu32
	    ",\"q\":%" PRIu64 ",\"w\":%" PRIu64,
	    eb->domid, eb->ring, eb->base_ts, eb->clock, eb->first_seq, recv_ms);
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
	evbuffer_add_printf(b, "{\"domid\":%" PRIu32 ",\"name\":", u->domid);
	json_str(b, u->name);
	evbuffer_add_printf(b, ",\"rings\":%" PRIu32 ",\"clock\":%" PRIu32 ",\"legacy\":%s}",
	    u->rings, u->clock, u->legacy ? "true" : "false");
}

void json_domain_down(struct evbuffer *b, const Mtrace__DomainDown *d)
{
	evbuffer_add_printf(b, "{\"domid\":%" PRIu32 ",\"reason\":", d->domid);
	json_str(b, d->reason);
	ADD(b, "}");
}

void json_loss(struct evbuffer *b, const Mtrace__Loss *l)
{
	evbuffer_add_printf(b,
	    "{\"domid\":%" PRIu32 ",\"ring\":%" PRIu32 ",\"lost_in_ring\":%" PRIu64
	    ",\"dropped_for_client\":%" PRIu64 "}",
	    l->domid, l->ring, l->lost_in_ring, l->dropped_for_client);
}

static void json_domain_stats(struct evbuffer *b, const Mtrace__DomainStats *d)
{
	evbuffer_add_printf(b, "{\"domid\":%" PRIu32 ",\"name\":", d->domid);
	json_str(b, d->name);
	evbuffer_add_printf(b,
	    ",\"alive\":%s,\"legacy\":%s,\"rings\":%" PRIu32 ",\"events\":%" PRIu64
	    ",\"lost\":%" PRIu64 ",\"corrupt\":%" PRIu64 ",\"rate_1s\":%.1f"
	    ",\"rate_10s\":%.1f,\"rate_60s\":%.1f,\"live_threads\":%" PRIu64
	    ",\"threads_total\":%" PRIu64 ",\"threads_evicted\":%" PRIu64 ",\"clock\":%" PRIu32
	    ",\"unknown\":%" PRIu64 ",\"state\":",
	    d->alive ? "true" : "false", d->legacy ? "true" : "false", d->rings, d->events, d->lost,
	    d->corrupt, d->rate_1s, d->rate_10s, d->rate_60s, d->live_threads, d->threads_total,
	    d->threads_evicted, d->clock, d->unknown);
	json_str(b, d->state);
	ADD(b, ",\"counters\":[");
	for (size_t i = 0; i < d->n_counters; i++) {
		if (i)
			ADD(b, ",");
		ADD(b, "{\"name\":");
		json_str(b, d->counters[i]->name);
		evbuffer_add_printf(b, ",\"value\":%" PRId64 "}", d->counters[i]->value);
	}
	ADD(b, "]}");
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
	ADD(b, "}");
}

static void json_label(struct evbuffer *b, const Mtrace__LabelStats *l)
{
	evbuffer_add_printf(b, "{\"domid\":%" PRIu32 ",\"label\":", l->domid);
	json_str(b, l->label);
	evbuffer_add_printf(b,
	    ",\"count\":%" PRIu64 ",\"live\":%" PRIu64 ",\"creation_rate\":%.2f"
	    ",\"lifetime_p50_ns\":%" PRIu64 ",\"lifetime_p99_ns\":%" PRIu64 "}",
	    l->count, l->live, l->creation_rate, l->lifetime_p50_ns, l->lifetime_p99_ns);
}

void json_stats(struct evbuffer *b, const Mtrace__Stats *s, bool threads)
{
	evbuffer_add_printf(b,
	    "{\"time_ns\":%" PRIu64 ",\"clients\":%" PRIu32 ",\"dropped_for_client\":%" PRIu64
	    ",\"domains\":[",
	    s->time_ns, s->clients, s->dropped_for_client);
	for (size_t i = 0; i < s->n_domains; i++) {
		if (i)
			ADD(b, ",");
		json_domain_stats(b, s->domains[i]);
	}
	ADD(b, "]");
	if (threads) {
		ADD(b, ",\"threads\":[");
		for (size_t i = 0; i < s->n_threads; i++) {
			if (i)
				ADD(b, ",");
			json_thread(b, s->threads[i]);
		}
		ADD(b, "],\"labels\":[");
		for (size_t i = 0; i < s->n_labels; i++) {
			if (i)
				ADD(b, ",");
			json_label(b, s->labels[i]);
		}
		ADD(b, "]");
	}
	ADD(b, "}");
}
