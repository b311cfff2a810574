/*
 * guest.c - attaching a guest: read its xenstore announcement, check every value,
 * map its rings (header read-write, data read-only, refs taken from a checked copy of
 * the header), bind its event channel; and the reverse on withdrawal or death.
 *
 * Everything under /local/domain/<id> is written by the guest, so nothing read there
 * is trusted: numbers are strict decimals with ranges, caps bound what we map, and a
 * refusal is logged once per reason and shown as the domain's "bad: reason" status.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "config.h"
#include "guest.h"
#include "log.h"
#include "mprof.h"
#include "state.h"
#include "stream.h"

struct xenif *guests_x;
const struct mtraced_config *guests_cfg;
unsigned guests_pages_total;

static struct guest **table;
static unsigned nguests;
static struct guest **portmap;
static uint32_t portmap_len;
static uint32_t self_domid;

#define X	(guests_x->ops)
#define MAX_PORT	(1u << 20)	/* FIFO event channels go to 2^17; leave room */

struct guest *guest_find(uint32_t domid)
{
	for (unsigned i = 0; i < nguests; i++)
		if (table[i]->domid == domid)
			return table[i];
	return NULL;
}

unsigned guest_count_kind(enum guest_kind k)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nguests; i++)
		n += table[i]->kind == k;
	return n;
}

void guest_foreach(void (*fn)(struct guest *g, void *arg), void *arg)
{
	/* backwards: fn may free the guest it is given (guest_free moves the last entry,
	 * already visited, into its slot), and no other */
	for (unsigned i = nguests; i-- > 0;)
		if (i < nguests)
			fn(table[i], arg);
}

struct guest *guest_by_port(uint32_t port)
{
	return port < portmap_len ? portmap[port] : NULL;
}

static int portmap_set(uint32_t port, struct guest *g)
{
	if (port >= MAX_PORT)
		return -1;
	if (port >= portmap_len) {
		uint32_t n = portmap_len ? portmap_len : 64;
		struct guest **p;
		while (n <= port)
			n *= 2;
		p = realloc(portmap, n * sizeof(*p));
		if (!p)
			return -1;
		memset(p + portmap_len, 0, (n - portmap_len) * sizeof(*p));
		portmap = p;
		portmap_len = n;
	}
	portmap[port] = g;
	return 0;
}

static struct guest *guest_new(uint32_t domid)
{
	struct guest *g = calloc(1, sizeof(*g));
	struct guest **t;

	if (!g)
		return NULL;
	t = realloc(table, (nguests + 1) * sizeof(*t));
	if (!t) {
		free(g);
		return NULL;
	}
	table = t;
	table[nguests++] = g;
	g->domid = domid;
	g->lport = -1;
	g->sd_fresh = !state_domain_find(domid);
	g->sd = state_domain_get(domid);
	return g;
}

static void guest_free(struct guest *g)
{
	drain_forget(g);
	for (unsigned i = 0; i < nguests; i++)
		if (table[i] == g) {
			table[i] = table[--nguests];
			break;
		}
	free(g);
}

/* ---- strict parsing of guest-written values ---- */

/* Decimal without sign, spaces or leading zeros, at most max. */
static int parse_dec(const char *v, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t n = 0;

	if (!v || len == 0 || len > 10 || (len > 1 && v[0] == '0'))
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (uint64_t)(v[i] - '0');
	}
	if (n > max)
		return -1;
	*out = n;
	return 0;
}

static bool val_is(const char *v, size_t len, const char *want)
{
	return v && len == strlen(want) && !memcmp(v, want, len);
}

/* A short printable rendering of a guest value for the log. */
static const char *show(const char *v, size_t len, char *buf, size_t blen)
{
	size_t o = 0;

	if (!v)
		return "(missing)";
	buf[o++] = '"';
	for (size_t i = 0; i < len && o + 6 < blen; i++)
		o += (size_t)snprintf(buf + o, blen - o, (v[i] >= 0x20 && v[i] < 0x7f &&
			v[i] != '"' && v[i] != '\\') ? "%c" : "\\x%02x", (unsigned char)v[i]);
	if (len && o + 6 >= blen)
		o += (size_t)snprintf(buf + o, blen - o, "...");
	snprintf(buf + o, blen - o, "\"");
	return buf;
}

static char *xs_get(uint32_t tx, uint32_t domid, const char *sub, size_t *len)
{
	char path[192];

	snprintf(path, sizeof(path), "/local/domain/%" PRIu32 "/%s", domid, sub);
	*len = 0;
	return X->xs_read(guests_x, tx, path, len);
}

/* Read data/mtrace in one transaction.  0, 1 = not announced (closed/absent), -1 = bad,
 * -2 = xenstore kept failing the transaction (not the guest's fault: retry later). */
static int read_announce(uint32_t domid, struct announce *a, char *why, size_t wl)
{
	char *v = NULL, key[64], sh[64];
	uint64_t n;
	size_t len;
	uint32_t tx;
	int rc = -1, tries;

	for (tries = 0; tries < 8; tries++) {
		tx = X->xs_transaction_start(guests_x);	/* 0: read without one */
		memset(a, 0, sizeof(*a));
		rc = -1;
#define GET(k) do { free(v); v = xs_get(tx, domid, MTRACE_XS_DIR "/" k, &len); } while (0)
		GET("state");
		if (!v || val_is(v, len, "closed")) {
			rc = 1;
			goto out;
		}
		if (!val_is(v, len, "ready")) {
			snprintf(why, wl, "state: %s", show(v, len, sh, sizeof(sh)));
			goto out;
		}
		GET("version");
		if (!val_is(v, len, "1")) {
			snprintf(why, wl, "version: %s is not 1", show(v, len, sh, sizeof(sh)));
			goto out;
		}
		GET("clock");
		if (val_is(v, len, "monotonic"))
			a->clock = MTRACE_CLOCK_MONOTONIC;
		else if (val_is(v, len, "xen"))
			a->clock = MTRACE_CLOCK_XEN;
		else if (val_is(v, len, "realtime"))
			a->clock = MTRACE_CLOCK_REALTIME;
		else {
			snprintf(why, wl, "clock: %s", show(v, len, sh, sizeof(sh)));
			goto out;
		}
		GET("event-channel");
		if (parse_dec(v, len, MAX_PORT - 1, &n) || n == 0) {
			snprintf(why, wl, "event-channel: %s", show(v, len, sh, sizeof(sh)));
			goto out;
		}
		a->port = (uint32_t)n;
		GET("rings");
		if (parse_dec(v, len, MTRACE_MAX_RINGS, &n) || n == 0) {
			snprintf(why, wl, "rings: %s not in 1..%u", show(v, len, sh, sizeof(sh)),
				 MTRACE_MAX_RINGS);
			goto out;
		}
		a->rings = (uint32_t)n;
		for (uint32_t i = 0; i < a->rings; i++) {
			snprintf(key, sizeof(key), MTRACE_XS_DIR "/ring/%" PRIu32 "/ref", i);
			free(v);
			v = xs_get(tx, domid, key, &len);
			if (parse_dec(v, len, UINT32_MAX, &n)) {
				snprintf(why, wl, "ring/%u/ref: %s", i, show(v, len, sh, sizeof(sh)));
				goto out;
			}
			a->ref[i] = (uint32_t)n;
			snprintf(key, sizeof(key), MTRACE_XS_DIR "/ring/%" PRIu32 "/pages", i);
			free(v);
			v = xs_get(tx, domid, key, &len);
			if (parse_dec(v, len, MTRACE_RING_MAX_PAGES, &n) || n < MTRACE_RING_MIN_PAGES ||
			    (n & (n - 1))) {
				snprintf(why, wl, "ring/%u/pages: %s not a power of two in %u..%u", i,
					 show(v, len, sh, sizeof(sh)), MTRACE_RING_MIN_PAGES,
					 MTRACE_RING_MAX_PAGES);
				goto out;
			}
			a->pages[i] = (uint32_t)n;
		}
#undef GET
		rc = 0;
out:
		free(v);
		v = NULL;
		if (!tx)
			return rc;
		if (X->xs_transaction_end(guests_x, tx, rc != 0) == 0 || rc != 0)
			return rc;
		if (errno != EAGAIN)
			break;
	}
	snprintf(why, wl, "xenstore transaction kept failing: %s", strerror(errno));
	return -2;
}

/*
 * Log lines a guest causes (announcements, refusals, withdrawals) come out of a
 * per-domain allowance: GLOG_BURST at once, one more every GLOG_REFILL_S seconds, so
 * that a guest rewriting its xenstore keys thousands of times a second costs the
 * host's journal a line every few seconds, with a count of what was held back.
 */
#define GLOG_BURST	10
#define GLOG_REFILL_S	6
#define GLOG_SLOTS	1024	/* by domid modulo; a collision only shares an allowance */

static struct {
	uint32_t domid;
	unsigned tokens;
	uint64_t refill_ns;
	unsigned held;
	bool used;
} glog_slot[GLOG_SLOTS];

static void guest_log_at(uint32_t domid, unsigned level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void guest_log_at(uint32_t domid, unsigned level, const char *func, const char *fmt, ...)
{
	__typeof__(glog_slot[0]) *s = &glog_slot[domid % GLOG_SLOTS];
	uint64_t now = state_now_ns(), step = (uint64_t)GLOG_REFILL_S * 1000000000u;
	char line[512], held[64] = "";
	va_list ap;

	if (level > log_get_level())
		return;
	if (!s->used || s->domid != domid) {
		s->used = true;
		s->domid = domid;
		s->tokens = GLOG_BURST;
		s->refill_ns = now;
		s->held = 0;
	}
	while (s->tokens < GLOG_BURST && now - s->refill_ns >= step) {
		s->tokens++;
		s->refill_ns += step;
	}
	if (s->tokens == GLOG_BURST)
		s->refill_ns = now;
	if (s->tokens == 0) {
		s->held++;
		return;
	}
	s->tokens--;
	if (s->held)
		snprintf(held, sizeof(held), " (%u earlier lines of this domain held back)",
			 s->held);
	s->held = 0;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_msg(level, func, "%s%s", line, held);
}

#define guest_log(domid, level, ...) guest_log_at(domid, level, __func__, __VA_ARGS__)

/*
 * Whether two reasons are the same but for the values in them: digits and quoted
 * text come from the guest (or from the others' page counts), so a guest writing a
 * new value each time must not make a new reason each time.  A trailing "(...)" is
 * detail too.
 */
static bool reason_same(const char *a, const char *b)
{
	for (;;) {
		while (*a && (isdigit((unsigned char)*a) || *a == '"')) {
			if (*a++ == '"')
				while (*a && *a++ != '"')
					;
		}
		while (*b && (isdigit((unsigned char)*b) || *b == '"')) {
			if (*b++ == '"')
				while (*b && *b++ != '"')
					;
		}
		if (!strncmp(a, " (", 2) || !*a)
			return !strncmp(b, " (", 2) || !*b;
		if (*a != *b)
			return false;
		a++;
		b++;
	}
}

/*
 * Clients filter by name (-d NAME), so a name must be one the guest cannot choose:
 * /local/domain/<id>/name is the toolstack's (owner dom0, read-only for the guest) on
 * real Xen.  A name node the guest could write, or whose permissions cannot be read,
 * is not believed: the domain is called domain-<id>.
 */
static bool name_trusted(uint32_t domid)
{
	char path[64];
	unsigned num = 0;
	struct xenif_xs_perm *p;
	bool ok;

	if (!X->xs_get_perms)
		return false;
	snprintf(path, sizeof(path), "/local/domain/%" PRIu32 "/name", domid);
	p = X->xs_get_perms(guests_x, 0, path, &num);
	if (!p)
		return false;
	ok = !xenif_xs_perm_writable(p, num, domid);
	free(p);
	return ok;
}

static void read_name(struct guest *g)
{
	size_t len = 0;
	char *v = xs_get(0, g->domid, "name", &len);
	size_t i;

	if (v && !name_trusted(g->domid)) {
		if (!g->name_untrusted)
			guest_log(g->domid, LOG_LVL_WARN,
				  "domain %" PRIu32 ": its xenstore name is writable by the guest: "
				  "not used", g->domid);
		g->name_untrusted = true;
		free(v);
		v = NULL;
	}
	if (!v) {
		snprintf(g->name, sizeof(g->name), "domain-%" PRIu32, g->domid);
	} else {
		for (i = 0; i < len && i < sizeof(g->name) - 1; i++)
			g->name[i] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
		g->name[i] = 0;
	}
	free(v);
	state_domain_set_name(g->sd, g->name);
}

/* ---- attach / detach ---- */

static void unmap_rings(struct guest *g)
{
	for (unsigned i = 0; i < MTRACE_MAX_RINGS; i++) {
		struct gring *r = &g->ring[i];
		if (r->rr)
			ring_reader_free(r->rr);
		if (r->data)
			X->gnttab_unmap(guests_x, r->data, r->pages);
		if (r->hdr)
			X->gnttab_unmap(guests_x, r->hdr, 1);
		memset(r, 0, sizeof(*r));
	}
	if (g->lport >= 0) {
		portmap_set((uint32_t)g->lport, NULL);
		if (X->evtchn_unbind(guests_x, (uint32_t)g->lport) < 0)
			log_warn("domain %" PRIu32 ": unbind port %d: %s", g->domid, g->lport,
				 strerror(errno));
		g->lport = -1;
	}
	guests_pages_total -= g->pages_mapped;
	g->pages_mapped = 0;
	drain_forget(g);
}

static int map_rings(struct guest *g, const struct announce *a, char *why, size_t wl)
{
	static uint32_t refs[MTRACE_RING_MAX_PAGES];
	struct mtrace_ring_hdr hcopy;
	unsigned total = 0;
	char err[160];
	int port;

	for (uint32_t i = 0; i < a->rings; i++)
		total += 1 + a->pages[i];
	if (total > guests_cfg->max_pages_per_guest) {
		snprintf(why, wl, "%u pages announced, more than max_pages_per_guest %u", total,
			 guests_cfg->max_pages_per_guest);
		return -1;
	}
	if (guests_pages_total + total > guests_cfg->max_pages_total) {
		snprintf(why, wl, "%u pages would pass max_pages_total %u (%u mapped)", total,
			 guests_cfg->max_pages_total, guests_pages_total);
		return -1;
	}
	g->pages_mapped = total;
	guests_pages_total += total;
	for (uint32_t i = 0; i < a->rings; i++) {
		struct gring *r = &g->ring[i];

		r->hdr = X->gnttab_map(guests_x, g->domid, 1, &a->ref[i], PROT_READ | PROT_WRITE);
		if (!r->hdr) {
			snprintf(why, wl, "ring %u: cannot map header ref %" PRIu32 ": %s", i,
				 a->ref[i], strerror(errno));
			goto fail;
		}
		/* header and refs: one checked private copy, the page is never re-read */
		if (ring_hdr_copy(r->hdr, a->pages[i], &hcopy, refs, err, sizeof(err)) < 0) {
			snprintf(why, wl, "ring %u: bad header: %s", i, err);
			goto fail;
		}
		r->data = X->gnttab_map(guests_x, g->domid, a->pages[i], refs, PROT_READ);
		if (!r->data) {
			snprintf(why, wl, "ring %u: cannot map %u data pages: %s", i, a->pages[i],
				 strerror(errno));
			goto fail;
		}
		r->pages = a->pages[i];
		r->rr = ring_reader_attach_copy(r->hdr, &hcopy, r->data, a->pages[i], err,
						sizeof(err));
		if (!r->rr) {
			snprintf(why, wl, "ring %u: %s", i, err);
			goto fail;
		}
	}
	port = X->evtchn_bind_interdomain(guests_x, g->domid, a->port);
	if (port < 0) {
		snprintf(why, wl, "event-channel %" PRIu32 ": cannot bind: %s", a->port,
			 strerror(errno));
		goto fail;
	}
	g->lport = port;
	if (portmap_set((uint32_t)port, g) < 0) {
		snprintf(why, wl, "local port %d out of range", port);
		goto fail;
	}
	return 0;
fail:
	unmap_rings(g);
	return -1;
}

/* Stop tracing g (it stays in the table); DomainDown with reason if it was up. */
static void detach(struct guest *g, const char *reason)
{
	if (g->kind == GUEST_RING)
		unmap_rings(g);
	else if (g->kind == GUEST_LEGACY)
		legacy_detach(g);
	if (g->up) {
		stream_domain_down(g->domid, reason);
		g->up = false;
	}
	g->kind = GUEST_NEW;
	g->bad[0] = 0;
}

static void set_bad(struct guest *g, const char *why)
{
	if (g->kind == GUEST_RING || g->kind == GUEST_LEGACY) {
		char reason[200];
		snprintf(reason, sizeof(reason), "bad announcement: %s", why);
		if (g->kind == GUEST_RING)
			drain_final(g);
		detach(g, reason);
	}
	g->kind = GUEST_BAD;
	/* Logged once per reason: a trailing "(...)" is detail that changes from one
	 * rescan to the next (pages mapped by the others), not a new reason. */
	if (!reason_same(g->bad, why))
		guest_log(g->domid, LOG_LVL_WARN, "domain %" PRIu32 " (%s): not traced: %s",
			  g->domid, g->name, why);
	snprintf(g->bad, sizeof(g->bad), "%s", why);
	state_domain_bad(g->sd, why);
}

static void attach_rings(struct guest *g, const struct announce *a)
{
	char why[256];

	if (guest_count_kind(GUEST_RING) + guest_count_kind(GUEST_LEGACY) >= guests_cfg->max_guests) {
		snprintf(why, sizeof(why), "max_guests %u reached", guests_cfg->max_guests);
		set_bad(g, why);
		return;
	}
	if (map_rings(g, a, why, sizeof(why)) < 0) {
		set_bad(g, why);
		return;
	}
	g->kind = GUEST_RING;
	g->ann = *a;
	g->bad[0] = 0;
	state_domain_attached(g->sd, a->rings, a->clock, false);
	stream_domain_up(g->domid, g->name, a->rings, a->clock, false);
	g->up = true;
	guest_log(g->domid, LOG_LVL_INFO,
		  "domain %" PRIu32 " (%s): traced: %" PRIu32 " rings, port %" PRIu32 " -> %d, %u pages",
		  g->domid, g->name, a->rings, a->port, g->lport, g->pages_mapped);
	drain_service(g);
}

/* Whether the domain exists and is not shutting down (the domain list, not xenstore,
 * which the guest can write and the toolstack removes before the domain is gone). */
static bool domain_running(uint32_t domid, bool *crashed)
{
	struct xenif_dominfo info;
	int n = X->ctrl_domain_list(guests_x, domid, &info, 1);

	*crashed = false;
	if (n < 0)
		return true;		/* cannot tell: do not declare a death */
	if (n == 0 || info.domid != domid)
		return false;
	*crashed = info.crashed;
	return !info.dying && !info.shutdown;
}

void guest_refresh(uint32_t domid)
{
	struct guest *g = guest_find(domid);
	struct announce a;
	char why[256];
	char *refs;
	size_t rlen;
	bool crashed;
	int rc;

	if (domid == self_domid)
		return;
	if (!g) {
		/* cheap check first: most domains announce nothing */
		char *st = xs_get(0, domid, MTRACE_XS_DIR "/state", &rlen);
		char *mp = st ? NULL : xs_get(0, domid, MPROF_XS_REFS, &rlen);
		bool any = st || mp;
		free(st);
		free(mp);
		if (!any)
			return;
		g = guest_new(domid);
		if (!g) {
			log_err("domain %" PRIu32 ": out of memory", domid);
			return;
		}
	}
	read_name(g);
	rc = read_announce(domid, &a, why, sizeof(why));
	if (rc == -2) {
		/* other writers keep xenstore busy; keep what we have, the rescan retries */
		log_debug("domain %" PRIu32 ": %s", domid, why);
		if (g->kind == GUEST_NEW) {
			if (g->sd_fresh)
				state_domain_forget(domid);
			guest_free(g);
		}
		return;
	}
	if (rc == 0) {
		if (g->kind == GUEST_RING && !memcmp(&g->ann, &a, sizeof(a)))
			return;			/* unchanged: a spurious or unrelated watch */
		if (g->kind == GUEST_RING) {
			guest_log(domid, LOG_LVL_INFO, "domain %" PRIu32 " (%s): re-announced, remapping",
				  domid, g->name);
			drain_final(g);
			detach(g, "reannounced");
		} else if (g->kind == GUEST_LEGACY) {
			detach(g, "withdrawn");
		}
		attach_rings(g, &a);
		return;
	}
	if (rc < 0) {
		set_bad(g, why);
		return;
	}
	/* data/mtrace withdrawn or absent: a legacy buffer, or nothing */
	refs = xs_get(0, domid, MPROF_XS_REFS, &rlen);
	if (refs) {
		if (g->kind == GUEST_RING) {
			drain_final(g);
			detach(g, "withdrawn");
		}
		if (g->kind != GUEST_LEGACY || !legacy_same(g, refs, rlen)) {
			if (g->kind == GUEST_LEGACY)
				detach(g, "reannounced");
			bool full = guest_count_kind(GUEST_RING) + guest_count_kind(GUEST_LEGACY) >=
				    guests_cfg->max_guests;
			if (full)
				snprintf(why, sizeof(why), "max_guests %u reached",
					 guests_cfg->max_guests);
			if (full || legacy_attach(g, refs, rlen, why, sizeof(why)) < 0) {
				set_bad(g, why);
			} else {
				g->kind = GUEST_LEGACY;
				g->bad[0] = 0;
				g->up = true;
			}
		}
		free(refs);
		return;
	}
	/* nothing announced any more: withdrawn, or is the domain going away? */
	if (!domain_running(domid, &crashed)) {
		guest_death(g, crashed ? "crashed" : "destroyed");
		return;
	}
	if (g->kind == GUEST_RING)
		drain_final(g);
	if (g->kind != GUEST_NEW)
		guest_log(domid, LOG_LVL_INFO, "domain %" PRIu32 " (%s): withdrawn", domid, g->name);
	detach(g, "withdrawn");
	state_domain_detached(g->sd, "withdrawn", false);
	guest_free(g);
}

void guest_death(struct guest *g, const char *reason)
{
	if (g->kind == GUEST_RING)
		drain_final(g);
	else if (g->kind == GUEST_LEGACY)
		legacy_poll(g);
	log_info("domain %" PRIu32 " (%s): %s", g->domid, g->name, reason);
	detach(g, reason);
	state_domain_detached(g->sd, reason, true);
	guest_free(g);
}

void guest_release_all(void)
{
	while (nguests) {
		struct guest *g = table[nguests - 1];
		if (g->kind == GUEST_RING)
			unmap_rings(g);
		else if (g->kind == GUEST_LEGACY)
			legacy_detach(g);
		g->kind = GUEST_NEW;
		guest_free(g);
	}
	free(table);
	table = NULL;
	free(portmap);
	portmap = NULL;
	portmap_len = 0;
}

int guests_init(struct event_base *base, struct xenif *x, const struct mtraced_config *cfg,
		char *err, size_t errlen)
{
	guests_x = x;
	guests_cfg = cfg;
	if (X->xs_get_domid(x, &self_domid) < 0)
		self_domid = 0;
	if (drain_init(base, err, errlen) < 0)
		return -1;
	return discover_init(base, err, errlen);
}

void guests_reconfigure(const struct mtraced_config *cfg)
{
	guests_cfg = cfg;
	drain_reconfigure();
}

void guests_fini(void)
{
	discover_fini();
	guest_release_all();
	drain_fini();
}
