#!/usr/bin/env python3
"""Check what a reader emitted from a live mtrace-mprof-guest against what the guest
wrote (its --summary).  The workload is rebuilt here from its definition (guest/mprof/
mprof-writer.h, mpw_gen), not from the C code.

Usage: check_live.py SUMMARY.json EVENTS.jsonl [--cat]
  EVENTS.jsonl: mprof-poll -e output (one JSON event a line, the reader's stats in the
  last "summary" line), or with --cat mtrace-cat -f json output (events of the one
  domain, the daemon's DomainStats in "stats" lines).

Checks: every event is exactly one the guest wrote (no corrupt event); strictly
increasing event numbers (no duplicate, no reordering); what was read of a packet is a
prefix of it; the guest's last event arrived; the reader's lost_packets equals the
packets of which nothing arrived (from packet 0: the reader starts before the guest
writes), and is not zero (the bursts overwrite packets between polls).  Through mtraced
(--cat) only lost *events* reach a client, an estimate (lost packets x average events
per packet): it must be within 10 % (+2 packets' worth) of the events really missing.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import mtrace_ops  # noqa: E402  (the op table of common/ops.c)

OPS = mtrace_ops.MIRAGE
T0 = 1000000000


def gen(i):
    op = i % 14
    ev = {"op": OPS[op], "thread": i % 50, "arg": 1000 + i % 77, "type": 0}
    if op == 0:
        ev["type"] = i % 20
    elif op == 3:
        ev["str"] = "Exn_%d" % (i % 3)
    elif op == 5:
        ev["str"] = "label-%d" % (i % 7)
        ev["arg"] = 0
    elif op in (6, 11):
        ev["str"] = "ctr-%d" % (i % 4)
    elif op == 7:
        ev["arg"] = 0
        if i % 5 == 0:
            ev["thread"] = -1
    elif op == 8:
        ev["thread"] = -1
        ev["arg"] = i
    return ev


TT = ["Wait", "Task", "Bind", "Try", "Choose", "Pick", "Join", "Map", "Condition",
      "On_success", "On_failure", "On_termination", "On_any", "Ignore_result", "Async",
      "Promise", "Semaphore", "Switch", "Stream", "Mutex"]


def from_cat(d):
    ev = {k: d[k] for k in ("ts", "op", "thread", "arg") if k in d}
    if "str" in d:
        ev["str"] = d["str"]
    if "thread_type" in d:
        ev["type"] = TT.index(d["thread_type"]) if d["thread_type"] in TT else 99
    return ev


def main():
    summ = json.load(open(sys.argv[1]))
    cat = "--cat" in sys.argv
    stats = None
    events = []
    for line in open(sys.argv[2]):
        line = line.strip()
        if not line:
            continue
        d = json.loads(line)
        if "summary" in d:
            stats = d["summary"]["stats"]
        elif cat and d.get("type") == "stats" and d.get("domains"):
            stats = d["domains"][0]
        elif cat and d.get("type") == "event":
            events.append(from_cat(d))
        elif not cat:
            events.append(d)
    problems = []
    seen = set()
    last = -1
    for ev in events:
        ts = ev["ts"]
        if ts < T0 or (ts - T0) % 1000:
            problems.append("event with a foreign timestamp: %s" % ev)
            continue
        i = (ts - T0) // 1000
        want = gen(i)
        got = {k: ev.get(k, 0 if k == "type" else None) for k in want}
        if got != want or ("str" in ev) != ("str" in want):
            problems.append("corrupt event %d: %s, wrote %s" % (i, ev, want))
        if i <= last:
            problems.append("event %d after %d: duplicate or out of order" % (i, last))
        last = max(last, i)
        seen.add(i)
    n = summ["events"]
    first = summ["packet_first_event"] + [n]
    lost = trunc = missing = 0
    for k in range(len(first) - 1):
        got = [i in seen for i in range(first[k], first[k + 1])]
        missing += got.count(False)
        if not any(got):
            lost += 1
        elif not all(got):
            trunc += 1
            if got != sorted(got, reverse=True):
                problems.append("packet %d: what arrived is not its beginning" % k)
    if n - 1 not in seen:
        problems.append("the guest's last event (%d) never arrived" % (n - 1))
    if stats is None:
        problems.append("no reader statistics")
    elif cat:
        avg = n / max(1, len(first) - 1)
        if abs(stats["lost"] - missing) > 0.1 * missing + 2 * avg:
            problems.append("daemon's lost %d, events really missing %d"
                            % (stats["lost"], missing))
        if not stats.get("legacy"):
            problems.append("domain not marked legacy")
    else:
        if stats["lost_packets"] != lost:
            problems.append("reader lost_packets %d, packets that never arrived %d"
                            % (stats["lost_packets"], lost))
        if stats.get("corrupt", 0):
            problems.append("reader counted %d corrupt from an honest writer" % stats["corrupt"])
    if lost == 0:
        problems.append("no packet was overwritten: the test did not test loss")
    print("guest wrote %d events in %d packets (%d overwritten); %d arrived; %d packets "
          "lost, %d truncated, %d events missing; reader stats %s"
          % (n, len(first) - 1, summ["packets_overwritten"], len(seen), lost, trunc, missing,
             json.dumps(stats)))
    for p in problems[:20]:
        print("FAIL:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
