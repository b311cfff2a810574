#!/usr/bin/env python3
"""check.py - compare what stream clients received with what was generated.

  check.py filters HARNESS_JSON DIR N   clients DIR/c<i>.args (argv, one a line) and
                                         DIR/c<i>.sum (mtrace-cat --summary line)
  check.py expect HARNESS_JSON ARGS...   print the expected event count for a filter
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import mtrace_ops  # noqa: E402  (the op table of common/ops.c)

OPS = mtrace_ops.BY_NAME


def parse_filter(args):
    ids, names, ops, labels = set(), set(), set(), []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "-o", "-l", "-f", "--stats", "-s", "-n", "-t"):
            v = args[i + 1]
            i += 2
            if a == "-d":
                (ids.add(int(v)) if v.isdigit() else names.add(v))
            elif a == "-o":
                for o in v.split(","):
                    ops.add(int(o) if o.isdigit() else OPS[o])
            elif a == "-l":
                labels.append(v)
            continue
        i += 1
    return ids, names, ops, labels, "--no-events" in args


def expected(table, args):
    ids, names, ops, labels, no_events = parse_filter(args)
    if no_events:
        return 0, {}
    total, by_op = 0, {}
    for domid, name, op, label, n in table:
        if (ids or names) and domid not in ids and name not in names:
            continue
        if ops and op not in ops:
            continue
        if labels and (label is None or not any(label.startswith(p) for p in labels)):
            continue
        total += n
        by_op[str(op)] = by_op.get(str(op), 0) + n
    return total, by_op


def last_json(path):
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit("no summary in %s" % path)


def main():
    cmd = sys.argv[1]
    h = json.load(open(sys.argv[2]))
    if cmd == "expect":
        print(expected(h["table"], sys.argv[3:])[0])
        return 0
    d, n = sys.argv[3], int(sys.argv[4])
    bad = 0
    for i in range(n):
        args = [a for a in open("%s/c%d.args" % (d, i)).read().split("\n") if a]
        s = last_json("%s/c%d.sum" % (d, i))
        want, want_ops = expected(h["table"], args)
        ok = (s["events"] == want and s["by_op"] == want_ops and
              s["dropped_for_client"] == 0 and s["goodbye"])
        if "--no-events" in args:
            ok = ok and s["stats"] >= 3
        print("%s client %d %s: got %d want %d dropped %d goodbye %s stats %d" % (
            "ok" if ok else "FAIL", i, " ".join(args), s["events"], want,
            s["dropped_for_client"], s["goodbye"], s["stats"]))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
