"""Compare mtraced's creation sites of one guest with the guest's own account and
with addr2line -f -i.  Usage: check_sites.py GUEST.out STATS.json BINARY DOMID [--quiet]
Exit 0 when everything matches, 1 (with the reasons, unless --quiet) otherwise."""
import json
import os
import re
import subprocess
import sys


def addr2line(binary, offsets):
    # one address at a time: with -i, frames of consecutive addresses are not delimited
    res = []
    for o in offsets:
        lines = subprocess.run(["addr2line", "-f", "-i", "-e", binary, "0x%x" % o],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        fr = []
        for k in range(0, len(lines) - 1, 2):
            loc = re.sub(r" \(discriminator \d+\)$", "", lines[k + 1])
            f, _, ln = loc.rpartition(":")
            fr.append((lines[k], os.path.basename(f), int(ln) if ln.isdigit() else 0))
        res.append(fr)
    return res


def main():
    guest_out, stats_path, binary, dom = sys.argv[1:5]
    dom = int(dom)
    quiet = "--quiet" in sys.argv
    errs = []
    try:
        guest = json.loads(open(guest_out).read().strip().splitlines()[0])
        stats = json.loads(open(stats_path).read().strip().splitlines()[-1])
    except (ValueError, IndexError, OSError) as e:
        if not quiet:
            print("not ready:", e)
        return 1
    sites = {s["index"]: s for s in stats["sites"] if s["domid"] == dom}
    threads = {t["id"]: t for t in stats["threads"] if t["domid"] == dom}
    if "--ready" in sys.argv:
        # everything the guest made has arrived and every address site was looked up
        made = sum(s["count"] for s in sites.values())
        tried = all(s["named"] or s["resolved"] for s in sites.values())
        return 0 if made == len(guest["threads"]) and tried else 1
    by_display = {}
    for s in sites.values():
        by_display.setdefault(s["site"], []).append(s)

    # 1. every PC site resolved, its frames as addr2line gives them for its file address
    pcs = [s for s in sites.values() if not s["named"]]
    for s, fr in zip(pcs, addr2line(binary, [s["offset"] for s in pcs])):
        got = [(f["function"], os.path.basename(f["file"]), f["line"]) for f in s["frames"]]
        if (len(fr) == 1 and len(got) > 1 and fr[0][1:] == got[0][1:] and
                fr[0][0] == got[-1][0]):
            # binutils' addr2line misses clang's inlined subroutines (it names the
            # outer function at the inner line): the same place, fewer frames
            fr = got
        if not s["resolved"] or got != fr:
            errs.append("site %d at 0x%x: daemon %s, addr2line %s" % (s["index"], s["offset"],
                                                                     got, fr))
        if s["module"] != open_build_id(binary):
            errs.append("site %d: module %r" % (s["index"], s["module"]))

    # 2. every thread of the guest: the daemon's site for it is the guest's function and line
    want_key = {}
    for t in guest["threads"]:
        key = t["named"] if "named" in t else (t["func"], t["line"])
        want_key[t["id"]] = key
        d = threads.get(t["id"])
        if d is None:
            errs.append("thread %d not reported" % t["id"])
            continue
        cands = by_display.get(d["site"], [])
        if len(cands) < 1:
            errs.append("thread %d: site %r is no site" % (t["id"], d["site"]))
            continue
        s = cands[0]
        got = s["site"] if s["named"] else (s["frames"][0]["function"], s["frames"][0]["line"]) \
            if s["frames"] else None
        if got != key:
            errs.append("thread %d: daemon site %r, guest %r" % (t["id"], got, key))

    # 3. threads of one line group together: counts per site as the guest made them
    def skey(s):
        if s["named"]:
            return s["site"]
        if not s["frames"]:
            return None
        return tuple((f["function"], f["line"]) for f in s["frames"])
    want_count = {}
    for t in guest["threads"]:
        want_count[want_key[t["id"]]] = want_count.get(want_key[t["id"]], 0) + 1
    got_count = {}
    for s in sites.values():
        k = s["site"] if s["named"] else (s["frames"][0]["function"], s["frames"][0]["line"]) \
            if s["frames"] else None
        got_count[k] = got_count.get(k, 0) + s["count"]
    if got_count != want_count:
        errs.append("counts per line: daemon %s, guest %s" % (got_count, want_count))
    if len({skey(s) for s in sites.values()}) != len(sites):
        errs.append("two daemon sites with the same frames")

    # 4. the creation graph between sites, by innermost function and line
    want_edges = {}
    for t in guest["threads"]:
        pk = want_key.get(t["parent"], "(root)")
        want_edges[(pk, want_key[t["id"]])] = want_edges.get((pk, want_key[t["id"]]), 0) + 1
    got_edges = {}
    for e in stats["site_edges"]:
        if e["domid"] != dom:
            continue
        def k(i):
            if i < 0:
                return "(root)"
            s = sites[i]
            return s["site"] if s["named"] else (s["frames"][0]["function"],
                                                 s["frames"][0]["line"]) if s["frames"] else None
        got_edges[(k(e["parent"]), k(e["child"]))] = \
            got_edges.get((k(e["parent"]), k(e["child"])), 0) + e["count"]
    if got_edges != want_edges:
        errs.append("graph: daemon %s, guest %s" % (got_edges, want_edges))

    if errs and not quiet:
        print("\n".join(errs))
    if not errs:
        print("%d threads at %d sites (%d of them inlined), %d edges: as the guest made them"
              % (len(guest["threads"]), len(sites),
                 sum(1 for s in pcs if len(s["frames"]) > 1), len(got_edges)))
    return 1 if errs else 0


def open_build_id(binary):
    out = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: *([0-9a-f]+)", out)
    return m.group(1) if m else ""


if __name__ == "__main__":
    sys.exit(main())
