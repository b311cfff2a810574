/*
 * mtrace-client.h - libmtrace-client's connection: connect to mtraced, frame, subscribe,
 * receive, blocking (mtc_next waits with a timeout, or polls with 0).  Tools and tests
 * that read one stream use it as it is; programs on a libevent loop use the session
 * over it (session.h), which also owns reconnection.
 */
#ifndef MTRACE_CLIENT_H
#define MTRACE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "mtrace-proto.h"
#include "mtrace.pb-c.h"

#define MTRACE_DEFAULT_SOCKET "/run/mtrace/mtraced.sock"

struct mtc;

/*
 * A command-line number in min..max, or "PROG: bad WHAT 'S' (MIN..MAX)" on stderr and
 * exit status 2 (a usage error), as the clients' option parsers want it.
 */
unsigned long mtc_parse_num(
    const char *prog, const char *s, const char *what, unsigned long min, unsigned long max);

/* $MTRACE_SOCKET if set, else MTRACE_DEFAULT_SOCKET. */
const char *mtc_default_socket(void);

/*
 * Connect to the daemon at path (NULL: default), exchange Hello.  On failure returns
 * NULL, errno set, and a sentence for the user in err naming the socket path
 * ("mtraced is not running (no socket at /run/mtrace/mtraced.sock)").
 */
struct mtc *mtc_connect(const char *path, const char *software, char *err, size_t errlen);
/* Flags for mtc_connect_flags. */
#define MTC_NO_HELLO 0x1 /* read the daemon's Hello but do not answer (protocol tests) */
/* Shared memory woken by SharedWake messages, not the region's eventfd, as clients
 * before it were (protocol tests). */
#define MTC_NO_WAKE_FD 0x2
struct mtc *mtc_connect_flags(
    const char *path, const char *software, unsigned flags, char *err, size_t errlen);
void mtc_close(struct mtc *c);
/* The descriptor to wait on for reading, then call mtc_next: an epoll set of the socket
 * and, with shared memory, the region's eventfd (readable when either has news). */
int mtc_fd(const struct mtc *c);
const Mtrace__Hello *mtc_server_hello(const struct mtc *c);

/* Set sub->shared_memory to have the events come through a shared-memory region
 * (docs/stream-protocol.md); mtc_next reads it as it reads the socket. */
int mtc_subscribe(struct mtc *c, const Mtrace__Subscribe *sub);
/* 1 while the events come through shared memory, 0 while on the socket. */
int mtc_shared(const struct mtc *c);
int mtc_send(struct mtc *c, const Mtrace__ClientMsg *msg);
/* Write bytes as they are (tests of the daemon's framing checks); -1 with errno. */
int mtc_send_raw(struct mtc *c, const void *buf, size_t len);

/*
 * Next message from the daemon.  timeout_ms < 0 waits forever, 0 polls.
 * Returns 1 with *out set (free with mtc_msg_free), 0 on timeout, -1 on EOF (errno 0)
 * or error (errno set, reason in err; EINTR when a signal interrupted the wait, and
 * the call may simply be repeated).  If raw/raw_len are non-NULL they receive the
 * frame's bytes as received (prefix included), valid until the next call.
 * out may be NULL to skip decoding (raw frames only).
 */
int mtc_next(struct mtc *c, int timeout_ms, Mtrace__ServerMsg **out, const uint8_t **raw,
    size_t *raw_len, char *err, size_t errlen);
void mtc_msg_free(Mtrace__ServerMsg *m);

#endif
