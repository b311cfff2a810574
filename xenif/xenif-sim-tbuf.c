/*
 * xenif-sim-tbuf.c - the simulated Xen's clock and scheduling (XENIF_CLOCK, XENIF_TBUF).
 *
 * The simulation's Xen system time is the host's CLOCK_MONOTONIC (issue 37's contract),
 * so a clock sample is a monotonic read between two realtime reads.
 *
 * The simulated hypervisor schedules nothing: a simulated domain is a Linux process and
 * its vCPUs are what the host kernel runs.  Each task (thread) of the process is one
 * vCPU, and its scheduling is the kernel's own account of it, /proc/PID/task/TID/schedstat
 * (time on a CPU, time runnable on a run queue, times run), read here and turned into
 * runstate intervals by mtraced (daemon/vcpu-sim.c).  It has no trace buffers: tbuf_*
 * say ENOTSUP, as on a Xen booted without them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xenif-sim-int.h"

static int64_t ts_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int xenif_sim_tbuf_open(
    struct xenif *x, uint32_t pages, uint32_t evt_mask, struct xenif_tbuf_info *info)
{
	(void)x, (void)pages, (void)evt_mask, (void)info;
	errno = ENOTSUP;
	return -1;
}

long xenif_sim_tbuf_read(struct xenif *x, uint32_t cpu, void *buf, size_t len)
{
	(void)x, (void)cpu, (void)buf, (void)len;
	errno = ENOTSUP;
	return -1;
}

void xenif_sim_tbuf_close(struct xenif *x)
{
	(void)x;
}

/* "run wait slices\n", three decimal numbers, as Linux writes it; -1 otherwise. */
static int read_schedstat(int dirfd, const char *tid, struct xenif_vcpu_sample *v)
{
	char path[300], buf[128];
	unsigned long long run, wait, slices;
	char *end;

	snprintf(path, sizeof(path), "%s/schedstat", tid);
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1; /* the task ended since the listing */
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	run = strtoull(buf, &end, 10);
	if (*end != ' ')
		return -1;
	wait = strtoull(end + 1, &end, 10);
	if (*end != ' ')
		return -1;
	slices = strtoull(end + 1, &end, 10);
	if ((*end != '\n' && *end != '\0') || errno)
		return -1;
	v->run_ns = run;
	v->wait_ns = wait;
	v->slices = slices;
	return 0;
}

int xenif_sim_sched_sample(struct xenif *x, xenif_domid_t domid, struct xenif_vcpu_sample *v,
    unsigned max, int64_t *realtime_ns, uint64_t *width_ns)
{
	struct sim *s = xenif_sim(x);
	uint32_t pid;
	char path[64];
	unsigned n = 0;

	if (s->domid != 0) {
		errno = EPERM;
		return -1;
	}
	if (xenif_sim_call(s, SIMXEN_CTRL_PID, 0, domid, 0, &pid) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	int64_t t0 = ts_ns(CLOCK_REALTIME);
	int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		errno = ESRCH; /* it exited since the broker answered */
		return -1;
	}
	DIR *d = fdopendir(dirfd);
	if (!d) {
		int e = errno;
		close(dirfd);
		errno = e;
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(d)) && n < max) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || tid > UINT32_MAX)
			continue;
		if (read_schedstat(dirfd, de->d_name, &v[n]) == 0)
			v[n++].id = (uint32_t)tid;
	}
	closedir(d);
	int64_t t1 = ts_ns(CLOCK_REALTIME);
	*realtime_ns = t0 + (t1 - t0) / 2;
	*width_ns = t1 > t0 ? (uint64_t)(t1 - t0) : 0;
	return (int)n;
}
