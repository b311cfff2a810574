/*
 * xenif-xen-clock.c - Xen system time read from a Linux process on real Xen, against a
 * clock of the same kernel (the real backend's clock_sample and clock_pair;
 * docs/xen-time.md says what each source gives and needs).  In order:
 *
 *  1. pvclock in the vDSO: where Xen's TSC is stable, Linux maps vCPU 0's
 *     vcpu_time_info into every process ([vvar], the page after the vvar page up to
 *     Linux 6.12, the first page of [vvar_vclock] after): read between two reads of the
 *     clock, as precise as the clock.  Probed once (a page Linux did not fill cannot be
 *     touched: it would be SIGBUS), checked for the stable flag on every read.
 *  2. runstate bounds through libxencall (xen-time.h): needs /dev/xen/privcmd (root; in
 *     a domU, Linux lets hypercalls through only with xen_privcmd.unrestricted=1).  Each
 *     bound sleeps a few hundred microseconds, so where the kernel's clocksource is
 *     "xen" -- its counter IS Xen system time, and CLOCK_MONOTONIC_RAW runs 1 ns per ns
 *     of it -- C = Xen - CLOCK_MONOTONIC_RAW is measured once (narrowed by every new
 *     bound) and a sample is then three clock reads; elsewhere every pair is measured.
 *     A long-lived reader (mtraced: xenif_xen_clock_open(true)) keeps narrowing C in a
 *     thread of its own, from its start and once a second, off its event loop: one
 *     bound is as wide as the vCPU's running time between two clock reads (a
 *     millisecond and more on a busy dom0), and the narrowest moments of minutes are
 *     what makes the interval narrow.
 *  3. else -1/ENOTSUP: no figure is made up.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xencall.h>
#include <xenctrl.h> /* the public headers, with the types they need */
#include <xen/vcpu.h>
#include <xentoollog.h>

#include "xen-time.h"
#include "xenif-xen-clock.h"

#define PAGE          4096
#define BRACKET_TRIES 5             /* the narrowest of this many clock brackets */
#define BOUND_TRIES   4             /* runstate bounds tried for one that qualifies */
#define BOUND_SLEEP   300000        /* ns slept between the two runstate calls */
#define CAL_MIN       6             /* bounds on C before the first raw sample */
#define CAL_EVERY_NS  10000000000LL /* then one more bound this often: a moved C shows */
#define KEEP_EVERY_NS 1000000000LL  /* a kept clock: one more bound this often */
#define KEEP_WAIT_S   10            /* a pair waits this long for the first CAL_MIN bounds */
#define PV_CHECK_NS   2000000       /* pvclock against CLOCK_MONOTONIC_RAW over this */
#define CS_PATH       "/sys/devices/system/clocksource/clocksource0/current_clocksource"

struct xen_clock {
	pthread_mutex_t lock;
	const volatile struct xentime_pvclock *pv; /* the vDSO's block, or NULL */
	xencall_handle *xcall;                     /* runstate bounds, or NULL */
	struct vcpu_runstate_info *rs;             /* the hypercall's buffer */
	bool runstate_ok;                          /* a hypercall went through */
	int cs_fd;                                 /* the kernel's clocksource, or -1 */
	char cs_name[32];                          /* at the last look */
	unsigned cs_gen;                           /* clocksource changes seen */
	struct xentime_kept raw;                   /* C = Xen - CLOCK_MONOTONIC_RAW */
	int64_t raw_checked;                       /* its last bound (not kept: no thread) */

	/* the narrowing thread of a kept clock (keep): it alone bounds C_raw then */
	bool keep, keep_stop, keep_done; /* started, told to stop, gave up */
	pthread_t keep_thread;
	pthread_cond_t keep_cond;           /* raw.n grew, keep_done, or keep_stop */
	struct vcpu_runstate_info *keep_rs; /* the thread's own hypercall buffer */
};

static int64_t now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return 0; /* no pvclock elsewhere: find_pvclock finds none */
#endif
}

/* Readable without a fault?  A vvar page Linux did not fill is SIGBUS to touch; the
 * kernel's own copy from it fails with EFAULT instead. */
static bool readable(const void *p, size_t n)
{
	int fds[2];
	bool ok;

	if (pipe(fds) < 0)
		return false;
	ok = write(fds[1], p, n) == (ssize_t)n;
	close(fds[0]);
	close(fds[1]);
	return ok;
}

/* The page of the vDSO data where Linux puts vCPU 0's pvclock (arch/x86/entry/vdso/
 * vdso-layout.lds.S): 6.1's [vvar] of 4 pages (vvar, pvclock, hvclock, timens), or the
 * first page of a [vvar_vclock] mapping of later kernels. */
static const void *pvclock_page(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long lo, hi;
	const void *page = NULL;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (strstr(line, "[vvar_vclock]")) {
			page = (const void *)lo;
			break;
		}
		if (strstr(line, "[vvar]") && hi - lo == 4 * PAGE)
			page = (const void *)(lo + PAGE);
	}
	fclose(f);
	return page;
}

/* Use the vDSO's block only if it is there, says the TSC is stable, and keeps time with
 * this kernel's clocksource (1 % over PV_CHECK_NS): a layout read wrong shows here. */
static void find_pvclock(struct xen_clock *c)
{
	const volatile struct xentime_pvclock *pv = pvclock_page();
	uint64_t p0, p1;

	if (!pv || !readable((const void *)pv, sizeof(*pv)))
		return;
	int64_t r0 = now(CLOCK_MONOTONIC_RAW);
	if (xentime_pvclock_read(pv, rdtsc, &p0) < 0)
		return;
	struct timespec d = { 0, PV_CHECK_NS };
	nanosleep(&d, NULL);
	int64_t r1 = now(CLOCK_MONOTONIC_RAW);
	if (xentime_pvclock_read(pv, rdtsc, &p1) < 0 || p1 <= p0)
		return;
	int64_t dp = (int64_t)(p1 - p0), dr = r1 - r0;
	if (llabs(dp - dr) <= dr / 100 + 50000)
		c->pv = pv;
}

static void quiet(struct xentoollog_logger *l, xentoollog_level level, int errnoval,
    const char *context, const char *format, va_list al)
{
	/* a process without privcmd is told by ENOTSUP, not by a line on its stderr */
	(void)l, (void)level, (void)errnoval, (void)context, (void)format, (void)al;
}

static void quiet_destroy(struct xentoollog_logger *l)
{
	(void)l;
}

static struct xentoollog_logger quiet_logger = {
	.vmessage = quiet,
	.destroy = quiet_destroy,
};

static void open_runstate(struct xen_clock *c)
{
	if (access("/dev/xen/privcmd", R_OK | W_OK) < 0 &&
	    access("/proc/xen/privcmd", R_OK | W_OK) < 0)
		return;
	c->xcall = xencall_open(&quiet_logger, 0);
	if (!c->xcall)
		return;
	c->rs = xencall_alloc_buffer(c->xcall, sizeof(*c->rs));
	if (!c->rs) {
		xencall_close(c->xcall);
		c->xcall = NULL;
		return;
	}
	c->runstate_ok = true; /* until a hypercall says otherwise */
	c->cs_fd = open(CS_PATH, O_RDONLY | O_CLOEXEC);
}

/* The pvclock between two reads of clk, the narrowest of a few. */
static int pv_pair(struct xen_clock *c, clockid_t clk, struct xenif_clock_pair *p)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < BRACKET_TRIES; i++) {
		uint64_t x;
		int64_t a = now(clk);
		if (xentime_pvclock_read(c->pv, rdtsc, &x) < 0)
			return -1; /* the TSC stopped being stable: say so */
		int64_t b = now(clk);
		if (b < a || (uint64_t)(b - a) >= best)
			continue;
		best = (uint64_t)(b - a);
		p->xen_ns = x;
		p->clk_ns = a + (b - a) / 2;
		p->width_ns = best;
	}
	if (best == UINT64_MAX) {
		errno = EAGAIN;
		return -1;
	}
	p->how = "pvclock";
	return 0;
}

/* -1 with *refused set when privcmd lets no hypercall through (EPERM in a domU without
 * xen_privcmd.unrestricted). */
static int runstate(struct xen_clock *c, struct vcpu_runstate_info *rs, int vcpu,
    struct xentime_runstate *r, bool *refused)
{
	if (xencall3(c->xcall, __HYPERVISOR_vcpu_op, VCPUOP_get_runstate_info, (uint64_t)vcpu,
	        (uint64_t)(uintptr_t)rs) < 0) {
		if (errno == EPERM || errno == ENOSYS || errno == EACCES)
			*refused = true;
		return -1;
	}
	r->state = rs->state;
	r->entry = rs->state_entry_time & ~XEN_RUNSTATE_UPDATE;
	for (int s = 0; s < 4; s++)
		r->time[s] = rs->time[s];
	return 0;
}

/* One bound on Xen - clk around a short sleep (the vCPU then blocks and wakes), with
 * hypercall buffer rs (the caller's under the lock, or the narrowing thread's own). */
static int bound_with(struct xen_clock *c, struct vcpu_runstate_info *rs, clockid_t clk,
    int64_t *lo, int64_t *hi, bool *refused)
{
	for (int i = 0; i < BOUND_TRIES; i++) {
		struct xentime_runstate a, b;
		struct timespec d = { 0, BOUND_SLEEP };
		int cpu = sched_getcpu();

		/* the vCPU is a hint: xentime_runstate_bound refuses what is not one vCPU's */
		int64_t before = now(clk);
		if (cpu < 0 || runstate(c, rs, cpu, &a, refused) < 0)
			return -1;
		nanosleep(&d, NULL);
		if (runstate(c, rs, cpu, &b, refused) < 0)
			return -1;
		int64_t after = now(clk);
		if (xentime_runstate_bound(&a, &b, before, after, lo, hi) == 0)
			return 0;
	}
	return -1;
}

static int bound(struct xen_clock *c, clockid_t clk, int64_t *lo, int64_t *hi)
{
	bool refused = false;
	int rc = bound_with(c, c->rs, clk, lo, hi, &refused);

	if (refused)
		c->runstate_ok = false;
	return rc;
}

/* The kernel's clocksource is Xen's own ("xen"): then CLOCK_MONOTONIC_RAW keeps a
 * constant distance to Xen system time.  A change of clocksource starts C again. */
static bool raw_is_xen(struct xen_clock *c)
{
	char name[sizeof(c->cs_name)];
	ssize_t n = c->cs_fd < 0 ? -1 : pread(c->cs_fd, name, sizeof(name) - 1, 0);

	if (n <= 0)
		return false;
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
	if (strcmp(name, c->cs_name) != 0) {
		memcpy(c->cs_name, name, sizeof(name));
		c->raw = (struct xentime_kept){ 0 };
		c->cs_gen++;
	}
	return strcmp(name, "xen") == 0;
}

/* C = Xen - CLOCK_MONOTONIC_RAW, measured to CAL_MIN bounds, one more every
 * CAL_EVERY_NS, each through xentime_kept_add (a moved C shows in two bounds); a kept
 * clock's thread does the bounding itself. */
static int raw_calibrate(struct xen_clock *c)
{
	int64_t mono, lo, hi;

	if (c->keep) { /* the thread bounds C_raw: wait for its first CAL_MIN, no longer */
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += KEEP_WAIT_S;
		while (c->raw.iv.n < CAL_MIN && !c->keep_done &&
		    pthread_cond_timedwait(&c->keep_cond, &c->lock, &until) == 0)
			;
		if (c->raw.iv.n > 0)
			return 0;
		errno = EAGAIN;
		return -1;
	}
	mono = now(CLOCK_MONOTONIC);
	if (c->raw.iv.n >= CAL_MIN && mono - c->raw_checked < CAL_EVERY_NS)
		return 0;
	for (int tries = 0; tries < 3 * CAL_MIN; tries++) {
		if (bound(c, CLOCK_MONOTONIC_RAW, &lo, &hi) < 0) {
			if (!c->runstate_ok)
				return -1;
			continue;
		}
		xentime_kept_add(&c->raw, lo, hi);
		c->raw_checked = now(CLOCK_MONOTONIC);
		/* a check that met the interval is enough; one that did not starts it again */
		if (c->raw.iv.n >= CAL_MIN)
			return 0;
	}
	if (c->raw.iv.n == 0) {
		errno = EAGAIN;
		return -1;
	}
	return 0;
}

/* CLOCK_MONOTONIC_RAW between two reads of clk, the narrowest of a few, plus C. */
static int raw_pair(struct xen_clock *c, clockid_t clk, struct xenif_clock_pair *p)
{
	uint64_t best = UINT64_MAX;

	if (raw_calibrate(c) < 0)
		return -1;
	for (int i = 0; i < BRACKET_TRIES; i++) {
		int64_t a = now(clk);
		int64_t r = now(CLOCK_MONOTONIC_RAW);
		int64_t b = now(clk);
		if (b < a || (uint64_t)(b - a) >= best)
			continue;
		best = (uint64_t)(b - a);
		p->xen_ns = (uint64_t)(r + c->raw.iv.lo + (c->raw.iv.hi - c->raw.iv.lo) / 2);
		p->clk_ns = a + (b - a) / 2;
	}
	if (best == UINT64_MAX) {
		errno = EAGAIN;
		return -1;
	}
	p->width_ns = best + (uint64_t)(c->raw.iv.hi - c->raw.iv.lo);
	p->how = "runstate+raw";
	return 0;
}

/* Bounds on Xen - clk itself, narrowed over a few (a clocksource other than Xen's). */
static int direct_pair(struct xen_clock *c, clockid_t clk, struct xenif_clock_pair *p)
{
	struct xentime_interval iv = { 0 };
	int64_t lo, hi;

	for (int i = 0; i < 3; i++)
		if (bound(c, clk, &lo, &hi) == 0)
			xentime_interval_add(&iv, lo, hi);
	if (iv.n == 0) {
		if (errno != EPERM && errno != ENOSYS && errno != EACCES)
			errno = EAGAIN;
		return -1;
	}
	p->clk_ns = now(clk);
	p->xen_ns = (uint64_t)(p->clk_ns + iv.lo + (iv.hi - iv.lo) / 2);
	p->width_ns = (uint64_t)(iv.hi - iv.lo);
	p->how = "runstate";
	return 0;
}

/* A kept clock's thread: C_raw bounded CAL_MIN times at once, then once a second, while
 * the clocksource is Xen's; it ends when privcmd refuses the hypercall or at close. */
static void *keep_main(void *arg)
{
	struct xen_clock *c = arg;
	bool refused = false;
	unsigned quick = 0; /* bounds tried back to back towards the first CAL_MIN */

	pthread_mutex_lock(&c->lock);
	while (!c->keep_stop && !refused) {
		bool xen = raw_is_xen(c);
		unsigned gen = c->cs_gen;
		int64_t lo, hi;
		int rc = -1;

		if (xen) {
			pthread_mutex_unlock(&c->lock);
			rc = bound_with(c, c->keep_rs, CLOCK_MONOTONIC_RAW, &lo, &hi, &refused);
			pthread_mutex_lock(&c->lock);
		}
		if (rc == 0 && gen == c->cs_gen) { /* not across a change of clocksource */
			xentime_kept_add(&c->raw, lo, hi);
			pthread_cond_broadcast(&c->keep_cond);
		}
		if (xen && c->raw.iv.n < CAL_MIN && quick++ < 3 * CAL_MIN)
			continue;
		if (c->raw.iv.n >= CAL_MIN)
			quick = 0;
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += KEEP_EVERY_NS / 1000000000;
		while (
		    !c->keep_stop && pthread_cond_timedwait(&c->keep_cond, &c->lock, &until) == 0)
			;
	}
	if (refused)
		c->runstate_ok = false;
	c->keep_done = true;
	pthread_cond_broadcast(&c->keep_cond);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void keep_start(struct xen_clock *c)
{
	pthread_condattr_t ca;

	c->keep_rs = xencall_alloc_buffer(c->xcall, sizeof(*c->keep_rs));
	if (!c->keep_rs)
		return; /* no thread: pairs calibrate as a short-lived reader's do */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->keep_cond, &ca);
	pthread_condattr_destroy(&ca);
	/* every signal blocked in the thread: they are the program's main thread's (mtraced
	 * takes SIGTERM and SIGHUP through libevent), and a bound's sleep is not cut short */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	c->keep = pthread_create(&c->keep_thread, NULL, keep_main, c) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!c->keep) {
		pthread_cond_destroy(&c->keep_cond);
		xencall_free_buffer(c->xcall, c->keep_rs);
		c->keep_rs = NULL;
	}
}

struct xen_clock *xenif_xen_clock_open(bool keep)
{
	struct xen_clock *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->cs_fd = -1;
	find_pvclock(c);
	if (!c->pv)
		open_runstate(c);
	if (keep && c->xcall)
		keep_start(c);
	return c;
}

void xenif_xen_clock_close(struct xen_clock *c)
{
	if (!c)
		return;
	if (c->keep) {
		pthread_mutex_lock(&c->lock);
		c->keep_stop = true;
		pthread_cond_broadcast(&c->keep_cond);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->keep_thread, NULL);
		pthread_cond_destroy(&c->keep_cond);
		xencall_free_buffer(c->xcall, c->keep_rs);
	}
	if (c->xcall) {
		xencall_free_buffer(c->xcall, c->rs);
		xencall_close(c->xcall);
	}
	if (c->cs_fd >= 0)
		close(c->cs_fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int xenif_xen_clock_pair(struct xen_clock *c, clockid_t clk, struct xenif_clock_pair *p)
{
	int rc;

	if (!c) {
		errno = EBADF;
		return -1;
	}
	pthread_mutex_lock(&c->lock);
	if (c->pv)
		rc = pv_pair(c, clk, p);
	else if (!c->xcall || !c->runstate_ok) {
		errno = ENOTSUP;
		rc = -1;
	} else if (raw_is_xen(c))
		rc = raw_pair(c, clk, p);
	else
		rc = direct_pair(c, clk, p);
	if (rc < 0 && c->xcall && !c->runstate_ok && !c->pv)
		errno = ENOTSUP; /* privcmd refused: there is no source here */
	int e = errno;
	pthread_mutex_unlock(&c->lock);
	errno = e;
	return rc;
}
