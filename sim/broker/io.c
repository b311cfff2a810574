/*
 * io.c - the broker's log line and the push sockets its event channels and xenstore
 * hand out: helpers every part uses, calling none of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker.h"

void blog(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "mtrace-simxen: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A push-only socket pair (event deliveries, watch events): the broker's end does not
 * block and gets a write event (cb, arg) for when the client is slow to read.  Returns
 * the broker's end, or -1 with errno. */
int conn_push_pair(
    struct broker *b, event_callback_fn cb, void *arg, struct event **ev, int *client_fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	*ev = event_new(b->base, sv[0], EV_WRITE, cb, arg);
	if (!*ev) {
		close(sv[0]);
		close(sv[1]);
		errno = ENOMEM;
		return -1;
	}
	*client_fd = sv[1];
	return sv[0];
}
