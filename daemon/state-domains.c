/*
 * state-domains.c - the domain table and its life cycle (discovered, attached, bad,
 * detached, gone, expired), the configuration, the timer tick that rolls the windows
 * and expires dead domains, and the stream server's read-outs by domain id.  None of
 * it runs per event except state_thread_label: state_apply gets its domain pointer
 * from the caller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "mtrace-ring.h"
#include "sites.h"
#include "state-int.h"
#include "state.h"

struct state_ctx state_ctx;

static struct mtraced_config cfg_copy;
static struct state_domain *last_dom; /* state_thread_label is called per event */

uint64_t state_now_ns(void)
{
	return clock_mono_ns();
}

/* ---- rolling windows ---- */

static void win_roll(struct win *w, uint64_t now_sec)
{
	if (now_sec <= w->sec)
		return;
	w->b[w->sec % WIN_SECS] = (uint32_t)(w->cur > UINT32_MAX ? UINT32_MAX : w->cur);
	for (uint64_t s = w->sec + 1; s < now_sec && s < w->sec + 1 + WIN_SECS; s++)
		w->b[s % WIN_SECS] = 0;
	w->sec = now_sec;
	w->cur = 0;
}

double state_win_rate(const struct win *w, uint64_t now_sec, unsigned secs)
{
	uint64_t sum = 0;

	/* complete seconds only: [now - secs, now) */
	for (uint64_t s = now_sec >= secs ? now_sec - secs : 0; s < now_sec; s++) {
		if (s + WIN_SECS <= w->sec || s > w->sec)
			continue; /* older than the window, or after the last event */
		sum += s == w->sec ? w->cur : w->b[s % WIN_SECS];
	}
	return (double)sum / secs;
}

/* ---- domains ---- */

static void domain_free_tables(struct state_domain *d)
{
	state_slab_free(d);
	free(d->past);
	free(d->tab);
	strtab_free(&d->labels);
	free(d->lstat);
	strtab_free(&d->failures);
	strtab_free(&d->counters);
	free(d->cval);
	state_sites_free(d);
	state_vcpu_free(d);
}

static void domain_free(struct state_domain *d)
{
	if (last_dom == d)
		last_dom = NULL;
	domain_free_tables(d);
	free(d);
}

static void domain_reset(struct state_domain *d)
{
	uint32_t domid = d->domid;
	char name[NAME_MAX_LEN];

	memcpy(name, d->name, sizeof(name));
	domain_free_tables(d);
	memset(d, 0, sizeof(*d));
	d->domid = domid;
	memcpy(d->name, name, sizeof(name));
	d->running = MTRACE_THREAD_NONE;
	d->running_idx = NO_IDX;
	d->free_head = NO_IDX;
	d->pending.head = d->pending.tail = NO_IDX;
	d->finished.head = d->finished.tail = NO_IDX;
	for (unsigned k = 0; k < TCACHE; k++)
		d->cache_idx[k] = NO_IDX;
	d->win.sec = state_ctx.cur_sec;
	state_tab_resize(d, 16);
	strtab_init(&d->labels, state_ctx.cfg->max_labels_per_guest);
	strtab_init(&d->failures, MAX_FAILURES);
	strtab_init(&d->counters, MAX_COUNTERS);
	state_str_cache_init(&d->label_cache);
	state_str_cache_init(&d->failure_cache);
	state_str_cache_init(&d->counter_cache);
	strtab_init(&d->site_names, state_ctx.cfg->max_sites_per_guest);
	snprintf(d->status, sizeof(d->status), "discovered");
}

struct state_domain *state_domain_find(uint32_t domid)
{
	if (last_dom && last_dom->domid == domid)
		return last_dom;
	for (unsigned i = 0; i < state_ctx.ndoms; i++)
		if (state_ctx.doms[i]->domid == domid)
			return last_dom = state_ctx.doms[i];
	return NULL;
}

struct state_domain *state_domain_get(uint32_t domid)
{
	struct state_domain *d = state_domain_find(domid);

	if (d)
		return d;
	d = xcalloc(1, sizeof(*d));
	d->domid = domid;
	domain_reset(d);
	state_ctx.doms =
	    xreallocarray(state_ctx.doms, state_ctx.ndoms + 1, sizeof(*state_ctx.doms));
	state_ctx.doms[state_ctx.ndoms++] = d;
	return d;
}

void state_domain_set_name(struct state_domain *d, const char *name)
{
	if (!strncmp(d->name, name ? name : "", sizeof(d->name) - 1))
		return;
	snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
	d->sites_gen++; /* the images configured for this name apply now */
}

void state_domain_attached(struct state_domain *d, uint32_t rings, uint32_t clock, bool legacy)
{
	/* a re-announce (resume, reload) keeps counting; a new domain with the id of a
	 * dead one starts afresh */
	if (d->gone)
		domain_reset(d);
	d->alive = true;
	d->gone = false;
	d->dead_at_ns = 0;
	d->rings = rings;
	d->clock = clock;
	d->legacy = legacy;
	snprintf(d->status, sizeof(d->status), "running");
}

void state_domain_bad(struct state_domain *d, const char *reason)
{
	if (d->gone)
		domain_reset(d);
	d->alive = false;
	d->gone = false;
	d->dead_at_ns = 0;
	snprintf(d->status, sizeof(d->status), "bad: %s", reason);
}

void state_domain_detached(struct state_domain *d, const char *why, bool gone)
{
	d->alive = false;
	d->gone = gone;
	d->dead_at_ns = state_now_ns();
	if (!d->dead_at_ns)
		d->dead_at_ns = 1;
	snprintf(d->status, sizeof(d->status), "%s", why);
}

void state_domain_forget(uint32_t domid)
{
	for (unsigned i = 0; i < state_ctx.ndoms; i++) {
		if (state_ctx.doms[i]->domid != domid)
			continue;
		domain_free(state_ctx.doms[i]);
		state_ctx.doms[i] = state_ctx.doms[--state_ctx.ndoms];
		return;
	}
}

void state_mark_gone(bool (*exists)(uint32_t domid, bool *crashed, void *arg), void *arg)
{
	for (unsigned i = 0; i < state_ctx.ndoms; i++) {
		struct state_domain *d = state_ctx.doms[i];
		bool crashed = false;

		if (d->alive || d->gone || !d->dead_at_ns || exists(d->domid, &crashed, arg))
			continue;
		d->gone = true;
		snprintf(d->status, sizeof(d->status), "%s", crashed ? "crashed" : "destroyed");
	}
}

void state_domain_add_counts(
    struct state_domain *d, uint64_t lost, uint64_t corrupt, uint64_t unknown)
{
	d->lost += lost;
	d->corrupt += corrupt;
	d->unknown += unknown;
}

void state_domain_add_wakeup(struct state_domain *d, bool ratelimited)
{
	if (ratelimited)
		d->ratelimited++;
	else
		d->wakeups++;
}

void state_domain_add_clock_sync_bad(struct state_domain *d)
{
	d->clock_sync_bad++;
}

uint64_t state_domain_events(const struct state_domain *d)
{
	return d->events;
}

uint64_t state_domain_live_threads(const struct state_domain *d)
{
	return d->live;
}

bool state_tick(uint64_t now_ns)
{
	uint64_t sec = now_ns / 1000000000u;
	bool more = false;

	state_ctx.cur_sec = sec;
	unsigned waiting = 0;
	for (unsigned i = 0; i < state_ctx.ndoms; i++)
		waiting += state_sites_waiting(state_ctx.doms[i]);
	state_sites_tick_begin(waiting);
	for (unsigned i = 0; i < state_ctx.ndoms; i++) {
		struct state_domain *d = state_ctx.doms[i];

		win_roll(&d->win, sec);
		if (state_sites_tick(d))
			more = true;
		if (d->dead_at_ns &&
		    now_ns - d->dead_at_ns >= (uint64_t)state_ctx.cfg->dead_keep_s * 1000000000u) {
			domain_free(d);
			state_ctx.doms[i--] = state_ctx.doms[--state_ctx.ndoms];
		}
	}
	return more;
}

/* ---- the stream server's read-outs ---- */

const char *state_thread_label(uint32_t domid, uint64_t thread)
{
	struct state_domain *d = state_domain_find(domid);
	uint32_t i;

	if (!d || !d->tab)
		return NULL;
	i = tab_find(d, thread);
	if (i == NO_IDX || d->thr[i].label == NO_IDX)
		return NULL;
	return strtab_str(&d->labels, d->thr[i].label);
}

void state_foreach_domain(state_domain_cb cb, void *arg)
{
	for (unsigned i = 0; i < state_ctx.ndoms; i++) {
		struct state_domain *d = state_ctx.doms[i];
		if (d->alive)
			cb(d->domid, d->name, d->rings, d->clock, d->legacy, arg);
	}
}

unsigned state_guest_count(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < state_ctx.ndoms; i++)
		n += state_ctx.doms[i]->alive;
	return n;
}

void state_init(const struct mtraced_config *cfg)
{
	cfg_copy = *cfg;
	state_ctx.cfg = &cfg_copy;
	sites_init(state_ctx.cfg);
	state_ctx.cur_sec = state_now_ns() / 1000000000u;
}

void state_reconfigure(const struct mtraced_config *cfg)
{
	/* a smaller thread cap applies as threads are created: thr_alloc evicts down to it */
	cfg_copy = *cfg;
	for (unsigned i = 0; i < state_ctx.ndoms; i++)
		state_ctx.doms[i]->labels.max = cfg->max_labels_per_guest;
}

void state_fini(void)
{
	for (unsigned i = 0; i < state_ctx.ndoms; i++)
		domain_free(state_ctx.doms[i]);
	free(state_ctx.doms);
	state_ctx.doms = NULL;
	state_ctx.ndoms = 0;
	sites_fini();
}
