#!/usr/bin/env python3
"""Two mtrace-cat -f json outputs must hold the same messages, field by field, in the
same order: events, statistics (unless --no-stats: two clients get statistics at
different moments), domain notices, losses, goodbyes.

Usage: compare_jsonl.py [--no-stats] WANT.jsonl GOT.jsonl
"""
import collections
import json
import sys


def load(path, stats):
    out = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        d = json.loads(line)
        if not stats and d.get("type") == "stats":
            continue
        out.append((n, d))
    return out


def main():
    args = sys.argv[1:]
    stats = True
    if args[0] == "--no-stats":
        stats = False
        args = args[1:]
    want, got = load(args[0], stats), load(args[1], stats)
    kinds = collections.Counter(d.get("type") for _, d in want)
    fail = 0
    for (wn, w), (gn, g) in zip(want, got):
        if w != g:
            keys = sorted(set(w) | set(g))
            diff = {k: (w.get(k), g.get(k)) for k in keys if w.get(k) != g.get(k)}
            print("%s line %d and %s line %d differ: %s" % (args[0], wn, args[1], gn,
                                                           json.dumps(diff)[:600]))
            fail = 1
            break
    if len(want) != len(got):
        print("%s has %d messages, %s %d" % (args[0], len(want), args[1], len(got)))
        fail = 1
    print("%d messages compared: %s" % (len(want), json.dumps(dict(kinds))))
    sys.exit(fail)


if __name__ == "__main__":
    main()
