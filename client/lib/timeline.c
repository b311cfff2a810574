/*
 * timeline.c - the host timeline of a reader (timeline.h): the clock maps it was told,
 * per (host, domain, clock), the event-channel links, and the pairing of sends with
 * receives.  Tables are thread-table.c's, keyed (host << 32 | domid, clock or port);
 * hosts (the fleet's) are numbered in order of first sight.
 */
#include <stdlib.h>
#include <string.h>

#include "thread-table.h"
#include "timeline.h"

#define HOSTS_MAX 1024
#define QUEUE_MAX 16384 /* ends waiting on one channel; past it the oldest go */
/* Maps kept per clock: past it the older half go, and a guest time before the oldest
 * kept is mapped by it (a live reader's events are recent; a recording's domain would
 * have to change its map 4,096 times for a converter to notice). */
#define MAPS_MAX 4096

struct map {
	Mtrace__ClockMap m;
	int64_t since_guest; /* since_host_ns taken back to guest time by its offset */
};

struct tl_clock {
	struct map *maps;
	size_t n, cap;
};

struct link {
	uint32_t rdom, rport;
};

struct queue {
	struct tl_end *e;
	size_t head, n, cap;
};

struct chan {
	uint32_t hid, rdom; /* the receiving domain */
	struct queue sends, recvs;
	bool aligned; /* a pair was made: no more dropping at the start */
};

struct tl {
	char *hosts[HOSTS_MAX];
	unsigned nhosts;
	struct ttab clocks, links, chans;
	struct tl_counts counts;
	bool forget_gone; /* tl_forget_gone */
};

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static uint64_t sat_add_u(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

struct tl *tl_new(void)
{
	struct tl *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	ttab_init(&t->clocks, sizeof(struct tl_clock));
	ttab_init(&t->links, sizeof(struct link));
	ttab_init(&t->chans, sizeof(struct chan));
	return t;
}

static void clock_free(void *p)
{
	free(((struct tl_clock *)p)->maps);
}

static void chan_free(void *p)
{
	struct chan *c = p;

	free(c->sends.e);
	free(c->recvs.e);
}

void tl_free(struct tl *t)
{
	if (!t)
		return;
	ttab_free(&t->clocks, clock_free);
	ttab_free(&t->links, NULL);
	ttab_free(&t->chans, chan_free);
	for (unsigned i = 0; i < t->nhosts; i++)
		free(t->hosts[i]);
	free(t);
}

/* The host's number (0: mtraced's own, no name); -1 when the table is full. */
static int64_t host_id(struct tl *t, const char *host, bool make)
{
	if (!host || !*host)
		return 0;
	for (unsigned i = 0; i < t->nhosts; i++)
		if (!strcmp(t->hosts[i], host))
			return i + 1;
	if (!make || t->nhosts == HOSTS_MAX || !(t->hosts[t->nhosts] = strdup(host)))
		return -1;
	return ++t->nhosts;
}

static uint64_t key(int64_t hid, uint32_t domid)
{
	return (uint64_t)hid << 32 | domid;
}

static void learn_map(struct tl *t, int64_t hid, const Mtrace__ClockMap *m)
{
	int fresh;
	struct tl_clock *c = ttab_put(&t->clocks, key(hid, m->domid), m->clock, &fresh);
	struct map *x;

	if (!c)
		return;
	/* a seq not above the last: the domain was attached again, its maps start anew */
	if (c->n && m->seq <= c->maps[c->n - 1].m.seq)
		c->n = 0;
	if (c->n == MAPS_MAX) {
		memmove(c->maps, c->maps + MAPS_MAX / 2, MAPS_MAX / 2 * sizeof(*c->maps));
		c->n = MAPS_MAX / 2;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4;
		struct map *p = realloc(c->maps, cap * sizeof(*p));
		if (!p)
			return;
		c->maps = p;
		c->cap = cap;
	}
	x = &c->maps[c->n++];
	x->m = *m;
	x->since_guest = sat_sub(m->since_host_ns, m->offset_ns);
}

static void queue_clear(struct queue *q)
{
	q->head = q->n = 0;
}

static void learn_link(struct tl *t, int64_t hid, const Mtrace__EvtchnLink *l)
{
	int fresh;
	struct link *k = ttab_put(&t->links, key(hid, l->domid), l->port, &fresh);
	struct chan *c;

	if (!k)
		return;
	/* the port bound again, to another end (mtraced asks again once a second): what
	 * its channel as a sending end still holds was the old channel's, and has no pair
	 * to come */
	if (!fresh && (k->rdom != l->remote_domid || k->rport != l->remote_port) &&
	    (c = ttab_get(&t->chans, key(hid, l->domid), l->port))) {
		t->counts.unpaired += c->sends.n + c->recvs.n;
		queue_clear(&c->sends);
		queue_clear(&c->recvs);
		c->aligned = false;
		c->rdom = l->remote_domid;
	}
	k->rdom = l->remote_domid;
	k->rport = l->remote_port;
}

struct realign {
	uint64_t hk;
	uint32_t domid;
	struct tl *t;
};

static void realign_one(void *payload, void *arg)
{
	struct chan *c = payload;
	struct realign *r = arg;
	const struct ttab_entry *e = ttab_entry_of(payload);

	if ((e->k1 >> 32) != (r->hk >> 32) || ((uint32_t)e->k1 != r->domid && c->rdom != r->domid))
		return;
	r->t->counts.unpaired += c->sends.n + c->recvs.n;
	queue_clear(&c->sends);
	queue_clear(&c->recvs);
	c->aligned = false;
}

void tl_forget_gone(struct tl *t)
{
	t->forget_gone = true;
}

/* The keys of a gone domain's entries, collected first: a table may not change under
 * ttab_each. */
struct gone {
	uint64_t hk;
	uint32_t domid;
	bool by_remote; /* chans: the receiving domain counts too */
	uint64_t (*k)[2];
	size_t n, cap;
	struct tl *t;
};

static void gone_one(void *payload, void *arg)
{
	struct gone *g = arg;
	const struct ttab_entry *e = ttab_entry_of(payload);
	bool mine = e->k1 == (g->hk | g->domid);

	if ((e->k1 >> 32) != (g->hk >> 32))
		return;
	if (!mine && !(g->by_remote && ((struct chan *)payload)->rdom == g->domid))
		return;
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		uint64_t(*k)[2] = realloc(g->k, cap * sizeof(*k));
		if (!k)
			return; /* kept: found again at the next DomainDown */
		g->k = k;
		g->cap = cap;
	}
	if (g->by_remote) {
		struct chan *c = payload;
		g->t->counts.unpaired += c->sends.n + c->recvs.n;
	}
	g->k[g->n][0] = e->k1;
	g->k[g->n++][1] = e->k2;
}

static void forget_in(struct ttab *tab, struct gone *g, void (*fn)(void *))
{
	g->n = 0;
	ttab_each(tab, gone_one, g);
	for (size_t i = 0; i < g->n; i++)
		ttab_del(tab, g->k[i][0], g->k[i][1], fn);
}

static void forget_domain(struct tl *t, int64_t hid, uint32_t domid)
{
	struct gone g = { .hk = key(hid, 0), .domid = domid, .t = t };

	forget_in(&t->clocks, &g, clock_free);
	forget_in(&t->links, &g, NULL);
	g.by_remote = true;
	forget_in(&t->chans, &g, chan_free);
	free(g.k);
}

void tl_msg(struct tl *t, const char *host, const Mtrace__ServerMsg *m)
{
	int64_t hid;

	if (m->msg_case != MTRACE__SERVER_MSG__MSG_CLOCK_MAP &&
	    m->msg_case != MTRACE__SERVER_MSG__MSG_EVTCHN_LINK &&
	    m->msg_case != MTRACE__SERVER_MSG__MSG_LOSS &&
	    !(t->forget_gone && m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN))
		return;
	if ((hid = host_id(t, host, true)) < 0)
		return;
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN)
		forget_domain(t, hid, m->domain_down->domid);
	else if (m->msg_case == MTRACE__SERVER_MSG__MSG_CLOCK_MAP)
		learn_map(t, hid, m->clock_map);
	else if (m->msg_case == MTRACE__SERVER_MSG__MSG_EVTCHN_LINK)
		learn_link(t, hid, m->evtchn_link);
	else if (m->loss->lost_in_ring && (m->loss->domid || m->loss->ring)) {
		/* the k-th send is no longer the k-th receive of this domain's channels */
		struct realign r = { key(hid, 0), m->loss->domid, t };
		ttab_each(&t->chans, realign_one, &r);
	}
}

const struct tl_clock *tl_clock(struct tl *t, const char *host, uint32_t domid, uint32_t clock)
{
	int64_t hid = host_id(t, host, false);
	const struct tl_clock *c;

	if (hid < 0)
		return NULL;
	c = ttab_get(&t->clocks, key(hid, domid), clock);
	return c && c->n ? c : NULL;
}

void tl_map(const struct tl_clock *c, uint64_t guest_ns, struct tl_time *out)
{
	const struct map *x;
	int64_t g = guest_ns > INT64_MAX ? INT64_MAX : (int64_t)guest_ns;
	size_t k;

	if (!c) {
		*out = (struct tl_time){ g, UINT64_MAX, TL_NO_MAP, false };
		return;
	}
	/* the last map in force at g: usually the last one told */
	for (k = c->n - 1; k > 0 && g < c->maps[k].since_guest; k--)
		;
	x = &c->maps[k];
	out->source = (uint8_t)x->m.source;
	out->known = x->m.source != MTRACE__CLOCK_MAP__SOURCE__UNKNOWN;
	out->host_ns =
	    out->known ? (int64_t)(guest_ns + (uint64_t)x->m.offset_ns) : (int64_t)guest_ns;
	out->uncertainty_ns = out->known ? x->m.uncertainty_ns : UINT64_MAX;
}

const Mtrace__ClockMap *tl_clock_last(const struct tl_clock *c)
{
	return c && c->n ? &c->maps[c->n - 1].m : NULL;
}

struct each_map {
	const struct tl *t;
	void (*fn)(const char *host, const Mtrace__ClockMap *m, size_t nth, void *arg);
	void *arg;
};

static void each_map_one(void *payload, void *arg)
{
	const struct tl_clock *c = payload;
	struct each_map *w = arg;
	uint64_t hid = ttab_entry_of(payload)->k1 >> 32;
	const char *host = hid ? w->t->hosts[hid - 1] : "";

	for (size_t i = 0; i < c->n; i++)
		w->fn(host, &c->maps[i].m, i, w->arg);
}

void tl_each_map(const struct tl *t,
    void (*fn)(const char *host, const Mtrace__ClockMap *m, size_t nth, void *arg), void *arg)
{
	struct each_map w = { t, fn, arg };

	ttab_each(&t->clocks, each_map_one, &w);
}

/* ---- pairs ---- */

static bool push(struct queue *q, const struct tl_end *e, uint64_t *dropped)
{
	if (q->n == q->cap) {
		if (q->cap == QUEUE_MAX) {
			q->head = (q->head + 1) % q->cap; /* the oldest goes */
			q->n--;
			++*dropped;
		} else {
			size_t cap = q->cap ? q->cap * 4 : 16;
			struct tl_end *p = malloc(cap * sizeof(*p));
			if (!p)
				return false;
			for (size_t i = 0; i < q->n; i++)
				p[i] = q->e[(q->head + i) % q->cap];
			free(q->e);
			q->e = p;
			q->cap = cap;
			q->head = 0;
		}
	}
	q->e[(q->head + q->n) % q->cap] = *e;
	q->n++;
	return true;
}

static struct tl_end *front(struct queue *q)
{
	return q->n ? &q->e[q->head] : NULL;
}

static void pop(struct queue *q)
{
	q->head = (q->head + 1) % q->cap;
	q->n--;
}

/* A receive before this send by more than the two uncertainties: its own send came
 * before the capture did. */
static bool before(const struct tl_end *r, const struct tl_end *s)
{
	uint64_t unc = sat_add_u(r->at.uncertainty_ns, s->at.uncertainty_ns);

	return r->at.known && s->at.known && r->at.host_ns < s->at.host_ns &&
	    (uint64_t)s->at.host_ns - (uint64_t)r->at.host_ns > unc;
}

static void judge(struct tl *t, const struct tl_end *s, const struct tl_end *r, struct tl_pair *p)
{
	p->send = *s;
	p->recv = *r;
	p->gap_ns = sat_sub(r->at.host_ns, s->at.host_ns);
	p->uncertainty_ns = sat_add_u(s->at.uncertainty_ns, r->at.uncertainty_ns);
	if (!s->at.known || !r->at.known)
		p->order = TL_UNMAPPED;
	else if (p->gap_ns >= 0 && (uint64_t)p->gap_ns >= p->uncertainty_ns)
		p->order = TL_ORDERED;
	else if (p->gap_ns < 0 && (uint64_t)0 - (uint64_t)p->gap_ns > p->uncertainty_ns)
		p->order = TL_VIOLATED;
	else
		p->order = TL_UNCERTAIN;
	t->counts.pairs++;
	t->counts.ordered += p->order == TL_ORDERED;
	t->counts.uncertain += p->order == TL_UNCERTAIN;
	t->counts.violated += p->order == TL_VIOLATED;
	t->counts.unmapped += p->order == TL_UNMAPPED;
}

bool tl_evtchn(
    struct tl *t, const char *host, bool send, const struct tl_end *e, struct tl_pair *out)
{
	int64_t hid = host_id(t, host, false);
	const struct link *l;
	struct chan *c;
	struct tl_end *o;
	uint64_t ck;
	uint32_t cport;
	int fresh;

	if (hid < 0 || !(l = ttab_get(&t->links, key(hid, e->domid), e->port)))
		return false; /* no channel Xen told of */
	/* a channel is keyed by its sending end */
	ck = send ? key(hid, e->domid) : key(hid, l->rdom);
	cport = send ? e->port : l->rport;
	if (!(c = ttab_put(&t->chans, ck, cport, &fresh)))
		return false;
	if (fresh) {
		c->hid = (uint32_t)hid;
		c->rdom = send ? l->rdom : e->domid;
	}
	if (send) {
		/* receives queued before the first send that came before it: orphans */
		while (!c->aligned && (o = front(&c->recvs)) && before(o, e)) {
			pop(&c->recvs);
			t->counts.unpaired++;
		}
		if ((o = front(&c->recvs))) {
			judge(t, e, o, out);
			pop(&c->recvs);
			c->aligned = true;
			return true;
		}
		push(&c->sends, e, &t->counts.unpaired);
		return false;
	}
	if ((o = front(&c->sends))) {
		if (!c->aligned && before(e, o)) {
			t->counts.unpaired++;
			return false;
		}
		judge(t, o, e, out);
		pop(&c->sends);
		c->aligned = true;
		return true;
	}
	push(&c->recvs, e, &t->counts.unpaired);
	return false;
}

struct pending {
	const struct tl *t;
	uint64_t n;
};

static bool traced(const struct tl *t, uint32_t hid, uint32_t domid)
{
	for (uint32_t clock = 1; clock <= 3; clock++)
		if (ttab_get(&t->clocks, key(hid, domid), clock))
			return true;
	return false;
}

static void pending_one(void *payload, void *arg)
{
	const struct chan *c = payload;
	struct pending *p = arg;

	/* an end whose other domain is not traced here (dom0, mostly) has no pair to miss */
	if (traced(p->t, c->hid, c->rdom))
		p->n += c->sends.n;
	if (traced(p->t, c->hid, (uint32_t)ttab_entry_of(payload)->k1))
		p->n += c->recvs.n;
}

void tl_counts(const struct tl *t, struct tl_counts *c)
{
	struct pending p = { t, 0 };

	ttab_each(&t->chans, pending_one, &p);
	*c = t->counts;
	c->unpaired += p.n;
}

const char *tl_order_name(enum tl_order o)
{
	switch (o) {
	case TL_ORDERED:
		return "ordered";
	case TL_UNCERTAIN:
		return "uncertain";
	case TL_VIOLATED:
		return "violated";
	default:
		return "unmapped";
	}
}
