/* stream-socket.h - the listening socket of the stream server (stream-socket.c). */
#ifndef MTRACED_STREAM_SOCKET_H
#define MTRACED_STREAM_SOCKET_H

#include <stdbool.h>
#include <stddef.h>

struct mtraced_config;

/* The listening fd (systemd's or our own, then *own is set and path names it); -1
 * with a reason in err. */
int stream_socket_open(const struct mtraced_config *cfg, char *path, size_t pathlen, bool *own,
    char *err, size_t errlen);

#endif
