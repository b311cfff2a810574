#!/usr/bin/env python3
"""net.ctf read by daemon/mprof.c (through mprof-poll: map, copy per poll, 3 polls) must
give exactly the events the independent reader ctf_reader.py finds in the file: same
events in the same order, hence the same counts per op and per label; nothing lost,
torn or corrupt.

Usage: check_netctf.py MPROF-POLL NET.CTF
       check_netctf.py --cat CAT.jsonl NET.CTF   (mtrace-cat -f json of mtraced serving
                                                  a simulated guest that shares NET.CTF)
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True	# keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ctf_reader  # noqa: E402


TT = ["Wait", "Task", "Bind", "Try", "Choose", "Pick", "Join", "Map", "Condition",
      "On_success", "On_failure", "On_termination", "On_any", "Ignore_result", "Async",
      "Promise", "Semaphore", "Switch", "Stream", "Mutex"]


def from_cat(path):
    """Events and the last DomainStats from mtrace-cat -f json, as the reference has them."""
    evs, dom = [], None
    per_op, per_label = {}, {}
    for line in open(path):
        d = json.loads(line)
        if d.get("type") == "stats" and d.get("domains"):
            dom = d["domains"][0]
        if d.get("type") != "event":
            continue
        ev = {k: d[k] for k in ("ts", "op", "thread", "arg")}
        if "str" in d:
            ev["str"] = d["str"]
        if d["op"] == "creates":
            ev["type"] = TT.index(d["thread_type"]) if d.get("thread_type") in TT else 99
        evs.append(ev)
        per_op[ev["op"]] = per_op.get(ev["op"], 0) + 1
        if ev["op"] == "label":
            per_label[ev["str"]] = per_label.get(ev["str"], 0) + 1
    stats = {k: 0 for k in ("lost", "lost_packets", "torn", "corrupt", "truncated",
                            "unknown", "resyncs")}
    if dom is None:
        print("no statistics from mtraced")
        stats["corrupt"] = -1
    else:
        stats.update({k: dom.get(k, 0) for k in ("lost", "corrupt", "unknown")})
        if not dom.get("legacy"):
            print("domain not marked legacy")
            stats["corrupt"] = -1
    return evs, {"per_op": per_op, "per_label": per_label, "stats": stats}


def main():
    if sys.argv[1] == "--cat":
        got, summary = from_cat(sys.argv[2])
        ctf = sys.argv[3]
    else:
        poll, ctf = sys.argv[1:3]
        out = subprocess.run([poll, "-n", "3", "-e", ctf], check=True, capture_output=True,
                             text=True, timeout=30).stdout.splitlines()
        got = [json.loads(line) for line in out]
        summary = got.pop()["summary"]
        for ev in got:
            ev.pop("seq")
            if ev["op"] != "creates":
                assert ev.pop("type") == 0, ev
    want = list(ctf_reader.events(open(ctf, "rb").read()))
    fail = 0
    if len(got) != len(want):
        print("mprof.c emitted %d events, the reference reader finds %d" % (len(got), len(want)))
        fail = 1
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            print("event %d differs:\n mprof.c   %s\n reference %s" % (i, g, w))
            fail = 1
            break
    per_op, per_label = {}, {}
    for w in want:
        per_op[w["op"]] = per_op.get(w["op"], 0) + 1
        if w["op"] == "label":
            per_label[w["str"]] = per_label.get(w["str"], 0) + 1
    if summary["per_op"] != per_op or summary["per_label"] != per_label:
        print("counts differ:\n mprof.c   %s\n reference %s" % (summary, (per_op, per_label)))
        fail = 1
    st = summary["stats"]
    for k in ("lost", "lost_packets", "torn", "corrupt", "truncated", "unknown", "resyncs"):
        if st[k] != 0:
            print("stats.%s = %d on a still buffer" % (k, st[k]))
            fail = 1
    print("net.ctf: %d events; per op %s; %d labels" % (len(got), json.dumps(per_op),
                                                       len(per_label)))
    sys.exit(fail)


if __name__ == "__main__":
    main()
