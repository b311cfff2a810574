/*
 * bench-vcpu-decode.c - what mtraced's Xen hypervisor source costs per record, without
 * Xen: windows of scheduler records as Xen writes them (tests/lib/xtrace.h) for CPUS
 * physical CPUs, DOMAINS domains of VCPUS vCPUs each switching in turn, decoded
 * (daemon/vcpu-decode.c), then merged across CPUs and turned into runstate intervals
 * (daemon/vcpu-runstate.c) pass by pass, as daemon/vcpu-xen.c does.  Thread CPU time.
 *
 * usage: bench-vcpu-decode [MILLION_RECORDS [CPUS [DOMAINS [VCPUS]]]]   (default 4 4 8 2)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vcpu-decode.h"
#include "vcpu-runstate.h"
#include "xtrace.h"

#define WINDOW (128u * 1024) /* a pass's window per CPU: 32 pages, xentrace's default */

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t intervals;

static void on_iv(void *arg, const struct vrs_interval *iv)
{
	(void)arg, (void)iv;
	intervals++;
}

int main(int argc, char **argv)
{
	double million = argc > 1 ? atof(argv[1]) : 4;
	unsigned cpus = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
	unsigned doms = argc > 3 ? (unsigned)atoi(argv[3]) : 8;
	unsigned vcpus = argc > 4 ? (unsigned)atoi(argv[4]) : 2;
	if (cpus < 1 || cpus > 256 || doms * vcpus < 2 * cpus || million <= 0) {
		fprintf(stderr,
		    "usage: bench-vcpu-decode [MILLION_RECORDS [CPUS [DOMAINS [VCPUS]]]]\n"
		    "(at least two vCPUs a CPU)\n");
		return 2;
	}
	uint8_t **win = calloc(cpus, sizeof(*win));
	size_t *len = calloc(cpus, sizeof(*len));
	struct vdec_cpu *dc = calloc(cpus, sizeof(*dc));
	size_t cap = (size_t)cpus * WINDOW / 12 + 16;
	struct vrec *recs = calloc(cap, sizeof(*recs));
	struct vcpu_runstate rs;
	if (!win || !len || !dc || !recs || vrs_init(&rs, doms * vcpus + 16) < 0)
		return 1;
	/* One pass's windows: each CPU runs its own vCPUs (c, c + CPUS, ...) in turn, each
	 * switch two runstate changes (out: runnable, or blocked and woken at once; in:
	 * running) and a switch record, a wake-up now and then: the verbose class as mtraced
	 * asks for it, every change consistent with the one before. */
	uint64_t per_pass = 0;
	for (unsigned c = 0; c < cpus; c++) {
		win[c] = malloc(WINDOW);
		struct xt_buf b = { win[c], 0, WINDOW };
		uint64_t t = 1000;
		unsigned mine = (doms * vcpus - c + cpus - 1) / cpus; /* vCPUs of this CPU */
		for (unsigned k = 0; b.len + 80 < WINDOW; k++, t += 1000) {
			unsigned a = c + cpus * (k % mine), n = c + cpus * ((k + 1) % mine);
			uint16_t ad = (uint16_t)(1 + a / vcpus), av = (uint16_t)(a % vcpus);
			uint16_t nd = (uint16_t)(1 + n / vcpus), nv = (uint16_t)(n % vcpus);
			if (k % 4 == 0) { /* blocks, and is woken at once */
				xt_runstate(&b, t, ad, av, XRUNSTATE_RUNNING, XRUNSTATE_BLOCKED);
				xt_two(&b, XTRC_SCHED_WAKE, t + 1, ad, av);
				xt_runstate(
				    &b, t + 1, ad, av, XRUNSTATE_BLOCKED, XRUNSTATE_RUNNABLE);
			} else {
				xt_runstate(&b, t, ad, av, XRUNSTATE_RUNNING, XRUNSTATE_RUNNABLE);
			}
			xt_runstate(&b, t + 2, nd, nv, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING);
			xt_switch(&b, t + 2, ad, av, nd, nv);
			per_pass += k % 4 == 0 ? 5 : 3;
		}
		len[c] = b.len;
	}
	uint64_t passes = (uint64_t)(million * 1e6 / (double)per_pass) + 1, records = 0;
	struct vdec_stats st = { 0 };
	struct vrs_out o = { on_iv, NULL, NULL };
	double t0 = cpu_s(), dec = 0;
	for (uint64_t p = 0; p < passes; p++) {
		/* every pass the same windows, their clock moved on: the CPUs' times go forward */
		size_t n = 0;
		double d0 = cpu_s();
		for (unsigned c = 0; c < cpus; c++) {
			dc[c].last_tsc = 0;
			n += vcpu_decode(&dc[c], c, win[c], len[c], recs + n, cap - n, &st);
		}
		dec += cpu_s() - d0;
		for (size_t i = 0; i < n; i++)
			recs[i].tsc += p * 1000000000ull;
		size_t ready = vrs_merge(recs, n, UINT64_MAX);
		vrs_apply(&rs, recs, ready, &o);
		vrs_cut(&rs, (p + 1) * 1000000000ull, &o);
		records += n;
	}
	double all = cpu_s() - t0;
	printf("bench-vcpu-decode: %" PRIu64 " records (%u CPUs, %u domains x %u vCPUs, %" PRIu64
	       " passes of %zu KiB a CPU)\n",
	    records, cpus, doms, vcpus, passes, (size_t)WINDOW / 1024);
	printf("  decode alone:                 %6.1f ns/record  %6.1f M records/s\n",
	    dec / (double)records * 1e9, (double)records / dec / 1e6);
	printf("  decode + merge + runstate:    %6.1f ns/record  %6.1f M records/s  (%" PRIu64
	       " intervals, %" PRIu64 " mismatches)\n",
	    all / (double)records * 1e9, (double)records / all / 1e6, intervals, rs.mismatches);
	printf("  (thread CPU time; rerun: %s %g %u %u %u)\n", argv[0], million, cpus, doms, vcpus);
	return 0;
}
