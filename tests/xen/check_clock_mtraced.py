"""check_clock_mtraced.py - the clock phase judged by mtraced's own mapping (issue 37).

check_clock.py reads the account and hands this module mtraced's half of it: the
event-channel events with the host_ns mtraced's maps gave them, the clock_map and
evtchn_link lines, and the evtchn_pair lines mtrace-cat made with those maps (docs/json.md;
tests/xen/clock-reduce.awk writes them in dom0).  Nothing here maps a clock: every host
time is mtraced's.  The checks:

  mtraced_maps_dom*                 every ClockMap of the domain from Xen system time (the
                                    guest's announcement and dom0's clock_sample), with a
                                    stated uncertainty (not "unknown", at most 5 ms)
  mtraced_host_ns_dom*              every one of its event-channel events has a host_ns,
                                    guest ts + the offset of one of its maps
  mtraced_links_as_xen_says         the ping-pong channel linked both ways, each witness
                                    channel to dom0
  mtraced_pairs_are_the_exchange    mtrace-cat's pairs are the exchange's: the k-th send of
                                    a channel with the k-th receive at its other end, all
  mtraced_send_before_receive       every pair judged by mtrace-cat's rule from its gap and
                                    the maps' uncertainty, none violated or unmapped; an
                                    uncertain one (a receive before its send) only as marked
  mtraced_timeline_within_1ms_of_dom0_dom*   the witness round trips on mtraced's host
                                    times: the timeline's error pinned inside +-1 ms, or
                                    inside the maps' stated uncertainty where that is more
  mtraced_map_agrees_with_dom0_sample_dom*   each map's offset within the two
                                    uncertainties of the one computed on the host from the
                                    announcements and dom0's own sample (the cross-check)

A map moved by S ns moves every host time of its domain by S: the pairs it receives get
S closer (violated once S passes a gap plus its uncertainty), the ones it sends S further,
and the witness's interval moves by S.  The PASS line of mtraced_send_before_receive says
how far each domain's maps could move before a pair is violated (margin()); shift() makes
such an account to prove the checks refuse it.
"""
import json

UNKNOWN = 2**64 - 1
UNC_MAX = 5_000_000  # ns: a guest's width/2 + dom0's width/2 (each at most 5 ms wide)
TIMELINE_MAX = 1_000_000  # ns
KINDS = ("map", "link", "pair", "catsum")
OPS = ("evtchn_send", "evtchn_recv")


def num(x):
    return None if x == "-" else int(x)


def order_of(gap, unc):
    """mtrace-cat's rule (client/lib/timeline.c)."""
    if gap >= 0 and gap >= unc:
        return "ordered"
    if gap < 0 and -gap > unc:
        return "violated"
    return "uncertain"


class Account:
    def __init__(self):
        self.events, self.maps, self.links, self.pairs, self.catsum = {}, {}, [], [], None

    def event(self, f):
        """ev D TS OP HOST PORT"""
        self.events.setdefault(int(f[1]), []).append((int(f[2]), f[3], num(f[4]), int(f[5])))

    def line(self, f, raw):
        if f[0] == "map" and len(f) == 8:
            self.maps.setdefault(int(f[1]), []).append({
                "clock": int(f[2]), "offset": int(f[3]), "unc": int(f[4]), "source": f[5],
                "since": int(f[6]), "seq": int(f[7])})
        elif f[0] == "link" and len(f) == 5:
            self.links.append(tuple(int(x) for x in f[1:5]))
        elif f[0] == "pair" and len(f) == 12:
            self.pairs.append({
                "sd": int(f[1]), "sp": int(f[2]), "sts": int(f[3]), "sh": num(f[4]),
                "rd": int(f[5]), "rp": int(f[6]), "rts": int(f[7]), "rh": num(f[8]),
                "gap": int(f[9]), "unc": int(f[10]), "order": f[11]})
        elif f[0] == "catsum":
            try:
                self.catsum = json.loads(raw.split(None, 1)[1].split(":", 1)[1])
            except (ValueError, IndexError):
                self.catsum = {}

    def judge(self, check, ca, cb, n_ab, n_w, wit, indep):
        ev = {}
        for d in (ca, cb):
            evs = [e for e in self.events.get(d, []) if e[1] in OPS]
            if len(evs) != 2 * n_ab + 2 * n_w:
                check(False, "mtraced_host_ns_dom%d" % d, "%d event-channel events with mtraced's "
                      "host time, %d expected" % (len(evs), 2 * n_ab + 2 * n_w))
                return
            ev[d] = evs
        for d in (ca, cb):
            self.judge_maps(check, d, ev[d], indep.get(d))
        # the exchange's ports and the witness's, as each guest's events name them
        pab = {d: {e[3] for e in ev[d][:2 * n_ab]} for d in (ca, cb)}
        pw = {d: {e[3] for e in ev[d][2 * n_ab:]} for d in (ca, cb)}
        if any(len(p) != 1 for p in list(pab.values()) + list(pw.values())):
            check(False, "mtraced_links_as_xen_says", "ports: exchange %s, witness %s" % (pab, pw))
            return
        pa, pb = pab[ca].pop(), pab[cb].pop()
        links = set(self.links)
        want = {(ca, pa, cb, pb), (cb, pb, ca, pa)}
        wl = {d: [lk for lk in links if lk[:2] == (d, next(iter(pw[d])))] for d in (ca, cb)}
        ok = want <= links and all(len(v) == 1 and v[0][2] == 0 for v in wl.values())
        check(ok, "mtraced_links_as_xen_says", "dom%d:%d <-> dom%d:%d, witnesses %s; %d links told"
              % (ca, pa, cb, pb, [v[0] if v else None for v in wl.values()], len(links)))
        self.judge_pairs(check, ca, cb, pa, pb, n_ab, ev)
        for d in (ca, cb):
            self.judge_witness(check, d, ev[d][2 * n_ab:], wit.get(d, []), n_w)

    def judge_maps(self, check, d, evs, ind):
        ms = self.maps.get(d, [])
        bad = [m for m in ms if m["source"] != "xen-system-time" or m["unc"] > UNC_MAX]
        seqs = {}
        for m in ms:
            seqs.setdefault(m["clock"], []).append(m["seq"])
        seq_ok = all(s == list(range(1, len(s) + 1)) for s in seqs.values())
        offs = [m["offset"] for m in ms]
        uncs = [m["unc"] for m in ms]
        check(ms and not bad and seq_ok and len(seqs) == 1, "mtraced_maps_dom%d" % d,
              "%d map(s) on clock %s, sources %s, offsets %s..%s ns, uncertainty %s..%s ns%s"
              % (len(ms), sorted(seqs), sorted({m["source"] for m in ms}), min(offs, default="-"),
                 max(offs, default="-"), min(uncs, default="-"), max(uncs, default="-"),
                 "; refused: %s" % bad[:2] if bad else ""))
        known = {m["offset"] for m in ms}
        nohost = sum(1 for e in evs if e[2] is None)
        stray = sum(1 for e in evs if e[2] is not None and e[2] - e[0] not in known)
        check(ms and not nohost and not stray, "mtraced_host_ns_dom%d" % d,
              "%d events: %d without host_ns, %d whose host_ns - ts is no map's offset"
              % (len(evs), nohost, stray))
        # the cross-check: each map within the two uncertainties of the host's figure
        # for some announcement (the same announcement, another reading of dom0's clocks)
        if not ind:
            check(False, "mtraced_map_agrees_with_dom0_sample_dom%d" % d,
                  "no figure computed on the host (the announcements failed their checks)")
            return
        worst = None
        for m in ms:
            best = min(ind, key=lambda a: abs(m["offset"] - a[0]))
            diff, room = m["offset"] - best[0], m["unc"] + best[1]
            if worst is None or abs(diff) - room > abs(worst[0]) - worst[1]:
                worst = (diff, room)
        check(ms and abs(worst[0]) <= worst[1], "mtraced_map_agrees_with_dom0_sample_dom%d" % d,
              "mtraced's offset - the host's: %+d ns, allowed +-%d ns (the two uncertainties)"
              % worst if worst else "no map")

    def judge_pairs(self, check, ca, cb, pa, pb, n_ab, ev):
        # the exchange paired here, independently: each channel's k-th send with the
        # k-th receive at the other end (each side sends only once answered)
        own = set()
        for sd, sp, rd, rp in ((cb, pb, ca, pa), (ca, pa, cb, pb)):
            sends = [e[0] for e in ev[sd] if e[1] == "evtchn_send" and e[3] == sp]
            recvs = [e[0] for e in ev[rd] if e[1] == "evtchn_recv" and e[3] == rp]
            own |= {(sd, sp, s, rd, rp, r) for s, r in zip(sends, recvs)}
        got = [p for p in self.pairs if {p["sd"], p["rd"]} == {ca, cb}]
        keys = {(p["sd"], p["sp"], p["sts"], p["rd"], p["rp"], p["rts"]) for p in got}
        check(len(got) == 2 * n_ab and keys == own, "mtraced_pairs_are_the_exchange",
              "%d pairs between dom%d and dom%d (of %d lines), %d expected; %d not the exchange's, "
              "%d of it missing" % (len(got), ca, cb, len(self.pairs), 2 * n_ab, len(keys - own),
                                    len(own - keys)))
        sums = {a["unc"] + b["unc"] for a in self.maps.get(ca, []) for b in self.maps.get(cb, [])}
        n = {"ordered": 0, "uncertain": 0, "violated": 0, "unmapped": 0}
        inconsistent, backwards, gaps = [], 0, []
        margin = {ca: [None, None], cb: [None, None]}  # how far its maps may move: -, +
        for p in got:
            n[p["order"]] = n.get(p["order"], 0) + 1
            if p["sh"] is None or p["rh"] is None:
                if p["order"] != "unmapped":
                    inconsistent.append(p)
                continue
            gap = p["rh"] - p["sh"]
            if gap != p["gap"] or p["unc"] not in sums or order_of(gap, p["unc"]) != p["order"]:
                inconsistent.append(p)
            backwards += gap < 0
            gaps.append(gap)
            room = gap + p["unc"]  # either end moved this far towards the other: violated
            for d, k in ((p["rd"], 0), (p["sd"], 1)):
                if margin[d][k] is None or room < margin[d][k]:
                    margin[d][k] = room
        gaps.sort()
        cs = self.catsum or {}
        cat_ok = cs.get("violated") == 0 and cs.get("ordered") == n["ordered"] and \
            cs.get("uncertain") == n["uncertain"]
        ok = (len(got) == 2 * n_ab and not inconsistent and n["violated"] == 0 and
              n["unmapped"] == 0 and n["ordered"] + n["uncertain"] == len(got) and cat_ok)
        check(ok, "mtraced_send_before_receive",
              "%d pairs on mtraced's timeline: %d ordered, %d uncertain (%d of them a receive "
              "before its send, within the uncertainty), %d violated, %d unmapped, %d judged "
              "against the rule %s; gaps min %s median %s ns, uncertainties %s ns; mtrace-cat "
              "counted %s; a pair would be violated with dom%d's maps moved by %s/+%s ns or "
              "dom%d's by %s/+%s ns"
              % (len(got), n["ordered"], n["uncertain"], backwards, n["violated"], n["unmapped"],
                 len(inconsistent), inconsistent[:2], gaps[0] if gaps else "-",
                 gaps[len(gaps) // 2] if gaps else "-", sorted(sums), cs,
                 ca, neg(margin[ca][0]), margin[ca][1], cb, neg(margin[cb][0]), margin[cb][1]))

    def judge_witness(self, check, d, w, rts, n_w):
        pat = [e[1] for e in w] == ["evtchn_send", "evtchn_recv"] * n_w
        if len(rts) != n_w or not pat or any(e[2] is None for e in w):
            check(False, "mtraced_timeline_within_1ms_of_dom0_dom%d" % d,
                  "%d witness round trips of %d, pattern %s" % (len(rts), n_w, pat))
            return
        sends = [e[2] for e in w if e[1] == "evtchn_send"]
        recvs = [e[2] for e in w if e[1] == "evtchn_recv"]
        # the timeline's error e: the guest's send was before dom0 got it (e >= host(send)
        # - RECV), its receive after dom0 answered (e <= host(recv) - SEND)
        lo = max(s - wr for s, (_, wr, _) in zip(sends, rts))
        hi = min(r - ws for r, (_, _, ws) in zip(recvs, rts))
        # within 1 ms, or within what mtraced says of its maps where that is more: a
        # guest measuring its clock-sync under load (TCG beside a busy host) reads a pair
        # ~1 ms wide, and mtraced's map then says so (its uncertainty); the timeline must
        # be where mtraced says it is, and within 1 ms wherever it says that much
        unc = max((m["unc"] for m in self.maps.get(d, [])), default=0)
        room = max(TIMELINE_MAX, unc)
        check(-room <= lo <= hi <= room, "mtraced_timeline_within_1ms_of_dom0_dom%d" % d,
              "mtraced's host times put the timeline's error in [%+.3f, %+.3f] ms (%d round trips;"
              " allowed +-%.3f ms: %s)" % (lo / 1e6, hi / 1e6, n_w, room / 1e6,
                                          "1 ms" if room == TIMELINE_MAX else "the maps' stated uncertainty"))


def margin(path, dom):
    """How far dom's maps may move before one of its pairs would be violated: moved
    earlier (as a receiver) by more than the first, later (as a sender) by more than the
    second; None where it has no such pair."""
    m = [None, None]
    for raw in open(path, encoding="utf-8", errors="replace"):
        f = raw.split()
        if not f or f[0] != "pair" or len(f) != 12 or "-" in (f[4], f[8]):
            continue
        room = int(f[8]) - int(f[4]) + int(f[10])
        for k, end in ((0, 5), (1, 1)):
            if int(f[end]) == dom and (m[k] is None or room < m[k]):
                m[k] = room
    return m


def neg(x):
    return "-" if x is None else "-%d" % x


def shift(path, dom, by):
    """Print the account as mtraced would have given it with dom's maps by ns further."""
    pairs = {"ordered": 0, "uncertain": 0, "violated": 0}
    out = []
    for raw in open(path, encoding="utf-8", errors="replace"):
        f = raw.split()
        if f and f[0] == "ev" and len(f) == 6 and int(f[1]) == dom and f[4] != "-":
            f[4] = str(int(f[4]) + by)
        elif f and f[0] == "map" and len(f) == 8 and int(f[1]) == dom:
            f[3] = str(int(f[3]) + by)
            f[6] = str(int(f[6]) + by)
        elif f and f[0] == "pair" and len(f) == 12:
            for k in (1, 5):
                if int(f[k]) == dom and f[k + 3] != "-":
                    f[k + 3] = str(int(f[k + 3]) + by)
            if "-" not in (f[4], f[8]):
                f[9] = str(int(f[8]) - int(f[4]))
                f[11] = order_of(int(f[9]), int(f[10]))
                pairs[f[11]] += 1
        elif f and f[0] == "catsum":
            out.append(None)  # counted again below, as mtrace-cat would have
            continue
        out.append(" ".join(f) + "\n" if f else raw)
    for line in out:
        if line is None:
            line = "catsum \"evtchn_pairs\":%s\n" % json.dumps(pairs, separators=(",", ":"))
        print(line, end="")
