/*
 * spool.c - the on-disk spool: one file of records, appended at the tail, read ahead
 * from a cursor, dropped from the head.  A record is a 16-byte header (subject length,
 * id length, payload length, events, little-endian u32) and the three strings.  The head
 * and cursor offsets live in memory: after a crash the whole file is sent again, and
 * JetStream's de-duplication by message id drops what it already has (within its
 * duplicate window).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool.h"

#define HDR 16

struct spool {
	int fd;
	uint64_t max, head, cursor, tail, records, unread;
	uint8_t *buf;
	size_t cap;
};

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static int full_pread(int fd, void *b, size_t n, uint64_t off)
{
	while (n) {
		ssize_t r = pread(fd, b, n, (off_t)off);
		if (r <= 0)
			return -1;
		b = (char *)b + r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int full_pwrite(int fd, const void *b, size_t n, uint64_t off)
{
	while (n) {
		ssize_t r = pwrite(fd, b, n, (off_t)off);
		if (r <= 0)
			return -1;
		b = (const char *)b + r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

struct spool *spool_open(const char *dir, uint64_t max, char *err, size_t errlen)
{
	struct spool *s = calloc(1, sizeof(*s));
	char path[4096];
	struct stat st;
	uint8_t h[HDR];

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* the directory itself is made here: a first start need not prepare it */
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create spool directory %s: %s", dir, strerror(errno));
		free(s);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/mtrace-ship.spool", dir);
	s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->fd < 0 || fstat(s->fd, &st) < 0) {
		snprintf(err, errlen, "cannot open spool %s: %s", path, strerror(errno));
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return NULL;
	}
	s->max = max;
	s->tail = (uint64_t)st.st_size;
	/* count what an earlier run left; a torn last record is cut off */
	for (uint64_t off = 0; off + HDR <= s->tail;) {
		uint64_t n;
		if (full_pread(s->fd, h, HDR, off) < 0)
			break;
		n = HDR + (uint64_t)get32(h) + get32(h + 4) + get32(h + 8);
		if (off + n > s->tail) {
			s->tail = off;
			break;
		}
		off += n;
		s->records++;
		s->unread++;
		if (off + HDR > s->tail && off != s->tail)
			s->tail = off;
	}
	if (ftruncate(s->fd, (off_t)s->tail) < 0) {
		/* nothing to do: the next append overwrites the torn part */
	}
	return s;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s->buf);
	free(s);
}

uint64_t spool_bytes(const struct spool *s)
{
	return s->tail - s->head;
}

uint64_t spool_records(const struct spool *s)
{
	return s->records;
}

uint64_t spool_unread(const struct spool *s)
{
	return s->unread;
}

int spool_put(struct spool *s, const char *subject, const char *id, const uint8_t *data, size_t len,
    uint32_t events)
{
	size_t sl = strlen(subject), il = strlen(id), n = HDR + sl + il + len;
	uint8_t h[HDR];

	if (spool_bytes(s) + n > s->max)
		return 1;
	put32(h, (uint32_t)sl);
	put32(h + 4, (uint32_t)il);
	put32(h + 8, (uint32_t)len);
	put32(h + 12, events);
	if (full_pwrite(s->fd, h, HDR, s->tail) < 0 ||
	    full_pwrite(s->fd, subject, sl, s->tail + HDR) < 0 ||
	    full_pwrite(s->fd, id, il, s->tail + HDR + sl) < 0 ||
	    full_pwrite(s->fd, data, len, s->tail + HDR + sl + il) < 0)
		return -1;
	s->tail += n;
	s->records++;
	s->unread++;
	return 0;
}

int spool_next(struct spool *s, const char **subject, const char **id, const uint8_t **data,
    size_t *len, uint32_t *events)
{
	uint64_t at = s->cursor;
	uint8_t h[HDR];
	size_t sl, il, dl, need;

	if (at >= s->tail)
		return 0;
	if (full_pread(s->fd, h, HDR, at) < 0)
		return -1;
	sl = get32(h);
	il = get32(h + 4);
	dl = get32(h + 8);
	need = sl + 1 + il + 1 + dl;
	if (need > s->cap) {
		uint8_t *b = realloc(s->buf, need);
		if (!b)
			return -1;
		s->buf = b;
		s->cap = need;
	}
	if (full_pread(s->fd, s->buf, sl, at + HDR) < 0 ||
	    full_pread(s->fd, s->buf + sl + 1, il, at + HDR + sl) < 0 ||
	    full_pread(s->fd, s->buf + sl + il + 2, dl, at + HDR + sl + il) < 0)
		return -1;
	s->cursor = at + HDR + sl + il + dl;
	s->unread--;
	s->buf[sl] = 0;
	s->buf[sl + 1 + il] = 0;
	*subject = (const char *)s->buf;
	*id = (const char *)s->buf + sl + 1;
	*data = s->buf + sl + il + 2;
	*len = dl;
	*events = get32(h + 12);
	return 1;
}

void spool_pop(struct spool *s)
{
	uint8_t h[HDR];

	/* only what was read ahead can have been acknowledged */
	if (s->head >= s->cursor || full_pread(s->fd, h, HDR, s->head) < 0)
		return;
	s->head += HDR + (uint64_t)get32(h) + get32(h + 4) + get32(h + 8);
	s->records--;
	if (s->head >= s->tail) {
		/* all sent: start the file over */
		s->head = s->cursor = s->tail = 0;
		s->records = s->unread = 0;
		if (ftruncate(s->fd, 0) < 0) {
			/* the next appends overwrite it */
		}
	}
}

void spool_rewind(struct spool *s)
{
	s->cursor = s->head;
	s->unread = s->records;
}
