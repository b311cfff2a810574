/*
 * spool.c - the on-disk spool: one file of records, appended at the tail, read ahead
 * from a cursor, dropped from the head.  A record is a 16-byte header (subject length,
 * id length, payload length, events, little-endian u32) and the three strings, each at
 * most the SPOOL_*_MAX of spool.h.  The head
 * and cursor offsets live in memory: after a crash the whole file is sent again, and
 * JetStream's de-duplication by message id drops what it already has (within its
 * duplicate window).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool.h"

#define HDR        16
#define SPOOL_FILE "mtrace-ship.spool"

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

/*
 * The directory: made 0700 when missing, else taken only if it is a directory of this
 * user that nobody else may write to (a directory someone else made first, say under
 * /tmp, could hold a symlink where the spool goes, or be emptied under us).  A symlink
 * to it is followed only when it is this user's or root's (systemd's StateDirectory
 * with DynamicUser is /var/lib/NAME -> private/NAME); what counts is the directory it
 * leads to, held open while the file is opened in it.  -1 with err, else its fd.
 */
static int open_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int dfd;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create spool directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid() &&
	    st.st_uid != 0) {
		snprintf(err, errlen, "spool directory %s refused: a symlink of uid %u", dir,
		    (unsigned)st.st_uid);
		return -1;
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(dfd, &st) < 0) {
		snprintf(err, errlen, "cannot open spool directory %s: %s", dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen,
		    "spool directory %s refused: owned by uid %u with mode %04o (it must be this "
		    "user's, uid %u, and writable by no one else)",
		    dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
		close(dfd);
		return -1;
	}
	return dfd;
}

/* Count what an earlier run left: a record cut short (a crash while writing) or one
 * whose lengths are past any record this shipper writes (the file damaged, or written
 * by someone else) ends the file there, with everything after it: without lengths to
 * trust there is no next record to find.  The records themselves are checked as they
 * are read (queue.c). */
static void scan(struct spool *s, const char *path)
{
	uint64_t size = s->tail, off = 0;
	uint8_t h[HDR];

	while (off + HDR <= s->tail && full_pread(s->fd, h, HDR, off) == 0) {
		uint64_t sl = get32(h), il = get32(h + 4), dl = get32(h + 8);

		if (sl > SPOOL_SUBJECT_MAX || il > SPOOL_ID_MAX || dl > SPOOL_DATA_MAX ||
		    off + HDR + sl + il + dl > s->tail)
			break;
		off += HDR + sl + il + dl;
		s->records++;
	}
	s->unread = s->records;
	if (off == size)
		return;
	fprintf(stderr,
	    "mtrace-ship: spool %s: %" PRIu64 " bytes after record %" PRIu64
	    " cut off (torn or corrupt)\n",
	    path, size - off, s->records);
	s->tail = off;
	if (ftruncate(s->fd, (off_t)off) < 0) {
		/* nothing to do: the next append overwrites the cut part */
	}
}

struct spool *spool_open(const char *dir, uint64_t max, char *err, size_t errlen)
{
	struct spool *s = calloc(1, sizeof(*s));
	char path[4096];
	struct stat st;
	int dfd;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->fd = -1;
	snprintf(path, sizeof(path), "%s/" SPOOL_FILE, dir);
	if ((dfd = open_dir(dir, err, errlen)) < 0)
		goto fail;
	/* never through a symlink (its target would be read, and cut); the file is this
	 * user's alone */
	s->fd = openat(dfd, SPOOL_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (s->fd < 0 || fstat(s->fd, &st) < 0) {
		snprintf(err, errlen, "cannot open spool %s: %s%s", path, strerror(errno),
		    errno == ELOOP ? " (a symlink: refused)" : "");
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		snprintf(err, errlen,
		    "spool %s refused: not a regular file of this user with one link", path);
		goto fail;
	}
	s->max = max;
	s->tail = (uint64_t)st.st_size;
	scan(s, path);
	return s;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	return NULL;
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

	if (spool_bytes(s) + n > s->max || sl > SPOOL_SUBJECT_MAX || il > SPOOL_ID_MAX ||
	    len > SPOOL_DATA_MAX)
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
	/* the file was scanned at the start and is appended to by us only */
	if (sl > SPOOL_SUBJECT_MAX || il > SPOOL_ID_MAX || dl > SPOOL_DATA_MAX) {
		errno = EBADMSG;
		return -1;
	}
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
