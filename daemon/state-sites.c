/*
 * state-sites.c - per-site statistics and the creation graph between sites.
 *
 * A SITE record names the site a thread was created at: a guest code address (kind
 * pc) or a producer's id named by SITE_NAME (kind named).  Each domain keeps up to
 * max_sites_per_guest sites, each with the counters of a label (count, live, rate,
 * lifetime histogram), and up to SITE_EDGES_PER_SITE times as many edges
 * "threads of site A created threads of site B, n times".  What does not fit is
 * counted as dropped.  Symbolisation (sites.c) never runs per event: state_tick
 * resolves new sites within a time budget shared fairly between the domains, and the
 * answer is kept.  A failed lookup is retried only when it could now succeed: a new
 * module covering a site no module covered, or a new domain name (its image).
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mtrace-ring.h"
#include "ring-reader.h"
#include "sites.h"
#include "state-int.h"

#define SITE_EDGES_PER_SITE 4
#define RESOLVE_PER_TICK    256 /* symbolisations per domain per state_tick */
/*
 * Time for symbolisation per state_tick, all domains together, split evenly between
 * the domains that have sites waiting (a share held back for the idle ones would
 * starve a domain that has many beside a crowd that has none); one lookup can overrun its domain's share (libdw cannot be interrupted): the
 * overrun is that domain's debt, repaid by skipping its next shares, so one guest's
 * slow lookups cost the others nothing and the loop never stalls for long.
 */
#define RESOLVE_NS_PER_TICK 2000000ull
#define RESOLVE_NS_MIN      100000ull

static uint64_t resolve_slice_ns = RESOLVE_NS_PER_TICK;

static uint32_t site_hash(uint8_t kind, uint64_t value, uint32_t mask)
{
	return (uint32_t)(((value ^ ((uint64_t)kind << 63)) * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static void site_tab_grow(struct state_domain *d)
{
	uint32_t n = d->site_mask ? (d->site_mask + 1) * 2 : 64;

	free(d->site_tab);
	d->site_tab = xmalloc(n * sizeof(*d->site_tab));
	memset(d->site_tab, 0xff, n * sizeof(*d->site_tab));
	d->site_mask = n - 1;
	for (uint32_t i = 0; i < d->nsites; i++) {
		uint32_t j = site_hash(d->sites[i].kind, d->sites[i].value, d->site_mask);
		while (d->site_tab[j] != NO_IDX)
			j = (j + 1) & d->site_mask;
		d->site_tab[j] = i;
	}
}

/* Index of site (kind, value), created on first sight; NO_IDX when the table is full. */
static uint32_t site_get(struct state_domain *d, uint8_t kind, uint64_t value)
{
	uint32_t j;
	struct site *s;

	if (d->site_mask) {
		for (j = site_hash(kind, value, d->site_mask); d->site_tab[j] != NO_IDX;
		     j = (j + 1) & d->site_mask) {
			s = &d->sites[d->site_tab[j]];
			if (s->kind == kind && s->value == value)
				return d->site_tab[j];
		}
	}
	if (d->nsites >= state_cfg->max_sites_per_guest) {
		d->sites_dropped++;
		return NO_IDX;
	}
	if (d->nsites == d->sites_cap) {
		d->sites_cap = d->sites_cap ? d->sites_cap * 2 : 16;
		d->sites = xreallocarray(d->sites, d->sites_cap, sizeof(*d->sites));
	}
	if ((d->nsites + 1) * 2 > d->site_mask + 1)
		site_tab_grow(d);
	s = &d->sites[d->nsites];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->value = value;
	s->name = NO_IDX;
	/* no module until looked up (0 would be the first: a Stats made before the tick
	 * read d->mods[0], NULL in a domain with no MODULE; tests/daemon/fuzz-sites.c) */
	s->mod = NO_IDX;
	s->st.cr_sec = state_cur_sec;
	for (j = site_hash(kind, value, d->site_mask); d->site_tab[j] != NO_IDX;
	     j = (j + 1) & d->site_mask)
		;
	d->site_tab[j] = d->nsites;
	return d->nsites++;
}

static void edge_add(struct state_domain *d, uint32_t from, uint32_t to)
{
	uint64_t key = (uint64_t)from << 32 | to;
	uint32_t cap = state_cfg->max_sites_per_guest * SITE_EDGES_PER_SITE, j;

	if (!d->edge_mask || (d->nedges + 1) * 2 > d->edge_mask + 1) {
		uint32_t n = d->edge_mask ? (d->edge_mask + 1) * 2 : 64;
		struct site_edge *old = d->edges;
		uint32_t oldn = d->edge_mask ? d->edge_mask + 1 : 0;

		if (d->nedges >= cap) {
			/* full: only existing edges still count */
			for (j = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & d->edge_mask;
			     d->edges[j].count; j = (j + 1) & d->edge_mask)
				if (d->edges[j].from == from && d->edges[j].to == to) {
					d->edges[j].count++;
					return;
				}
			d->edges_dropped++;
			return;
		}
		d->edges = xcalloc(n, sizeof(*d->edges));
		d->edge_mask = n - 1;
		for (uint32_t i = 0; i < oldn; i++) {
			uint64_t k;
			if (!old[i].count)
				continue;
			k = (uint64_t)old[i].from << 32 | old[i].to;
			for (j = (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> 32) & d->edge_mask;
			     d->edges[j].count; j = (j + 1) & d->edge_mask)
				;
			d->edges[j] = old[i];
		}
		free(old);
	}
	for (j = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & d->edge_mask; d->edges[j].count;
	     j = (j + 1) & d->edge_mask)
		if (d->edges[j].from == from && d->edges[j].to == to) {
			d->edges[j].count++;
			return;
		}
	if (d->nedges >= cap) {
		d->edges_dropped++;
		return;
	}
	d->edges[j].from = from;
	d->edges[j].to = to;
	d->edges[j].count = 1;
	d->nedges++;
}

void state_site_apply(struct state_domain *d, const struct mtrace_event *ev)
{
	uint32_t ci, si, pi;
	struct thr *t;
	struct label *l;

	if (ev->type > MTRACE_SITE_NAMED) {
		d->sites_bad++;
		return;
	}
	ci = tab_find(d, ev->thread);
	if (ci == NO_IDX || d->thr[ci].site != NO_IDX) {
		/* its CREATES was lost, or a second site for one thread */
		d->sites_bad++;
		return;
	}
	si = site_get(d, ev->type, ev->arg);
	if (si == NO_IDX)
		return;
	t = &d->thr[ci];
	t->site = si;
	l = &d->sites[si].st;
	l->count++;
	if (t->state == TS_PENDING)
		l->live++;
	state_label_roll(l, state_cur_sec);
	l->cr[state_cur_sec % LABEL_WIN]++;
	pi = t->parent != MTRACE_THREAD_NONE ? tab_find(d, t->parent) : NO_IDX;
	edge_add(d, pi != NO_IDX ? d->thr[pi].site : NO_IDX, si);
}

void state_site_name(struct state_domain *d, const struct mtrace_event *ev)
{
	uint32_t si, ni;
	bool added;

	if (!ev->str || !ev->str_len || ev->arg == 0) {
		d->sites_bad++;
		return;
	}
	si = site_get(d, MTRACE_SITE_NAMED, ev->arg);
	if (si == NO_IDX)
		return;
	ni = state_strtab_intern(&d->site_names, ev->str, ev->str_len, &added);
	if (ni == NO_IDX) {
		d->sites_bad++;
		return;
	}
	d->sites[si].name = ni;
}

static int hex_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int parse_hex64(const char **p, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0, h;

	while ((h = hex_val((unsigned char)**p)) >= 0) {
		if (n++ == 16)
			return -1;
		v = v << 4 | (uint64_t)h;
		(*p)++;
	}
	*out = v;
	return n ? 0 : -1;
}

/* "BUILDID START END NAME": lower-case hex build-id of 2..64 bytes, hex addresses. */
void state_module_apply(struct state_domain *d, const struct mtrace_event *ev)
{
	struct gmod m;
	const char *p = ev->str;
	size_t n = 0;

	memset(&m, 0, sizeof(m));
	if (!p)
		goto bad;
	while (hex_val((unsigned char)p[0]) >= 0 && hex_val((unsigned char)p[1]) >= 0) {
		if (n == sizeof(m.id))
			goto bad;
		m.id[n++] =
		    (uint8_t)(hex_val((unsigned char)p[0]) << 4 | hex_val((unsigned char)p[1]));
		p += 2;
	}
	if (n < 2 || *p++ != ' ' || parse_hex64(&p, &m.start) || *p++ != ' ' ||
	    parse_hex64(&p, &m.end) || m.start >= m.end || (*p && *p != ' '))
		goto bad;
	m.idlen = (uint8_t)n;
	m.bias = ev->arg;
	if (*p == ' ')
		snprintf(m.name, sizeof(m.name), "%s", p + 1);
	for (uint32_t i = 0; i < d->nmods; i++)
		if (d->mods[i].start == m.start && d->mods[i].idlen == m.idlen &&
		    !memcmp(d->mods[i].id, m.id, n))
			return; /* published again (another ring, after dlopen) */
	if (d->nmods == STATE_MODULES_MAX) {
		d->modules_dropped++;
		return;
	}
	if (!d->mods)
		d->mods = xcalloc(STATE_MODULES_MAX, sizeof(*d->mods));
	d->mods[d->nmods++] = m;
	/* a site takes the first module covering it: only those no module covered can
	 * resolve differently now */
	for (uint32_t i = 0; i < d->nsites; i++) {
		struct site *s = &d->sites[i];
		if (s->tried && !s->sym && s->kind == MTRACE_SITE_PC && s->mod == NO_IDX &&
		    s->value >= m.start && s->value < m.end) {
			s->tried = false;
			if (i < d->resolve_next)
				d->resolve_next = i;
		}
	}
	return;
bad:
	d->modules_dropped++;
}

static void site_resolve(struct state_domain *d, struct site *s)
{
	struct sites_module *sm = NULL;
	struct sites_sym sym;
	uint64_t rel = s->value;

	s->tried = true;
	s->mod = NO_IDX;
	if (s->kind != MTRACE_SITE_PC)
		return;
	for (uint32_t i = 0; i < d->nmods; i++) {
		const struct gmod *m = &d->mods[i];
		if (s->value >= m->start && s->value < m->end) {
			s->mod = i;
			rel = s->value - m->bias;
			sm = sites_module_find(m->id, m->idlen, d->name);
			break;
		}
	}
	if (s->mod == NO_IDX)
		sm = sites_module_image(d->name); /* no module: the image's own addresses */
	s->rel = rel;
	if (sm && sites_resolve(sm, rel, &sym) == 0) {
		s->sym = xmalloc(sizeof(*s->sym));
		*s->sym = sym;
	}
	sites_module_put(sm);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool state_sites_waiting(const struct state_domain *d)
{
	return d->resolve_gen != d->sites_gen || d->resolve_next < d->nsites;
}

void state_sites_tick_begin(unsigned nwaiting)
{
	resolve_slice_ns = RESOLVE_NS_PER_TICK / (nwaiting ? nwaiting : 1);
	if (resolve_slice_ns < RESOLVE_NS_MIN)
		resolve_slice_ns = RESOLVE_NS_MIN;
}

bool state_sites_tick(struct state_domain *d)
{
	unsigned budget = RESOLVE_PER_TICK;
	uint64_t t0, spent = 0, share;

	if (d->resolve_gen != d->sites_gen) {
		/* what failed may succeed now; bounded: STATE_MODULES_MAX + names times */
		d->resolve_gen = d->sites_gen;
		d->resolve_next = 0;
		for (uint32_t i = 0; i < d->nsites; i++)
			if (!d->sites[i].sym)
				d->sites[i].tried = false;
	}
	if (d->resolve_next >= d->nsites)
		return false;
	if (d->resolve_debt_ns >= resolve_slice_ns) {
		d->resolve_debt_ns -= resolve_slice_ns;
		return true;
	}
	share = resolve_slice_ns - d->resolve_debt_ns;
	d->resolve_debt_ns = 0;
	t0 = mono_ns();
	while (d->resolve_next < d->nsites && budget && spent < share) {
		struct site *s = &d->sites[d->resolve_next++];
		if (!s->tried) {
			site_resolve(d, s);
			budget--;
			spent = mono_ns() - t0;
		}
	}
	if (spent > share)
		d->resolve_debt_ns = spent - share;
	return d->resolve_next < d->nsites;
}

void state_sites_free(struct state_domain *d)
{
	for (uint32_t i = 0; i < d->nsites; i++)
		free(d->sites[i].sym);
	free(d->sites);
	free(d->site_tab);
	free(d->edges);
	free(d->mods);
	strtab_free(&d->site_names);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void state_site_display(const struct state_domain *d, uint32_t si, char *buf, size_t len)
{
	const struct site *s;

	if (si == NO_IDX || si >= d->nsites) {
		snprintf(buf, len, "(root)");
		return;
	}
	s = &d->sites[si];
	if (s->kind == MTRACE_SITE_NAMED) {
		if (s->name != NO_IDX)
			snprintf(buf, len, "%s", strtab_str(&d->site_names, s->name));
		else
			snprintf(buf, len, "site#%" PRIu64, s->value);
	} else if (s->sym && s->sym->frames[0].line) {
		snprintf(buf, len, "%s (%s:%u)", s->sym->frames[0].func,
		    base_name(s->sym->frames[0].file), s->sym->frames[0].line);
	} else if (s->sym) {
		snprintf(buf, len, "%s", s->sym->frames[0].func);
	} else if (s->tried && s->mod != NO_IDX) {
		const struct gmod *m = &d->mods[s->mod];
		snprintf(buf, len, "%s+0x%" PRIx64, m->name[0] ? base_name(m->name) : "?", s->rel);
	} else {
		snprintf(buf, len, "0x%" PRIx64, s->value);
	}
}
