/*
 * clockmap.c - the tables of one timeline (clockmap.h): the current clock map of every
 * (domain, clock), the event-channel links Xen told of, and the strict parser of a
 * guest's clock-sync announcement.  Arrays searched linearly: a handful of entries per
 * traced domain, looked at once a second and when a client subscribes, never per event.
 */
#include <stdlib.h>
#include <string.h>

#include "clockmap.h"

#define EVLINKS_MAX 8192 /* links kept in all: a client is told of these */

static struct {
	struct clockmap_rec *maps;
	size_t nmaps, capmaps;
	struct evlink *links;
	size_t nlinks, caplinks;
} T;

static uint64_t absdiff(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

static struct clockmap_rec *find(uint32_t domid, uint32_t clock)
{
	for (size_t i = 0; i < T.nmaps; i++)
		if (T.maps[i].domid == domid && T.maps[i].clock == clock)
			return &T.maps[i];
	return NULL;
}

const struct clockmap_rec *clockmap_get(uint32_t domid, uint32_t clock)
{
	return find(domid, clock);
}

bool clockmap_offer(uint32_t domid, uint32_t clock, int64_t offset_ns, uint64_t uncertainty_ns,
    enum clockmap_source source, int64_t now_host_ns, struct clockmap_rec *out)
{
	struct clockmap_rec *cur = find(domid, clock);

	if (cur && cur->source == source) {
		uint64_t limit =
		    cur->uncertainty_ns > uncertainty_ns ? cur->uncertainty_ns : uncertainty_ns;
		if (limit < CLOCKMAP_MOVE_NS)
			limit = CLOCKMAP_MOVE_NS;
		/* a measure at least twice as narrow (by CLOCKMAP_MOVE_NS or more) is a record
		 * too: a first measure taken while dom0 was busy (a wide bracket of its Xen
		 * time) is refined, not kept for good; log2 of the widths bounds how often */
		bool narrower = uncertainty_ns <= cur->uncertainty_ns / 2 &&
		    cur->uncertainty_ns - uncertainty_ns >= CLOCKMAP_MOVE_NS;
		/* unknown maps never move: their uncertainty is everything */
		if (source == CLOCKMAP_UNKNOWN ||
		    (absdiff(offset_ns, cur->offset_ns) <= limit && !narrower))
			return false;
	}
	if (!cur) {
		if (T.nmaps == T.capmaps) {
			size_t cap = T.capmaps ? T.capmaps * 2 : 16;
			struct clockmap_rec *m = realloc(T.maps, cap * sizeof(*m));
			if (!m)
				return false; /* out of memory: the domain stays unmapped */
			T.maps = m;
			T.capmaps = cap;
		}
		cur = &T.maps[T.nmaps++];
		*cur = (struct clockmap_rec){ .domid = domid, .clock = clock };
	}
	cur->offset_ns = offset_ns;
	cur->uncertainty_ns = uncertainty_ns;
	cur->source = source;
	cur->since_host_ns = now_host_ns;
	cur->seq++;
	*out = *cur;
	return true;
}

void clockmap_forget(uint32_t domid)
{
	size_t k = 0;

	for (size_t i = 0; i < T.nmaps; i++)
		if (T.maps[i].domid != domid)
			T.maps[k++] = T.maps[i];
	T.nmaps = k;
	k = 0;
	/* the other end's link names a port that is gone too: Xen made it unbound */
	for (size_t i = 0; i < T.nlinks; i++)
		if (T.links[i].domid != domid && T.links[i].remote_domid != domid)
			T.links[k++] = T.links[i];
	T.nlinks = k;
}

void clockmap_foreach(void (*cb)(const struct clockmap_rec *r, void *arg), void *arg)
{
	for (size_t i = 0; i < T.nmaps; i++)
		cb(&T.maps[i], arg);
}

/* One decimal number below limit (inclusive) at *p, moving *p past it. */
static bool number(const char **p, const char *end, uint64_t limit, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (s == end || *s < '0' || *s > '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (limit - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return true;
}

int clock_sync_parse(const char *s, size_t len, struct clock_sync *cs)
{
	const char *p = s, *end;
	uint64_t v[4];
	const uint64_t lim[4] = { UINT64_MAX, INT64_MAX, INT64_MAX, CLOCK_SYNC_WIDTH_NS };

	if (!s || len == 0 || len > CLOCK_SYNC_MAX)
		return -1;
	end = s + len;
	/* xenstore values may come with the writer's NUL or a newline at the end */
	if (end[-1] == '\0' || end[-1] == '\n')
		end--;
	for (int i = 0; i < 4; i++) {
		if (i > 0) {
			if (p == end || *p != ' ')
				return -1;
			p++;
		}
		if (!number(&p, end, lim[i], &v[i]))
			return -1;
	}
	if (p != end)
		return -1;
	*cs = (struct clock_sync){ v[0], v[1], v[2], v[3] };
	return 0;
}

bool evlink_note(const struct evlink *l)
{
	for (size_t i = 0; i < T.nlinks; i++) {
		struct evlink *o = &T.links[i];
		if (o->domid != l->domid || o->port != l->port)
			continue;
		if (o->remote_domid == l->remote_domid && o->remote_port == l->remote_port)
			return false;
		*o = *l; /* the port was bound again, elsewhere */
		return true;
	}
	/* past the cap (or out of memory) it is still sent, only not kept for later clients */
	if (T.nlinks == EVLINKS_MAX)
		return true;
	if (T.nlinks == T.caplinks) {
		size_t cap = T.caplinks ? T.caplinks * 2 : 64;
		struct evlink *m = realloc(T.links, cap * sizeof(*m));
		if (!m)
			return true;
		T.links = m;
		T.caplinks = cap;
	}
	T.links[T.nlinks++] = *l;
	return true;
}

void evlink_foreach(void (*cb)(const struct evlink *l, void *arg), void *arg)
{
	for (size_t i = 0; i < T.nlinks; i++)
		cb(&T.links[i], arg);
}

void clockmap_fini(void)
{
	free(T.maps);
	free(T.links);
	memset(&T, 0, sizeof(T));
}
