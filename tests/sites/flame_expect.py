"""What a flame-graph renderer must show for a folded file: every frame's total weight
(the stacks it is in, once per stack even when it recurses) and self weight (the
stacks it ends), as speedscope's sandwich view and flamegraph.pl count them.

  flame_expect.py guest GUEST.out OUT.json     from sites-guest's own account of the
                                              threads it made (site paths, one each)
  flame_expect.py folded FOLDED OUT.json N     from the folded file itself, whose
                                              weights must add up to N threads
Writes {"frames": {name: [total, self]}, "nodes": {"a;b;c": weight}}: the frames as
speedscope's sandwich view counts them, and the flame graph's boxes (one per distinct
path from the root, its width the weight of the stacks through it) as flamegraph.pl
draws them."""
import json
import re
import sys


def expect(stacks):
    frames = {}
    for path, w in stacks:
        for f in set(path):
            frames.setdefault(f, [0, 0])[0] += w
        frames.setdefault(path[-1], [0, 0])[1] += w
    return frames


def nodes(stacks):
    out = {}
    for path, w in stacks:
        for k in range(1, len(path) + 1):
            key = ";".join(path[:k])
            out[key] = out.get(key, 0) + w
    return out


def guest_stacks(guest_out):
    guest = json.loads(open(guest_out).read().strip().splitlines()[0])
    frame = {1: "(Unknown)"}  # the root: created by no one, no site, no type
    parent = {}
    for t in guest["threads"]:
        frame[t["id"]] = t["named"] if "named" in t else "%s (sites-guest.c:%d)" % (
            t["func"], t["line"])
        parent[t["id"]] = t["parent"]
    for tid in frame:
        path, a = [], tid
        while a is not None:
            path.append(frame[a])
            a = parent.get(a)
        yield list(reversed(path)), 1


def folded_stacks(folded):
    for line in open(folded):
        m = re.match(r"^(.*) (\d+)$", line.rstrip("\n"))
        if not m:
            sys.exit("not a folded line: %r" % line)
        yield m.group(1).split(";"), int(m.group(2))


if sys.argv[1] == "guest":
    stacks = list(guest_stacks(sys.argv[2]))
else:
    stacks = list(folded_stacks(sys.argv[2]))
    total = sum(w for _, w in stacks)
    if total != int(sys.argv[4]):
        sys.exit("the folded weights add up to %d, the trace has %s threads" % (total, sys.argv[4]))
json.dump({"frames": expect(stacks), "nodes": nodes(stacks)}, open(sys.argv[3], "w"))
print("# %s: %d stacks, %d threads, %d frames" % (sys.argv[2].rsplit("/", 1)[-1], len(stacks),
                                                  sum(w for _, w in stacks), len(expect(stacks))))
