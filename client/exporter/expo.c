/*
 * expo.c - a Stats message in the Prometheus text exposition format (0.0.4) or
 * OpenMetrics 1.0.0.
 *
 * Every string a guest can influence (domain names, labels, counter names, the
 * daemon's state sentence) goes through label_value(): backslash, double quote and
 * line feed escaped as both formats require, bytes that are not UTF-8 replaced by '?'
 * (as mtraced does), so the exposition is valid whatever the guest wrote.  Escaping is
 * one-to-one, but replacing bytes is not: two guest strings may come out the same.
 * Each domain therefore keeps the first `caps->labels` distinct label values (and
 * `caps->counters` counter names) in the daemon's order, which is the order they were
 * first seen, so the set is stable from one scrape to the next; everything else -
 * labels past the cap, values that collide after replacement, and a guest's own label
 * called "other" - is summed into one label="other" series and counted in
 * mtrace_domain_labels_folded (mtrace_domain_counters_folded).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "expo-sb.h"
#include "exporter.h"
#include "json.h"
#include "mtrace-ring.h"
#include "ring-reader.h"
#include "strtab.h"
#include "timeline.h"

#define FOLD_NAME "other"

/* ---- the per-domain view: what is shown by name, what is folded ---- */

struct series {
	size_t off, len;             /* escaped value in the string store */
	const Mtrace__LabelStats *l; /* labels */
	int64_t value;               /* counters */
};

struct fold {
	size_t n; /* how many were folded */
	uint64_t count, current, live, life_sum_ns, life_count;
	int64_t value; /* counters: the folded values' sum */
};

struct dview {
	const Mtrace__DomainStats *d;
	size_t id_off, id_len; /* domain="...",domid="N" */
	struct series *lab, *ctr;
	size_t nlab, nctr, lab_cap, ctr_cap;
	struct fold lfold, cfold;
	struct strtab shown; /* the escaped values shown by name (of labels, then counters) */
};

struct render {
	struct sb out, str;
	enum expo_format fmt;
	const struct expo_caps *caps;
	struct dview *v;
	size_t nv, last; /* last: view_of's previous answer */
};

/*
 * Escape str into the string store; true (and the series' place filled) when it is to
 * be shown by name, false when it folds; `n` series of its kind are shown already.
 */
static bool admit(
    struct render *r, struct dview *v, size_t n, unsigned cap, const char *str, struct series *out)
{
	size_t off = r->str.n, len;
	bool added = false;

	if (n >= cap)
		return false;
	label_value(&r->str, str);
	len = r->str.n - off;
	if (len == strlen(FOLD_NAME) && !memcmp(r->str.p + off, FOLD_NAME, len))
		goto fold;
	strtab_intern(&v->shown, r->str.p + off, len, &added);
	if (!added)
		goto fold;
	out->off = off;
	out->len = len;
	return true;
fold:
	r->str.n = off;
	return false;
}

static void view_counters(struct render *r, struct dview *v)
{
	const Mtrace__DomainStats *d = v->d;
	unsigned cap = r->caps->counters;
	size_t want = d->n_counters < cap ? d->n_counters : cap;

	strtab_init(&v->shown, UINT32_MAX - 1);
	v->ctr = calloc(want ? want : 1, sizeof(*v->ctr));
	if (!v->ctr)
		abort();
	for (size_t i = 0; i < d->n_counters; i++) {
		struct series *c = &v->ctr[v->nctr];
		if (admit(r, v, v->nctr, cap, d->counters[i]->name, c)) {
			c->value = d->counters[i]->value;
			v->nctr++;
		} else {
			v->cfold.n++;
			v->cfold.value =
			    (int64_t)((uint64_t)v->cfold.value + (uint64_t)d->counters[i]->value);
		}
	}
}

static struct dview *view_of(struct render *r, uint32_t domid)
{
	/* Stats lists each domain's labels together: try the previous answer first. */
	if (r->last < r->nv && r->v[r->last].d->domid == domid)
		return &r->v[r->last];
	for (size_t i = 0; i < r->nv; i++)
		if (r->v[i].d->domid == domid)
			return &r->v[r->last = i];
	return NULL;
}

static void build_views(struct render *r, const Mtrace__Stats *s)
{
	char tmp[32];

	r->v = calloc(s->n_domains ? s->n_domains : 1, sizeof(*r->v));
	if (!r->v)
		abort();
	for (size_t i = 0; i < s->n_domains; i++) {
		struct dview *v = &r->v[r->nv];
		if (!s->domains[i]->alive) /* a destroyed guest's series end with it */
			continue;
		v->d = s->domains[i];
		v->id_off = r->str.n;
		sb_str(&r->str, "domain=\"");
		label_value(&r->str, v->d->name);
		snprintf(tmp, sizeof(tmp), "\",domid=\"%u\"", v->d->domid);
		sb_str(&r->str, tmp);
		v->id_len = r->str.n - v->id_off;
		view_counters(r, v);
		r->nv++;
	}
	/* labels: count per domain first, so that each table is sized once */
	for (size_t i = 0; i < s->n_labels; i++) {
		struct dview *v = view_of(r, s->labels[i]->domid);
		if (v)
			v->lab_cap++;
	}
	for (size_t i = 0; i < r->nv; i++) {
		struct dview *v = &r->v[i];
		if (v->lab_cap > r->caps->labels)
			v->lab_cap = r->caps->labels;
		strtab_reset(&v->shown);
		v->lab = calloc(v->lab_cap ? v->lab_cap : 1, sizeof(*v->lab));
		if (!v->lab)
			abort();
	}
	for (size_t i = 0; i < s->n_labels; i++) {
		const Mtrace__LabelStats *l = s->labels[i];
		struct dview *v = view_of(r, l->domid);
		struct series *e;

		if (!v)
			continue;
		e = &v->lab[v->nlab];
		if (admit(r, v, v->nlab, (unsigned)v->lab_cap, l->label, e)) {
			e->l = l;
			v->nlab++;
		} else {
			v->lfold.n++;
			v->lfold.count += l->count;
			v->lfold.live += l->live;
			v->lfold.current += l->current;
			v->lfold.life_sum_ns += l->lifetime_sum_ns;
			v->lfold.life_count += l->lifetime_count;
		}
	}
}

static void free_views(struct render *r)
{
	for (size_t i = 0; i < r->nv; i++) {
		free(r->v[i].lab);
		free(r->v[i].ctr);
		strtab_free(&r->v[i].shown);
	}
	free(r->v);
}

/* ---- writing ---- */

enum kind {
	COUNTER,
	GAUGE,
	SUMMARY
};

/* HELP and TYPE (and UNIT): `name` is the family's name without _total. */
static void family(
    struct render *r, const char *name, enum kind k, const char *unit, const char *help)
{
	static const char *const types[] = { "counter", "gauge", "summary" };
	const char *suffix = k == COUNTER && r->fmt == EXPO_TEXT ? "_total" : "";
	struct sb *b = &r->out;

	sb_str(b, "# HELP ");
	sb_str(b, name);
	sb_str(b, suffix);
	sb_add(b, " ", 1);
	sb_str(b, help);
	sb_str(b, "\n# TYPE ");
	sb_str(b, name);
	sb_str(b, suffix);
	sb_add(b, " ", 1);
	sb_str(b, types[k]);
	sb_add(b, "\n", 1);
	if (unit && r->fmt == EXPO_OPENMETRICS) {
		sb_str(b, "# UNIT ");
		sb_str(b, name);
		sb_add(b, " ", 1);
		sb_str(b, unit);
		sb_add(b, "\n", 1);
	}
}

/* name{domain="..",domid="N"<extra>} - the value follows */
static void sample_start(struct render *r, const char *name, const struct dview *v)
{
	sb_str(&r->out, name);
	sb_add(&r->out, "{", 1);
	sb_add(&r->out, r->str.p + v->id_off, v->id_len);
}

static void sample_label(struct render *r, const char *key, const char *esc, size_t len)
{
	sb_add(&r->out, ",", 1);
	sb_str(&r->out, key);
	sb_add(&r->out, "=\"", 2);
	sb_add(&r->out, esc, len);
	sb_add(&r->out, "\"", 1);
}

static void sample_u64(struct render *r, uint64_t v)
{
	sb_add(&r->out, "} ", 2);
	sb_u64(&r->out, v);
	sb_add(&r->out, "\n", 1);
}

static const struct {
	const char *name, *help;
	enum kind kind;
	size_t off;
} domain_u64[] = {
	{ "mtrace_domain_lost_events",
	    "Events overwritten in the guest's rings before mtraced read them.", COUNTER,
	    offsetof(Mtrace__DomainStats, lost) },
	{ "mtrace_domain_corrupt_records", "Records or ring windows mtraced rejected as corrupt.",
	    COUNTER, offsetof(Mtrace__DomainStats, corrupt) },
	{ "mtrace_domain_unknown_records", "Records with ops mtraced does not know, skipped.",
	    COUNTER, offsetof(Mtrace__DomainStats, unknown) },
	{ "mtrace_domain_threads_live", "Threads of the guest still pending.", GAUGE,
	    offsetof(Mtrace__DomainStats, live_threads) },
	{ "mtrace_domain_threads_created", "Threads the guest created.", COUNTER,
	    offsetof(Mtrace__DomainStats, threads_total) },
	{ "mtrace_domain_threads_ended",
	    "Threads of the guest no longer pending (docs/figures.md).", COUNTER,
	    offsetof(Mtrace__DomainStats, threads_ended) },
	{ "mtrace_domain_threads_labelled",
	    "Threads of the guest given a label at least once, kept or dropped.", COUNTER,
	    offsetof(Mtrace__DomainStats, threads_labelled) },
	{ "mtrace_domain_threads_evicted",
	    "Finished threads mtraced forgot to stay within its thread cap.", COUNTER,
	    offsetof(Mtrace__DomainStats, threads_evicted) },
	{ "mtrace_domain_wakeups", "Event-channel wake-ups mtraced served for the guest.", COUNTER,
	    offsetof(Mtrace__DomainStats, wakeups) },
	{ "mtrace_domain_labels_dropped",
	    "Label events mtraced dropped: the guest had max_labels_per_guest distinct labels "
	    "already, not this one.",
	    COUNTER, offsetof(Mtrace__DomainStats, labels_dropped) },
	{ "mtrace_domain_counters_dropped",
	    "Counter events mtraced dropped: the guest had 256 counter names already.", COUNTER,
	    offsetof(Mtrace__DomainStats, counters_dropped) },
	{ "mtrace_domain_wakeups_deferred", "Wake-ups deferred by mtraced's storm limiter.",
	    COUNTER, offsetof(Mtrace__DomainStats, ratelimited) },
};

static void write_domains(struct render *r)
{
	char name[96];

	family(r, "mtrace_domain_events", COUNTER, NULL,
	    "Events decoded from the guest's rings, by op.");
	for (size_t i = 0; i < r->nv; i++) {
		const struct dview *v = &r->v[i];
		for (size_t k = 0; k < v->d->n_op_events; k++) {
			const Mtrace__OpEvents *o = v->d->op_events[k];
			const char *op = mtrace_op_name(o->op);
			char num[16];
			if (!op) {
				snprintf(num, sizeof(num), "op_%u", o->op);
				op = num;
			}
			sample_start(r, "mtrace_domain_events_total", v);
			sample_label(r, "op", op, strlen(op));
			sample_u64(r, o->events);
		}
	}
	for (size_t f = 0; f < sizeof(domain_u64) / sizeof(domain_u64[0]); f++) {
		family(r, domain_u64[f].name, domain_u64[f].kind, NULL, domain_u64[f].help);
		snprintf(name, sizeof(name), "%s%s", domain_u64[f].name,
		    domain_u64[f].kind == COUNTER ? "_total" : "");
		for (size_t i = 0; i < r->nv; i++) {
			sample_start(r, name, &r->v[i]);
			sample_u64(
			    r, *(const uint64_t *)((const char *)r->v[i].d + domain_u64[f].off));
		}
	}
	family(r, "mtrace_domain_rings", GAUGE, NULL, "Trace rings the guest shares with dom0.");
	for (size_t i = 0; i < r->nv; i++) {
		sample_start(r, "mtrace_domain_rings", &r->v[i]);
		sample_u64(r, r->v[i].d->rings);
	}
	family(r, "mtrace_domain_legacy", GAUGE, NULL,
	    "1 for a mirage-profile buffer (snapshot loss semantics), 0 for mtrace rings.");
	for (size_t i = 0; i < r->nv; i++) {
		sample_start(r, "mtrace_domain_legacy", &r->v[i]);
		sample_u64(r, r->v[i].d->legacy ? 1 : 0);
	}
	family(r, "mtrace_domain_info", GAUGE, NULL,
	    "Always 1; state is mtraced's word for the guest.");
	for (size_t i = 0; i < r->nv; i++) {
		size_t off = r->str.n;
		label_value(&r->str, r->v[i].d->state);
		sample_start(r, "mtrace_domain_info", &r->v[i]);
		sample_label(r, "state", r->str.p + off, r->str.n - off);
		sample_u64(r, 1);
		r->str.n = off;
	}
	family(r, "mtrace_domain_labels_folded", GAUGE, NULL,
	    "Labels summed into label other: past the cap, equal once escaped, or named other.");
	for (size_t i = 0; i < r->nv; i++) {
		sample_start(r, "mtrace_domain_labels_folded", &r->v[i]);
		sample_u64(r, r->v[i].lfold.n);
	}
	family(r, "mtrace_domain_counters_folded", GAUGE, NULL,
	    "Guest counters summed into the counter other series, as for labels.");
	for (size_t i = 0; i < r->nv; i++) {
		sample_start(r, "mtrace_domain_counters_folded", &r->v[i]);
		sample_u64(r, r->v[i].cfold.n);
	}
}

static void label_sample(
    struct render *r, const char *name, const struct dview *v, const struct series *e)
{
	sample_start(r, name, v);
	if (e)
		sample_label(r, "label", r->str.p + e->off, e->len);
	else
		sample_label(r, "label", FOLD_NAME, strlen(FOLD_NAME));
}

static void write_labels(struct render *r)
{
	static const char *const q[] = { "0.5", "0.99" };

	/* count and current are two meanings of "threads with this label" (docs/figures.md) */
	static const struct {
		const char *family, *sample, *help;
		enum kind kind;
	} lf[] = {
		{ "mtrace_label_threads_created", "mtrace_label_threads_created_total",
		    "Threads ever given this label.", COUNTER },
		{ "mtrace_label_threads_current", "mtrace_label_threads_current",
		    "Threads whose current (last) label this is.", GAUGE },
		{ "mtrace_label_threads_live", "mtrace_label_threads_live",
		    "Pending threads whose current label this is.", GAUGE },
	};
	for (size_t f = 0; f < sizeof(lf) / sizeof(lf[0]); f++) {
		family(r, lf[f].family, lf[f].kind, NULL, lf[f].help);
		for (size_t i = 0; i < r->nv; i++) {
			const struct dview *v = &r->v[i];
			for (size_t k = 0; k < v->nlab; k++) {
				const Mtrace__LabelStats *l = v->lab[k].l;
				label_sample(r, lf[f].sample, v, &v->lab[k]);
				sample_u64(r, f == 0 ? l->count : f == 1 ? l->current : l->live);
			}
			if (v->lfold.n) {
				label_sample(r, lf[f].sample, v, NULL);
				sample_u64(r,
				    f == 0       ? v->lfold.count
				        : f == 1 ? v->lfold.current
				                 : v->lfold.live);
			}
		}
	}
	family(r, "mtrace_label_thread_lifetime_seconds", SUMMARY, "seconds",
	    "Lifetime of resolved threads with this label, guest clock (other: no quantiles).");
	for (size_t i = 0; i < r->nv; i++) {
		const struct dview *v = &r->v[i];
		for (size_t k = 0; k < v->nlab; k++) {
			const Mtrace__LabelStats *l = v->lab[k].l;
			if (l->lifetime_count) {
				uint64_t qv[2] = { l->lifetime_p50_ns, l->lifetime_p99_ns };
				for (int j = 0; j < 2; j++) {
					label_sample(r, "mtrace_label_thread_lifetime_seconds", v,
					    &v->lab[k]);
					sample_label(r, "quantile", q[j], strlen(q[j]));
					sb_add(&r->out, "} ", 2);
					sb_ns_as_s(&r->out, qv[j]);
					sb_add(&r->out, "\n", 1);
				}
			}
			label_sample(r, "mtrace_label_thread_lifetime_seconds_sum", v, &v->lab[k]);
			sb_add(&r->out, "} ", 2);
			sb_ns_as_s(&r->out, l->lifetime_sum_ns);
			sb_add(&r->out, "\n", 1);
			label_sample(
			    r, "mtrace_label_thread_lifetime_seconds_count", v, &v->lab[k]);
			sample_u64(r, l->lifetime_count);
		}
		if (v->lfold.n) {
			label_sample(r, "mtrace_label_thread_lifetime_seconds_sum", v, NULL);
			sb_add(&r->out, "} ", 2);
			sb_ns_as_s(&r->out, v->lfold.life_sum_ns);
			sb_add(&r->out, "\n", 1);
			label_sample(r, "mtrace_label_thread_lifetime_seconds_count", v, NULL);
			sample_u64(r, v->lfold.life_count);
		}
	}
}

static void write_counters(struct render *r)
{
	family(r, "mtrace_guest_value", GAUGE, NULL,
	    "A counter the guest keeps (increase/counter events), by name.");
	for (size_t i = 0; i < r->nv; i++) {
		const struct dview *v = &r->v[i];
		for (size_t k = 0; k <= v->nctr; k++) {
			int64_t val;
			if (k == v->nctr && !v->cfold.n)
				break;
			sample_start(r, "mtrace_guest_value", v);
			if (k < v->nctr) {
				sample_label(r, "counter", r->str.p + v->ctr[k].off, v->ctr[k].len);
				val = v->ctr[k].value;
			} else {
				sample_label(r, "counter", FOLD_NAME, strlen(FOLD_NAME));
				val = v->cfold.value;
			}
			sb_add(&r->out, "} ", 2);
			sb_i64(&r->out, val);
			sb_add(&r->out, "\n", 1);
		}
	}
}

/* Each vCPU's time in each runstate since mtraced's figures for it began (issue 38). */
static void write_vcpus(struct render *r)
{
	static const char *const st[] = { "running", "runnable", "blocked", "offline" };
	char num[16];

	family(r, "mtrace_vcpu_seconds", COUNTER, "seconds",
	    "Time the guest's vCPU spent running, runnable (waiting for a physical CPU: "
	    "steal), blocked or offline, as the hypervisor scheduled it.");
	for (size_t i = 0; i < r->nv; i++)
		for (size_t k = 0; k < r->v[i].d->n_vcpus; k++) {
			const Mtrace__VcpuStats *c = r->v[i].d->vcpus[k];
			uint64_t ns[4] = { c->running_ns, c->runnable_ns, c->blocked_ns,
				c->offline_ns };
			snprintf(num, sizeof(num), "%u", c->vcpu);
			for (int j = 0; j < 4; j++) {
				sample_start(r, "mtrace_vcpu_seconds_total", &r->v[i]);
				sample_label(r, "vcpu", num, strlen(num));
				sample_label(r, "state", st[j], strlen(st[j]));
				sb_add(&r->out, "} ", 2);
				sb_ns_as_s(&r->out, ns[j]);
				sb_add(&r->out, "\n", 1);
			}
		}
}

/*
 * How each domain's clock lies on the host timeline (dom0's CLOCK_REALTIME; issue 37):
 * the clock map in force for each clock its batches carry, labelled with that clock and
 * the map's source.  A clock not on the timeline (source unknown) has no offset and an
 * uncertainty of +Inf.
 */
static void write_clocks(struct render *r, struct tl *tl)
{
	static const char *const clocks[] = { [MTRACE_CLOCK_MONOTONIC] = "monotonic",
		[MTRACE_CLOCK_XEN] = "xen",
		[MTRACE_CLOCK_REALTIME] = "realtime" };
	static const struct {
		const char *name, *sample, *unit, *help;
		enum kind kind;
	} fam[] = {
		{ "mtrace_clock_offset_seconds", "mtrace_clock_offset_seconds", "seconds",
		    "Added to the guest clock's time to put its events on the host timeline "
		    "(dom0's CLOCK_REALTIME), by the clock map in force.",
		    GAUGE },
		{ "mtrace_clock_uncertainty_seconds", "mtrace_clock_uncertainty_seconds", "seconds",
		    "Half-width of the interval the clock's offset is known to; +Inf when the "
		    "clock is not on the host timeline.",
		    GAUGE },
		{ "mtrace_clock_maps", "mtrace_clock_maps_total", NULL,
		    "Clock maps mtraced told for the clock since the domain was attached; each "
		    "after the first is a change (an NTP step, a migration, a new announcement).",
		    COUNTER },
	};

	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		family(r, fam[f].name, fam[f].kind, fam[f].unit, fam[f].help);
		for (size_t i = 0; i < r->nv; i++)
			for (uint32_t k = MTRACE_CLOCK_MONOTONIC; k <= MTRACE_CLOCK_REALTIME; k++) {
				const Mtrace__ClockMap *m =
				    tl_clock_last(tl_clock(tl, NULL, r->v[i].d->domid, k));
				const char *src = m ? json_clock_source(m->source) : NULL;
				bool known = m && m->source != MTRACE__CLOCK_MAP__SOURCE__UNKNOWN;
				if (!m || (f == 0 && !known))
					continue;
				sample_start(r, fam[f].sample, &r->v[i]);
				sample_label(r, "clock", clocks[k], strlen(clocks[k]));
				sample_label(r, "source", src, strlen(src));
				sb_add(&r->out, "} ", 2);
				if (f == 0)
					sb_sns_as_s(&r->out, m->offset_ns);
				else if (f == 2)
					sb_u64(&r->out, m->seq);
				else if (known)
					sb_ns_as_s(&r->out, m->uncertainty_ns);
				else
					sb_str(&r->out, "+Inf");
				sb_add(&r->out, "\n", 1);
			}
	}
}

static void plain(struct render *r, const char *name, uint64_t v)
{
	sb_str(&r->out, name);
	sb_add(&r->out, " ", 1);
	sb_u64(&r->out, v);
	sb_add(&r->out, "\n", 1);
}

static void write_self(struct render *r, const Mtrace__Stats *s, const struct expo_self *self)
{
	family(r, "mtrace_up", GAUGE, NULL,
	    "1 while the exporter is connected to mtraced and receiving statistics.");
	plain(r, "mtrace_up", self->up && s ? 1 : 0);
	family(r, "mtrace_exporter_connects", COUNTER, NULL,
	    "Sessions the exporter opened with mtraced.");
	plain(r, "mtrace_exporter_connects_total", self->connects);
	if (self->stats_age_s >= 0) {
		family(r, "mtrace_exporter_stats_age_seconds", GAUGE, "seconds",
		    "Age of the statistics shown.");
		sb_str(&r->out, "mtrace_exporter_stats_age_seconds ");
		sb_double(&r->out, self->stats_age_s);
		sb_add(&r->out, "\n", 1);
	}
	if (s) {
		double rate = 0;
		for (size_t i = 0; i < r->nv; i++)
			rate += r->v[i].d->rate_1s;
		family(r, "mtrace_daemon_clients", GAUGE, NULL, "Clients connected to mtraced.");
		plain(r, "mtrace_daemon_clients", s->clients);
		family(r, "mtrace_daemon_guests", GAUGE, NULL, "Guests mtraced is tracing.");
		plain(r, "mtrace_daemon_guests", r->nv);
		family(r, "mtrace_daemon_events_per_second", GAUGE, NULL,
		    "Events mtraced decoded over the last second, all guests.");
		sb_str(&r->out, "mtrace_daemon_events_per_second ");
		sb_double(&r->out, rate);
		sb_add(&r->out, "\n", 1);
	}
}

int expo_render(struct evbuffer *out, enum expo_format fmt, const Mtrace__Stats *s,
    const struct expo_self *self, const struct expo_caps *caps)
{
	struct render r = { .fmt = fmt, .caps = caps };
	int rc;

	if (s)
		build_views(&r, s);
	write_self(&r, s, self);
	if (s) {
		write_domains(&r);
		write_labels(&r);
		write_counters(&r);
		write_vcpus(&r);
		if (self->clocks)
			write_clocks(&r, self->clocks);
	}
	if (fmt == EXPO_OPENMETRICS)
		sb_str(&r.out, "# EOF\n");
	free_views(&r);
	free(r.str.p);
	rc = evbuffer_add(out, r.out.p, r.out.n);
	free(r.out.p);
	return rc;
}
