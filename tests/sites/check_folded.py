"""mtrace-cat -f folded --frames site of sites-guest, against the guest's own account:
the stacks (root first, each frame "function (file:line)" or the named site) and their
thread counts, and the total = every thread.  Usage: check_folded.py GUEST.out FOLDED"""
import json
import re
import sys

guest = json.loads(open(sys.argv[1]).read().strip().splitlines()[0])
got = {}
for line in open(sys.argv[2]):
    m = re.match(r"^(.*) (\d+)$", line.rstrip("\n"))
    if not m:
        sys.exit("not a folded line: %r" % line)
    got[m.group(1)] = got.get(m.group(1), 0) + int(m.group(2))

frame = {1: "(Unknown)"}  # the root: created by no one, no site, no type
parent = {}
for t in guest["threads"]:
    frame[t["id"]] = t["named"] if "named" in t else "%s (sites-guest.c:%d)" % (t["func"], t["line"])
    parent[t["id"]] = t["parent"]
want = {}
for tid in frame:
    path, a = [], tid
    while a is not None:
        path.append(frame[a])
        a = parent.get(a)
    key = ";".join(reversed(path))
    want[key] = want.get(key, 0) + 1
if got != want:
    print("folded stacks differ:\n got  %s\n want %s" % (sorted(got.items()), sorted(want.items())))
    sys.exit(1)
print("# folded: %d stacks, %d threads in all, as the guest made them" % (len(got), sum(got.values())))
