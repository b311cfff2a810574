#!/usr/bin/env python3
"""Check mtrace-top's creation tree by site (-c) against sites-guest's own account.

  sitetree_check.py GUEST.out STATS.json SCREEN DOMAIN [--depth N] [--fold SITE]

SCREEN is what mtrace-top printed (-b) or a tmux capture of its screen; STATS.json is
mtrace-cat's Stats of the same daemon (the per-site figures); the guest's account says
which function and line made every thread, its parent and label.  The tree must be the
guest's creation graph between sites: every edge (parent site -> child site, count) one
line under its parent (root sites, made by the thread with no site, at depth 0), a site
shown again [above] or, below itself, [cycle], never walked twice; each site's COUNT and
LIVE as the daemon and the guest say; manual labels apart from the '@' automatic ones.
With --depth N (-L, or keys 1-9), nothing deeper than N, and [+] where a site's
children are folded away; with --fold SITE (keys - and +), that site [+] and nothing
under it.  Exit 1 with the reasons otherwise."""
import json
import re
import sys

SITE_RE = re.compile(r"^(\w+) \(sites-guest\.c:(\d+)\)")
MARK_RE = re.compile(r"( \[(cycle|above|\+)\])$")


def parse_screen(text, domain):
    lines = text.split("\n")
    title = next((i for i, l in enumerate(lines)
                  if l.startswith("DOMAIN") and "MADE" in l and "SITE" in l), None)
    if title is None:
        raise ValueError("no site-tree table")
    at = lines[title].index("SITE")
    rows = []
    for l in lines[title + 1:]:
        if not l.startswith(domain + " "):
            if l.strip() and not l.startswith("(") and rows:
                break
            continue
        cols = l[:at].split()
        cell = l[at:].rstrip()
        m = re.match(r"^((?:  )*)(`- )?", cell)
        depth = len(m.group(1)) // 2 + (1 if m.group(2) else 0)
        if m.group(1) and not m.group(2):
            raise ValueError("bad indent: %r" % l)
        name = cell[m.end():]
        mark = MARK_RE.search(name)
        if mark:
            name = name[:mark.start()]
        labels = []
        if "  labels: " in name:
            name, _, lab = name.partition("  labels: ")
            labels = lab.split(", ")
        rows.append({"made": cols[1], "count": int(cols[2]), "live": int(cols[3]),
                     "depth": depth, "name": name, "labels": labels,
                     "mark": mark.group(2) if mark else None, "line": l})
    return rows


def key_of(name):
    """The guest's name for a site: (function, line) or the named site's string."""
    m = SITE_RE.match(name)
    return (m.group(1), int(m.group(2))) if m else name


def main():
    guest_out, stats_path, screen, domain = sys.argv[1:5]
    depth_limit = int(sys.argv[sys.argv.index("--depth") + 1]) if "--depth" in sys.argv else 0
    fold = sys.argv[sys.argv.index("--fold") + 1] if "--fold" in sys.argv else None
    partial = depth_limit or fold
    guest = json.loads(open(guest_out).read().strip().splitlines()[0])
    stats = json.loads(open(stats_path).read().strip().splitlines()[-1])
    rows = parse_screen(open(screen).read(), domain)
    errs = []

    # the guest's account: the site of each thread, the edges, counts and labels per site
    key = {t["id"]: t["named"] if "named" in t else (t["func"], t["line"])
           for t in guest["threads"]}
    want_edges, want_count, want_labels, children = {}, {}, {}, {}
    for t in guest["threads"]:
        k, p = key[t["id"]], key.get(t["parent"], "(root)")
        want_edges[(p, k)] = want_edges.get((p, k), 0) + 1
        want_count[k] = want_count.get(k, 0) + 1
        want_labels.setdefault(k, set())
        if "label" in t:
            want_labels[k].add(t["label"])
        children.setdefault(p, set()).add(k)

    # the daemon's figures for each site, by what mtrace-top shows of it
    dom = next(d["domid"] for d in stats["domains"] if d["name"] == domain)
    daemon = {}
    for s in stats["sites"]:
        if s["domid"] == dom:
            shown = s["site"] + "".join(" < " + f["function"] for f in s["frames"][1:])
            daemon[shown] = s

    got_edges, path, expanded, counts = {}, [], set(), {}
    for i, r in enumerate(rows):
        if not r["name"].startswith("@"):
            errs.append("a site not shown as an automatic label (@): %r" % r["line"])
            continue
        name = r["name"][1:]
        k = key_of(name)
        if r["depth"] > len(path):
            errs.append("row deeper than its parent: %r" % r["line"])
            continue
        del path[r["depth"]:]
        parent = path[-1] if path else "(root)"
        if r["made"] == "-":
            if r["depth"] or any(c == k for _, c in want_edges):
                errs.append("a root without a count, though the guest made it: %r" % r["line"])
        else:
            if (parent, name) in got_edges:
                errs.append("edge shown twice: %r" % r["line"])
            got_edges[(parent, name)] = int(r["made"])
        on_path = name in [p[1] for p in path]
        if (r["mark"] == "cycle") != on_path:
            errs.append("cycle mark %s but the site %s its own ancestor: %r" % (
                r["mark"] == "cycle", "is" if on_path else "is not", r["line"]))
        if r["mark"] == "above" and name not in expanded:
            errs.append("[above] for a site not shown above: %r" % r["line"])
        if r["mark"] is None and name in expanded and children.get(k):
            errs.append("a site walked twice: %r" % r["line"])
        if r["mark"] is None:
            expanded.add(name)
        if depth_limit and r["depth"] > depth_limit:
            errs.append("deeper than --depth %d: %r" % (depth_limit, r["line"]))
        if (depth_limit and r["depth"] == depth_limit and children.get(k) and
                r["mark"] is None):
            errs.append("children at the depth limit but no [+]: %r" % r["line"])
        if r["mark"] == "+" and name != fold and (not depth_limit or r["depth"] != depth_limit):
            errs.append("[+] away from the depth limit: %r" % r["line"])
        if name == fold and children.get(k) and r["mark"] not in ("+", "cycle", "above"):
            errs.append("the folded site is not [+]: %r" % r["line"])
        if name == fold and i + 1 < len(rows) and rows[i + 1]["depth"] > r["depth"]:
            errs.append("rows under the folded site: %r" % rows[i + 1]["line"])
        s = daemon.get(name)
        if s is None:
            errs.append("no such site in the daemon's Stats: %r" % name)
        elif (r["count"], r["live"]) != (s["count"], s["live"]):
            errs.append("%r: COUNT %d LIVE %d, daemon %d %d" % (name, r["count"], r["live"],
                                                                 s["count"], s["live"]))
        counts[name] = (k, r["count"], set(r["labels"]))
        if r["mark"] is None:
            path.append((k, name))

    # per site of the guest (two shown sites may share a line: an inlined helper)
    got_count, got_labels = {}, {}
    for k, c, lab in counts.values():
        got_count[k] = got_count.get(k, 0) + c
        got_labels.setdefault(k, set()).update(lab)
    if not fold and got_count != want_count:
        errs.append("threads per site: shown %s, guest %s" % (got_count, want_count))
    if not fold and got_labels != want_labels:
        errs.append("manual labels per site: shown %s, guest %s" % (got_labels, want_labels))
    shown = {}
    for (p, name), c in got_edges.items():
        e = (p[0] if p != "(root)" else "(root)", key_of(name))
        shown[e] = shown.get(e, 0) + c
    if not partial and shown != want_edges:
        errs.append("edges: shown %s,\n  guest %s" % (sorted(shown.items(), key=str),
                                                      sorted(want_edges.items(), key=str)))
    if partial and not set(shown.items()) <= set(want_edges.items()):
        errs.append("edges not in the guest's graph: %s" % (set(shown.items()) -
                                                             set(want_edges.items())))
    if depth_limit and not fold:
        # every site of the guest is on a line once at least, folded or not
        missing = set(want_count) - set(got_count)
        if missing:
            errs.append("sites not shown: %s" % missing)
    if len({r["name"] for r in rows if r["depth"] == 0}) != sum(r["depth"] == 0 for r in rows):
        errs.append("a site is a root twice")
    if errs:
        print("\n".join(errs))
        return 1
    print("# site tree: %d rows, %d edges, %d cycles marked, depth %d%s: as the guest made them"
          % (len(rows), len(shown), sum(r["mark"] == "cycle" for r in rows),
             max(r["depth"] for r in rows), " (limit %d)" % depth_limit if depth_limit else "")
          + (" (%s folded)" % fold if fold else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
