#!/usr/bin/env python3
"""matrix.py - the 3 x 3 matrix of tests/fleet/test-matrix.sh: mtrace-cat, mtrace-top -b
and mtrace-web, each given the same live mtraced, the same recording and the same
JetStream stream, print the same events and figures.

  matrix.py check DIR DOMID=EVENTS...     compare every cell of DIR (below); exit 1 with
                                          the differences.  Then the same comparisons
                                          on copies with one thing changed in one cell,
                                          each of which must be found.
  matrix.py settled-cat FILE DOMID=N...   the last Stats of an mtrace-cat -f json output
                                          counts these events (exit 0) or not (1)
  matrix.py settled-top FILE DOMID=N...   the last update of an mtrace-top -b output
  matrix.py settled-web URL DOMID=N...    mtrace-web's /api/state, and its events_in
  matrix.py sse-events FILE               the events in a capture of /events

DIR holds, for SRC in live, rec, nats: SRC.cat.json (mtrace-cat -f json), SRC.top.txt
(mtrace-top -b -N 1000, the threads view), SRC.topg.txt (mtrace-top -b -g, the labels
view), SRC.web.json (/api/state) and SRC.web.sse (a capture of /events).

What each program can show, per source:
  events          cat's event lines and web's batches: every event, per (domain, ring)
                  in order (time, op, thread, argument, string); top shows none
  op counts       the events counted per (domain, op) against each Stats' op_events
  thread events   the events counted per (domain, thread) against each Stats' threads
  domains         the last Stats' figures per domain: events, live, threads, ended,
                  lost, corrupt, counters (cat's and web's Stats, top's domain table)
  threads         per thread: type, state, parent, reads, resolves, children, pending,
                  running, label (the Stats of cat and web, top's thread view)
  labels          per label: count, live, current, lifetime p50 and p99 (top -g)
and across the sources: the same events, domain figures, threads and labels (the
stream's Stats are mtrace-ship's, which asks for no threads and no labels).
"""
import copy
import json
import os
import sys
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import mtrace_ops  # noqa: E402  (the op table, common/ops.c)

SOURCES = ("live", "rec", "nats")
STATES = {0: "pending", 1: "resolved", 2: "failed", "pending": "pending",
          "resolved": "resolved", "failed": "failed"}


def fmt_duration(ns):
    """client/top/fields.c fmt_duration."""
    if ns < 1000:
        return "%dns" % ns
    if ns < 1000000:
        return "%.1fus" % (ns / 1e3)
    if ns < 1000000000:
        return "%.1fms" % (ns / 1e6)
    if ns < 100000000000:
        return "%.2fs" % (ns / 1e9)
    if ns < 3600000000000:
        return "%dm%02ds" % (ns // 60000000000, ns // 1000000000 % 60)
    return "%dh%02dm" % (ns // 3600000000000, ns // 60000000000 % 60)


# ---- what each program printed, as views ----

def stats_views(st):
    """The figures of one Stats (JSON, docs/json.md) as top shows them."""
    v = {"domains": {}, "threads": {}, "labels": {}, "op_events": {}, "thread_events": {}}
    if not st:
        return v
    for d in st.get("domains", []):
        counters = " ".join("%s=%d" % (c["name"], c["value"]) for c in d.get("counters", []))
        v["domains"][d["domid"]] = (d["name"], d["events"], d["lost"], d["corrupt"],
                                    d["live_threads"], d["threads_total"], d["threads_ended"],
                                    counters or "-")
        v["op_events"][d["domid"]] = dict(d.get("op_events", {}))
    for t in st.get("threads", []):
        label = t.get("label") or ("@" + t["site"] if t.get("site") else "")
        label = label or "-"
        if STATES[t["state"]] == "failed" and t.get("failure"):
            label = "%s [%s]" % (label, t["failure"])
        v["threads"][(t["domid"], t["id"])] = (
            t["type"], STATES[t["state"]], "-" if t["parent"] == -1 else str(t["parent"]),
            str(t["reads"]), str(t["resolves"]), str(t["children"]),
            fmt_duration(t["pending_ns"]), fmt_duration(t["running_ns"]), label)
        v["thread_events"][(t["domid"], t["id"])] = t["events"]
    for lab in st.get("labels", []):
        v["labels"][(lab["domid"], lab["label"] or "-")] = (
            str(lab["count"]), str(lab["live"]), str(lab["current"]),
            fmt_duration(lab["lifetime_p50_ns"]), fmt_duration(lab["lifetime_p99_ns"]))
    return v


def cat_view(path):
    events, last = {}, None
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        o = json.loads(line)
        if o["type"] == "event":
            events.setdefault((o["domid"], o["ring"]), []).append(
                (o["ts"], o["op_code"], o["thread"], o["arg"], o.get("str")))
        elif o["type"] == "stats":
            last = o
    v = stats_views(last)
    v["events"] = events
    return v


def sse_messages(path):
    """(event, data) of each whole message of a capture of /events."""
    text = open(path, encoding="utf-8", errors="surrogateescape").read()
    for block in text.split("\n\n"):
        ev, data = None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                ev = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        if ev and data is not None:
            try:
                yield ev, json.loads(data)
            except ValueError:
                pass  # cut by the end of the capture


def sse_events(path):
    events = {}
    for ev, b in sse_messages(path):
        if ev != "b":
            continue
        ts = int(b["t"])
        for i, dt in enumerate(b["dt"]):
            ts += dt
            si = b["si"][i]
            events.setdefault((b["d"], b["r"]), []).append(
                (ts, b["op"][i], b["th"][i], b["a"][i], b["s"][si] if si >= 0 else None))
    return events


def web_view(state, sse):
    st = json.load(open(state))
    stats = st.get("stats")
    if st.get("hosts"):
        stats = st["hosts"][0]["stats"]  # the fleet: one host, h1
    v = stats_views(stats)
    v["events"] = sse_events(sse)
    return v


def top_frames(path):
    frames, cur = [], None
    for line in open(path, encoding="utf-8", errors="surrogateescape").read().split("\n"):
        if line.startswith("mtrace-top "):
            cur = []
            frames.append(cur)
        if cur is not None:
            cur.append(line)
    return frames


def top_tables(frame):
    """A frame's domain table and view table, as lists of column dicts (every column
    one word but the last, which takes the rest of the line)."""
    tables, i = [], 2
    while i < len(frame) and len(tables) < 2:
        while i < len(frame) and not frame[i]:
            i += 1
        if i >= len(frame):
            break
        title = [t.rstrip("v^") for t in frame[i].split()]
        rows, i = [], i + 1
        while i < len(frame) and frame[i]:
            if not frame[i].startswith("("):
                rows.append(dict(zip(title, frame[i].split(None, len(title) - 1))))
            i += 1
        tables.append(rows)
    while len(tables) < 2:
        tables.append([])
    return tables


def top_view(threads_path, labels_path):
    v = {"domains": {}, "threads": {}, "labels": {}}
    frames = top_frames(threads_path)
    if frames:
        doms, rows = top_tables(frames[-1])
        for d in doms:
            v["domains"][int(d["ID"])] = (d["DOMAIN"], int(d["EVENTS"]), int(d["LOST"]),
                                          int(d["CORRUPT"]), int(d["LIVE"]), int(d["THREADS"]),
                                          int(d["ENDED"]), d["COUNTERS"])
        ids = {d["DOMAIN"]: int(d["ID"]) for d in doms}
        for r in rows:
            v["threads"][(ids[r["DOMAIN"]], int(r["TID"]))] = (
                r["TYPE"], r["STATE"], r["PARENT"], r["READS"], r["RESOLV"], r["CHILD"],
                r["PENDING"], r["RUNNING"], r["LABEL"])
    frames = top_frames(labels_path)
    if frames:
        doms, rows = top_tables(frames[-1])
        ids = {d["DOMAIN"]: int(d["ID"]) for d in doms}
        for r in rows:
            v["labels"][(ids[r["DOMAIN"]], r["LABEL"])] = (
                r["COUNT"], r["LIVE"], r["CURRENT"], r["LIFE-P50"], r["LIFE-P99"])
    return v


def load(d):
    cells = {}
    for s in SOURCES:
        cells[(s, "cat")] = cat_view(os.path.join(d, s + ".cat.json"))
        cells[(s, "top")] = top_view(os.path.join(d, s + ".top.txt"),
                                     os.path.join(d, s + ".topg.txt"))
        cells[(s, "web")] = web_view(os.path.join(d, s + ".web.json"),
                                     os.path.join(d, s + ".web.sse"))
    return cells


# ---- the comparisons ----

def differ(what, a, b, na, nb):
    """A sentence for the first difference of two dicts, or None."""
    if a == b:
        return None
    for k in sorted(set(a) | set(b), key=str):
        if a.get(k) != b.get(k):
            x, y = a.get(k), b.get(k)
            if isinstance(x, list) and isinstance(y, list):
                i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
                return "%s %s: %s has %d, %s %d; first difference at %d: %s / %s" % (
                    what, k, na, len(x), nb, len(y), i, x[i] if i < len(x) else "-",
                    y[i] if i < len(y) else "-")
            return "%s %s: %s %s, %s %s" % (what, k, na, x, nb, y)
    return "%s differ" % what


def compare(cells, expect):
    """Every check; returns (failures, notes)."""
    bad, notes = [], []

    def same(what, x, y, a, b):
        m = differ(what, cells[x][a] if a else x, cells[y][b] if b else y,
                   "%s %s" % x if a else "", "%s %s" % y if b else "")
        if m:
            bad.append(m)

    for s in SOURCES:
        cat, web, top = (s, "cat"), (s, "web"), (s, "top")
        # events: the two programs that show them, every one, and as many as written
        same("%s: events" % s, cat, web, "events", "events")
        total = sum(len(v) for v in cells[cat]["events"].values())
        if total != sum(expect.values()):
            bad.append("%s: %d events, the guests wrote %d" % (s, total, sum(expect.values())))
        for prog in ("cat", "web"):
            c = cells[(s, prog)]
            by_dom = {}
            for (dom, _ring), evs in c["events"].items():
                by_dom[dom] = by_dom.get(dom, 0) + len(evs)
            if by_dom != expect:
                bad.append("%s %s: events per domain %s, written %s" % (s, prog, by_dom, expect))
            # op counts and thread counts of the events against the Stats
            ops = {}
            for (dom, _ring), evs in c["events"].items():
                for e in evs:
                    ops.setdefault(dom, {})
                    name = mtrace_ops.NAMES.get(e[1], "op%d" % e[1])
                    ops[dom][name] = ops[dom].get(name, 0) + 1
            m = differ("%s %s: events per op" % (s, prog), ops, c["op_events"], "events", "Stats")
            if m:
                bad.append(m)
            per_thread = {}
            for (dom, _ring), evs in c["events"].items():
                for e in evs:
                    per_thread[(dom, e[2])] = per_thread.get((dom, e[2]), 0) + 1
            for k, n in c["thread_events"].items():
                if per_thread.get(k, 0) != n:
                    bad.append("%s %s: thread %s has %d events, its Stats say %d" % (
                        s, prog, k, per_thread.get(k, 0), n))
                    break
        # the figures, as each program shows them
        for what in ("domains", "threads", "labels"):
            same("%s: %s" % (s, what), cat, web, what, what)
            same("%s: %s" % (s, what), cat, top, what, what)
        if set(cells[cat]["domains"]) != set(expect):
            bad.append("%s: the domains shown are %s, the guests' %s" % (
                s, sorted(cells[cat]["domains"]), sorted(expect)))
        for dom, n in expect.items():
            got = cells[top]["domains"].get(dom)
            if not got or got[1] != n:
                bad.append("%s top: domain %d shows %s, written %d events" % (s, dom, got, n))
        notes.append("%s: %d events; %d domains, %d threads, %d labels alike in cat, top and web"
                     % (s, total, len(cells[cat]["domains"]), len(cells[cat]["threads"]),
                        len(cells[cat]["labels"])))
    # across the sources
    for s in SOURCES[1:]:
        same("events live / %s" % s, ("live", "cat"), (s, "cat"), "events", "events")
        same("domains live / %s" % s, ("live", "cat"), (s, "cat"), "domains", "domains")
    for what in ("threads", "labels"):
        same("%s live / rec" % what, ("live", "top"), ("rec", "top"), what, what)
        for s in ("live", "rec"):
            if not cells[(s, "top")][what]:
                bad.append("%s: no %s to compare" % (s, what))
    return bad, notes


def self_test(cells, expect):
    """Each kind of check finds one thing changed in one cell."""
    def first(d):
        return sorted(d, key=str)[0]

    def drop_event(c):
        k = first(c[("live", "web")]["events"])
        c[("live", "web")]["events"][k].pop()

    def shift_event(c):
        k = first(c[("nats", "cat")]["events"])
        e = c[("nats", "cat")]["events"][k]
        e[0] = (e[0][0] + 1,) + e[0][1:]

    def op_stat(c):
        d = c[("rec", "web")]["op_events"]
        dom = first(d)
        d[dom][first(d[dom])] += 1

    def thread_stat(c):
        d = c[("rec", "cat")]["thread_events"]
        d[first(d)] += 1

    def domain(c):
        d = c[("nats", "top")]["domains"]
        k = first(d)
        d[k] = (d[k][0], d[k][1], d[k][2], d[k][3], d[k][4] + 1) + d[k][5:]

    def thread(c):
        d = c[("live", "top")]["threads"]
        k = first(d)
        d[k] = d[k][:3] + (str(int(d[k][3]) + 1),) + d[k][4:]

    def label(c):
        d = c[("rec", "top")]["labels"]
        k = first(d)
        d[k] = (str(int(d[k][0]) + 1),) + d[k][1:]

    def label_web(c):
        d = c[("live", "web")]["labels"]
        del d[first(d)]

    def all_events(c):
        for p in ("cat", "web"):
            k = first(c[("rec", p)]["events"])
            c[("rec", p)]["events"][k] = c[("rec", p)]["events"][k][:-1]

    failed = []
    for f in (drop_event, shift_event, op_stat, thread_stat, domain, thread, label,
              label_web, all_events):
        c = copy.deepcopy(cells)
        f(c)
        if not compare(c, expect)[0]:
            failed.append(f.__name__)
    return failed


# ---- waits of the shell test ----

def expect_arg(args):
    return {int(a.split("=")[0]): int(a.split("=")[1]) for a in args}


def settled_cat(path, expect):
    last = None
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        if '"type":"stats"' in line:
            last = line
    if not last:
        return False
    try:
        d = {x["domid"]: x["events"] for x in json.loads(last)["domains"]}
    except ValueError:
        return False
    return all(d.get(k) == n for k, n in expect.items())


def settled_top(path, expect):
    frames = [f for f in top_frames(path) if f and f[-1] == ""]
    if not frames:
        return False
    doms = {int(d["ID"]): int(d["EVENTS"]) for d in top_tables(frames[-1])[0]}
    return all(doms.get(k) == n for k, n in expect.items())


def settled_web(url, expect):
    try:
        st = json.load(urllib.request.urlopen(url + "api/state", timeout=5))
    except OSError:
        return False
    stats = st["hosts"][0]["stats"] if st.get("hosts") else st.get("stats")
    if not stats:
        return False
    d = {x["domid"]: x["events"] for x in stats["domains"]}
    return all(d.get(k) == n for k, n in expect.items()) and \
        st["web"]["events_in"] == sum(expect.values())


def main():
    cmd = sys.argv[1]
    if cmd == "sse-events":
        print(sum(len(v) for v in sse_events(sys.argv[2]).values()))
        return 0
    expect = expect_arg(sys.argv[3:])
    if cmd == "settled-cat":
        return 0 if settled_cat(sys.argv[2], expect) else 1
    if cmd == "settled-top":
        return 0 if settled_top(sys.argv[2], expect) else 1
    if cmd == "settled-web":
        return 0 if settled_web(sys.argv[2], expect) else 1
    cells = load(sys.argv[2])
    bad, notes = compare(cells, expect)
    for n in notes:
        print("# " + n)
    if bad:
        for b in bad:
            print("FAIL: " + b)
        return 1
    missed = self_test(cells, expect)
    if missed:
        print("FAIL: the comparisons did not find these changes: " + ", ".join(missed))
        return 1
    print("# and each kind of check finds one thing changed in one cell")
    return 0


if __name__ == "__main__":
    sys.exit(main())
