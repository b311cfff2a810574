/*
 * stream-socket.c - the listening socket: taken from systemd when socket-activated,
 * else created at socket_path with mode 0660 and group socket_group.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/util.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "log.h"
#include "stream-socket.h"

static int
mkdir_parent(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
			return -1;
		}
		*p = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* Remove a socket file left by a dead daemon, but never steal a live one's. */
static int
clear_stale(const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat st;
	int fd, r;

	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s", sa->sun_path,
						       strerror(errno)), -1);
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket", sa->sun_path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (r == 0) {
		snprintf(err, errlen, "%s: another mtraced is listening", sa->sun_path);
		return -1;
	}
	if (unlink(sa->sun_path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "unlink %s: %s", sa->sun_path, strerror(errno));
		return -1;
	}
	return 0;
}

static int
make_socket(const struct mtraced_config *cfg, char *path, size_t pathlen, char *err,
	    size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct group *gr;
	mode_t old;
	int fd;

	if (strlen(cfg->socket_path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", cfg->socket_path);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cfg->socket_path);
	if (mkdir_parent(sa.sun_path, err, errlen) < 0 || clear_stale(&sa, err, errlen) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* No window in which the socket exists with a wider mode than 0660. */
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		snprintf(err, errlen, "bind %s: %s", sa.sun_path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	if (listen(fd, 64) < 0) {
		snprintf(err, errlen, "listen %s: %s", sa.sun_path, strerror(errno));
		close(fd);
		unlink(sa.sun_path);
		return -1;
	}
	if (chmod(sa.sun_path, 0660) < 0)
		log_warn("chmod %s", sa.sun_path);
	gr = cfg->socket_group[0] ? getgrnam(cfg->socket_group) : NULL;
	if (!gr)
		log_info("group '%s' does not exist: %s stays 0660 for its owner only",
			 cfg->socket_group, sa.sun_path);
	else if (chown(sa.sun_path, (uid_t)-1, gr->gr_gid) < 0)
		log_warn("chgrp %s %s", cfg->socket_group, sa.sun_path);
	snprintf(path, pathlen, "%s", sa.sun_path);
	return fd;
}

static int
systemd_socket(void)
{
	int n = sd_listen_fds(0);

	if (n <= 0)
		return -1;
	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++)
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0)
			return fd;
	log_warnx("socket activation: none of %d descriptors is a listening Unix socket", n);
	return -1;
}

int
stream_socket_open(const struct mtraced_config *cfg, char *path, size_t pathlen, bool *own,
		   char *err, size_t errlen)
{
	int fd = systemd_socket();

	*own = false;
	if (fd >= 0) {
		evutil_make_socket_nonblocking(fd);
		evutil_make_socket_closeonexec(fd);
		snprintf(path, pathlen, "(socket-activated fd %d)", fd);
		log_info("listening on the socket-activated descriptor %d", fd);
		return fd;
	}
	fd = make_socket(cfg, path, pathlen, err, errlen);
	if (fd < 0)
		return -1;
	*own = true;
	log_info("listening on %s", path);
	return fd;
}
