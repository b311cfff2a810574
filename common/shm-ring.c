/* shm-ring.c - the shared region's record writer and checked reader (shm-ring.h). */
#include <string.h>

#include "shm-ring.h"

#define REC sizeof(struct shm_rec)

static uint64_t align8(uint64_t n)
{
	return (n + 7u) & ~(uint64_t)7u;
}

void shm_writer_init(struct shm_writer *w, void *base, uint64_t size)
{
	memset(w, 0, sizeof(*w));
	w->h = base;
	w->data = (uint8_t *)base + SHM_RING_HDR;
	w->size = size;
	memset(w->h, 0, SHM_RING_HDR);
	w->h->magic = SHM_RING_MAGIC;
	w->h->version = SHM_RING_VERSION;
	w->h->size = size;
	w->h->hdr_size = SHM_RING_HDR;
}

uint64_t shm_writer_max(const struct shm_writer *w)
{
	return w->size / 4 - REC;
}

/* Move the tail past every record that [write, end) overwrites; the writer's own
 * copy of the positions, never what is in the (shared) header. */
static void make_room(struct shm_writer *w, uint64_t end)
{
	while (end - w->tail > w->size && w->tail < w->write) {
		uint64_t off = w->tail % w->size;
		struct shm_rec rec;

		if (w->size - off < REC) {
			w->tail += w->size - off;
			continue;
		}
		memcpy(&rec, w->data + off, REC);
		if (rec.len == SHM_REC_WRAP || rec.len > w->size - off - REC)
			w->tail += w->size - off;
		else
			w->tail += REC + align8(rec.len);
	}
	if (w->tail > w->write)
		w->tail = w->write;
	if (end - w->tail > w->size)
		w->tail = w->write; /* cannot happen: records are at most a quarter */
	__atomic_store_n(&w->h->tail, w->tail, __ATOMIC_RELAXED);
	/* the tail is seen before any byte it gives up is overwritten */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void *shm_writer_reserve(struct shm_writer *w, size_t len)
{
	uint64_t need = REC + align8(len), off = w->write % w->size, pad = 0;

	if (len > shm_writer_max(w))
		return NULL;
	if (w->size - off < need)
		pad = w->size - off;
	make_room(w, w->write + pad + need);
	if (pad) {
		if (pad >= REC) {
			struct shm_rec wrap = { SHM_REC_WRAP, 0, w->events };
			memcpy(w->data + off, &wrap, REC);
		}
		/* the wrap marker is below no write position yet: readers stop before it
		 * until the record after it is committed */
		w->write += pad;
		off = 0;
	}
	w->reserved = len;
	return w->data + off + REC;
}

void shm_writer_commit(struct shm_writer *w, uint32_t events)
{
	struct shm_rec rec = { (uint32_t)w->reserved, events, w->events };

	memcpy(w->data + w->write % w->size, &rec, REC);
	w->write += REC + align8(w->reserved);
	w->events += events;
	__atomic_store_n(&w->h->events, w->events, __ATOMIC_RELAXED);
	__atomic_store_n(&w->h->write, w->write, __ATOMIC_RELEASE);
}

int shm_writer_put(struct shm_writer *w, const void *msg, size_t len, uint32_t events)
{
	void *p = shm_writer_reserve(w, len);

	if (!p) {
		shm_writer_skip(w, events);
		return -1;
	}
	memcpy(p, msg, len);
	shm_writer_commit(w, events);
	return 0;
}

void shm_writer_skip(struct shm_writer *w, uint64_t events)
{
	w->events += events;
	__atomic_store_n(&w->h->events, w->events, __ATOMIC_RELAXED);
}

const char *shm_reader_init(
    struct shm_reader *r, const void *base, size_t map_len, uint64_t pos, uint64_t events)
{
	const struct shm_ring_hdr *h = base;
	uint64_t size;

	memset(r, 0, sizeof(*r));
	if (map_len < SHM_RING_HDR + 4096u)
		return "region too small";
	size = h->size;
	if (h->magic != SHM_RING_MAGIC)
		return "region has a bad magic number";
	if (h->version != SHM_RING_VERSION)
		return "region has an unknown version";
	if (h->hdr_size != SHM_RING_HDR || size % 8 || size < 4096u ||
	    size != map_len - SHM_RING_HDR)
		return "region size does not match its mapping";
	r->h = base;
	r->data = (const uint8_t *)base + SHM_RING_HDR;
	r->size = size;
	r->pos = pos;
	r->events = events;
	return NULL;
}

uint64_t shm_reader_write(const struct shm_reader *r)
{
	return __atomic_load_n(&r->h->write, __ATOMIC_ACQUIRE);
}

static uint64_t tail_now(const struct shm_reader *r)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&r->h->tail, __ATOMIC_RELAXED);
}

enum shm_read shm_reader_next(
    struct shm_reader *r, uint8_t *buf, size_t cap, size_t *len, uint64_t *lost, const char **why)
{
	unsigned stale = 0;

	for (;;) {
		uint64_t w = shm_reader_write(r), t = tail_now(r), off;
		struct shm_rec rec;

		if (r->pos == w)
			return SHM_READ_NONE;
		/* the tail, read after the write position, may be past it: the writer went
		 * on meanwhile; never so for long */
		if (r->pos > w || t > w || w - t > r->size) {
			if (r->pos <= w && ++stale < 1000)
				continue;
			*why = "region positions out of order";
			return SHM_READ_BAD;
		}
		if (r->pos < t)
			r->pos = t; /* overwritten: the gap shows in events_before */
		off = r->pos % r->size;
		if (r->size - off < REC) {
			r->pos += r->size - off;
			continue;
		}
		memcpy(&rec, r->data + off, REC);
		if (rec.len == SHM_REC_WRAP) {
			if (tail_now(r) <= r->pos)
				r->pos += r->size - off;
			continue;
		}
		if (rec.len > r->size - off - REC || rec.len > cap) {
			if (tail_now(r) > r->pos)
				continue; /* torn: overwritten under us */
			*why = "region record longer than the region";
			return SHM_READ_BAD;
		}
		memcpy(buf, r->data + off + REC, rec.len);
		if (tail_now(r) > r->pos)
			continue;
		if (rec.events_before < r->events) {
			*why = "region event counts go back";
			return SHM_READ_BAD;
		}
		*lost = rec.events_before - r->events;
		*len = rec.len;
		r->events = rec.events_before + rec.events;
		r->pos += REC + align8(rec.len);
		return SHM_READ_OK;
	}
}
