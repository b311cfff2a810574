/*
 * stream-shm.c - shared-memory regions for the local clients that ask for them
 * (docs/stream-protocol.md, "Shared memory").  A region is a sealed memfd: its size
 * cannot change (F_SEAL_SHRINK, F_SEAL_GROW) and, once mtraced has mapped it, nobody
 * can map it writable or write to it (F_SEAL_FUTURE_WRITE), so the clients' mappings
 * are read-only and never fault.  It is written like a flight recorder: a reader that
 * falls behind by a whole region loses the records overwritten, counted from the
 * records' event counts on its side; mtraced never waits for a reader.
 *
 * A region is charged against client_shm_total from its creation until mtraced exits:
 * a client may keep its fd or mapping after leaving (or pass it on), and nothing tells
 * mtraced when the last of those is gone (a memfd's mappings cannot be seen from
 * outside, and its pages cannot be given back while it is sealed against writes).  So
 * a region whose last reader left is never closed but kept for the next group that
 * needs one, oldest given back first: however many regions clients hold on to, the
 * memfds that exist are the ones counted.  A uid may read at most client_shm_per_uid
 * of regions at once (every region one of its clients reads, whoever else reads it),
 * so that one user's clients cannot take every region.
 *
 * Wake-ups: a region has one eventfd, passed with its memfd to the readers that ask
 * for it (Subscribe.shared_wake_fd), which watch it edge-triggered: each write wakes
 * every watcher, so one write wakes all of them, however many, and nobody reads the
 * counter.  While such a reader is on the region, every write to it is followed by a
 * write of the eventfd; a reader that is behind reads on and needs no word from us.
 * The other readers (clients from before the eventfd) tell us their position
 * (SharedRead): with wait, they want one wake-up when there is more, a SharedWake on
 * their socket each.  Wake-ups of both kinds are held to one per client_coalesce_us a
 * region: at millions of events a second each one costs a system call and its readers
 * a context switch, and the region holds far more than that long's events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/queue.h>
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
	uid_t uid;         /* its peer's (SO_PEERCRED), for client_shm_per_uid */
	uint64_t pos;      /* the last position it reported */
	uint64_t overruns; /* reports of a position already overwritten */
	bool wait;
	bool efd; /* watches the region's eventfd */
};

struct stream_shm {
	struct stream_shms *set;
	TAILQ_ENTRY(stream_shm) entry; /* in set->busy, or set->idle once its readers left */
	int fd;
	int efd; /* the wake-up of every member that took it */
	void *map;
	size_t map_len;
	struct shm_writer w;
	struct shm_member *m;
	size_t n, cap;
	unsigned waiting; /* members waiting for a SharedWake */
	unsigned nefd;    /* members watching efd */
	uint64_t last_wake_ns;
	struct event *wake_ev;
};

/* The regions of one stream server: used counts every memfd made, busy or idle. */
struct stream_shms {
	struct event_base *base;
	void (*wake)(struct stream_client *c, uint64_t write);
	size_t bytes, total, per_uid, used;
	uint64_t wake_ns;
	TAILQ_HEAD(, stream_shm) busy, idle;
	uint64_t reused, refused_uid;   /* for the log at exit */
	uint64_t efd_writes, wake_msgs; /* wake-ups: eventfd writes, SharedWake messages */
};

static void region_destroy(struct stream_shm *r);

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
	set->per_uid = set->total / 2;
	TAILQ_INIT(&set->busy);
	TAILQ_INIT(&set->idle);
	return set;
}

void stream_shms_free(struct stream_shms *set)
{
	struct stream_shm *r;

	if (!set)
		return;
	if (set->used)
		log_info("shared memory: %zu bytes of regions, reused %llu times; %llu refused "
		         "for client_shm_per_uid; wake-ups: %llu eventfd writes, %llu SharedWake "
		         "messages",
		    set->used, (unsigned long long)set->reused,
		    (unsigned long long)set->refused_uid, (unsigned long long)set->efd_writes,
		    (unsigned long long)set->wake_msgs);
	while ((r = TAILQ_FIRST(&set->idle))) {
		TAILQ_REMOVE(&set->idle, r, entry);
		region_destroy(r);
	}
	/* none, once every client left its group */
	while ((r = TAILQ_FIRST(&set->busy))) {
		TAILQ_REMOVE(&set->busy, r, entry);
		region_destroy(r);
	}
	free(set);
}

void stream_shm_configure(
    struct stream_shms *set, size_t bytes, size_t total, size_t per_uid, uint64_t wake_ns)
{
	/* a multiple of 8 and of the page: the header takes a page's start */
	set->bytes = bytes < (4u << 20) ? (4u << 20) : bytes & ~(size_t)4095u;
	set->total = total;
	set->per_uid = per_uid ? per_uid : total / 2;
	set->wake_ns = wake_ns;
}

/* One write for every watcher.  A reader may write the counter too (the eventfd is
 * its as much as ours): one that filled it to the top would have our writes fail, so
 * then it is read back to 0 first. */
static void wake_efd(struct stream_shm *r)
{
	uint64_t one = 1, v;
	ssize_t n;

	r->set->efd_writes++;
	while ((n = write(r->efd, &one, sizeof(one))) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN && read(r->efd, &v, sizeof(v)) >= 0)
		n = write(r->efd, &one, sizeof(one));
	if (n < 0)
		log_debug("shared-memory wake-up: eventfd write failed (errno %d)", errno);
}

static void wake_all(struct stream_shm *r)
{
	uint64_t write = r->w.write;

	r->last_wake_ns = clock_mono_ns();
	if (r->nefd)
		wake_efd(r);
	for (size_t i = 0; i < r->n && r->waiting; i++) {
		struct shm_member *m = &r->m[i];

		if (!m->wait || m->pos >= write)
			continue;
		m->wait = false;
		r->waiting--;
		r->set->wake_msgs++;
		r->set->wake(m->c, write);
	}
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
	wake_all(arg);
}

/* Wake the readers now, or when the last wake-up is wake_ns old: those waiting for a
 * SharedWake, and every watcher of the eventfd (asleep or not: we cannot tell). */
static void wake_soon(struct stream_shm *r)
{
	uint64_t now, since;

	if ((!r->waiting && !r->nefd) || evtimer_pending(r->wake_ev, NULL))
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

static bool has_uid(const struct stream_shm *r, uid_t uid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->m[i].uid == uid)
			return true;
	return false;
}

/* uid may read one more region of len bytes: the regions its clients read now, and
 * this one, within client_shm_per_uid. */
static bool uid_room(struct stream_shms *set, uid_t uid, size_t len)
{
	const struct stream_shm *r;
	size_t mine = len;

	TAILQ_FOREACH(r, &set->busy, entry)
	if (has_uid(r, uid))
		mine += r->map_len;
	if (mine <= set->per_uid)
		return true;
	set->refused_uid++;
	return false;
}

static struct stream_shm *region_create(struct stream_shms *set, size_t len, const char **why)
{
	struct stream_shm *r = calloc(1, sizeof(*r));
	int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;

	if (!r || !(r->wake_ev = evtimer_new(set->base, wake_cb, r))) {
		free(r);
		*why = "out of memory";
		return NULL;
	}
	r->set = set;
	r->map = MAP_FAILED;
	r->map_len = len;
	r->fd = memfd_create("mtraced-stream", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->fd < 0 || r->efd < 0 || ftruncate(r->fd, (off_t)len) < 0 ||
	    (r->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0)) ==
	        MAP_FAILED ||
	    fcntl(r->fd, F_ADD_SEALS, seals) < 0) {
		log_warn("shared-memory region of %zu bytes", len);
		*why = "cannot create a shared-memory region";
		region_destroy(r);
		return NULL;
	}
	shm_writer_init(&r->w, r->map, len - SHM_RING_HDR);
	set->used += len;
	return r;
}

/* Only at exit (or a region never made whole): a region that was ever handed out may
 * still be mapped by someone.  Not taken off used, which counts what was made. */
static void region_destroy(struct stream_shm *r)
{
	if (r->map != MAP_FAILED)
		munmap(r->map, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	if (r->efd >= 0)
		close(r->efd);
	event_free(r->wake_ev);
	free(r->m);
	free(r);
}

struct stream_shm *stream_shm_new(struct stream_shms *set, uid_t uid, const char **why)
{
	struct stream_shm *r = set ? TAILQ_FIRST(&set->idle) : NULL;
	size_t len = r ? r->map_len : SHM_RING_HDR + (set ? set->bytes : 0);

	if (!set || (!r && set->used + len > set->total)) {
		*why = "client_shm_total reached";
		return NULL;
	}
	if (!uid_room(set, uid, len)) {
		*why = "client_shm_per_uid reached";
		return NULL;
	}
	if (r) {
		/* Its write position goes on from where the last group left it: a reader
		 * of the old group (whose records end below it) and one of the new (whose
		 * records start at it) never take one for the other. */
		TAILQ_REMOVE(&set->idle, r, entry);
		set->reused++;
	} else if (!(r = region_create(set, len, why))) {
		return NULL;
	}
	TAILQ_INSERT_TAIL(&set->busy, r, entry);
	return r;
}

void stream_shm_free(struct stream_shm *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		if (r->m[i].overruns)
			log_debug("shared-memory reader overran %llu times",
			    (unsigned long long)r->m[i].overruns);
	r->n = 0;
	r->waiting = r->nefd = 0;
	evtimer_del(r->wake_ev);
	TAILQ_REMOVE(&r->set->busy, r, entry);
	TAILQ_INSERT_TAIL(&r->set->idle, r, entry);
}

int stream_shm_add(
    struct stream_shm *r, struct stream_client *c, uid_t uid, bool efd, const char **why)
{
	/* the first member's uid was let in by stream_shm_new */
	if (r->n && !has_uid(r, uid) && !uid_room(r->set, uid, r->map_len)) {
		*why = "client_shm_per_uid reached";
		return -1;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4;
		struct shm_member *m = reallocarray(r->m, cap, sizeof(*m));

		if (!m) {
			*why = "out of memory";
			return -1;
		}
		r->m = m;
		r->cap = cap;
	}
	r->m[r->n++] = (struct shm_member){ .c = c, .uid = uid, .pos = r->w.write, .efd = efd };
	r->nefd += efd;
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
		r->nefd -= m->efd;
		*m = r->m[--r->n];
	}
	return r->n;
}

int stream_shm_fd(const struct stream_shm *r)
{
	return r->fd;
}

int stream_shm_wake_fd(const struct stream_shm *r)
{
	return r->efd;
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
		r->set->wake_msgs++;
		r->set->wake(c, r->w.write);
		return;
	}
	m->wait = true;
	r->waiting++;
}
