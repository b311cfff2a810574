/*
 * stream-shm.c - shared-memory regions for the local clients that ask for them
 * (docs/stream-protocol.md, "Shared memory").  A region is a sealed memfd: its size
 * cannot change (F_SEAL_SHRINK, F_SEAL_GROW) and, once mtraced has mapped it, nobody
 * can map it writable or write to it (F_SEAL_FUTURE_WRITE), so the clients' mappings
 * are read-only and never fault.  It is written like a flight recorder: a reader that
 * falls behind by a whole region loses the records overwritten, counted from the
 * records' event counts on its side; mtraced never waits for a reader.
 *
 * Readers tell us their position (SharedRead): with wait, they want one wake-up when
 * there is more.  Wake-ups are held to one per client_coalesce_us a region: at
 * millions of events a second each one costs both sides a system call and a context
 * switch, and the region holds far more than that long's events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "shm-ring.h"
#include "stream-blob.h"
#include "stream-shm.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

struct shm_member {
	struct stream_client *c;
	uint64_t pos;      /* the last position it reported */
	uint64_t overruns; /* reports of a position already overwritten */
	bool wait;
};

struct stream_shm {
	struct stream_shms *set;
	int fd;
	void *map;
	size_t map_len;
	struct shm_writer w;
	struct shm_member *m;
	size_t n, cap;
	unsigned waiting;
	uint64_t last_wake_ns;
	struct event *wake_ev;
};

/* The regions of one stream server. */
struct stream_shms {
	struct event_base *base;
	void (*wake)(struct stream_client *c, uint64_t write);
	size_t bytes, total, used;
	uint64_t wake_ns;
};

struct stream_shms *stream_shms_new(
    struct event_base *base, void (*wake)(struct stream_client *c, uint64_t write))
{
	struct stream_shms *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->base = base;
	set->wake = wake;
	set->bytes = 8u << 20;
	set->total = 64u << 20;
	return set;
}

void stream_shms_free(struct stream_shms *set)
{
	free(set);
}

void stream_shm_configure(struct stream_shms *set, size_t bytes, size_t total, uint64_t wake_ns)
{
	/* a multiple of 8 and of the page: the header takes a page's start */
	set->bytes = bytes < (4u << 20) ? (4u << 20) : bytes & ~(size_t)4095u;
	set->total = total;
	set->wake_ns = wake_ns;
}

static void wake_all(struct stream_shm *r)
{
	uint64_t write = r->w.write;

	r->last_wake_ns = clock_mono_ns();
	for (size_t i = 0; i < r->n && r->waiting; i++) {
		struct shm_member *m = &r->m[i];

		if (!m->wait || m->pos >= write)
			continue;
		m->wait = false;
		r->waiting--;
		r->set->wake(m->c, write);
	}
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
	wake_all(arg);
}

/* Wake the waiting readers now, or when the last wake-up is wake_ns old. */
static void wake_soon(struct stream_shm *r)
{
	uint64_t now, since;

	if (!r->waiting || evtimer_pending(r->wake_ev, NULL))
		return;
	now = clock_mono_ns();
	since = now - r->last_wake_ns;
	if (since >= r->set->wake_ns) {
		wake_all(r);
	} else {
		struct timeval tv = tv_from_ns(r->set->wake_ns - since);
		if (evtimer_add(r->wake_ev, &tv) < 0)
			wake_all(r);
	}
}

struct stream_shm *stream_shm_new(struct stream_shms *set, const char **why)
{
	size_t len = SHM_RING_HDR + (set ? set->bytes : 0);
	struct stream_shm *r;
	int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;

	if (!set || set->used + len > set->total) {
		*why = "client_shm_total reached";
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->wake_ev = evtimer_new(set->base, wake_cb, r))) {
		free(r);
		*why = "out of memory";
		return NULL;
	}
	r->set = set;
	r->map = MAP_FAILED;
	r->map_len = len;
	r->fd = memfd_create("mtraced-stream", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)len) < 0 ||
	    (r->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0)) ==
	        MAP_FAILED ||
	    fcntl(r->fd, F_ADD_SEALS, seals) < 0) {
		log_warn("shared-memory region of %zu bytes", len);
		*why = "cannot create a shared-memory region";
		stream_shm_free(r);
		return NULL;
	}
	shm_writer_init(&r->w, r->map, set->bytes);
	set->used += len;
	return r;
}

void stream_shm_free(struct stream_shm *r)
{
	if (!r)
		return;
	if (r->map != MAP_FAILED) {
		munmap(r->map, r->map_len);
		r->set->used -= r->map_len;
	}
	if (r->fd >= 0)
		close(r->fd);
	event_free(r->wake_ev);
	for (size_t i = 0; i < r->n; i++)
		if (r->m[i].overruns)
			log_debug("shared-memory reader overran %llu times",
			    (unsigned long long)r->m[i].overruns);
	free(r->m);
	free(r);
}

int stream_shm_add(struct stream_shm *r, struct stream_client *c)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4;
		struct shm_member *m = reallocarray(r->m, cap, sizeof(*m));

		if (!m)
			return -1;
		r->m = m;
		r->cap = cap;
	}
	r->m[r->n++] = (struct shm_member){ .c = c, .pos = r->w.write };
	return 0;
}

static struct shm_member *member(struct stream_shm *r, const struct stream_client *c)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->m[i].c == c)
			return &r->m[i];
	return NULL;
}

size_t stream_shm_remove(struct stream_shm *r, struct stream_client *c, bool *found)
{
	struct shm_member *m = member(r, c);

	*found = m != NULL;
	if (m) {
		if (m->overruns)
			log_debug("shared-memory reader overran %llu times",
			    (unsigned long long)m->overruns);
		r->waiting -= m->wait;
		*m = r->m[--r->n];
	}
	return r->n;
}

int stream_shm_fd(const struct stream_shm *r)
{
	return r->fd;
}

uint64_t stream_shm_map_size(const struct stream_shm *r)
{
	return r->map_len;
}

uint64_t stream_shm_write_pos(const struct stream_shm *r)
{
	return r->w.write;
}

uint64_t stream_shm_events(const struct stream_shm *r)
{
	return r->w.events;
}

void stream_shm_put(struct stream_shm *r, const struct stream_blob *b, size_t n)
{
	if (!b) {
		shm_writer_skip(&r->w, n);
		return;
	}
	/* too large for the region (a quarter of it): skipped, a loss its readers see */
	if (shm_writer_put(&r->w, b->data, b->len, (uint32_t)n) < 0)
		log_debug(
		    "a %zu-byte message skipped: above a quarter of client_shm_bytes", b->len);
	wake_soon(r);
}

uint8_t *stream_shm_reserve(struct stream_shm *r, size_t len)
{
	return shm_writer_reserve(&r->w, len);
}

void stream_shm_commit(struct stream_shm *r, size_t n)
{
	shm_writer_commit(&r->w, (uint32_t)n);
	wake_soon(r);
}

void stream_shm_read(struct stream_shm *r, struct stream_client *c, uint64_t pos, bool wait)
{
	struct shm_member *m = r ? member(r, c) : NULL;

	/* A SharedRead may cross a new Subscribe (of another region, or none): a stale
	 * one is ignored, and a position past what was written is taken as caught up. */
	if (!m)
		return;
	if (pos > r->w.write)
		pos = r->w.write;
	if (pos < r->w.tail)
		m->overruns++;
	m->pos = pos;
	if (!wait || m->wait)
		return;
	if (pos < r->w.write) {
		/* it asked while we wrote: at once, or it would sleep on what is there */
		r->set->wake(c, r->w.write);
		return;
	}
	m->wait = true;
	r->waiting++;
}
