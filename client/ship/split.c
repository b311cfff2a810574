/*
 * split.c - messages cut under the server's max_payload (split.h).  The parts are built
 * as shallow copies of the unpacked message, pointing into its columns and tables, and
 * packed one by one: nothing but the packed frames outlives a call.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "mtrace.pb-c.h"
#include "ops.h"
#include "split.h"

/* Room a part's frame leaves for its ServerMsg, and what a repeated entry adds besides
 * its own bytes (tag and length). */
#define ENTRY_ROOM 6

static int add_part(struct split *out, const Mtrace__ServerMsg *m, size_t size, uint32_t events)
{
	uint8_t *f = malloc(size + FRAME_VARINT_MAX);
	size_t n = out->n + 1, hl;
	uint8_t **fr = realloc(out->frame, n * sizeof(*fr));

	if (fr)
		out->frame = fr;
	size_t *len = fr ? realloc(out->len, n * sizeof(*len)) : NULL;
	if (len)
		out->len = len;
	uint32_t *ev = len ? realloc(out->events, n * sizeof(*ev)) : NULL;
	if (ev)
		out->events = ev;
	if (!f || !ev) {
		free(f);
		return -1;
	}
	hl = frame_put_len(f, size);
	out->frame[out->n] = f;
	out->len[out->n] = hl + mtrace__server_msg__pack(m, f + hl);
	out->events[out->n] = events;
	out->n = n;
	return 0;
}

void split_free(struct split *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->frame[i]);
	free(s->frame);
	free(s->len);
	free(s->events);
	memset(s, 0, sizeof(*s));
}

/* The scratch of a batch being cut: every event's time and first string reference,
 * and the columns of the part being tried. */
struct cut {
	const Mtrace__EventBatch *b;
	uint64_t *ts;
	size_t *ref0; /* n + 1: the str_ref index each event starts at */
	int32_t *dts;
	uint32_t *refs, *map;
	char **strs;
};

/* The part of events [i, i + count) in p (pointing into b and the scratch): its packed
 * size as a ServerMsg in pm. */
static size_t part(
    struct cut *c, size_t i, size_t count, Mtrace__EventBatch *p, Mtrace__ServerMsg *pm)
{
	const Mtrace__EventBatch *b = c->b;
	size_t nstr = 0, r0 = c->ref0[i], r1 = c->ref0[i + count], size;

	*p = *b;
	p->base_ts = c->ts[i]; /* the first event's time: its delta is 0 */
	c->dts[0] = 0;
	memcpy(c->dts + 1, b->ts_delta + i + 1, (count - 1) * sizeof(*c->dts));
	p->n_ts_delta = p->n_op = p->n_thread = p->n_arg = p->n_type = count;
	p->ts_delta = c->dts;
	p->op = b->op + i;
	p->thread = b->thread + i;
	p->arg = b->arg + i;
	p->type = b->type + i;
	/* the part's own dictionary, in order of first use as mtraced makes it */
	for (size_t k = r0; k < r1; k++) {
		uint32_t s = b->str_ref[k];
		if (c->map[s] == UINT32_MAX) {
			c->map[s] = (uint32_t)nstr;
			c->strs[nstr++] = b->str[s];
		}
		c->refs[k - r0] = c->map[s];
	}
	for (size_t k = r0; k < r1; k++)
		c->map[b->str_ref[k]] = UINT32_MAX;
	p->n_str = nstr;
	p->str = c->strs;
	p->n_str_ref = r1 - r0;
	p->str_ref = c->refs;
	*pm = (Mtrace__ServerMsg)MTRACE__SERVER_MSG__INIT;
	pm->msg_case = MTRACE__SERVER_MSG__MSG_EVENTS;
	pm->events = p;
	size = mtrace__server_msg__get_packed_size(pm);
	return size;
}

/* Every event's time and string references, checked: -1 when the columns disagree. */
static int prepare(struct cut *c, size_t n)
{
	const Mtrace__EventBatch *b = c->b;
	uint64_t t = b->base_ts;
	size_t r = 0;

	if (b->n_ts_delta != n || b->n_thread != n || b->n_arg != n || b->n_type != n)
		return -1;
	c->ts = malloc(n * sizeof(*c->ts));
	c->ref0 = malloc((n + 1) * sizeof(*c->ref0));
	c->dts = malloc(n * sizeof(*c->dts));
	c->refs = malloc((b->n_str_ref + 1) * sizeof(*c->refs));
	c->map = malloc((b->n_str + 1) * sizeof(*c->map));
	c->strs = malloc((b->n_str + 1) * sizeof(*c->strs));
	if (!c->ts || !c->ref0 || !c->dts || !c->refs || !c->map || !c->strs)
		return -1;
	for (size_t i = 0; i < b->n_str; i++)
		c->map[i] = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		t += (uint64_t)(int64_t)b->ts_delta[i]; /* as readers add them */
		c->ts[i] = t;
		c->ref0[i] = r;
		if (mtrace_op_has_string(b->op[i])) {
			if (r >= b->n_str_ref || b->str_ref[r] >= b->n_str)
				return -1;
			r++;
		}
	}
	c->ref0[n] = r;
	return 0;
}

static int split_events(const Mtrace__ServerMsg *m, size_t total, size_t room, struct split *out)
{
	struct cut c = { .b = m->events };
	size_t n = c.b->n_op;
	Mtrace__EventBatch p;
	Mtrace__ServerMsg pm;
	int rc = n ? prepare(&c, n) : -1;

	for (size_t i = 0; rc == 0 && i < n;) {
		/* a first guess in proportion, then halved until it fits */
		size_t count = (size_t)((double)n * (double)room * 0.9 / (double)total), size;

		if (count < 1)
			count = 1;
		if (count > n - i)
			count = n - i;
		while ((size = part(&c, i, count, &p, &pm)) > room && count > 1)
			count /= 2;
		if (size > room || add_part(out, &pm, size, (uint32_t)count) < 0)
			rc = -1;
		i += count;
	}
	free(c.ts);
	free(c.ref0);
	free(c.dts);
	free(c.refs);
	free(c.map);
	free(c.strs);
	return rc;
}

static size_t stats_size(Mtrace__Stats *s)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;

	m.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
	m.stats = s;
	return mtrace__server_msg__get_packed_size(&m);
}

/* The tables of c cut until c (without its domains) takes at most target: the largest
 * table first, in proportion, as mtraced fits its own frame (daemon/stream-msg.c). */
static void cut_tables(Mtrace__Stats *c, size_t target)
{
	size_t len;

	while ((len = stats_size(c)) > target) {
		size_t *tabs[] = { &c->n_labels, &c->n_threads, &c->n_sites, &c->n_site_edges };
		uint32_t *omitted[] = { &c->labels_omitted, &c->threads_omitted, &c->sites_omitted,
			&c->site_edges_omitted };
		size_t *n = NULL, keep;
		unsigned t = 0;

		for (unsigned i = 0; i < 4; i++)
			if (*tabs[i] && (!n || *tabs[i] > *n))
				n = tabs[i], t = i;
		if (!n)
			return;
		keep = (size_t)((double)*n * ((double)target / (double)len));
		if (keep >= *n)
			keep = *n - 1;
		*omitted[t] += (uint32_t)(*n - keep);
		*n = keep;
	}
}

/* A domain's bytes in a Stats; one too big alone (in a Stats of nothing else) has its
 * counters cut into *copy, and *d points there.  -1: even without counters. */
static int fit_domain(Mtrace__Stats *bare, Mtrace__DomainStats **d, Mtrace__DomainStats *copy,
    size_t room, size_t *bytes)
{
	size_t base = stats_size(bare);

	*bytes = mtrace__domain_stats__get_packed_size(*d) + ENTRY_ROOM;
	if (base + *bytes <= room)
		return 0;
	*copy = **d;
	*d = copy;
	while (base + (*bytes = mtrace__domain_stats__get_packed_size(copy) + ENTRY_ROOM) > room) {
		size_t keep = copy->n_counters / 2;
		if (!copy->n_counters)
			return -1;
		copy->counters_omitted += (uint32_t)(copy->n_counters - keep);
		copy->n_counters = keep;
	}
	return 0;
}

static int split_stats(const Mtrace__ServerMsg *m, size_t room, struct split *out)
{
	const Mtrace__Stats *s = m->stats;
	Mtrace__Stats first = *s, bare;
	Mtrace__DomainStats **doms = malloc((s->n_domains + 1) * sizeof(*doms));
	Mtrace__DomainStats *copies = malloc((s->n_domains + 1) * sizeof(*copies));
	size_t *bytes = malloc((s->n_domains + 1) * sizeof(*bytes));
	int rc = doms && copies && bytes ? 0 : -1;

	/* the tables ride with the first part, in half the room at most */
	first.n_domains = 0;
	cut_tables(&first, room / 2);
	bare = first;
	bare.n_labels = bare.n_threads = bare.n_sites = bare.n_site_edges = 0;
	bare.labels_omitted = bare.threads_omitted = bare.sites_omitted = 0;
	bare.site_edges_omitted = 0;
	for (size_t i = 0; rc == 0 && i < s->n_domains; i++) {
		doms[i] = s->domains[i];
		rc = fit_domain(&bare, &doms[i], &copies[i], room, &bytes[i]);
	}
	for (size_t a = 0, b, k = 0; rc == 0; a = b, k++) {
		Mtrace__Stats p = k ? bare : first;
		Mtrace__ServerMsg pm = MTRACE__SERVER_MSG__INIT;
		size_t size = stats_size(&p) + 8; /* the lengths' varints may grow */

		for (b = a; b < s->n_domains && size + bytes[b] <= room; b++)
			size += bytes[b];
		if (b == a && k)
			rc = -1; /* cannot be: fit_domain made each fit a part of its own */
		p.domains = doms + a;
		p.n_domains = b - a;
		pm.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
		pm.stats = &p;
		if (rc == 0 && add_part(out, &pm, mtrace__server_msg__get_packed_size(&pm), 0) < 0)
			rc = -1;
		if (b == s->n_domains)
			break;
	}
	free(doms);
	free(copies);
	free(bytes);
	return rc;
}

int split_frame(const uint8_t *frame, size_t len, size_t limit, struct split *out)
{
	size_t hdr, msg, room = limit > FRAME_VARINT_MAX ? limit - FRAME_VARINT_MAX : 0;
	Mtrace__ServerMsg *m;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (len <= limit)
		return 0;
	if (frame_parse(frame, len, FRAME_MAX_TO_CLIENT, &hdr, &msg) != FRAME_OK ||
	    hdr + msg != len || !(m = mtrace__server_msg__unpack(NULL, msg, frame + hdr)))
		return -1;
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS)
		rc = split_events(m, msg, room, out);
	else if (m->msg_case == MTRACE__SERVER_MSG__MSG_STATS)
		rc = split_stats(m, room, out);
	mtrace__server_msg__free_unpacked(m, NULL);
	if (rc < 0)
		split_free(out);
	return rc < 0 ? -1 : 1;
}
