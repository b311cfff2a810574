"""Read the SVG flamegraph.pl drew and compare its boxes with the expectation.

  check_flamegraph_svg.py SVG EXPECT.json [SVG EXPECT.json ...]

Every box is a <title>NAME (N UNIT, P%)</title> and a <rect>; its depth is its
row (the "all" box at the bottom is depth 0), its parent the box one row down that
covers it.  The boxes, as paths from the root with their weights, must be the
expectation's "nodes" (all of them, or with "subset": true those given), and "all"
the total weight; flamegraph.pl draws '<' and '>' of a name as '(' and ')'.  Exit 1
with the differences otherwise."""
import html
import json
import re
import sys

BOX = re.compile(r'<title>(.*) \(([\d,]+) [a-z]+, [\d.]+%\)</title><rect x="([\d.]+)" '
                 r'y="([\d.]+)" width="([\d.]+)"')


def boxes(svg):
    out = []
    for m in BOX.finditer(open(svg, encoding="utf-8").read()):
        out.append({"name": html.unescape(m.group(1)), "n": int(m.group(2).replace(",", "")),
                    "x": float(m.group(3)), "y": float(m.group(4)), "w": float(m.group(5))})
    allb = [b for b in out if b["name"] == "all"]
    if len(allb) != 1:
        raise ValueError("%d 'all' boxes" % len(allb))
    rows = sorted({b["y"] for b in out}, reverse=True)
    for b in out:
        b["depth"] = rows.index(b["y"])
    return out, allb[0]


def paths(bs):
    """Each box's path from the root (without "all"): its parent is the box of the row
    below that overlaps it most."""
    by_depth = {}
    for b in bs:
        by_depth.setdefault(b["depth"], []).append(b)
    got = {}
    for b in sorted(bs, key=lambda b: b["depth"]):
        if b["depth"] == 0:
            b["path"] = ""
            continue
        under = by_depth.get(b["depth"] - 1, [])
        p = max(under, key=lambda u: min(u["x"] + u["w"], b["x"] + b["w"]) - max(u["x"], b["x"]))
        b["path"] = (p["path"] + ";" if p["path"] else "") + b["name"]
        if b["path"] in got:
            raise ValueError("two boxes for %r" % b["path"])
        got[b["path"]] = b["n"]
    return got


def main():
    failed = False
    args = sys.argv[1:]
    for svg, exp in zip(args[0::2], args[1::2]):
        want = json.load(open(exp))
        bs, allb = boxes(svg)
        got = paths(bs)
        nodes = {k.translate(str.maketrans("<>", "()")): w for k, w in want["nodes"].items()}
        roots = sum(w for k, w in nodes.items() if ";" not in k)
        errs = []
        if not want.get("subset") and allb["n"] != roots:
            errs.append("all: %d, want %d" % (allb["n"], roots))
        for k in set(nodes) | (set() if want.get("subset") else set(got)):
            if got.get(k) != nodes.get(k):
                errs.append("%r: drawn %s, want %s" % (k, got.get(k), nodes.get(k)))
        name = svg.rsplit("/", 1)[-1]
        if errs:
            failed = True
            print("FAIL: %s: flamegraph.pl's boxes differ:\n  %s" % (name, "\n  ".join(sorted(errs))))
        else:
            print("ok: %s: flamegraph.pl drew %d boxes (all: %d) as expected" % (name, len(got),
                                                                             allb["n"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
