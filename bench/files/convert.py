#!/usr/bin/env python3
"""Conversion speed and size of mtrace-cat -i RECORDING to each output format.

For each format, RUNS conversions of the same recording (side by side: the formats
take turns, run after run); per format the median of the CPU time (user + system of
mtrace-cat: the machine is shared, wall time mostly measures the others), the wall
time, events/s on both, the output's bytes per event and the peak RSS.

Usage: convert.py CAT RECORDING [RUNS]
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

FORMATS = ["count", "proto", "text", "json", "chrome", "ctf"]


def size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


def main():
    cat, rec = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    summary = subprocess.run([cat, "-i", rec, "-f", "count", "--summary"], check=True,
                             capture_output=True, text=True).stderr
    events = int(summary.split('"events":')[1].split(",")[0])
    tmp = tempfile.mkdtemp()
    res = {f: {"cpu": [], "wall": [], "rss": [], "bytes": 0} for f in FORMATS}
    try:
        for _ in range(runs):
            for f in FORMATS:
                out = os.path.join(tmp, "out-" + f)
                shutil.rmtree(out, ignore_errors=True)
                if os.path.exists(out):
                    os.unlink(out)
                args = [cat, "-i", rec, "-f", f]
                if f != "count":
                    args += ["-O", out]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.monotonic()
                p = subprocess.Popen(args)
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.monotonic() - t0
                if status != 0:
                    sys.exit("%s failed (%d)" % (" ".join(args), status))
                res[f]["cpu"].append(ru.ru_utime + ru.ru_stime)
                res[f]["wall"].append(wall)
                res[f]["rss"].append(ru.ru_maxrss)
                res[f]["bytes"] = size(out) if f != "count" else 0
                del before
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("recording %s: %d events, %d bytes (%.1f bytes/event); %d runs, medians; "
          "load %s" % (rec, events, os.path.getsize(rec), os.path.getsize(rec) / events,
                       runs, open("/proc/loadavg").read().split()[0:3]))
    print("%-7s %12s %12s %10s %10s %10s" % ("format", "Mev/s (cpu)", "Mev/s (wall)",
                                             "cpu s", "bytes/ev", "max RSS"))
    for f in FORMATS:
        cpu = statistics.median(res[f]["cpu"])
        wall = statistics.median(res[f]["wall"])
        print("%-7s %12.2f %12.2f %10.3f %10.1f %8d KiB" % (
            f, events / cpu / 1e6 if cpu else 0, events / wall / 1e6, cpu,
            res[f]["bytes"] / events, max(res[f]["rss"])))
    print("command: %s %s %s %d" % (sys.argv[0], cat, rec, runs))


if __name__ == "__main__":
    main()
