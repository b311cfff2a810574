#!/usr/bin/env python3
"""vcpu_check.py - the vCPU figures of mtraced's hypervisor source (issue 38) as its
outlets show them, against the stream's own statistics.

  stats FILE.jsonl NAME          the last stats line (mtrace-cat -f json): the source is
                                 the simulation's, domain NAME has vCPU figures whose
                                 per-vCPU sums are its totals, vCPU 0 (the main task,
                                 seen from the start) covers since..until, and its labels'
                                 measured waits split into steal and blocked within them
  off FILE.jsonl                 mtraced without the source: no vcpu lines, no figures
  top FILE NAME                  mtrace-top -b output: the domain's %RUN and %STEAL are
                                 numbers, in the last frame
  top-labels FILE                mtrace-top -b -g output: W-STEAL, W-BLOCK and %STEAL
                                 columns with measured values
  prom FILE BEFORE.jsonl AFTER.jsonl NAME
                                 mtrace_vcpu_seconds_total of NAME in an exposition lies
                                 between the statistics taken before and after the scrape
"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "top"))
import topcheck  # noqa: E402  (mtrace-top's batch frames)

STATES = ("running", "runnable", "blocked", "offline")


def die(msg):
    print("vcpu_check: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def lines(path):
    return [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]


def last_stats(path):
    st = [d for d in lines(path) if d["type"] == "stats"]
    if not st:
        die("%s: no stats line" % path)
    return st[-1]


def domain(stats, name):
    for d in stats["domains"]:
        if d["name"] == name:
            return d
    die("no domain %s in the statistics" % name)


def check_stats(path, name):
    s = last_stats(path)
    if s["vcpu_source"] != "sim":
        die("vcpu_source %r" % s["vcpu_source"])
    d = domain(s, name)
    v = d.get("vcpu")
    if not v:
        die("domain %s has no vcpu figures" % name)
    span = v["until_ns"] - v["since_ns"]
    if span <= 0 or not v["vcpus"]:
        die("figures span %d ns, %d vCPUs" % (span, len(v["vcpus"])))
    for st in STATES:
        total = sum(c[st + "_ns"] for c in v["vcpus"])
        if total != v[st + "_ns"]:
            die("%s: the vCPUs sum to %d, the domain says %d" % (st, total, v[st + "_ns"]))
    for c in v["vcpus"]:
        cov = sum(c[st + "_ns"] for st in STATES)
        if cov > span + 1000:
            die("vCPU %d: %d ns of states in a span of %d" % (c["vcpu"], cov, span))
        if c["vcpu"] == 0 and abs(cov - span) > 1000000:
            die("vCPU 0 (the main task) covers %d ns of %d" % (cov, span))
    waits = [l for l in s["labels"] if l["domid"] == d["domid"] and l["waits"]]
    if not waits:
        die("no label of %s has a measured wait" % name)
    for l in waits:
        if l["wait_steal_ns"] + l["wait_blocked_ns"] > l["wait_ns"]:
            die("label %s: steal %d + blocked %d > waits %d" % (
                l["label"], l["wait_steal_ns"], l["wait_blocked_ns"], l["wait_ns"]))
    print("ok: %s: %d vCPUs over %.2f s, running %.3f s, steal %.3f s; %d labels with waits"
          % (name, len(v["vcpus"]), span / 1e9, v["running_ns"] / 1e9, v["runnable_ns"] / 1e9,
             len(waits)))


def check_off(path):
    ds = lines(path)
    if any(d["type"] == "vcpu" for d in ds):
        die("vcpu lines with the source off")
    s = last_stats(path)
    if s["vcpu_source"] != "none" or any("vcpu" in d for d in s["domains"]):
        die("vCPU figures with the source off")
    if any(l["waits"] for l in s["labels"]):
        die("measured waits with the source off")
    print("ok: source off: no vcpu lines, no figures, no measured waits")


def frames(path):
    """mtrace-top -b's frames, each from its header line."""
    text = open(path, encoding="utf-8").read()
    return [f for f in re.split(r"(?m)^(?=mtrace-top \S+ - )", text) if f.strip()]


def check_top(path, name):
    f = topcheck.parse_frame(frames(path)[-1])
    d = f["domains"].get(name)
    if not d:
        die("mtrace-top shows no domain %s" % name)
    for col in ("%RUN", "%STEAL"):
        try:
            x = float(d[col])
        except (KeyError, ValueError):
            die("mtrace-top's %s of %s is %r" % (col, name, d.get(col)))
        if not 0 <= x <= 100 * 64:
            die("%s %s" % (col, x))
    print("ok: mtrace-top: %s %%RUN %s %%STEAL %s" % (name, d["%RUN"], d["%STEAL"]))


def check_top_labels(path):
    f = topcheck.parse_frame(frames(path)[-1])
    for col in ("W-STEAL", "W-BLOCK", "%STEAL"):
        if col not in f["title"]:
            die("the label view has no %s column: %s" % (col, f["title"]))
    i = f["title"].index("W-BLOCK")
    if not any(r[i] != "-" for r in f["rows"]):
        die("no label shows a measured wait")
    print("ok: mtrace-top -g: W-STEAL, W-BLOCK, %STEAL shown")


def check_prom(path, before, after, name):
    b, a = domain(last_stats(before), name), domain(last_stats(after), name)
    fig = lambda d: {(c["vcpu"], st): c[st + "_ns"] for c in d["vcpu"]["vcpus"] for st in STATES}
    lo, hi = fig(b), fig(a)
    got = {}
    pat = re.compile(r'^mtrace_vcpu_seconds_total\{domain="([^"]*)",domid="(\d+)",'
                     r'vcpu="(\d+)",state="(\w+)"\} ([0-9.]+)$')
    for line in open(path, encoding="utf-8"):
        m = pat.match(line.strip())
        if m and m.group(1) == name:
            got[(int(m.group(3)), m.group(4))] = round(float(m.group(5)) * 1e9)
    if not got:
        die("no mtrace_vcpu_seconds_total of %s" % name)
    for k, v in got.items():
        if k not in hi or not lo.get(k, 0) - 1000 <= v <= hi[k] + 1000:
            die("%s = %d ns, the statistics around the scrape say %s..%s" % (
                k, v, lo.get(k), hi.get(k)))
    if set(got) != set(hi) and set(got) != set(lo):
        die("series %s, the statistics %s" % (sorted(got), sorted(hi)))
    print("ok: %d mtrace_vcpu_seconds_total series within the statistics" % len(got))


def main():
    cmd = sys.argv[1]
    if cmd == "stats":
        check_stats(sys.argv[2], sys.argv[3])
    elif cmd == "off":
        check_off(sys.argv[2])
    elif cmd == "top":
        check_top(sys.argv[2], sys.argv[3])
    elif cmd == "top-labels":
        check_top_labels(sys.argv[2])
    elif cmd == "prom":
        check_prom(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        die("unknown command %s" % cmd)


if __name__ == "__main__":
    main()
