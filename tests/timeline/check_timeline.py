#!/usr/bin/env python3
"""One timeline, held to what happened (tests/timeline).

The reference is mtrace-cat -f json of the recording (every event with its guest ts and
its host_ns, the clock maps, mtrace-cat's own evtchn_pair lines) and the guests' own
word: pingpong-guest's summaries say which port of which domain is a channel to which,
and how many times each side sent and received; each side sends only after its last
send was answered, so the k-th send of a channel IS its k-th receive.  The test pairs
them itself, and every output is held to that.

  check_timeline.py pairs JSONL MIN SUMMARY...     every pair ordered on the host
        timeline by more than the maps' uncertainties, at least MIN of them, and
        mtrace-cat's evtchn_pair lines the same pairs, all "ordered"
  check_timeline.py chrome TRACE JSONL [SUMMARY...]  Perfetto's importer (modelled by
        tests/files/check_chrome.py): no error, the stream's counts (threads, flows,
        labels, GCs ... and GC ends at their host ns); one base (the metadata's origin is the
        smallest host time of the whole capture), nothing clamped; every domain's
        event-channel instants at exactly host_ns - origin; with summaries, one
        "evtchn" arrow per pair, bound, across domains, never backwards
  check_timeline.py ctf DIR JSONL SUMMARY...       babeltrace2's muxed order: times
        never go back across domains, each event at its host_ns, every send before its
        receive
  check_timeline.py web PAGE_JSON JSONL SUMMARY... mtrace-web's page model (node,
        page-times.js): every domain on the host timeline, each send and receive drawn
        within 2 us of its host_ns, every send at or before its receive
  check_timeline.py offset JSONL DOMID OFFSET TOL  the domain's first map against an
        offset measured here (CLOCK_REALTIME - CLOCK_MONOTONIC): within TOL ns plus its
        uncertainty
"""
import collections
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "files"))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load(path):
    evs, maps, pairs = [], collections.defaultdict(list), []
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        t = d.get("type")
        if t == "event":
            evs.append(d)
        elif t == "clock_map":
            maps[d["domid"]].append(d)
        elif t == "evtchn_pair":
            pairs.append(d)
    return evs, maps, pairs


def own_pairs(evs, summaries):
    """[(send event, recv event)] from the guests' channels, k-th with k-th."""
    ports = {}  # (domid, peer) -> port
    counts = {}
    for path in summaries:
        s = json.load(open(path))
        for c in s["channels"]:
            ports[(s["domid"], c["peer"])] = c["port"]
            counts[(s["domid"], c["peer"])] = (c["sends"], c["recvs"])
    by = collections.defaultdict(list)  # (domid, op, port) -> events in stream order
    for e in evs:
        if e["op"] in ("evtchn_send", "evtchn_recv"):
            by[(e["domid"], e["op"], e["arg"])].append(e)
    out = []
    for (a, b), pa in sorted(ports.items()):
        pb = ports.get((b, a))
        if pb is None:
            fail("dom%d has a channel to dom%d, which has none back" % (a, b))
        sends, recvs = by[(a, "evtchn_send", pa)], by[(b, "evtchn_recv", pb)]
        if len(sends) != counts[(a, b)][0] or len(recvs) != counts[(b, a)][1]:
            fail("dom%d->dom%d: %d sends and %d receives in the stream, the guests say %d "
                 "and %d" % (a, b, len(sends), len(recvs), counts[(a, b)][0],
                             counts[(b, a)][1]))
        if len(sends) != len(recvs):
            fail("dom%d->dom%d: %d sends, %d receives" % (a, b, len(sends), len(recvs)))
        out += list(zip(sends, recvs))
    return out


def unc(maps, domid):
    return max((m["uncertainty_ns"] for m in maps.get(domid, [])), default=2**64 - 1)


def cmd_pairs(jsonl, minimum, summaries):
    evs, maps, cat_pairs = load(jsonl)
    pairs = own_pairs(evs, summaries)
    if len(pairs) < minimum:
        fail("%d pairs, fewer than %d" % (len(pairs), minimum))
    worst, kinds = None, collections.Counter()
    for s, r in pairs:
        if "host_ns" not in s or "host_ns" not in r:
            fail("a pair end without host_ns: %r %r" % (s, r))
        gap = r["host_ns"] - s["host_ns"]
        u = unc(maps, s["domid"]) + unc(maps, r["domid"])
        if gap < u:
            fail("dom%d's send at %d and dom%d's receive at %d: gap %d ns, uncertainty %d" %
                 (s["domid"], s["host_ns"], r["domid"], r["host_ns"], gap, u))
        worst = gap if worst is None else min(worst, gap)
        kinds[(s["domid"], r["domid"])] += 1
    key = lambda e: (e["domid"], e["port"], e["ts"])  # noqa: E731
    want = sorted((key({"domid": s["domid"], "port": s["arg"], "ts": s["ts"]}),
                   key({"domid": r["domid"], "port": r["arg"], "ts": r["ts"]}))
                  for s, r in pairs)
    got = sorted((key(p["send"]), key(p["recv"])) for p in cat_pairs)
    if got != want:
        fail("mtrace-cat paired %d, the guests' channels make %d (first differing: %r)" % (
            len(got), len(want), next((g for g, w in zip(got, want) if g != w), None)))
    bad = [p for p in cat_pairs if p["order"] != "ordered"]
    if bad:
        fail("mtrace-cat says %d pairs are not ordered: %r" % (len(bad), bad[0]))
    print("pairs: %d sends before their receives (smallest gap %d ns) on %d directed "
          "channels; mtrace-cat's evtchn_pair lines the same, all ordered" %
          (len(pairs), worst, len(kinds)))


def cmd_chrome(trace, jsonl, summaries):
    import check_chrome
    evs, maps, _ = load(jsonl)
    errors, counts, n = check_chrome.check(trace)
    for k, v in check_chrome.from_stream(jsonl).items():
        if counts[k] != v:
            errors.append("%s = %d, the JSON stream says %d" % (k, counts[k], v))
    off, total = check_chrome.gc_times(trace, jsonl)
    if off:
        errors.append("%d of %d GC ends are not at the stream's host ns - origin" % (off, total))
    for e in errors:
        print("chrome: " + e)
    if errors:
        fail("Perfetto's importer (modelled) found %d problems" % len(errors))
    doc = json.load(open(trace, encoding="utf-8"))
    meta = doc["metadata"]["mtrace"]
    hosts = [e.get("host_ns") for e in evs]
    if None in hosts:
        fail("an event without host_ns: its domain is not on the host timeline")
    origin = min(hosts)
    if meta["origin_wall_ns"] != origin:
        fail("origin_wall_ns %d, the smallest host time %d" % (meta["origin_wall_ns"], origin))
    if meta["clamped"] != 0:
        fail("%d events clamped" % meta["clamped"])
    got = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("cat") == "evtchn" and e.get("ph") == "i":
            got[e["pid"]].append(check_chrome.coerce_ts_text(e["ts"]))
    want = collections.defaultdict(list)
    for e in evs:
        if e["op"] in ("evtchn_send", "evtchn_recv"):
            want[e["domid"]].append(e["host_ns"] - origin)
    for pid in set(got) | set(want):
        if sorted(got[pid]) != sorted(want[pid]):
            fail("dom%d: %d event-channel instants, not at host_ns - origin (%d in the "
                 "stream)" % (pid, len(got[pid]), len(want[pid])))
    span = {}
    for e in doc["traceEvents"]:
        if "ts" in e and "pid" in e:
            t = check_chrome.coerce_ts_text(e["ts"])
            lo, hi = span.get(e["pid"], (t, t))
            span[e["pid"]] = (min(lo, t), max(hi, t))
    msg = ""
    if summaries:
        pairs = own_pairs(evs, summaries)
        m = check_chrome.LAST_MODEL
        arrows = [(fr, to) for key, fr, to, ts in m.flows if key[1] == "evtchn"]
        other = [k for k, fr, to, ts in m.flows if k[1] == "evtchn_uncertain"]
        if len(arrows) != len(pairs) or other:
            fail("%d evtchn arrows and %d uncertain ones, %d pairs" %
                 (len(arrows), len(other), len(pairs)))
        for fr, to in arrows:
            if fr.track[1] == to.track[1] or to.ts < fr.ts:
                fail("an arrow from dom%d at %d to dom%d at %d" %
                     (fr.track[1], fr.ts, to.track[1], to.ts))
        msg = "; %d arrows between domains, none backwards" % len(arrows)
    print("chrome: %d trace events, the stream's counts %s; one base (origin %d), nothing "
          "clamped; per domain [first, last] ns %s%s" % (
              n, json.dumps({k: counts[k] for k in sorted(counts)}), origin, json.dumps(span),
              msg))


def cmd_ctf(path, jsonl, summaries):
    import bt2
    evs, maps, _ = load(jsonl)
    pairs = own_pairs(evs, summaries)
    order, last, per = {}, None, collections.defaultdict(list)
    i = 0
    for msg in bt2.TraceCollectionMessageIterator(path):
        if type(msg) is not bt2._EventMessageConst:
            continue
        t = msg.default_clock_snapshot.value
        if last is not None and t < last:
            fail("babeltrace2 gave %d after %d: the domains are not interleaved in time" %
                 (t, last))
        last = t
        e = msg.event
        dom = int(os.path.basename(e.stream.name).split("-")[0][3:])
        per[dom].append(t)
        if e.name in ("evtchn_send", "evtchn_recv"):
            order.setdefault((dom, e.name, int(e.payload_field["port"])), []).append((i, t))
        i += 1
    want = collections.defaultdict(list)
    for e in evs:
        want[e["domid"]].append(e["host_ns"])
    for dom in set(per) | set(want):
        if sorted(per[dom]) != sorted(want[dom]):
            fail("dom%d: %d CTF events, their times not the stream's host_ns (%d events)" %
                 (dom, len(per[dom]), len(want[dom])))
    seen = collections.Counter()
    for s, r in pairs:
        ks, kr = (s["domid"], "evtchn_send", s["arg"]), (r["domid"], "evtchn_recv", r["arg"])
        si, st = order[ks][seen[ks]]
        ri, rt = order[kr][seen[kr]]
        seen[ks] += 1
        seen[kr] += 1
        if si > ri or st != s["host_ns"] or rt != r["host_ns"]:
            fail("babeltrace2 gives dom%d's receive (#%d, %d) before dom%d's send (#%d, %d)" %
                 (r["domid"], ri, rt, s["domid"], si, st))
    print("ctf: %d events of %d domains in time order through babeltrace2's muxer, each at "
          "its host_ns; all %d sends before their receives" % (i, len(per), len(pairs)))


def cmd_web(page, jsonl, summaries):
    evs, maps, _ = load(jsonl)
    pairs = own_pairs(evs, summaries)
    doms = json.load(open(page))["domains"]
    where = {}
    for dom, d in doms.items():
        if d["aligned"] is not True:
            fail("the page has dom%s off the host timeline (aligned %r)" % (dom, d["aligned"]))
        for kind in ("sends", "recvs"):
            k = collections.Counter()
            for t, port in d[kind]:
                where[(int(dom), kind, port, k[port])] = t
                k[port] += 1
    seen, worst = collections.Counter(), 0.0
    for s, r in pairs:
        ks, kr = (s["domid"], "sends", s["arg"]), (r["domid"], "recvs", r["arg"])
        ts, tr = where.get(ks + (seen[ks],)), where.get(kr + (seen[kr],))
        seen[ks] += 1
        seen[kr] += 1
        if ts is None or tr is None:
            fail("the page lacks an end of the pair %r -> %r" % (ks, kr))
        for t, e in ((ts, s), (tr, r)):
            worst = max(worst, abs(t * 1e6 - e["host_ns"]))
            if abs(t * 1e6 - e["host_ns"]) > 2000:
                fail("the page draws dom%d's %s at %.6f ms, its host time is %d ns" %
                     (e["domid"], e["op"], t, e["host_ns"]))
        if ts > tr:
            fail("the page draws dom%d's receive (%.6f ms) before dom%d's send (%.6f ms)" %
                 (r["domid"], tr, s["domid"], ts))
    print("web: %d domains on one axis (the host timeline), %d pairs drawn send first, "
          "each end within %.0f ns of its host_ns" % (len(doms), len(pairs), worst))


def cmd_offset(jsonl, domid, offset, tol):
    _, maps, _ = load(jsonl)
    m = maps.get(domid)
    if not m:
        fail("no clock map of dom%d" % domid)
    m = m[0]
    if m["source"] != "same-kernel" and m["source"] != "xen-system-time":
        fail("dom%d's map is %s" % (domid, m["source"]))
    if abs(m["offset_ns"] - offset) > tol + m["uncertainty_ns"]:
        fail("dom%d's offset %d, measured here %d (tolerance %d + %d)" %
             (domid, m["offset_ns"], offset, tol, m["uncertainty_ns"]))
    print("offset: dom%d's map (%s, +-%d ns) is %d ns from the offset measured here" %
          (domid, m["source"], m["uncertainty_ns"], m["offset_ns"] - offset))


def main():
    a = sys.argv[1:]
    if a[0] == "pairs":
        cmd_pairs(a[1], int(a[2]), a[3:])
    elif a[0] == "chrome":
        cmd_chrome(a[1], a[2], a[3:])
    elif a[0] == "ctf":
        cmd_ctf(a[1], a[2], a[3:])
    elif a[0] == "web":
        cmd_web(a[1], a[2], a[3:])
    elif a[0] == "offset":
        cmd_offset(a[1], int(a[2]), int(a[3]), int(a[4]))
    else:
        fail("unknown command %r" % a[0])


if __name__ == "__main__":
    main()
