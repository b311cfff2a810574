/*
 * proto-fuzz - a protocol fuzzer against a live mtraced: connection after connection
 * (up to 8 open at once, some left hanging, some closed mid-frame) sends a generated,
 * mutated request stream (gen.c), most of them after a valid Hello so that the
 * mutations reach the session's paths; what the daemon answers is read and dropped.
 * Every 2,000 connections, and at the end, a well-behaved client must get a Stats
 * within 5 s, and the daemon's RSS and descriptors are printed (-p PID).
 *
 *   proto-fuzz -S SOCKET [-n CONNECTIONS] [-p MTRACED_PID] [-s SEED]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "frame.h"
#include "gen.h"
#include "mtrace-client.h"

#define OPEN_MAX_CONNS 8

static const char *sock_path;
static int mtraced_pid;

static int raw_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static void drain(int fd)
{
	char buf[65536];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* Send what the socket takes now; a daemon that closed us is fine. */
static size_t send_some(int fd, const uint8_t *p, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = send(fd, p + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	return off;
}

static uint64_t count_frames(const uint8_t *p, size_t n)
{
	uint64_t k = 0;
	size_t off = 0, hdr, mlen;

	while (off < n &&
	    frame_parse(p + off, n - off, FRAME_MAX_TO_DAEMON, &hdr, &mlen) == FRAME_OK) {
		k++;
		off += hdr + mlen;
	}
	return k;
}

static long status_kib(const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", mtraced_pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

static int fd_count(void)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", mtraced_pid);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A well-behaved client gets a Stats within 5 s: the daemon is alive and serving. */
static int health(uint64_t conns)
{
	Mtrace__Subscribe sub = MTRACE__SUBSCRIBE__INIT;
	char err[256];
	struct mtc *c = NULL;
	struct timespec t0, t1;
	int ok = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* the fuzzer's own connections may still hold its uid's share of the places
	 * (max_clients_per_uid) until the daemon has seen them close: retry for 5 s */
	for (int i = 0; i < 50 && !c; i++) {
		c = mtc_connect(sock_path, "proto-fuzz-health", err, sizeof(err));
		if (!c)
			usleep(100000);
	}
	if (c) {
		sub.stats_interval_ms = 100;
		sub.top_n = 10;
		sub.label_stats = 1;
		if (mtc_subscribe(c, &sub) == 0) {
			for (int i = 0; i < 50 && !ok; i++) {
				Mtrace__ServerMsg *m;
				if (mtc_next(c, 100, &m, NULL, NULL, err, sizeof(err)) == 1) {
					ok = m->msg_case == MTRACE__SERVER_MSG__MSG_STATS;
					mtc_msg_free(m);
				}
			}
		}
		mtc_close(c);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("proto-fuzz: after %" PRIu64 " connections: health %s in %.0f ms", conns,
	    ok ? "ok" : "FAILED",
	    (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	if (mtraced_pid)
		printf(", mtraced RSS %ld KiB, %d fds", status_kib("VmRSS:"), fd_count());
	printf("\n");
	fflush(stdout);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 18];
	static const uint8_t hello[] = { 0x14, 0x0a, 0x12, 0x08, 0x01, 0x12, 0x0e, 'p', 'r', 'o',
		't', 'o', '-', 'f', 'u', 'z', 'z', ' ', '0', '.', '1' };
	struct gen g = { 0x243F6A8885A308D3ull };
	int open_fds[OPEN_MAX_CONNS];
	unsigned nopen = 0;
	uint64_t n = 100000, frames = 0, bytes = 0, refused = 0;
	int ch;

	while ((ch = getopt(argc, argv, "S:n:p:s:")) != -1) {
		switch (ch) {
		case 'S':
			sock_path = optarg;
			break;
		case 'n':
			n = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			mtraced_pid = atoi(optarg);
			break;
		case 's':
			g.rng = strtoull(optarg, NULL, 10) | 1;
			break;
		default:
			goto usage;
		}
	}
	if (!sock_path)
		goto usage;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0; i < n; i++) {
		int fd = raw_connect();
		if (fd < 0) {
			refused++;
			usleep(1000);
			continue;
		}
		if (gen_next(&g) % 4) {
			/* a length prefix, then ClientMsg{hello{version 1, software}} */
			send_some(fd, hello, sizeof(hello));
			frames++;
		}
		size_t len = gen_stream(&g, buf, sizeof(buf));
		size_t sent = send_some(fd, buf, len);
		frames += count_frames(buf, sent);
		bytes += sent;
		drain(fd);
		if (gen_next(&g) % 8 == 0 && nopen < OPEN_MAX_CONNS) {
			open_fds[nopen++] = fd; /* left open: the deadlines must close it */
		} else {
			close(fd);
		}
		if (nopen == OPEN_MAX_CONNS) {
			for (unsigned k = 0; k < nopen; k++) {
				drain(open_fds[k]);
				close(open_fds[k]);
			}
			nopen = 0;
		}
		if (i % 2000 == 1999 && health(i + 1) < 0)
			return 1;
	}
	for (unsigned k = 0; k < nopen; k++)
		close(open_fds[k]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double t = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("proto-fuzz: %" PRIu64 " connections, %" PRIu64 " frames (%" PRIu64
	       " bytes) in %.1f s, %" PRIu64 " connects refused\n",
	    n, frames, bytes, t, refused);
	return health(n) < 0 ? 1 : 0;
usage:
	fprintf(
	    stderr, "usage: proto-fuzz -S SOCKET [-n CONNECTIONS] [-p MTRACED_PID] [-s SEED]\n");
	return 2;
}
