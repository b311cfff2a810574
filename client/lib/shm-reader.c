/* shm-reader.c - a shared-memory region from mtraced, read and checked (shm-reader.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frame.h"
#include "shm-reader.h"
#include "shm-ring.h"

struct mtc_shm {
	void *map;
	size_t map_len;
	struct shm_reader r;
	uint64_t reported; /* the position last reported */
	uint8_t *buf;      /* the record copied out */
	size_t cap;
	dev_t dev; /* the memfd: another fd of the same region reads the same records */
	ino_t ino;
	int wake_fd; /* the region's eventfd (-1: none, SharedWake messages instead) */
};

void mtc_shm_close(struct mtc_shm *s)
{
	if (!s)
		return;
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	free(s->buf);
	free(s);
}

struct mtc_shm *mtc_shm_open(
    int fd, int wake_fd, const Mtrace__SharedRing *r, char *err, size_t errlen)
{
	struct mtc_shm *s = calloc(1, sizeof(*s));
	struct stat st;
	const char *why;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		if (wake_fd >= 0)
			close(wake_fd);
		return NULL;
	}
	s->wake_fd = wake_fd;
	if (r->version != SHM_RING_VERSION) {
		snprintf(err, errlen, "shared-memory region of version %u (this client: %u)",
		    r->version, SHM_RING_VERSION);
		goto fail;
	}
	/* the size mtraced says is the size the file has: a mapping past the end would
	 * fault (SIGBUS) */
	if (fstat(fd, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size != r->size ||
	    r->size < SHM_RING_HDR + 4096u || r->size > (1ull << 36)) {
		snprintf(err, errlen, "shared-memory region of %llu bytes does not match its file",
		    (unsigned long long)r->size);
		goto fail;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->map_len = (size_t)r->size;
	s->map = mmap(NULL, s->map_len, PROT_READ, MAP_SHARED, fd, 0);
	if (s->map == MAP_FAILED) {
		s->map = NULL;
		snprintf(err, errlen, "cannot map the shared-memory region: %m");
		goto fail;
	}
	if ((why = shm_reader_init(&s->r, s->map, s->map_len, r->start, r->events_before))) {
		snprintf(err, errlen, "bad shared-memory region: %s", why);
		goto fail;
	}
	s->cap = (size_t)(s->r.size / 4);
	if (!(s->buf = malloc(s->cap))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	s->reported = r->start;
	close(fd);
	return s;
fail:
	close(fd);
	mtc_shm_close(s);
	return NULL;
}

int mtc_shm_next(
    struct mtc_shm *s, const uint8_t **frame, size_t *len, uint64_t *lost, char *err, size_t errlen)
{
	const char *why = NULL;
	size_t hdr, mlen;
	enum shm_read rd = shm_reader_next(&s->r, s->buf, s->cap, len, lost, &why);

	if (rd == SHM_READ_NONE)
		return 0;
	if (rd == SHM_READ_BAD) {
		snprintf(err, errlen, "bad shared-memory region: %s", why);
		return -1;
	}
	/* one whole frame, nothing after it */
	if (frame_parse(s->buf, *len, FRAME_MAX_TO_CLIENT, &hdr, &mlen) != FRAME_OK ||
	    hdr + mlen != *len) {
		snprintf(
		    err, errlen, "bad shared-memory region: a %zu-byte record is no frame", *len);
		return -1;
	}
	*frame = s->buf;
	return 1;
}

int mtc_shm_wake_fd(const struct mtc_shm *s)
{
	return s->wake_fd;
}

int mtc_shm_same(const struct mtc_shm *a, const struct mtc_shm *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

void mtc_shm_continue(struct mtc_shm *to, const struct mtc_shm *from)
{
	to->r.pos = from->r.pos;
	to->r.events = from->r.events;
	to->reported = from->reported;
}

uint64_t mtc_shm_pos(const struct mtc_shm *s)
{
	return s->r.pos;
}

int mtc_shm_report_due(struct mtc_shm *s)
{
	if (s->r.pos - s->reported < s->r.size / 8)
		return 0;
	s->reported = s->r.pos;
	return 1;
}
