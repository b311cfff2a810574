/*
 * vcpu.c - unit tests of Xen's scheduler records decoded (daemon/vcpu-decode.c) and
 * turned into runstate intervals (daemon/vcpu-runstate.c), on windows written as Xen
 * writes them (tests/lib/xtrace.h).
 */
#include <stdint.h>
#include <string.h>

#include "unit.h"
#include "vcpu-decode.h"
#include "vcpu-runstate.h"
#include "xtrace.h"

static uint8_t mem[8192];

static struct xt_buf fresh(void)
{
	return (struct xt_buf){ .p = mem, .cap = sizeof(mem) };
}

static void decode_kinds(void)
{
	struct xt_buf b = fresh();
	struct vdec_cpu c = { 0 };
	struct vdec_stats st = { 0 };
	struct vrec r[16];

	xt_runstate(&b, 100, 5, 1, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING);
	xt_two(&b, XTRC_SCHED_WAKE, 110, 5, 2);
	xt_two(&b, XTRC_SCHED_BLOCK, 120, 6, 0);
	xt_two(&b, XTRC_SCHED_YIELD, 130, 6, 0);
	xt_switch(&b, 140, 5, 1, 6, 0);
	xt_lost(&b, 150, 42, 7, 3, 145);
	uint32_t pad[3] = { 0 };
	xt_rec(&b, XTRC_WRAP_BUFFER, 0, 0, pad, 3);
	size_t n = vcpu_decode(&c, 3, b.p, b.len, r, 16, &st);

	CHECK(n == 6, "six scheduler records kept: %zu", n);
	CHECK(st.records == 7 && st.other == 1 && st.bad == 0 && st.cut_bytes == 0,
	    "the wrap record skipped as padding");
	CHECK(r[0].kind == VREC_RUNSTATE && r[0].domid == 5 && r[0].vcpu == 1 &&
	        r[0].old_state == XRUNSTATE_RUNNABLE && r[0].new_state == XRUNSTATE_RUNNING &&
	        r[0].tsc == 100 && r[0].cpu == 3,
	    "runstate change: domain, vcpu, states, time, CPU");
	CHECK(r[1].kind == VREC_WAKE && r[1].domid == 5 && r[1].vcpu == 2, "wake");
	CHECK(r[2].kind == VREC_BLOCK && r[3].kind == VREC_YIELD, "block, yield");
	CHECK(r[4].kind == VREC_SWITCH && r[4].domid == 5 && r[4].vcpu == 1 && r[4].domid2 == 6 &&
	        r[4].vcpu2 == 0,
	    "switch: both vCPUs");
	CHECK(r[5].kind == VREC_LOST && r[5].lost == 42 && r[5].first_tsc == 145 &&
	        r[5].domid == 7 && r[5].vcpu == 3,
	    "lost records: count, first TSC, who ran");
	CHECK(st.lost == 42 && st.by_kind[VREC_LOST] == 1, "Xen's loss counted");
	CHECK(r[0].seq < r[1].seq && r[4].seq < r[5].seq, "decoding order kept");
}

static void decode_hostile(void)
{
	struct xt_buf b = fresh();
	struct vdec_cpu c = { 0 };
	struct vdec_stats st = { 0 };
	struct vrec r[16];
	uint32_t w[4] = { 1, 2, 3, 4 };

	xt_runstate(&b, 500, 1, 0, XRUNSTATE_BLOCKED, XRUNSTATE_RUNNABLE);
	xt_rec(&b, XTRC_RUNSTATE_CHANGE, 0, 0, w, 1);                      /* no TSC */
	xt_rec(&b, XTRC_SCHED_WAKE, 1, 600, w, 3);                         /* 3 words, not 2 */
	xt_runstate(&b, 400, 1, 0, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING); /* back in time */
	xt_runstate(&b, 700, 1, 0, XRUNSTATE_RUNNING, XRUNSTATE_RUNNING);  /* no change */
	uint32_t big[2] = { 0x10000, 0 };
	xt_rec(&b, XTRC_SCHED_BLOCK, 1, 800, big, 2); /* a domain id past 16 bits */
	xt_lost(&b, 900, 0, 0, 0, 800);               /* a loss of nothing */
	xt_runstate(&b, 1000, 1, 0, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING);
	size_t whole = b.len;
	xt_runstate(&b, 1100, 1, 0, XRUNSTATE_RUNNING, XRUNSTATE_BLOCKED);
	size_t n = vcpu_decode(&c, 0, b.p, whole + 6, r, 16, &st); /* cut inside the last */

	CHECK(n == 2 && r[0].tsc == 500 && r[1].tsc == 1000, "the two good records: %zu", n);
	CHECK(st.bad == 5, "malformed records counted: %llu", (unsigned long long)st.bad);
	CHECK(st.backwards == 1, "a TSC going back dropped");
	CHECK(st.cut_bytes == 6, "the cut record's bytes counted: %llu",
	    (unsigned long long)st.cut_bytes);
	CHECK(c.last_tsc == 1000, "the CPU's last time kept for its next window");

	/* a window longer than the room for records: the rest counted, not written */
	memset(&st, 0, sizeof(st));
	c = (struct vdec_cpu){ 0 };
	n = vcpu_decode(&c, 0, b.p, b.len, r, 1, &st);
	CHECK(n == 1 && st.bad == 7 && st.backwards == 1,
	    "past max: dropped and counted (%zu, %llu)", n, (unsigned long long)st.bad);
	/* any bytes: never more records than could fit */
	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)(i * 2654435761u >> 13);
	memset(&st, 0, sizeof(st));
	c = (struct vdec_cpu){ 0 };
	n = vcpu_decode(&c, 0, mem, sizeof(mem), r, 16, &st);
	CHECK(n <= 16 && st.records * 4 <= sizeof(mem), "noise decoded within bounds");
}

/* What the state machine handed on, for the checks. */
static struct vrs_interval got[64];
static unsigned ngot, nwake;
static uint64_t wake_tsc[8];

static void on_iv(void *arg, const struct vrs_interval *iv)
{
	(void)arg;
	if (ngot < 64)
		got[ngot++] = *iv;
}

static void on_wake(void *arg, uint16_t d, uint16_t v, uint64_t tsc)
{
	(void)arg, (void)d, (void)v;
	if (nwake < 8)
		wake_tsc[nwake++] = tsc;
}

static const struct vrs_out out = { on_iv, on_wake, NULL };

static struct vrec rs_rec(uint64_t tsc, uint32_t cpu, uint16_t d, uint16_t v, int o, int nw)
{
	return (struct vrec){ .tsc = tsc,
		.cpu = cpu,
		.domid = d,
		.vcpu = v,
		.kind = VREC_RUNSTATE,
		.old_state = (uint8_t)o,
		.new_state = (uint8_t)nw };
}

static bool is(unsigned i, uint64_t a, uint64_t e, int state, int pcpu)
{
	return i < ngot && got[i].start_tsc == a && got[i].end_tsc == e && got[i].state == state &&
	    got[i].pcpu == pcpu;
}

static void runstate_intervals(void)
{
	struct vcpu_runstate rs;
	REQUIRE(vrs_init(&rs, 64) == 0, "init");
	ngot = nwake = 0;
	struct vrec r[] = {
		rs_rec(100, 1, 3, 0, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING),
		rs_rec(300, 1, 3, 0, XRUNSTATE_RUNNING, XRUNSTATE_RUNNABLE),
		rs_rec(500, 0, 3, 0, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING),
		rs_rec(700, 0, 3, 0, XRUNSTATE_RUNNING, XRUNSTATE_BLOCKED),
		rs_rec(900, 1, 3, 0, XRUNSTATE_BLOCKED, XRUNSTATE_RUNNABLE),
		rs_rec(950, 1, 0x7fff, 0, XRUNSTATE_RUNNING, XRUNSTATE_RUNNABLE), /* idle */
	};
	vrs_apply(&rs, r, 6, &out);
	vrs_cut(&rs, 1000, &out);
	CHECK(ngot == 5, "five intervals: %u", ngot);
	CHECK(is(0, 100, 300, XRUNSTATE_RUNNING, 1), "running on pCPU 1");
	CHECK(is(1, 300, 500, XRUNSTATE_RUNNABLE, -1), "runnable: steal");
	CHECK(is(2, 500, 700, XRUNSTATE_RUNNING, 0), "running on pCPU 0");
	CHECK(is(3, 700, 900, XRUNSTATE_BLOCKED, -1), "blocked");
	CHECK(is(4, 900, 1000, XRUNSTATE_RUNNABLE, -1), "the open interval cut at the pass");
	CHECK(nwake == 1 && wake_tsc[0] == 900, "one wake-up, blocked to runnable");
	CHECK(rs.mismatches == 0 && rs.n == 1, "one vCPU, consistent (the idle domain's skipped)");

	/* a change whose old state disagrees; a record older than the cut */
	ngot = 0;
	struct vrec m[] = {
		rs_rec(1100, 0, 3, 0, XRUNSTATE_BLOCKED, XRUNSTATE_RUNNING),
		rs_rec(1050, 0, 3, 0, XRUNSTATE_RUNNING, XRUNSTATE_RUNNABLE),
	};
	vrs_apply(&rs, m, 2, &out);
	CHECK(rs.mismatches == 1, "the first disagrees with what was known");
	CHECK(
	    ngot == 1 && is(0, 1000, 1100, XRUNSTATE_RUNNABLE, -1), "closed with the known state");
	CHECK(rs.late == 1, "the older record taken at the last change, not before it");

	/* a loss: every state unknown from its first TSC, until the next change */
	ngot = 0;
	struct vrec l = { .tsc = 1300, .first_tsc = 1200, .cpu = 1, .kind = VREC_LOST, .lost = 9 };
	vrs_apply(&rs, &l, 1, &out);
	CHECK(
	    ngot == 1 && is(0, 1100, 1200, XRUNSTATE_RUNNABLE, -1), "closed where the loss began");
	vrs_cut(&rs, 1400, &out);
	CHECK(ngot == 1, "nothing while unknown");
	struct vrec again = rs_rec(1500, 1, 3, 0, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING);
	vrs_apply(&rs, &again, 1, &out);
	vrs_cut(&rs, 1600, &out);
	CHECK(ngot == 2 && is(1, 1500, 1600, XRUNSTATE_RUNNING, 1), "known again from its change");
	CHECK(rs.resets == 1, "the reset counted");
	vrs_free(&rs);
}

static void runstate_merge_and_caps(void)
{
	struct vrec r[] = {
		{ .tsc = 300, .cpu = 0, .seq = 1 },
		{ .tsc = 100, .cpu = 1, .seq = 7 },
		{ .tsc = 300, .cpu = 0, .seq = 0 },
		{ .tsc = 900, .cpu = 1, .seq = 8 },
		{ .tsc = 200, .cpu = 0, .seq = 2 },
	};
	size_t k = vrs_merge(r, 5, 900);
	CHECK(k == 4, "four before the cut: %zu", k);
	CHECK(
	    r[0].tsc == 100 && r[1].tsc == 200 && r[2].seq == 0 && r[3].seq == 1 && r[4].tsc == 900,
	    "time order, ties in decoding order, the held record last");
	CHECK(vrs_merge(r, 5, 0) == 0 && vrs_merge(r, 5, 10000) == 5, "cut bounds");

	struct vcpu_runstate rs;
	REQUIRE(vrs_init(&rs, 2) == 0, "init");
	ngot = 0;
	for (uint16_t v = 0; v < 5; v++) {
		struct vrec c = rs_rec(10 + v, 0, 1, v, XRUNSTATE_RUNNABLE, XRUNSTATE_RUNNING);
		vrs_apply(&rs, &c, 1, &out);
	}
	CHECK(rs.n == 2 && rs.untracked == 3, "vCPUs past the table's room ignored, counted");
	vrs_free(&rs);
}

const struct unit_test unit_vcpu[] = {
	{ "vcpu", "decode-kinds", decode_kinds },
	{ "vcpu", "decode-hostile", decode_hostile },
	{ "vcpu", "runstate-intervals", runstate_intervals },
	{ "vcpu", "runstate-merge-caps", runstate_merge_and_caps },
	{ NULL, NULL, NULL },
};
