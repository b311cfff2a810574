/*
 * cat-format.c - text and JSON-lines output for mtrace-cat, and the dispatch to the
 * converters (cat-chrome.c, cat-ctf.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cat-chrome.h"
#include "cat-ctf.h"
#include "cat-format.h"
#include "ring-reader.h"
#include "utf8.h"

#define NAMES_MAX 1024

static struct {
	uint32_t domid;
	char *name;
} names[NAMES_MAX];
static size_t nnames;

void cat_names_note(uint32_t domid, const char *name)
{
	size_t i;

	for (i = 0; i < nnames; i++)
		if (names[i].domid == domid)
			break;
	if (i == NAMES_MAX)
		return;
	if (i == nnames)
		nnames++;
	free(names[i].name);
	names[i].domid = domid;
	names[i].name = strdup(name ? name : "");
}

const char *cat_names_get(uint32_t domid)
{
	for (size_t i = 0; i < nnames; i++)
		if (names[i].domid == domid)
			return names[i].name;
	return NULL;
}

void cat_json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : ""), *run;
	size_t n = 1;

	fputc('"', f);
	/* Runs of bytes that need no escape go out in one write. */
	for (run = s; *s;) {
		if (*s >= 0x20 && *s != '"' && *s != '\\' && *s != 0x7f &&
		    (*s < 0x80 || (n = utf8_len(s)) > 0)) {
			s += *s < 0x80 ? 1 : n;
			continue;
		}
		fwrite(run, 1, (size_t)(s - run), f);
		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s, f);
		} else if (*s == '\n') {
			fputs("\\n", f);
		} else if (*s == '\t') {
			fputs("\\t", f);
		} else {
			/* a control byte, or a byte that is not UTF-8 (read as Latin-1) */
			fprintf(f, "\\u%04x", *s);
		}
		run = ++s;
	}
	fwrite(run, 1, (size_t)(s - run), f);
	fputc('"', f);
}

/* Text form: printable ASCII as is, everything else as \xNN, inside quotes. */
static void text_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s < 0x20 || *s >= 0x7f)
			fprintf(f, "\\x%02x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static const char *op_name(unsigned op, char *buf, size_t len)
{
	const char *n = mtrace_op_name(op);

	if (n)
		return n;
	snprintf(buf, len, "op%u", op);
	return buf;
}

static void text_event(FILE *f, const Mtrace__EventBatch *b, size_t i, uint64_t ts, const char *str)
{
	unsigned op = b->op[i];
	const struct mtrace_op_info *info = mtrace_op_info(op);
	int64_t arg = b->arg[i];
	const char *dn = cat_names_get(b->domid);
	char ob[16];

	fprintf(
	    f, "%" PRIu64 ".%09" PRIu64 " dom=%u", ts / 1000000000u, ts % 1000000000u, b->domid);
	if (dn && *dn) {
		fputc('(', f);
		text_str(f, dn);
		fputc(')', f);
	}
	fprintf(f, " ring=%u %-11s ", b->ring, op_name(op, ob, sizeof(ob)));
	if (b->thread[i] == -1)
		fputs("thread=idle", f);
	else
		fprintf(f, "thread=%" PRId64, b->thread[i]);
	/* what arg and str mean comes from the op table (common/ops.c) */
	if (!info->name) {
		fprintf(f, " arg=%" PRId64, arg);
		if (str) {
			fputs(" str=", f);
			text_str(f, str);
		}
	} else {
		if (info->str && info->str_first) {
			fprintf(f, " %s=", info->str);
			text_str(f, str);
		}
		if (info->arg)
			fprintf(f, " %s=%" PRId64, info->arg, arg);
		else if (arg) /* unused by the vocabulary, but never hide what came */
			fprintf(f, " arg=%" PRId64, arg);
		if (op == MTRACE_OP_CREATES)
			fprintf(f, " type=%s",
			    mtrace_thread_type_name(
			        i < b->n_type ? b->type[i] : MTRACE_TT_UNKNOWN));
		if (info->str && !info->str_first) {
			fprintf(f, " %s=", info->str);
			text_str(f, str);
		}
	}
	fputc('\n', f);
}

static void json_event(FILE *f, const Mtrace__EventBatch *b, size_t i, uint64_t ts, const char *str)
{
	char ob[16];

	fprintf(f,
	    "{\"type\":\"event\",\"domid\":%u,\"ring\":%u,\"ts\":%" PRIu64
	    ",\"op\":\"%s\",\"op_code\":%u,\"thread\":%" PRId64 ",\"arg\":%" PRId64,
	    b->domid, b->ring, ts, op_name(b->op[i], ob, sizeof(ob)), b->op[i], b->thread[i],
	    b->arg[i]);
	if (b->op[i] == MTRACE_OP_CREATES && i < b->n_type)
		fprintf(f, ",\"thread_type\":\"%s\"", mtrace_thread_type_name(b->type[i]));
	if (str) {
		fputs(",\"str\":", f);
		cat_json_str(f, str);
	}
	fputs("}\n", f);
}

void cat_event(FILE *f, enum cat_format fmt, const Mtrace__EventBatch *b, size_t i, uint64_t ts,
    const char *str)
{
	switch (fmt) {
	case CAT_TEXT:
		text_event(f, b, i, ts, str);
		break;
	case CAT_JSON:
		json_event(f, b, i, ts, str);
		break;
	case CAT_CHROME:
		cat_chrome_event(f, b, i, ts, str);
		break;
	case CAT_CTF:
		cat_ctf_event(b, i, ts, str);
		break;
	default:
		break;
	}
}

static void json_stats(FILE *f, const Mtrace__Stats *s)
{
	size_t i, k;

	fprintf(f,
	    "{\"type\":\"stats\",\"time_ns\":%" PRIu64 ",\"dropped_for_client\":%" PRIu64
	    ",\"clients\":%u,\"domains\":[",
	    s->time_ns, s->dropped_for_client, s->clients);
	for (i = 0; i < s->n_domains; i++) {
		const Mtrace__DomainStats *d = s->domains[i];
		fprintf(f, "%s{\"domid\":%u,\"name\":", i ? "," : "", d->domid);
		cat_json_str(f, d->name);
		fprintf(f,
		    ",\"alive\":%s,\"legacy\":%s,\"rings\":%u,\"events\":%" PRIu64
		    ",\"lost\":%" PRIu64 ",\"corrupt\":%" PRIu64 ",\"unknown\":%" PRIu64
		    ",\"rate_1s\":%.1f,\"rate_10s\":%.1f,\"rate_60s\":%.1f"
		    ",\"live_threads\":%" PRIu64 ",\"threads_total\":%" PRIu64
		    ",\"wakeups\":%" PRIu64 ",\"ratelimited\":%" PRIu64 ",\"state\":",
		    d->alive ? "true" : "false", d->legacy ? "true" : "false", d->rings, d->events,
		    d->lost, d->corrupt, d->unknown, d->rate_1s, d->rate_10s, d->rate_60s,
		    d->live_threads, d->threads_total, d->wakeups, d->ratelimited);
		cat_json_str(f, d->state);
		fputs(",\"counters\":{", f);
		for (k = 0; k < d->n_counters; k++) {
			fputs(k ? "," : "", f);
			cat_json_str(f, d->counters[k]->name);
			fprintf(f, ":%" PRId64, d->counters[k]->value);
		}
		fputs("},\"op_events\":{", f);
		for (k = 0; k < d->n_op_events; k++) {
			const char *op = mtrace_op_name(d->op_events[k]->op);
			if (op)
				fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", op,
				    d->op_events[k]->events);
			else
				fprintf(f, "%s\"op_%u\":%" PRIu64, k ? "," : "",
				    d->op_events[k]->op, d->op_events[k]->events);
		}
		fputs("}}", f);
	}
	fputs("],\"threads\":[", f);
	for (i = 0; i < s->n_threads; i++) {
		const Mtrace__ThreadStats *t = s->threads[i];
		fprintf(f, "%s{\"domid\":%u,\"id\":%" PRId64 ",\"label\":", i ? "," : "", t->domid,
		    t->id);
		cat_json_str(f, t->label);
		fputs(",\"site\":", f);
		cat_json_str(f, t->site);
		fprintf(f,
		    ",\"site_index\":%" PRId32
		    ",\"type\":\"%s\",\"state\":\"%s\",\"parent\":%" PRId64 ",\"reads\":%" PRIu64
		    ",\"resolves\":%" PRIu64 ",\"children\":%" PRIu64 ",\"running_ns\":%" PRIu64
		    ",\"pending_ns\":%" PRIu64 ",\"events\":%" PRIu64 ",\"events_rate\":%.1f}",
		    t->site_index, mtrace_thread_type_name(t->type),
		    t->state == MTRACE__THREAD_STATE__RESOLVED     ? "resolved"
		        : t->state == MTRACE__THREAD_STATE__FAILED ? "failed"
		                                                   : "pending",
		    t->parent, t->reads, t->resolves, t->children, t->running_ns, t->pending_ns,
		    t->events, t->events_rate);
	}
	fputs("],\"labels\":[", f);
	for (i = 0; i < s->n_labels; i++) {
		const Mtrace__LabelStats *l = s->labels[i];
		fprintf(f, "%s{\"domid\":%u,\"label\":", i ? "," : "", l->domid);
		cat_json_str(f, l->label);
		fprintf(f,
		    ",\"count\":%" PRIu64 ",\"live\":%" PRIu64 ",\"creation_rate\":%.2f"
		    ",\"lifetime_p50_ns\":%" PRIu64 ",\"lifetime_p99_ns\":%" PRIu64 "}",
		    l->count, l->live, l->creation_rate, l->lifetime_p50_ns, l->lifetime_p99_ns);
	}
	fputc(']', f);
	cat_json_sites(f, s);
	fputs("}\n", f);
}

static void text_stats(FILE *f, const Mtrace__Stats *s)
{
	size_t i;

	fprintf(f, "# stats %" PRIu64 ".%09" PRIu64 " clients=%u dropped_for_client=%" PRIu64 "\n",
	    s->time_ns / 1000000000u, s->time_ns % 1000000000u, s->clients, s->dropped_for_client);
	if (s->sites_omitted || s->site_edges_omitted)
		fprintf(f, "#  %u sites omitted, %u site edges omitted (frame limit)\n",
		    s->sites_omitted, s->site_edges_omitted);
	for (i = 0; i < s->n_domains; i++) {
		const Mtrace__DomainStats *d = s->domains[i];
		fprintf(f, "#  dom=%u name=", d->domid);
		text_str(f, d->name);
		fprintf(f, " state=");
		text_str(f, d->state);
		fprintf(f,
		    " events=%" PRIu64 " lost=%" PRIu64 " corrupt=%" PRIu64
		    " rate_1s=%.0f live_threads=%" PRIu64 "\n",
		    d->events, d->lost, d->corrupt, d->rate_1s, d->live_threads);
	}
	for (i = 0; i < s->n_threads; i++) {
		const Mtrace__ThreadStats *t = s->threads[i];
		fprintf(f, "#  thread dom=%u id=%" PRId64 " label=", t->domid, t->id);
		text_str(f, t->label);
		fprintf(
		    f, " events=%" PRIu64 " running_ns=%" PRIu64 "\n", t->events, t->running_ns);
	}
	for (i = 0; i < s->n_labels; i++) {
		const Mtrace__LabelStats *l = s->labels[i];
		fprintf(f, "#  label dom=%u ", l->domid);
		text_str(f, l->label);
		fprintf(f, " count=%" PRIu64 " live=%" PRIu64 "\n", l->count, l->live);
	}
}

void cat_other(FILE *f, enum cat_format fmt, const Mtrace__ServerMsg *m)
{
	bool json = fmt == CAT_JSON;

	if (fmt != CAT_TEXT && fmt != CAT_JSON)
		return;
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
		(json ? json_stats : text_stats)(f, m->stats);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		if (json) {
			fprintf(f,
			    "{\"type\":\"domain_up\",\"domid\":%u,\"name\":", m->domain_up->domid);
			cat_json_str(f, m->domain_up->name);
			fprintf(f, ",\"rings\":%u,\"clock\":%u,\"legacy\":%s}\n",
			    m->domain_up->rings, m->domain_up->clock,
			    m->domain_up->legacy ? "true" : "false");
		} else {
			fprintf(f, "# domain up dom=%u name=", m->domain_up->domid);
			text_str(f, m->domain_up->name);
			fprintf(f, " rings=%u%s\n", m->domain_up->rings,
			    m->domain_up->legacy ? " legacy" : "");
		}
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		if (json) {
			fprintf(f, "{\"type\":\"domain_down\",\"domid\":%u,\"reason\":",
			    m->domain_down->domid);
			cat_json_str(f, m->domain_down->reason);
			fputs("}\n", f);
		} else {
			fprintf(f, "# domain down dom=%u reason=", m->domain_down->domid);
			text_str(f, m->domain_down->reason);
			fputc('\n', f);
		}
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		fprintf(f,
		    json ? "{\"type\":\"loss\",\"domid\":%u,\"ring\":%u,\"lost_in_ring\":%" PRIu64
		           ",\"dropped_for_client\":%" PRIu64 "}\n"
		         : "# loss dom=%u ring=%u lost_in_ring=%" PRIu64
		           " dropped_for_client=%" PRIu64 "\n",
		    m->loss->domid, m->loss->ring, m->loss->lost_in_ring,
		    m->loss->dropped_for_client);
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		if (json) {
			fputs("{\"type\":\"goodbye\",\"reason\":", f);
			cat_json_str(f, m->goodbye->reason);
			fputs("}\n", f);
		} else {
			fputs("# goodbye reason=", f);
			text_str(f, m->goodbye->reason);
			fputc('\n', f);
		}
		break;
	case MTRACE__SERVER_MSG__MSG_ERROR:
		if (json) {
			fprintf(
			    f, "{\"type\":\"error\",\"code\":%d,\"message\":", (int)m->error->code);
			cat_json_str(f, m->error->message);
			fputs("}\n", f);
		} else {
			fprintf(f, "# error code=%d message=", (int)m->error->code);
			text_str(f, m->error->message);
			fputc('\n', f);
		}
		break;
	default:
		break;
	}
}
