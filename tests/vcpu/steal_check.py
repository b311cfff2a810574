#!/usr/bin/env python3
"""steal_check.py CAT SOCK NAME PID SECONDS OUT.json [CONTROL] - the steal mtraced's hypervisor
source finds for domain NAME (a simulated guest: process PID) against the process's own
account of it, /proc/PID/task/*/schedstat, read here independently.

For SECONDS it takes mtraced's statistics every 250 ms (mtrace-cat -f json) and, as each
arrives, reads every task's schedstat (the time it waited on a run queue) with the time.
mtraced's figures cover the domain up to vcpu_until_ns; the process's own up to when
they were read: each gives a rate of steal (runnable ns per ns of wall time) over its
window, the first statistics to the last.  Writes {"source": rate, "schedstat": rate,
"run": running rate, "waits_steal_share": ..} to OUT.json; with CONTROL (a pid), that
process's own wait rate over the same window too ("control"): how busy the cores were
with everyone else."""
import json
import os
import subprocess
import sys
import time


def proc_wait(pid):
    """(waited ns, ran ns) summed over the process's tasks, and when (realtime ns)."""
    wait = run = 0
    base = "/proc/%d/task" % pid
    for tid in os.listdir(base):
        try:
            with open("%s/%s/schedstat" % (base, tid)) as f:
                r, w, _ = f.read().split()
        except (OSError, ValueError):
            continue  # a task that ended meanwhile
        run += int(r)
        wait += int(w)
    return wait, run, time.clock_gettime_ns(time.CLOCK_REALTIME)


def main():
    cat, sock, name, pid, secs, out = sys.argv[1:7]
    pid, secs = int(pid), float(secs)
    control = int(sys.argv[7]) if len(sys.argv) > 7 else None
    p = subprocess.Popen([cat, "-s", sock, "-f", "json", "--no-events", "--stats", "250", "--label-stats",
                          "-D", name], stdout=subprocess.PIPE, text=True)
    samples, end = [], time.time() + secs
    for line in p.stdout:
        d = json.loads(line)
        if d.get("type") != "stats":
            continue
        proc = proc_wait(pid) + (proc_wait(control) if control else ())
        dom = [x for x in d["domains"] if x["name"] == name]
        if dom and dom[0].get("vcpu"):
            waits = [l for l in d["labels"] if l["waits"]]
            samples.append((dom[0]["vcpu"], proc, waits))
        if time.time() >= end and len(samples) >= 8:
            break
    p.terminate()
    p.wait()
    if len(samples) < 8:
        print("steal_check: only %d statistics with vCPU figures" % len(samples), file=sys.stderr)
        sys.exit(1)
    (v0, p0, w0), (v1, p1, w1) = samples[1], samples[-1]
    span = v1["until_ns"] - v0["until_ns"]
    wall = p1[2] - p0[2]
    wsum = lambda ws, k: sum(l[k] for l in ws)
    wait_ns = wsum(w1, "wait_ns") - wsum(w0, "wait_ns")
    res = {
        "source": (v1["runnable_ns"] - v0["runnable_ns"]) / span,
        "schedstat": (p1[0] - p0[0]) / wall,
        "run": (v1["running_ns"] - v0["running_ns"]) / span,
        "schedstat_run": (p1[1] - p0[1]) / wall,
        "window_s": span / 1e9,
        "waits_steal_share": (wsum(w1, "wait_steal_ns") - wsum(w0, "wait_steal_ns")) / wait_ns
        if wait_ns > 0 else None,
    }
    if control:
        res["control"] = (p1[3] - p0[3]) / (p1[5] - p0[5])
    json.dump(res, open(out, "w"))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
