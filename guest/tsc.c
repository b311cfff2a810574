/*
 * tsc.c - the guest's TSC clock: is the TSC usable, and the pvclock-style parameters
 * (docs/ring-protocol.md "Clocks") that turn its ticks into CLOCK_MONOTONIC ns.
 *
 * The TSC is a clock where CPUID says it is invariant, or where Xen says its PV guest's
 * TSC is (xen_pv_tsc_stable).
 *
 * rdtsc costs a third of clock_gettime here, and the clock is most of what a
 * timestamped event costs, so a guest whose TSC is invariant records raw ticks and
 * dom0 converts them.  The conversion is measured, not assumed: pairs of (TSC,
 * CLOCK_MONOTONIC) samples, the rate over a window of the last few seconds, and at
 * every recalibration a line that starts where the previous one stood (continuous, so
 * converted timestamps never jump) and aims at where CLOCK_MONOTONIC really is one
 * period later (so the error never accumulates, even while NTP slews the clock).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "mtrace-guest.h"

/* Bracketed reads per sample: the tightest bracket gives the best midpoint. */
#define SAMPLE_TRIES 9
/* A correction larger than this is a clock step (suspend, settimeofday on a
 * CLOCK_MONOTONIC that should not have one): start a new line there. */
#define STEP_NS (100 * 1000)
/* Plausible TSC rates: 10 MHz .. 100 GHz. */
#define RATE_MIN 0.01
#define RATE_MAX 100.0

#if defined(__x86_64__) || defined(__i386__)
/* A file's first line is want (sysfs). */
static bool file_is(const char *path, const char *want)
{
	char buf[32] = "";
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return false;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return strcmp(buf, want) == 0;
}

/*
 * In a Xen PV guest, Xen's own CPUID leaves (reached with the forced-emulation prefix,
 * ud2 "xen" cpuid, which Xen handles for PV guests in user mode too; anywhere else it
 * would be SIGILL, hence the sysfs check first).  Leaf base+3, subleaf 0 (Xen's
 * cpuid_hypervisor_leaves): EAX bit 0, rdtsc is emulated by Xen from its system time
 * (vtsc: one constant rate for every vCPU); bit 1, the host TSC is safe (invariant
 * across CPUs).  Either makes the TSC a clock, whatever the CPU's own CPUID says.
 */
static bool xen_pv_tsc_stable(void)
{
	unsigned r[4];

	if (!file_is("/sys/hypervisor/type", "xen") || !file_is("/sys/hypervisor/guest_type", "PV"))
		return false;
	for (unsigned base = 0x40000000; base < 0x40010000; base += 0x100) {
		__asm__ volatile(".byte 0x0f,0x0b; .ascii \"xen\"; cpuid"
		                 : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
		                 : "0"(base), "2"(0));
		if (r[1] != 0x566e6558 || r[2] != 0x65584d4d || r[3] != 0x4d4d566e)
			continue; /* not "XenVMMXenVMM" */
		if (r[0] < base + 3)
			return false;
		__asm__ volatile(".byte 0x0f,0x0b; .ascii \"xen\"; cpuid"
		                 : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
		                 : "0"(base + 3), "2"(0));
		return (r[0] & 3) != 0;
	}
	return false;
}
#endif

bool mtrace_tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	const char *env = getenv("MTRACE_TSC");

	/* MTRACE_TSC=0 forces the fallback (tests, or a TSC the operator distrusts). */
	if (env != NULL && strcmp(env, "0") == 0)
		return false;
	if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)) != 0)
		return true;
	return xen_pv_tsc_stable();
#else
	return false;
#endif
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One (tsc, ns) pair: the clock read between the two rdtscs closest together. */
static struct mtrace_tsc_sample sample(void)
{
	struct mtrace_tsc_sample best = { 0, 0 };
	uint64_t width = UINT64_MAX;

	for (int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t t0 = mtrace_rdtsc();
		uint64_t ns = mono_ns();
		uint64_t t1 = mtrace_rdtsc();
		if (t1 >= t0 && t1 - t0 < width) {
			width = t1 - t0;
			best.tsc = t0 + (t1 - t0) / 2;
			best.ns = ns;
		}
	}
	return best;
}

/* ns per tick as pvclock's mul/shift: rate = mul / 2^32 * 2^shift, mul in [2^31, 2^32). */
static void set_rate(struct mtrace_time_info *ti, double rate)
{
	int shift = 0;

	while (rate >= 1.0) {
		rate /= 2;
		shift++;
	}
	while (rate < 0.5) {
		rate *= 2;
		shift--;
	}
	double m = rate * 4294967296.0;
	ti->tsc_to_system_mul = m >= 4294967295.0 ? UINT32_MAX : (uint32_t)llround(m);
	ti->tsc_shift = (int8_t)shift;
}

static void push(struct mtrace_tsc_cal *c, struct mtrace_tsc_sample s)
{
	c->hist[c->nhist % MTRACE_TSC_HIST] = s;
	c->nhist++;
}

/* The rate over the window: newest sample against the oldest one kept. */
static double window_rate(const struct mtrace_tsc_cal *c)
{
	unsigned n = c->nhist < MTRACE_TSC_HIST ? c->nhist : MTRACE_TSC_HIST;
	struct mtrace_tsc_sample a = c->hist[(c->nhist - n) % MTRACE_TSC_HIST];
	struct mtrace_tsc_sample b = c->hist[(c->nhist - 1) % MTRACE_TSC_HIST];

	if (n < 2 || b.tsc <= a.tsc || b.ns <= a.ns)
		return 0;
	return (double)(b.ns - a.ns) / (double)(b.tsc - a.tsc);
}

int mtrace_tsc_calibrate(struct mtrace_tsc_cal *c, unsigned settle_us)
{
	struct timespec d = { 0, (long)(settle_us ? settle_us : 1) * 1000 };
	double rate;

	memset(c, 0, sizeof(*c));
	if (!mtrace_tsc_invariant()) {
		errno = ENOTSUP;
		return -1;
	}
	push(c, sample());
	nanosleep(&d, NULL);
	push(c, sample());
	rate = window_rate(c);
	if (!(rate >= RATE_MIN && rate <= RATE_MAX)) {
		errno = ERANGE;
		return -1;
	}
	c->ti.timeline = MTRACE_CLOCK_MONOTONIC;
	c->ti.tsc_timestamp = c->hist[1].tsc;
	c->ti.system_time = c->hist[1].ns;
	set_rate(&c->ti, rate);
	c->ti.calibrations = 1;
	c->rate = rate;
	return 0;
}

void mtrace_tsc_recalibrate(struct mtrace_tsc_cal *c)
{
	struct mtrace_tsc_sample s = sample();
	struct mtrace_tsc_sample prev = c->hist[(c->nhist - 1) % MTRACE_TSC_HIST];
	double rate, period, err, target;
	uint64_t here;

	if (s.tsc <= prev.tsc || s.ns <= prev.ns)
		return; /* a TSC or clock that went backwards: keep the line we have */
	push(c, s);
	rate = window_rate(c);
	if (!(rate >= RATE_MIN && rate <= RATE_MAX))
		return;
	here = mtrace_time_convert(&c->ti, s.tsc);
	err = (double)(int64_t)(s.ns - here);
	/* Expect the next recalibration one period like the last one from now. */
	period = (double)(s.tsc - prev.tsc);
	if (fabs(err) > STEP_NS) {
		here = s.ns;
		target = rate;
	} else {
		target = rate + err / period;
		if (target < rate / 2)
			target = rate / 2;
	}
	c->ti.tsc_timestamp = s.tsc;
	c->ti.system_time = here;
	set_rate(&c->ti, target);
	c->ti.calibrations++;
	c->rate = rate;
	c->last_err_ns = err;
}

void mtrace_tsc_publish(const struct mtrace_tsc_cal *c, struct mtrace_ring_hdr *h)
{
	struct mtrace_time_info *t = &h->time;
	uint32_t seq = __atomic_load_n(&t->seq, __ATOMIC_RELAXED);

	/* Odd first, and nothing of the block before it (the fence keeps the stores after). */
	__atomic_store_n(&t->seq, seq | 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&t->timeline, c->ti.timeline, __ATOMIC_RELAXED);
	__atomic_store_n(&t->tsc_timestamp, c->ti.tsc_timestamp, __ATOMIC_RELAXED);
	__atomic_store_n(&t->system_time, c->ti.system_time, __ATOMIC_RELAXED);
	__atomic_store_n(&t->tsc_to_system_mul, c->ti.tsc_to_system_mul, __ATOMIC_RELAXED);
	__atomic_store_n(&t->tsc_shift, c->ti.tsc_shift, __ATOMIC_RELAXED);
	__atomic_store_n(&t->calibrations, c->ti.calibrations, __ATOMIC_RELAXED);
	__atomic_store_n(&t->seq, (seq | 1) + 1, __ATOMIC_RELEASE);
}
