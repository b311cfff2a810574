/*
 * cat-format.c - text and JSON-lines output for mtrace-cat, and the dispatch to the
 * converters (cat-chrome.c, cat-ctf.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cat-format.h"
#include "json.h"
#include "ring-reader.h"

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

/* One evbuffer for every JSON piece: cat writes one thing at a time. */
static struct evbuffer *jbuf(void)
{
	static struct evbuffer *b;

	if (!b)
		b = evbuffer_new();
	return b;
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

static void text_time(FILE *f, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	fprintf(f, " %s=%s%" PRIu64 ".%09" PRIu64, key, ns < 0 ? "-" : "", a / 1000000000u,
	    a % 1000000000u);
}

static void text_event(FILE *f, const Mtrace__EventBatch *b, size_t i, uint64_t ts,
    const struct tl_time *at, const char *str)
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
	/* the host timeline last: what was printed before stays where it was */
	if (at && at->known)
		text_time(f, "host", at->host_ns);
	fputc('\n', f);
}

static void json_line(FILE *f, struct evbuffer *b)
{
	evbuffer_add(b, "\n", 1);
	json_write(f, b);
}

void cat_event(FILE *f, enum cat_format fmt, const Mtrace__EventBatch *b, size_t i, uint64_t ts,
    const struct tl_time *at, const char *str)
{
	switch (fmt) {
	case CAT_TEXT:
		text_event(f, b, i, ts, at, str);
		break;
	case CAT_JSON:
		json_event(jbuf(), b, i, ts, at && at->known ? &at->host_ns : NULL, str);
		json_line(f, jbuf());
		break;
	default:
		break;
	}
}

void cat_pair(FILE *f, enum cat_format fmt, const struct tl_pair *p)
{
	if (fmt == CAT_JSON) {
		json_evtchn_pair(jbuf(), p);
		json_line(f, jbuf());
		return;
	}
	if (fmt != CAT_TEXT)
		return;
	fprintf(f,
	    "# evtchn_pair send dom=%" PRIu32 " port=%" PRIu32 " ts=%" PRIu64 " recv dom=%" PRIu32
	    " port=%" PRIu32 " ts=%" PRIu64 " gap_ns=%" PRId64 " uncertainty_ns=%" PRIu64
	    " order=%s\n",
	    p->send.domid, p->send.port, p->send.guest_ns, p->recv.domid, p->recv.port,
	    p->recv.guest_ns, p->gap_ns, p->uncertainty_ns, tl_order_name(p->order));
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
		    " rate_1s=%.0f live_threads=%" PRIu64 " threads_total=%" PRIu64
		    " threads_ended=%" PRIu64 " threads_labelled=%" PRIu64
		    " labels_dropped=%" PRIu64 "\n",
		    d->events, d->lost, d->corrupt, d->rate_1s, d->live_threads, d->threads_total,
		    d->threads_ended, d->threads_labelled, d->labels_dropped);
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
		fprintf(f, " count=%" PRIu64 " current=%" PRIu64 " live=%" PRIu64 "\n", l->count,
		    l->current, l->live);
	}
}

void cat_other(FILE *f, enum cat_format fmt, const Mtrace__ServerMsg *m)
{
	if (fmt == CAT_JSON) {
		if (json_other(jbuf(), m) == 0)
			json_line(f, jbuf());
		return;
	}
	if (fmt != CAT_TEXT)
		return;
	switch (m->msg_case) {
	case MTRACE__SERVER_MSG__MSG_STATS:
		text_stats(f, m->stats);
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_UP:
		fprintf(f, "# domain up dom=%u name=", m->domain_up->domid);
		text_str(f, m->domain_up->name);
		fprintf(
		    f, " rings=%u%s\n", m->domain_up->rings, m->domain_up->legacy ? " legacy" : "");
		break;
	case MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN:
		fprintf(f, "# domain down dom=%u reason=", m->domain_down->domid);
		text_str(f, m->domain_down->reason);
		fputc('\n', f);
		break;
	case MTRACE__SERVER_MSG__MSG_LOSS:
		fprintf(f,
		    "# loss dom=%u ring=%u lost_in_ring=%" PRIu64 " dropped_for_client=%" PRIu64
		    "\n",
		    m->loss->domid, m->loss->ring, m->loss->lost_in_ring,
		    m->loss->dropped_for_client);
		break;
	case MTRACE__SERVER_MSG__MSG_CLOCK_MAP: {
		const Mtrace__ClockMap *c = m->clock_map;
		fprintf(f,
		    "# clock_map dom=%u clock=%u source=%s offset_ns=%" PRId64
		    " uncertainty_ns=%" PRIu64 " since_host_ns=%" PRId64 " seq=%" PRIu64 "\n",
		    c->domid, c->clock, json_clock_source(c->source), c->offset_ns,
		    c->uncertainty_ns, c->since_host_ns, c->seq);
		break;
	}
	case MTRACE__SERVER_MSG__MSG_EVTCHN_LINK:
		fprintf(f, "# evtchn_link dom=%u port=%u remote_dom=%u remote_port=%u\n",
		    m->evtchn_link->domid, m->evtchn_link->port, m->evtchn_link->remote_domid,
		    m->evtchn_link->remote_port);
		break;
	case MTRACE__SERVER_MSG__MSG_VCPU:
		for (size_t i = 0; i < m->vcpu->n_vcpu && i < m->vcpu->n_start_ns &&
		     i < m->vcpu->n_dur_ns && i < m->vcpu->n_state;
		     i++)
			fprintf(f,
			    "# vcpu dom=%u vcpu=%u start_ns=%" PRId64 " dur_ns=%" PRIu64 " %s\n",
			    m->vcpu->domid, m->vcpu->vcpu[i], m->vcpu->start_ns[i],
			    m->vcpu->dur_ns[i], json_vcpu_state_name(m->vcpu->state[i]));
		break;
	case MTRACE__SERVER_MSG__MSG_GOODBYE:
		fputs("# goodbye reason=", f);
		text_str(f, m->goodbye->reason);
		fputc('\n', f);
		break;
	case MTRACE__SERVER_MSG__MSG_ERROR:
		fprintf(f, "# error code=%d message=", (int)m->error->code);
		text_str(f, m->error->message);
		fputc('\n', f);
		break;
	default:
		break;
	}
}
