#!/usr/bin/env python3
"""e2e_check.py DIR N GUEST_SUMMARY... (each as name=path)

Compare what clients DIR/c<i> (args one a line in .args, mtrace-cat --summary last
line in .sum) received with what the guests' mtrace-load summaries say they wrote.
Filters checked: domains (id or name), ops, and a label prefix together with -o label
(a label event selects exactly the threads it labels)."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import mtrace_ops  # noqa: E402  (the op table of common/ops.c)

OPS = mtrace_ops.BY_NAME


def parse(args):
    ids, names, ops, labels = set(), set(), set(), []
    for flag, v in zip(args, args[1:] + [""]):
        if flag == "-d":
            (ids.add(int(v)) if v.isdigit() else names.add(v))
        elif flag == "-o":
            ops.update(int(o) if o.isdigit() else OPS[o] for o in v.split(","))
        elif flag == "-l":
            labels.append(v)
    return ids, names, ops, labels, "--no-events" in args


def expected(guests, args):
    ids, names, ops, labels, no_events = parse(args)
    by_op = {}
    if no_events:
        return 0, by_op
    if labels and ops != {5}:
        raise SystemExit("checker: a label filter needs -o label here: %r" % args)
    for name, s in guests.items():
        if (ids or names) and s["domid"] not in ids and name not in names:
            continue
        for opname, n in s["per_op"].items():
            op = OPS[opname]
            if ops and op not in ops:
                continue
            if labels:
                n = sum(c for l, c in s["labels"].items()
                        if any(l.startswith(p) for p in labels))
            if n:
                by_op[str(op)] = by_op.get(str(op), 0) + n
    return sum(by_op.values()), by_op


def last_json(path):
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit("no summary in %s" % path)


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    guests = {}
    for a in sys.argv[3:]:
        name, path = a.split("=", 1)
        guests[name] = json.load(open(path))
    bad = 0
    for i in range(n):
        args = [a for a in open("%s/c%d.args" % (d, i)).read().split("\n") if a]
        s = last_json("%s/c%d.sum" % (d, i))
        want, want_ops = expected(guests, args)
        ok = (s["events"] == want and s["by_op"] == want_ops and s["dropped_for_client"] == 0
              and s["lost_in_ring"] == 0 and s["goodbye"])
        if "--no-events" in args:
            ok = ok and s["stats"] >= 3
        print("%s client %d [%s]: got %d want %d dropped %d lost %d goodbye %s stats %d" % (
            "ok" if ok else "FAIL", i, " ".join(args), s["events"], want,
            s["dropped_for_client"], s["lost_in_ring"], s["goodbye"], s["stats"]))
        if not ok and s["by_op"] != want_ops:
            print("   by_op got %s\n   want      %s" % (s["by_op"], want_ops))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
