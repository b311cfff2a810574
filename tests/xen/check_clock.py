#!/usr/bin/env python3
"""check_clock.py - the host's judgement of the real-Xen clock phase (clock-tests.sh).

usage: check_clock.py ACCOUNT

ACCOUNT is what dom0 saw, one fact a line (clock-tests.sh writes it):
  domains CA CB                      CA on the monotonic clock, CB on the TSC clock
  counts N_AB N_W                    round trips between them, and with the witness
  d0 LABEL sample XEN RT WIDTH HOW   dom0's Xen time against CLOCK_REALTIME (xen-clock)
  sync D SEQ RING XEN W              the guest's data/mtrace/clock-sync, each value dom0
                                     saw (a watch), in order
  clock D NAME                       its data/mtrace/clock
  w D rt K RECV SEND                 the dom0 witness's CLOCK_REALTIME per round trip
  summary D "per_op": {...}          what mtrace-load says it wrote
  ev D NS OP HOST PORT               an event as mtrace-cat got it: guest ns, mtraced's host
                                     ns ("-": none), port (older accounts: the first three)
  map D CLOCK OFFSET UNC SOURCE SINCE SEQ      mtraced's clock_map lines
  link D PORT RD RPORT                         mtraced's evtchn_link lines
  pair SD SP STS SH RD RP RTS RH GAP UNC ORDER mtrace-cat's evtchn_pair lines
  catsum {...}                       mtrace-cat's own count of the pairs (--summary)

Two judgements of the same run.  mtraced's own (check_clock_mtraced.py): its maps, the
host_ns it puts on every event, the pairs mtrace-cat judges with them, the witness held to
those host times.  And, as a cross-check, the host timeline computed here from the raw
announcements the way issue 37 defines it: guest ns + (XEN - RING) of the guest's
announcement + (RT - XEN) of dom0's sample, its uncertainty the two widths' halves.
Prints one "PASS name (detail)" or "FAIL name: why" a check; exit 1 if any failed.

  check_clock.py --shift-mtraced D NS ACCOUNT   the account as mtraced would have given
        it with domain D's clock maps NS further (every host time of D moved, the pairs
        judged again by mtrace-cat's rule), on stdout: what the checks must refuse
  check_clock.py --margin D ACCOUNT   "E L": D's maps moved earlier by more than E ns, or
        later by more than L, would make one of its pairs violated
"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_clock_mtraced  # noqa: E402

SYNC_RE = re.compile(r"^([0-9]{1,20}) ([0-9]{1,20}) ([0-9]{1,20}) ([0-9]{1,20})$")
WIDTH_MAX = 5_000_000  # ns: a guest's pair (under TCG a runstate bound is ~0.3 ms wide)
TIMELINE_MAX = 1_000_000  # ns: the timeline within 1 ms of dom0's wall clock
results = []


def check(ok, name, detail):
    results.append(("PASS %s (%s)" % (name, detail)) if ok else ("FAIL %s: %s" % (name, detail)))


def parse_sync(v):
    """The contract's strict form: four bounded decimals, else None."""
    m = SYNC_RE.match(v)
    if not m:
        return None
    seq, ring, xen, width = (int(x) for x in m.groups())
    if seq == 0 or max(ring, xen, width) >= 2**63:
        return None
    return {"seq": seq, "ring": ring, "xen": xen, "width": width}


def main():
    path, n_ab, n_w = sys.argv[1], 0, 0
    doms, d0, sync, clock, wit, summ, ev = [], {}, {}, {}, {}, {}, {}
    mt = check_clock_mtraced.Account()
    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.split()
        if not f:
            continue
        if f[0] == "domains":
            doms = [int(x) for x in f[1:3]]
        elif f[0] == "counts" and len(f) == 3:
            n_ab, n_w = int(f[1]), int(f[2])
        elif f[0] == "d0" and len(f) >= 7 and f[2] == "sample":
            d0[f[1]] = {"xen": int(f[3]), "rt": int(f[4]), "width": int(f[5]), "how": f[6]}
        elif f[0] == "sync" and len(f) >= 2:
            seen = sync.setdefault(int(f[1]), [])
            v = " ".join(f[2:])
            if not seen or seen[-1] != v:  # the same value seen twice is one announcement
                seen.append(v)
        elif f[0] == "clock" and len(f) == 3:
            clock[int(f[1])] = f[2]
        elif f[0] == "w" and len(f) == 6 and f[2] == "rt":
            wit.setdefault(int(f[1]), []).append((int(f[3]), int(f[4]), int(f[5])))
        elif f[0] == "summary":
            m = re.search(r"\{.*\}", line)
            summ[int(f[1])] = json.loads(m.group(0)) if m else {}
        elif f[0] == "ev" and len(f) in (4, 6) and f[3] in ("evtchn_send", "evtchn_recv"):
            ev.setdefault(int(f[1]), []).append((int(f[2]), f[3]))
            if len(f) == 6:
                mt.event(f)
        elif f[0] in check_clock_mtraced.KINDS:
            mt.line(f, line)
    if len(doms) != 2 or not n_ab or not n_w or not {"before", "seen", "after"} <= d0.keys():
        check(False, "clock_account_complete", "domains %s, counts %d/%d, dom0 samples %s"
              % (doms, n_ab, n_w, sorted(d0)))
        return
    ca, cb = doms
    indep = {}
    independent(ca, cb, n_ab, n_w, d0, sync, clock, wit, summ, ev, indep)
    mt.judge(check, ca, cb, n_ab, n_w, wit, indep)


def independent(ca, cb, n_ab, n_w, d0, sync, clock, wit, summ, ev, indep):
    """The host timeline computed here from the announcements (the cross-check); indep
    gets each domain's offsets by it, [(offset, uncertainty)] an announcement."""
    # (i) the announcements: strict, narrow, and consistent with dom0's Xen time
    maps = {}
    for d, want in ((ca, "monotonic"), (cb, "tsc")):
        check(clock.get(d) == want, "clock_kind_dom%d" % d, "%s, wanted %s" % (clock.get(d), want))
        seen = sync.get(d, [])
        anns = [parse_sync(v) for v in seen]
        if not anns or None in anns or any(b["seq"] <= a["seq"] for a, b in zip(anns, anns[1:])):
            check(False, "clock_sync_parses_dom%d" % d, "values seen %r" % seen[:4])
            continue
        widest = max(a["width"] for a in anns)
        check(widest <= WIDTH_MAX, "clock_sync_parses_dom%d" % d, "%d value(s), seq %d..%d, widths <= %d ns "
              "(bound %d)" % (len(anns), anns[0]["seq"], anns[-1]["seq"], widest, WIDTH_MAX))
        first = anns[0]
        b, a = d0["before"], d0["seen"]
        lo = b["xen"] - b["width"] // 2 - first["width"] // 2
        hi = a["xen"] + a["width"] // 2 + first["width"] // 2
        check(lo <= first["xen"] <= hi, "clock_sync_agrees_with_dom0_dom%d" % d,
              "guest's Xen time %d in dom0's [%d, %d] (dom0 before go .. after the key)"
              % (first["xen"], lo, hi))
        maps[d] = anns
    s0 = d0["seen"]
    for d, anns in maps.items():
        indep[d] = [(a["xen"] - a["ring"] + s0["rt"] - s0["xen"], (a["width"] + s0["width"]) // 2)
                    for a in anns]
    if len(maps) < 2:
        return

    def host(d, t):
        """Guest ns to dom0 CLOCK_REALTIME: the announcement in force, then dom0's sample."""
        a = maps[d][0]
        for b in maps[d][1:]:
            if b["ring"] <= t:
                a = b
        return t + (a["xen"] - a["ring"]) + (s0["rt"] - s0["xen"]), (a["width"] + s0["width"]) // 2

    # the events: per domain, the ab exchange first (2 N_AB), then the witness's (2 N_W)
    ab, w = {}, {}
    for d in (ca, cb):
        evs = ev.get(d, [])
        per = summ.get(d, {})
        want = 2 * n_ab + 2 * n_w
        ok = len(evs) == want and per.get("evtchn_send") == n_ab + n_w and per.get("evtchn_recv") == n_ab + n_w
        check(ok, "clock_events_complete_dom%d" % d, "%d evtchn events arrived, %d expected; guest says %s"
              % (len(evs), want, per))
        if not ok:
            return
        ab[d], w[d] = evs[:2 * n_ab], evs[2 * n_ab:]
    # CB connects and starts: its sends are CA's receives and the other way round
    sends_b = [t for t, op in ab[cb] if op == "evtchn_send"]
    recvs_b = [t for t, op in ab[cb] if op == "evtchn_recv"]
    sends_a = [t for t, op in ab[ca] if op == "evtchn_send"]
    recvs_a = [t for t, op in ab[ca] if op == "evtchn_recv"]
    pat_b = [op for _, op in ab[cb]] == ["evtchn_send", "evtchn_recv"] * n_ab
    pat_a = [op for _, op in ab[ca]] == ["evtchn_recv", "evtchn_send"] * n_ab
    check(pat_a and pat_b, "pingpong_alternates", "dom%d send/recv, dom%d recv/send, %d each" % (cb, ca, n_ab))
    if not (pat_a and pat_b):
        return
    # (ii) every send before its receive on the host timeline
    pairs = [(cb, s, ca, r) for s, r in zip(sends_b, recvs_a)] + [(ca, s, cb, r) for s, r in zip(sends_a, recvs_b)]
    gaps, unsure, bad = [], 0, []
    for ds, s, dr, r in pairs:
        hs, us = host(ds, s)
        hr, ur = host(dr, r)
        gaps.append(hr - hs)
        if hr < hs:
            bad.append((ds, s, dr, r, hr - hs))
        elif hr - hs < us + ur:
            unsure += 1
    gaps.sort()
    check(not bad and len(pairs) == 2 * n_ab, "send_before_receive_on_host_timeline",
          "%d pairs, %d backwards %s; gaps min %d median %d ns; %d closer than the mapping's "
          "uncertainty (%d + %d ns)" % (len(pairs), len(bad), bad[:3], gaps[0], gaps[len(gaps) // 2],
                                        unsure, host(ca, 0)[1], host(cb, 0)[1]))
    # (iii) the witness: send before dom0 got it, receive after dom0 answered
    for d in (ca, cb):
        rts = wit.get(d, [])
        pat = [op for _, op in w[d]] == ["evtchn_send", "evtchn_recv"] * n_w
        if len(rts) != n_w or not pat:
            check(False, "timeline_within_1ms_of_dom0_dom%d" % d, "%d witness round trips of %d, pattern %s"
                  % (len(rts), n_w, pat))
            continue
        sends = [t for t, op in w[d] if op == "evtchn_send"]
        recvs = [t for t, op in w[d] if op == "evtchn_recv"]
        lo = max(host(d, s)[0] - wr for s, (_, wr, _) in zip(sends, rts))
        hi = min(host(d, r)[0] - ws for r, (_, _, ws) in zip(recvs, rts))
        rtt = sorted(ws - wr for _, wr, ws in rts)
        # the error e of the timeline: the guest's send was before dom0 got it
        # (e >= host(send) - RECV) and its receive after dom0 answered (e <= host(recv) -
        # SEND); the best round trips pin e, and it must be pinned inside 1 ms
        check(-TIMELINE_MAX <= lo <= hi <= TIMELINE_MAX, "timeline_within_1ms_of_dom0_dom%d" % d,
              "the witness puts the timeline's error in [%+.3f, %+.3f] ms (%d round trips; dom0's "
              "turnaround median %d ns)" % (lo / 1e6, hi / 1e6, n_w, rtt[len(rtt) // 2]))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--shift-mtraced":
        check_clock_mtraced.shift(sys.argv[4], int(sys.argv[2]), int(sys.argv[3]))
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "--margin":
        m = check_clock_mtraced.margin(sys.argv[3], int(sys.argv[2]))
        if None in m:
            sys.exit(1)
        print(m[0], m[1])
        sys.exit(0)
    main()
    for r in results:
        print(r)
    sys.exit(1 if any(r.startswith("FAIL") for r in results) else 0)
