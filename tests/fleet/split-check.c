/*
 * split-check.c - mtrace-ship's messages cut under a server's max_payload
 * (client/ship/split.h), checked without a server: event batches of random events and
 * strings cut at several limits, every part within the limit and the parts together the
 * same events (time, op, thread, arg, type, string) in the same order; Stats of many
 * domains with long counter lists and tables, every part within the limit, every domain
 * once, what was cut counted in *_omitted; what cannot be cut refused.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frame.h"
#include "mtrace.pb-c.h"
#include "ops.h"
#include "split.h"

/* m as one frame (malloc'd), its length in *len. */
static uint8_t *pack(const Mtrace__ServerMsg *m, size_t *len)
{
	size_t n = mtrace__server_msg__get_packed_size(m);
	uint8_t *f = malloc(n + FRAME_VARINT_MAX);
	size_t hl = frame_put_len(f, n);

	*len = hl + mtrace__server_msg__pack(m, f + hl);
	return f;
}

static Mtrace__ServerMsg *unpack(const uint8_t *f, size_t len)
{
	size_t hdr, msg;

	if (frame_parse(f, len, FRAME_MAX_TO_CLIENT, &hdr, &msg) != FRAME_OK || hdr + msg != len)
		return NULL;
	return mtrace__server_msg__unpack(NULL, msg, f + hdr);
}

struct ev {
	uint64_t ts;
	uint32_t op, type;
	int64_t thread, arg;
	const char *str;
};

/* The events of a batch, absolute, appended to out at *n. */
static void events_of(const Mtrace__EventBatch *b, struct ev *out, size_t *n, size_t max)
{
	uint64_t t = b->base_ts;
	size_t r = 0;

	for (size_t i = 0; i < b->n_op && *n < max; i++) {
		struct ev *e = &out[(*n)++];
		t += (uint64_t)(int64_t)b->ts_delta[i];
		*e = (struct ev){ t, b->op[i], b->type[i], b->thread[i], b->arg[i], NULL };
		if (mtrace_op_has_string(b->op[i]) && r < b->n_str_ref && b->str_ref[r] < b->n_str)
			e->str = b->str[b->str_ref[r++]];
	}
}

static void check_batch(size_t n, size_t nstr, size_t strlen_, size_t limit, uint64_t seed)
{
	static const uint32_t ops[] = { MTRACE_OP_READ, MTRACE_OP_LABEL, MTRACE_OP_SWITCH,
		MTRACE_OP_INCREASE, MTRACE_OP_CREATES, MTRACE_OP_FAILS, MTRACE_OP_EVTCHN_SEND };
	Mtrace__EventBatch b = MTRACE__EVENT_BATCH__INIT;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	int32_t *dts = calloc(n, sizeof(*dts));
	uint32_t *op = calloc(n, sizeof(*op)), *type = calloc(n, sizeof(*type));
	int64_t *thread = calloc(n, sizeof(*thread)), *arg = calloc(n, sizeof(*arg));
	uint32_t *ref = calloc(n, sizeof(*ref));
	char **str = calloc(nstr, sizeof(*str));
	struct ev *want = calloc(n, sizeof(*want)), *got = calloc(n, sizeof(*got));
	size_t nref = 0, len, nwant = 0, ngot = 0;
	uint64_t events = 0;
	struct split sp;
	uint8_t *f;

	for (size_t i = 0; i < nstr; i++) {
		str[i] = malloc(strlen_ + 16);
		snprintf(str[i], strlen_ + 16, "s%zu-%0*d", i, (int)strlen_, 0);
	}
	for (size_t i = 0; i < n; i++) {
		dts[i] = i ? (int32_t)(check_xorshift(&seed) % 2000) - 100 : 0;
		op[i] = ops[check_xorshift(&seed) % (sizeof(ops) / sizeof(ops[0]))];
		thread[i] = (int64_t)(check_xorshift(&seed) % 1000) - 1;
		arg[i] = (int64_t)check_xorshift(&seed);
		type[i] = op[i] == MTRACE_OP_CREATES ? (uint32_t)(check_xorshift(&seed) % 4) : 0;
		if (mtrace_op_has_string(op[i]))
			ref[nref++] = (uint32_t)(check_xorshift(&seed) % nstr);
	}
	b.domid = 7;
	b.ring = 3;
	b.clock = 2;
	b.first_seq = 123456;
	b.base_ts = (uint64_t)1 << 62;
	b.n_ts_delta = b.n_op = b.n_thread = b.n_arg = b.n_type = n;
	b.ts_delta = dts;
	b.op = op;
	b.thread = thread;
	b.arg = arg;
	b.type = type;
	b.n_str = nstr;
	b.str = str;
	b.n_str_ref = nref;
	b.str_ref = ref;
	m.msg_case = MTRACE__SERVER_MSG__MSG_EVENTS;
	m.events = &b;
	f = pack(&m, &len);
	events_of(&b, want, &nwant, n);
	REQUIRE(split_frame(f, len, limit, &sp) == 1, "%zu events, %zu bytes, limit %zu", n, len,
	    limit);
	CHECK(sp.n >= (len + limit - 1) / limit, "%zu parts of %zu bytes under %zu", sp.n, len,
	    limit);
	for (size_t k = 0; k < sp.n; k++) {
		Mtrace__ServerMsg *p = unpack(sp.frame[k], sp.len[k]);

		CHECK(sp.len[k] <= limit, "part %zu: %zu bytes, limit %zu", k, sp.len[k], limit);
		REQUIRE(p && p->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS, "part %zu", k);
		CHECK(p->events->domid == 7 && p->events->ring == 3 && p->events->clock == 2 &&
		    p->events->first_seq == 123456);
		CHECK(sp.events[k] == p->events->n_op);
		CHECK(p->events->n_str_ref <= p->events->n_op && p->events->n_str <= nstr);
		events += sp.events[k];
		events_of(p->events, got, &ngot, n);
		/* the strings are the part's: copied out before the part is freed */
		for (size_t i = ngot - p->events->n_op; i < ngot; i++)
			got[i].str = got[i].str ? strdup(got[i].str) : NULL;
		mtrace__server_msg__free_unpacked(p, NULL);
	}
	CHECK(events == n && ngot == n, "%" PRIu64 " events in the parts, %zu in the batch", events,
	    n);
	for (size_t i = 0; i < n && i < ngot; i++) {
		CHECK(got[i].ts == want[i].ts && got[i].op == want[i].op &&
		        got[i].thread == want[i].thread && got[i].arg == want[i].arg &&
		        got[i].type == want[i].type,
		    "event %zu", i);
		CHECK(!want[i].str == !got[i].str &&
		        (!want[i].str || !strcmp(want[i].str, got[i].str)),
		    "event %zu's string", i);
		free((char *)got[i].str);
	}
	split_free(&sp);
	/* a frame that fits is left alone; one event alone over the limit cannot be cut */
	CHECK(split_frame(f, len, len, &sp) == 0 && sp.n == 0);
	CHECK(split_frame(f, len, strlen_ / 2, &sp) == -1 && sp.n == 0);
	free(f);
	/* columns that disagree are not a batch to cut */
	b.n_arg = n - 1;
	f = pack(&m, &len);
	CHECK(split_frame(f, len, limit, &sp) == -1);
	free(f);
	for (size_t i = 0; i < nstr; i++)
		free(str[i]);
	free(str);
	free(dts);
	free(op);
	free(type);
	free(thread);
	free(arg);
	free(ref);
	free(want);
	free(got);
}

static void check_stats(size_t ndom, size_t ncounters, size_t nlabels, size_t limit)
{
	Mtrace__Stats s = MTRACE__STATS__INIT;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainStats *d = calloc(ndom, sizeof(*d)), **dp = calloc(ndom, sizeof(*dp));
	Mtrace__Counter *c = calloc(ncounters, sizeof(*c)), **cp = calloc(ncounters, sizeof(*cp));
	Mtrace__LabelStats *l = calloc(nlabels, sizeof(*l)), **lp = calloc(nlabels, sizeof(*lp));
	unsigned *seen = calloc(ndom, sizeof(*seen));
	char name[64];
	size_t len, labels = 0;
	struct split sp;
	uint8_t *f;

	for (size_t i = 0; i < ncounters; i++) {
		mtrace__counter__init(&c[i]);
		snprintf(name, sizeof(name), "counter-%zu-%040d", i, 0);
		c[i].name = strdup(name);
		c[i].value = (int64_t)i;
		cp[i] = &c[i];
	}
	for (size_t i = 0; i < nlabels; i++) {
		mtrace__label_stats__init(&l[i]);
		l[i].label = "a label of some length, as guests write them";
		l[i].count = i;
		lp[i] = &l[i];
	}
	for (size_t i = 0; i < ndom; i++) {
		mtrace__domain_stats__init(&d[i]);
		d[i].domid = (uint32_t)i + 1;
		d[i].name = "guest";
		d[i].events = i * 1000;
		d[i].n_counters = i % 2 ? ncounters : 1;
		d[i].counters = cp;
		dp[i] = &d[i];
	}
	s.time_ns = 42;
	s.clients = 3;
	s.n_domains = ndom;
	s.domains = dp;
	s.n_labels = nlabels;
	s.labels = lp;
	m.msg_case = MTRACE__SERVER_MSG__MSG_STATS;
	m.stats = &s;
	f = pack(&m, &len);
	REQUIRE(split_frame(f, len, limit, &sp) == 1, "%zu bytes, limit %zu", len, limit);
	for (size_t k = 0; k < sp.n; k++) {
		Mtrace__ServerMsg *p = unpack(sp.frame[k], sp.len[k]);

		CHECK(sp.len[k] <= limit, "part %zu: %zu bytes, limit %zu", k, sp.len[k], limit);
		REQUIRE(p && p->msg_case == MTRACE__SERVER_MSG__MSG_STATS, "part %zu", k);
		CHECK(p->stats->time_ns == 42 && p->stats->clients == 3 && sp.events[k] == 0);
		CHECK(k == 0 || (!p->stats->n_labels && !p->stats->labels_omitted),
		    "the tables in part %zu", k);
		if (k == 0) {
			labels = p->stats->n_labels;
			CHECK(p->stats->n_labels + p->stats->labels_omitted == nlabels,
			    "%zu labels + %u omitted of %zu", p->stats->n_labels,
			    p->stats->labels_omitted, nlabels);
		}
		for (size_t i = 0; i < p->stats->n_domains; i++) {
			const Mtrace__DomainStats *x = p->stats->domains[i];
			size_t want = x->domid % 2 ? 1 : ncounters; /* domid = index + 1 */

			REQUIRE(x->domid >= 1 && x->domid <= ndom);
			seen[x->domid - 1]++;
			CHECK(x->events == (x->domid - 1) * 1000);
			CHECK(x->n_counters + x->counters_omitted == want,
			    "domain %u: %zu counters + %u omitted of %zu", x->domid, x->n_counters,
			    x->counters_omitted, want);
		}
		mtrace__server_msg__free_unpacked(p, NULL);
	}
	for (size_t i = 0; i < ndom; i++)
		CHECK(seen[i] == 1, "domain %zu in %u parts", i + 1, seen[i]);
	printf("# stats: %zu domains, %zu bytes: %zu parts under %zu, %zu of %zu labels kept\n",
	    ndom, len, sp.n, limit, labels, nlabels);
	split_free(&sp);
	free(f);
	for (size_t i = 0; i < ncounters; i++)
		free(c[i].name);
	free(c);
	free(cp);
	free(l);
	free(lp);
	free(d);
	free(dp);
	free(seen);
}

static void check_goodbye(void)
{
	Mtrace__Goodbye g = MTRACE__GOODBYE__INIT;
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	char *reason = malloc(100000);
	struct split sp;
	size_t len;
	uint8_t *f;

	memset(reason, 'x', 99999);
	reason[99999] = 0;
	g.reason = reason;
	m.msg_case = MTRACE__SERVER_MSG__MSG_GOODBYE;
	m.goodbye = &g;
	f = pack(&m, &len);
	CHECK(split_frame(f, len, 65536, &sp) == -1 && sp.n == 0, "a Goodbye is not cut");
	CHECK(split_frame(f, len - 1, 65536, &sp) == -1, "a frame cut short is not a frame");
	free(f);
	free(reason);
}

int main(void)
{
	/* at 128, 64 and 4 KiB, a batch of mtraced's largest (8192 events) and larger */
	check_batch(8192, 64, 1000, (1u << 17) - 64, 1);
	check_batch(8192, 64, 1000, 65536 - 200, 2);
	check_batch(20000, 300, 200, 4096, 3);
	check_batch(10, 5, 10, 150, 4);
	check_stats(400, 60, 2000, 65536 - 200);
	check_stats(50, 400, 0, 4096);
	check_goodbye();
	return check_status("split-check");
}
