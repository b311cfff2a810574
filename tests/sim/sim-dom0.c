/*
 * sim-dom0.c - the helpers of sim-test's dom0 side and of its guests: the broker's CLI,
 * guests made with it, xenstore waits and writes, faults checked in a child.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sim-test.h"
#include "simxen-proto.h"
#include "xenif.h"

const char *sim_self; /* argv[0], made absolute */

long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Run mtrace-simxen with the given arguments; first line of its stdout into out. */
__attribute__((format(printf, 3, 4))) int cli(char *out, size_t outlen, const char *fmt, ...)
{
	char cmd[4096], args[3500];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "'%s' %s", getenv("SIMXEN"), args);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char line[256] = "";
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	char rest[256];
	while (fgets(rest, sizeof(rest), p))
		;
	int st = pclose(p);
	line[strcspn(line, "\n")] = '\0';
	if (out)
		snprintf(out, outlen, "%s", line);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

unsigned create_guest(const char *name, const char *flags, const char *mode)
{
	char out[64];
	int rc = cli(out, sizeof(out), "create --name %s %s --log %s.log -- '%s' guest %s", name,
	    flags, name, sim_self, mode);
	REQUIRE(rc == 0 && atoi(out) > 0, "create %s: rc %d out '%s'", name, rc, out);
	return (unsigned)atoi(out);
}

struct xenif *open_x(unsigned parts)
{
	char err[256];
	struct xenif *x = xenif_open("sim", NULL, parts, err, sizeof(err));
	REQUIRE(x, "xenif_open: %s", err);
	return x;
}

/* Wait for a xenstore node to exist (and, if want, to hold want). */
__attribute__((format(printf, 4, 5))) char *wait_xs(
    struct xenif *x, const char *want, long ms, const char *fmt, ...)
{
	char path[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	long end = now_ms() + ms;
	do {
		char *v = x->ops->xs_read(x, 0, path, NULL);
		if (v && (!want || !strcmp(v, want)))
			return v;
		free(v);
		sleep_ms(10);
	} while (now_ms() < end);
	return NULL;
}

int parse_refs(const char *s, xenif_gref_t *refs, int max)
{
	int n = 0;
	char *end;
	while (n < max && *s) {
		refs[n++] = (xenif_gref_t)strtoul(s, &end, 10);
		if (end == s)
			return -1;
		s = end;
		while (*s == ' ')
			s++;
	}
	return n;
}

__attribute__((format(printf, 3, 4))) void xs_printf(
    struct xenif *x, const char *path, const char *fmt, ...)
{
	char v[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	if (x->ops->xs_write(x, 0, path, v, strlen(v)) < 0) {
		fprintf(stderr, "guest: xs_write %s: %s\n", path, strerror(errno));
		exit(3);
	}
}

/* Wait until fd is readable. */
bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* ================= dom0 side ================= */

static sigjmp_buf segv_jmp;
static void on_segv(int sig)
{
	siglongjmp(segv_jmp, 1);
}

/* Does writing to p fault?  Checked in a child so a wrong answer cannot corrupt us. */
bool write_faults(volatile uint8_t *p)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, on_segv);
		signal(SIGBUS, on_segv);
		if (sigsetjmp(segv_jmp, 1))
			_exit(42);
		p[0] = 0x55;
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 42;
}

bool page_is(const uint8_t *p, uint8_t v)
{
	for (int i = 0; i < PAGE; i++)
		if (p[i] != v)
			return false;
	return true;
}

void guest_cmd(
    struct xenif *x, unsigned dom, const char *c, const char *ack_prefix, char *ack, size_t acklen)
{
	char path[64];
	snprintf(path, sizeof(path), "/local/domain/%u/data/ack", dom);
	x->ops->xs_rm(x, 0, path);
	snprintf(path, sizeof(path), "/local/domain/%u/data/cmd", dom);
	x->ops->xs_write(x, 0, path, c, strlen(c));
	long end = now_ms() + 10000;
	ack[0] = '\0';
	while (now_ms() < end) {
		char *v = wait_xs(x, NULL, 50, "/local/domain/%u/data/ack", dom);
		if (v && !strncmp(v, ack_prefix, strlen(ack_prefix))) {
			snprintf(ack, acklen, "%s", v);
			free(v);
			return;
		}
		free(v);
	}
	REQUIRE(0, "domain %u: no ack for '%s'", dom, c);
}

bool dominfo(struct xenif *x, unsigned domid, struct xenif_dominfo *out)
{
	struct xenif_dominfo info[64];
	int n = x->ops->ctrl_domain_list(x, 0, info, 64);
	for (int i = 0; i < n; i++)
		if (info[i].domid == domid) {
			*out = info[i];
			return true;
		}
	return false;
}
