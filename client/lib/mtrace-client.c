/*
 * mtrace-client.c - connect to mtraced, delimited framing, Hello, Subscribe, receive.
 * A blocking socket waited on through an epoll set for timeouts (0: a poll, as
 * session.c reads it from the loop), and a large read buffer keeps the per-frame cost
 * low at millions of events a second.  The epoll set holds the socket and, while the
 * events come through shared memory, the region's eventfd, edge-triggered: its fd is
 * what callers wait on, so a wake-up of the region wakes them as the socket does.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "frame.h"
#include "mtrace-client.h"
#include "shm-reader.h"
#include "unpack-arena.h"

#define BUF_INITIAL      (256u * 1024)
#define BUF_MAX          (FRAME_MAX_TO_CLIENT + FRAME_VARINT_MAX)
#define HELLO_TIMEOUT_MS 5000
#define EP_SOCKET        0u /* epoll data: the socket */
#define EP_WAKE          1u /* the region's eventfd */

struct mtc {
	int fd;
	int ep;         /* the socket and the region's eventfd: mtc_fd */
	unsigned flags; /* MTC_* */
	uint8_t *buf;
	size_t cap, start, end;
	Mtrace__ServerMsg *hello;
	/* shared memory (docs/stream-protocol.md): the fd that came with the socket's bytes,
	 * and the region's eventfd after it, for the SharedRing that follows; the region; its
	 * eventfd in the epoll set; a SharedRead with wait sent and no SharedWake yet (a
	 * region without a watched eventfd); a record held behind the Loss that tells its
	 * gap */
	int pending_fd, pending_wake_fd;
	struct mtc_shm *shm;
	struct mtc_shm *shm_old; /* the last Subscribe's, read up to old_end first */
	uint64_t old_end;
	bool shm_watched, shm_waiting, shm_held;
	const uint8_t *held;
	size_t held_len;
	uint8_t loss[64];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

unsigned long mtc_parse_num(
    const char *prog, const char *s, const char *what, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !*s || *s == '-' || v < min || v > max) {
		fprintf(stderr, "%s: bad %s '%s' (%lu..%lu)\n", prog, what, s, min, max);
		exit(2);
	}
	return v;
}

const char *mtc_default_socket(void)
{
	const char *s = getenv("MTRACE_SOCKET");

	return s && *s ? s : MTRACE_DEFAULT_SOCKET;
}

int mtc_fd(const struct mtc *c)
{
	return c->ep;
}

const Mtrace__Hello *mtc_server_hello(const struct mtc *c)
{
	return c->hello ? c->hello->hello : NULL;
}

void mtc_msg_free(Mtrace__ServerMsg *m)
{
	arena_msg_free(m);
}

void mtc_close(struct mtc *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->ep >= 0)
		close(c->ep);
	if (c->pending_fd >= 0)
		close(c->pending_fd);
	if (c->pending_wake_fd >= 0)
		close(c->pending_wake_fd);
	mtc_shm_close(c->shm);
	mtc_shm_close(c->shm_old);
	mtc_msg_free(c->hello);
	free(c->buf);
	free(c);
}

int mtc_send_raw(struct mtc *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int mtc_send(struct mtc *c, const Mtrace__ClientMsg *msg)
{
	size_t len = mtrace__client_msg__get_packed_size(msg), hl;
	uint8_t *buf;
	int r;

	if (len > FRAME_MAX_TO_DAEMON) {
		errno = EMSGSIZE;
		return -1;
	}
	buf = malloc(len + FRAME_VARINT_MAX);
	if (!buf)
		return -1;
	hl = frame_put_len(buf, len);
	mtrace__client_msg__pack(msg, buf + hl);
	r = mtc_send_raw(c, buf, hl + len);
	free(buf);
	return r;
}

int mtc_subscribe(struct mtc *c, const Mtrace__Subscribe *sub)
{
	Mtrace__ClientMsg m = MTRACE__CLIENT_MSG__INIT;
	Mtrace__Subscribe s = *sub;

	/* the region's eventfd wakes every reader with one write (mtraced ignores the
	 * field if it is older than it) */
	s.shared_wake_fd = sub->shared_memory && !(c->flags & MTC_NO_WAKE_FD);
	m.msg_case = MTRACE__CLIENT_MSG__MSG_SUBSCRIBE;
	m.subscribe = &s;
	return mtc_send(c, &m);
}

int mtc_shared(const struct mtc *c)
{
	return c->shm != NULL;
}

static int64_t now_ms(void)
{
	return (int64_t)(clock_mono_ns() / 1000000u);
}

/* Make room for `need` bytes of the frame at start. */
static int make_room(struct mtc *c, size_t need)
{
	if (c->start > 0 && (c->start == c->end || c->cap - c->start < need || c->end == c->cap)) {
		memmove(c->buf, c->buf + c->start, c->end - c->start);
		c->end -= c->start;
		c->start = 0;
	}
	if (need > c->cap || c->end == c->cap) {
		size_t cap = c->cap;
		uint8_t *b;
		while (cap < need || cap <= c->end)
			cap *= 2;
		if (cap > BUF_MAX)
			cap = BUF_MAX;
		if (cap <= c->end)
			return -1;
		b = realloc(c->buf, cap);
		if (!b)
			return -1;
		c->buf = b;
		c->cap = cap;
	}
	return 0;
}

/* A read of the socket that keeps the descriptors mtraced attaches (SCM_RIGHTS): the
 * first two are kept for the SharedRing they come with (memfd, eventfd), any other
 * closed. */
static ssize_t read_fds(struct mtc *c, void *buf, size_t len)
{
	char ctl[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { buf, len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	ssize_t n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);

	if (n < 0)
		return n;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t nfd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (c->pending_fd < 0)
				c->pending_fd = fd;
			else if (c->pending_wake_fd < 0)
				c->pending_wake_fd = fd;
			else
				close(fd);
		}
	}
	return n;
}

static int send_shared_read(struct mtc *c, bool wait)
{
	Mtrace__ClientMsg m = MTRACE__CLIENT_MSG__INIT;
	Mtrace__SharedRead r = MTRACE__SHARED_READ__INIT;

	r.pos = mtc_shm_pos(c->shm);
	r.wait = wait;
	m.msg_case = MTRACE__CLIENT_MSG__MSG_SHARED_READ;
	m.shared_read = &r;
	return mtc_send(c, &m);
}

/* ServerMsg fields 10 (SharedRing) and 11 (SharedWake): the library's own. */
static bool own_msg(const uint8_t *msg, size_t len)
{
	return len > 0 && (msg[0] == (10u << 3 | 2u) || msg[0] == (11u << 3 | 2u));
}

/* c->shm's eventfd into the epoll set (out: taken out).  Not watched (no eventfd, or
 * epoll refused it): mtc_next asks for SharedWake messages, which mtraced sends any
 * reader that asks. */
static void watch_shm(struct mtc *c, bool in)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u32 = EP_WAKE };

	if (!in && c->shm_watched)
		epoll_ctl(c->ep, EPOLL_CTL_DEL, mtc_shm_wake_fd(c->shm), NULL);
	c->shm_watched = in && c->shm && mtc_shm_wake_fd(c->shm) >= 0 &&
	    epoll_ctl(c->ep, EPOLL_CTL_ADD, mtc_shm_wake_fd(c->shm), &ev) == 0;
}

static int take_own(struct mtc *c, const uint8_t *msg, size_t len, char *err, size_t errlen)
{
	Mtrace__ServerMsg *m = arena_msg_unpack(msg, len);
	int fd = c->pending_fd, wfd = c->pending_wake_fd;

	if (!m) {
		snprintf(err, errlen, "a %zu-byte message from mtraced does not decode", len);
		errno = EPROTO;
		return -1;
	}
	if (m->msg_case == MTRACE__SERVER_MSG__MSG_SHARED_WAKE) {
		c->shm_waiting = false;
	} else if (m->msg_case == MTRACE__SERVER_MSG__MSG_SHARED_RING) {
		const Mtrace__SharedRing *r = m->shared_ring;
		bool refused = r->refused && *r->refused;
		struct mtc_shm *old = c->shm, *nw = NULL;
		uint64_t end;

		watch_shm(c, false);
		c->shm = NULL;
		c->shm_waiting = false;
		c->pending_fd = c->pending_wake_fd = -1;
		if (wfd >= 0 && (refused || !r->wake_fd)) {
			close(wfd);
			wfd = -1;
		}
		if (c->shm_old) {
			/* a third before the second was read up to: the held record may be
			 * the oldest region's */
			mtc_shm_close(c->shm_old);
			c->shm_old = NULL;
			c->shm_held = false;
		}
		if (refused) {
			if (fd >= 0)
				close(fd);
		} else if (fd < 0 || (r->wake_fd && wfd < 0)) {
			snprintf(err, errlen, "mtraced sent a shared-memory region without its fd");
			if (fd >= 0)
				close(fd);
		} else {
			nw = mtc_shm_open(fd, wfd, r, err, errlen);
		}
		if (!refused && !nw) {
			mtc_shm_close(old);
			c->shm_held = false;
			mtc_msg_free(m);
			errno = EPROTO;
			return -1;
		}
		/* A new Subscribe: the old region's records up to previous_end are the old
		 * subscription's, still to be read.  The same region again (the same filter):
		 * what was read past previous_end meanwhile is the new subscription's, so it
		 * reads on from there. */
		end = r->previous_end;
		if (old && nw && mtc_shm_same(old, nw) && mtc_shm_pos(old) >= r->start) {
			mtc_shm_continue(nw, old);
			end = mtc_shm_pos(old);
		}
		if (old && (c->shm_held || end > mtc_shm_pos(old))) {
			c->shm_old = old; /* a held record is in its buffer */
			c->old_end = end;
		} else {
			mtc_shm_close(old);
		}
		c->shm = nw;
		watch_shm(c, true);
	}
	mtc_msg_free(m);
	return 0;
}

/* The frame f (hdr + len bytes) to the caller. */
static int deliver(const uint8_t *f, size_t hdr, size_t len, Mtrace__ServerMsg **out,
    const uint8_t **raw, size_t *raw_len, char *err, size_t errlen)
{
	if (raw)
		*raw = f;
	if (raw_len)
		*raw_len = hdr + len;
	if (!out)
		return 1;
	*out = arena_msg_unpack(f + hdr, len);
	if (!*out) {
		snprintf(err, errlen, "a %zu-byte message from mtraced does not decode", len);
		errno = EPROTO;
		return -1;
	}
	return 1;
}

/* The region's next record, or a Loss for the events missed before it (the record is
 * held for the next call): 1, 0 (none), -1. */
static int shm_next(struct mtc *c, Mtrace__ServerMsg **out, const uint8_t **raw, size_t *raw_len,
    char *err, size_t errlen)
{
	struct mtc_shm *s = c->shm_old ? c->shm_old : c->shm;
	const uint8_t *f;
	size_t len, hdr, mlen;
	uint64_t lost = 0;
	int r;

	if (c->shm_old && !c->shm_held && mtc_shm_pos(c->shm_old) >= c->old_end) {
		mtc_shm_close(c->shm_old);
		c->shm_old = NULL;
		s = c->shm;
	}
	if (!s)
		return 0;
	if (c->shm_held) {
		c->shm_held = false;
		f = c->held;
		len = c->held_len;
	} else {
		if ((r = mtc_shm_next(s, &f, &len, &lost, err, errlen)) < 0)
			errno = EPROTO;
		if (r == 0 && s == c->shm_old) {
			/* nothing more below old_end (cannot be: mtraced had written it) */
			mtc_shm_close(c->shm_old);
			c->shm_old = NULL;
			return c->shm ? shm_next(c, out, raw, raw_len, err, errlen) : 0;
		}
		if (r <= 0)
			return r;
		/* a failed send (mtraced closed the link) shows when the socket is read:
		 * after what mtraced said last, its Error */
		if (s == c->shm && mtc_shm_report_due(s))
			send_shared_read(c, false);
	}
	if (lost) {
		/* told as the socket tells a slow client's drops */
		Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
		Mtrace__Loss l = MTRACE__LOSS__INIT;

		l.dropped_for_client = lost;
		m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
		m.loss = &l;
		hdr = frame_put_len(c->loss, mtrace__server_msg__get_packed_size(&m));
		mlen = mtrace__server_msg__pack(&m, c->loss + hdr);
		c->held = f;
		c->held_len = len;
		c->shm_held = true;
		return deliver(c->loss, hdr, mlen, out, raw, raw_len, err, errlen);
	}
	frame_parse(f, len, FRAME_MAX_TO_CLIENT, &hdr, &mlen); /* checked by mtc_shm_next */
	return deliver(f, hdr, mlen, out, raw, raw_len, err, errlen);
}

int mtc_next(struct mtc *c, int timeout_ms, Mtrace__ServerMsg **out, const uint8_t **raw,
    size_t *raw_len, char *err, size_t errlen)
{
	int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;

	if (out)
		*out = NULL;
	for (;;) {
		size_t hdr = 0, len = 0, avail = c->end - c->start;
		enum frame_status st =
		    frame_parse(c->buf + c->start, avail, FRAME_MAX_TO_CLIENT, &hdr, &len);
		struct epoll_event ev[2];
		ssize_t n;
		int wait, r;

		if (st == FRAME_OK) {
			const uint8_t *f = c->buf + c->start;
			c->start += hdr + len;
			if (own_msg(f + hdr, len)) {
				if (take_own(c, f + hdr, len, err, errlen) < 0)
					return -1;
				continue;
			}
			return deliver(f, hdr, len, out, raw, raw_len, err, errlen);
		}
		if (st == FRAME_BAD || st == FRAME_TOO_LARGE) {
			snprintf(err, errlen, "bad frame from mtraced (%s)",
			    st == FRAME_BAD ? "malformed length" : "too large");
			errno = EPROTO;
			return -1;
		}
		/* the socket's whole frames first: what was sent there came first */
		if ((c->shm || c->shm_old) &&
		    (r = shm_next(c, out, raw, raw_len, err, errlen)) != 0)
			return r;
		if (c->shm && !c->shm_watched && !c->shm_waiting) {
			/* all read: one wake-up, please; mtraced wakes us at once if it wrote
			 * meanwhile (a watched eventfd needs no word: it is written whenever
			 * the region is) */
			send_shared_read(c, true); /* a failure: as above */
			c->shm_waiting = true;
			continue;
		}
		if (make_room(c, hdr + len > avail ? hdr + len : avail + 1) < 0) {
			snprintf(err, errlen, "out of memory");
			errno = ENOMEM;
			return -1;
		}
		if (timeout_ms < 0)
			wait = -1;
		else if (timeout_ms == 0)
			wait = 0;
		else if ((wait = (int)(deadline - now_ms())) < 0)
			wait = 0;
		n = epoll_wait(c->ep, ev, 2, wait);
		if (n < 0) {
			snprintf(err, errlen, "epoll_wait: %s", strerror(errno));
			return -1; /* EINTR included: the caller decides (a signal) */
		}
		if (n == 0)
			return 0;
		/* the region's wake-up alone: read it (the edge is taken, the next write
		 * makes another) */
		if (ev[0].data.u32 != EP_SOCKET && (n == 1 || ev[1].data.u32 != EP_SOCKET))
			continue;
		n = read_fds(c, c->buf + c->end, c->cap - c->end);
		if (n < 0) {
			snprintf(err, errlen, "read: %s", strerror(errno));
			return -1; /* EINTR too: the caller decides */
		}
		if (n == 0) {
			/* mtraced writes a region before it closes the socket: what it wrote
			 * after our last look at the region is there to read before the end */
			if ((c->shm || c->shm_old) &&
			    (r = shm_next(c, out, raw, raw_len, err, errlen)) != 0)
				return r;
			if (c->end > c->start) {
				snprintf(err, errlen, "mtraced closed the connection mid-message");
				errno = EPROTO;
			} else {
				snprintf(err, errlen, "mtraced closed the connection");
				errno = 0;
			}
			return -1;
		}
		c->end += (size_t)n;
	}
}

static void connect_error(const char *path, int e, char *err, size_t errlen)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		snprintf(err, errlen, "mtraced is not running? no socket at %s", path);
		break;
	case ECONNREFUSED:
		snprintf(err, errlen, "mtraced is not running? nothing listens on %s", path);
		break;
	case EACCES:
	case EPERM:
		snprintf(err, errlen,
		    "permission denied on %s: is this user in the 'mtrace' "
		    "group?",
		    path);
		break;
	default:
		snprintf(err, errlen, "cannot connect to %s: %s", path, strerror(e));
		break;
	}
}

struct mtc *mtc_connect_flags(
    const char *path, const char *software, unsigned flags, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	Mtrace__ClientMsg m = MTRACE__CLIENT_MSG__INIT;
	Mtrace__Hello h = MTRACE__HELLO__INIT;
	struct epoll_event sev = { .events = EPOLLIN, .data.u32 = EP_SOCKET };
	struct mtc *c;
	int r, e;

	if (!path)
		path = mtc_default_socket();
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		errno = ENAMETOOLONG;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->buf = malloc(BUF_INITIAL))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->cap = BUF_INITIAL;
	c->flags = flags;
	c->ep = c->pending_fd = c->pending_wake_fd = -1;
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		e = errno;
		snprintf(err, errlen, "socket: %s", strerror(e));
		goto fail;
	}
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	if (c->ep < 0 || epoll_ctl(c->ep, EPOLL_CTL_ADD, c->fd, &sev) < 0) {
		e = errno;
		snprintf(err, errlen, "epoll: %s", strerror(e));
		goto fail;
	}
	do
		r = connect(c->fd, (struct sockaddr *)&sa, sizeof(sa));
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		e = errno;
		connect_error(path, e, err, errlen);
		goto fail;
	}
	r = mtc_next(c, HELLO_TIMEOUT_MS, &c->hello, NULL, NULL, err, errlen);
	if (r <= 0) {
		e = r == 0 ? ETIMEDOUT : errno ? errno : ECONNRESET;
		if (r == 0)
			snprintf(err, errlen, "no Hello from mtraced at %s within %d ms", path,
			    HELLO_TIMEOUT_MS);
		goto fail;
	}
	if (c->hello->msg_case == MTRACE__SERVER_MSG__MSG_ERROR) {
		e = c->hello->error->code == MTRACE__ERROR__CODE__TOO_MANY_CLIENTS ? EBUSY : EPROTO;
		snprintf(err, errlen, "mtraced at %s refused the connection: %s", path,
		    c->hello->error->message ? c->hello->error->message : "?");
		goto fail;
	}
	if (c->hello->msg_case != MTRACE__SERVER_MSG__MSG_HELLO) {
		e = EPROTO;
		snprintf(err, errlen, "%s: the daemon did not start with Hello", path);
		goto fail;
	}
	if (c->hello->hello->version != MTRACE_PROTOCOL_VERSION) {
		e = EPROTO;
		snprintf(err, errlen, "mtraced speaks protocol %u, this client %d",
		    c->hello->hello->version, MTRACE_PROTOCOL_VERSION);
		goto fail;
	}
	if (!(flags & MTC_NO_HELLO)) {
		h.version = MTRACE_PROTOCOL_VERSION;
		h.software = (char *)(software ? software : "libmtrace-client " MTRACE_VERSION);
		m.msg_case = MTRACE__CLIENT_MSG__MSG_HELLO;
		m.hello = &h;
		if (mtc_send(c, &m) < 0) {
			e = errno;
			snprintf(err, errlen, "sending Hello to %s: %s", path, strerror(e));
			goto fail;
		}
	}
	return c;
fail:
	mtc_close(c);
	errno = e;
	return NULL;
}

struct mtc *mtc_connect(const char *path, const char *software, char *err, size_t errlen)
{
	return mtc_connect_flags(path, software, 0, err, errlen);
}
