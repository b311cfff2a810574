#!/usr/bin/env python3
"""same_events.py LIVE NATS: the events of two mtrace-cat -f json outputs, per domain in
order, equal (ids, times, strings: every field); statistics and other lines are left
out (they are timed per client).  Prints the count; exits 1 on a difference."""
import json, sys

def events(path):
    per = {}
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if not isinstance(o, dict) or o.get("type") != "event":
            continue
        per.setdefault(o.get("domid"), []).append(line.rstrip("\n"))
    return per

a, b = events(sys.argv[1]), events(sys.argv[2])
n = sum(len(v) for v in a.values())
if a != b:
    for d in sorted(set(a) | set(b), key=str):
        x, y = a.get(d, []), b.get(d, [])
        if x != y:
            i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            print("domain %s: live %d events, from NATS %d; first difference at %d:\n  %s\n  %s"
                  % (d, len(x), len(y), i, x[i] if i < len(x) else "-", y[i] if i < len(y) else "-"))
    sys.exit(1)
if n == 0:
    print("no events at all")
    sys.exit(1)
print(n)
