#!/usr/bin/env python3
"""client_counts.py - compare what stream clients counted with what their filters
select (tests/lib/subscribe_model.py) of what was written.

  client_counts.py harness HARNESS_JSON DIR N   the harness's table of what it generated
  client_counts.py guests DIR N NAME=SUMMARY... mtrace-load summaries of the guests (a
                                                 label filter needs -o label here)
  client_counts.py expect HARNESS_JSON ARGS...  print the expected event count for a filter

Client i left DIR/c<i>.args (its argv, one a line) and DIR/c<i>.sum (mtrace-cat
--summary: the last JSON line)."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from subscribe_model import OPS, Subscribe  # noqa: E402


def add(by_op, op, n):
    if n:
        by_op[str(op)] = by_op.get(str(op), 0) + n


def from_harness(table, args):
    """table: [domid, name, op, label, count] rows."""
    sub, by_op = Subscribe(args), {}
    for domid, name, op, label, n in table:
        if sub.selects(domid, name, op, label):
            add(by_op, op, n)
    return sum(by_op.values()), by_op


def from_guests(guests, args):
    """guests: name -> mtrace-load summary (domid, per_op, labels)."""
    sub, by_op = Subscribe(args), {}
    if sub.labels and sub.ops != {OPS["label"]}:
        raise SystemExit("checker: a label filter needs -o label here: %r" % args)
    for name, s in guests.items():
        for opname, n in s["per_op"].items():
            op = OPS[opname]
            if sub.labels:
                # a label event selects exactly the threads it labels
                n = sum(c for l, c in s["labels"].items() if sub.selects(s["domid"], name, op, l))
            elif not sub.selects(s["domid"], name, op, None):
                continue
            add(by_op, op, n)
    return sum(by_op.values()), by_op


def last_json(path):
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit("no summary in %s" % path)


def compare(d, n, expected, guests_mode):
    bad = 0
    for i in range(n):
        args = [a for a in open("%s/c%d.args" % (d, i)).read().split("\n") if a]
        s = last_json("%s/c%d.sum" % (d, i))
        want, want_ops = expected(args)
        ok = (s["events"] == want and s["by_op"] == want_ops and
              s["dropped_for_client"] == 0 and s["goodbye"])
        if guests_mode:
            ok = ok and s["lost_in_ring"] == 0
        if "--no-events" in args:
            ok = ok and s["stats"] >= 3
        print("%s client %d [%s]: got %d want %d dropped %d lost %d goodbye %s stats %d" % (
            "ok" if ok else "FAIL", i, " ".join(args), s["events"], want,
            s["dropped_for_client"], s.get("lost_in_ring", 0), s["goodbye"], s["stats"]))
        if not ok and s["by_op"] != want_ops:
            print("   by_op got %s\n   want      %s" % (s["by_op"], want_ops))
        bad += not ok
    return 1 if bad else 0


def main():
    cmd = sys.argv[1]
    if cmd == "guests":
        guests = {}
        for a in sys.argv[4:]:
            name, path = a.split("=", 1)
            guests[name] = json.load(open(path))
        return compare(sys.argv[2], int(sys.argv[3]), lambda a: from_guests(guests, a), True)
    table = json.load(open(sys.argv[2]))["table"]
    if cmd == "expect":
        print(from_harness(table, sys.argv[3:])[0])
        return 0
    if cmd == "harness":
        return compare(sys.argv[3], int(sys.argv[4]), lambda a: from_harness(table, a), False)
    raise SystemExit("usage: client_counts.py harness|guests|expect ...")


if __name__ == "__main__":
    sys.exit(main())
