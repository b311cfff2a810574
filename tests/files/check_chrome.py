#!/usr/bin/env python3
"""Structural checker of mtrace-cat -f chrome output (Chrome trace-event JSON as
Perfetto UI imports it), and its counts against the JSON-lines stream of the same
capture.

Structure: strict JSON; every B has its E on the same track (pid, tid), properly
nested, none left open; X durations >= 0; every flow start (s) has exactly one finish
(f) with the same id and category, ids unique; timestamps never go back on a track
(B/E/X/i/s/f by track, C by (pid, counter name)); counter values numeric; timestamps
exact (decimal µs with at most 3 decimals, read without floats); pids and tids fit
the 32 bits Perfetto reads, and a tid belongs to one pid (Perfetto's tids are
system-wide: one seen under another pid is taken for a new thread).

Counts (with EVENTS.jsonl): threads (distinct domain/ring/thread alive in the stream),
creates, reads (read + read_later), resolves (fulfills + fails; failed ones flagged with
their exception), becomes, signals, labels, GCs, counter updates, event-channel instants
equal what the JSON stream says.

Usage: check_chrome.py TRACE.json [EVENTS.jsonl]
"""
import collections
import decimal
import json
import sys


def ns(v):
    """Exact ns from a JSON number read as Decimal (µs)."""
    d = v * 1000
    if d != d.to_integral_value():
        raise ValueError("timestamp %s is not a whole ns" % v)
    return int(d)


def check(path):
    raw = open(path, "rb").read()
    doc = json.loads(raw.decode("utf-8"), parse_float=decimal.Decimal)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    errors = []
    stacks = collections.defaultdict(list)
    last = {}
    flows = {}
    counts = collections.Counter()
    threads = set()
    failed = 0
    tid_pid = {}

    def err(msg):
        if len(errors) < 20:
            errors.append(msg)

    for k, e in enumerate(evs):
        ph = e.get("ph")
        if ph == "M":
            if "tid" in e and tid_pid.setdefault(e["tid"], e.get("pid")) != e.get("pid"):
                err("event %d: tid %r under two pids" % (k, e["tid"]))
            if e.get("name") not in ("process_name", "thread_name") or \
                    not isinstance(e.get("args", {}).get("name"), str):
                err("event %d: bad metadata %r" % (k, e))
            continue
        if not isinstance(e.get("pid"), int) or not 0 <= e["pid"] < 2**32:
            err("event %d: no 32-bit pid" % k)
            continue
        if "tid" in e:
            if not isinstance(e["tid"], int) or not 0 < e["tid"] < 2**32:
                err("event %d: tid %r is not a 32-bit thread id" % (k, e["tid"]))
            elif tid_pid.setdefault(e["tid"], e["pid"]) != e["pid"]:
                err("event %d: tid %d under pids %d and %d" %
                    (k, e["tid"], tid_pid[e["tid"]], e["pid"]))
        t = ns(decimal.Decimal(e["ts"]))
        if ph == "C":
            key = ("C", e["pid"], e["name"])
            vals = e.get("args", {})
            if not vals or not all(isinstance(v, (int, decimal.Decimal)) and
                                   not isinstance(v, bool) for v in vals.values()):
                err("event %d: counter without numeric values %r" % (k, e))
            counts["counter"] += 1
        else:
            key = (e["pid"], e["tid"])
        if key in last and t < last[key]:
            err("event %d: time goes back on track %r (%d < %d)" % (k, key, t, last[key]))
        last[key] = t
        cat = e.get("cat")
        if ph == "B":
            stacks[key].append((e["name"], cat))
            if cat == "thread":
                a = e["args"]
                threads.add((e["pid"], a["ring"], a["id"]))
        elif ph == "E":
            if not stacks[key]:
                err("event %d: E without B on %r" % (k, key))
                continue
            name, bcat = stacks[key].pop()
            if bcat != cat:
                err("event %d: E of %s closes a %s slice" % (k, cat, bcat))
            if cat == "thread" and e.get("args", {}).get("failed"):
                failed += 1
                if not isinstance(e["args"].get("exn"), str):
                    err("event %d: failed thread without its exception" % k)
        elif ph == "X":
            if ns(decimal.Decimal(e["dur"])) < 0:
                err("event %d: negative duration" % k)
            counts[cat] += 1
        elif ph == "s":
            if e["id"] in flows:
                err("event %d: flow id %r used twice" % (k, e["id"]))
            flows[e["id"]] = [cat, 0, t]
        elif ph == "f":
            fl = flows.get(e["id"])
            if fl is None:
                err("event %d: flow end %r without its start" % (k, e["id"]))
            elif fl[1]:
                err("event %d: flow %r ends twice" % (k, e["id"]))
            elif fl[0] != cat or fl[2] > t:
                err("event %d: flow %r ends as %s at %d, began as %s at %d" %
                    (k, e["id"], cat, t, fl[0], fl[2]))
            else:
                fl[1] = 1
                counts["flow " + cat] += 1
        elif ph == "i":
            counts[cat] += 1
        elif ph == "C":
            pass
        else:
            err("event %d: unexpected phase %r" % (k, ph))
    for key, st in stacks.items():
        if st:
            err("track %r: %d slices left open (%r)" % (key, len(st), st[-1]))
    for fid, fl in flows.items():
        if not fl[1]:
            err("flow %r (%s) never ends" % (fid, fl[0]))
    counts["threads"] = len(threads)
    counts["failed"] = failed
    return errors, counts, len(evs)


def from_stream(path):
    """The same counts from mtrace-cat -f json."""
    c = collections.Counter()
    threads = set()
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        if d.get("type") != "event":
            continue
        op = d["op"]
        key = (d["domid"], d["ring"])
        if op == "creates":
            threads.add(key + (d["arg"],))
        if d["thread"] != -1 and op not in ("gc", "ring_start"):
            threads.add(key + (d["thread"],))
        c[op] += 1
    return {
        "threads": len(threads),
        "flow creates": c["creates"],
        "flow read": c["read"] + c["read_later"],
        "flow resolve": c["fulfills"] + c["fails"],
        "flow becomes": c["becomes"],
        "flow signal": c["signal"] + c["signal_new"],
        "label": c["label"],
        "gc": c["gc"],
        "counter": c["counter"] + c["increase"],
        "evtchn": c["evtchn_send"] + c["evtchn_recv"],
        "try_read": c["try_read"],
    }


def main():
    errors, counts, n = check(sys.argv[1])
    for e in errors:
        print("chrome: " + e)
    fail = bool(errors)
    if len(sys.argv) > 2:
        want = from_stream(sys.argv[2])
        for k, v in want.items():
            if counts[k] != v:
                print("chrome: %s = %d, the JSON stream says %d" % (k, counts[k], v))
                fail = True
        # failed threads are flagged unless they were never seen alive
        if counts["failed"] > 0 and want["flow resolve"] == 0:
            fail = True
    print("%s: %d trace events; %s" % (sys.argv[1], n, json.dumps(
        {k: counts[k] for k in sorted(counts)})))
    sys.exit(1 if fail else 0)


if __name__ == "__main__":
    main()
