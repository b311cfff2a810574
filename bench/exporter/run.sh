#!/bin/bash
# bench/exporter/run.sh BUILD_DIR - what a scrape costs.
#  1. bench-expo: unpacking one Stats message and rendering it, 100 domains x 50 labels,
#     in one process (thread CPU, medians).
#  2. end to end: DOMAINS mtrace-load guests (default 100) with 50 labels each on the
#     simulated Xen, mtraced, mtrace-exporter --interval 1000; the exporter's CPU over SECS seconds
#     (default 20) not scraped, scraped once a second as text, and scraped once a second
#     as Prometheus does (OpenMetrics, gzip): side by side, with each scrape's wall time
#     (median, p90) and bytes.
set -u
B=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
DOMAINS=${DOMAINS:-100}
SECS=${SECS:-20}
echo "# uptime: $(uptime)"
echo "# $B/bench/exporter/bench-expo -r 5 -n 50"
"$B/bench/exporter/bench-expo" -r 5 -n 50

T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-exporter-bench.XXXXXX") || exit 1
RIG_DIR=$T RIG_BUILD=$B
. "$SRC/scripts/rig.sh"
EXP_PID=
cleanup() {
	[ -n "$EXP_PID" ] && kill "$EXP_PID" 2>/dev/null
	rig_stop
	rm -rf "$T"
}
trap cleanup EXIT
rig_start || exit 1
for i in $(seq "$DOMAINS"); do
	rig_guest "g$i" -- "$RIG_LOAD" --labels 50 -N 64 --counters 4 --rate 200 --duration 3600 --seed "$i" >/dev/null || exit 1
done
"$B/client/exporter/mtrace-exporter" -s "$RIG_SOCK" -l 127.0.0.1:0 --interval 1000 2>"$T/exp.log" &
EXP_PID=$!
sleep 1
URL=$(sed -n 's|^mtrace-exporter: listening on \(http://.*\)$|\1|p' "$T/exp.log")
"${PYTHON:-/usr/bin/python3}" - "$URL" "$EXP_PID" "$SECS" "$DOMAINS" <<'PY'
import gzip, re, sys, time, urllib.request
url, pid, secs, doms = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
hz = 100
# what Prometheus 2.42 sends
PROM = {"Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
        "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
        "Accept-Encoding": "gzip"}
def cpu():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
def scrape(headers):
    t = time.monotonic()
    body = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30).read()
    return time.monotonic() - t, body
end = time.time() + 120		# until every domain shows its 50 labels
while True:
    _, body = scrape({})
    n = len(re.findall(rb'^mtrace_label_threads_live\{', body, re.M))
    if n >= doms * 50 or time.time() > end:
        break
    time.sleep(1)
print("# %d label series in the scrape (want %d)" % (n, doms * 50))
print("# %d domains x 50 labels, mtrace-exporter --interval 1000; each phase %.0f s" % (doms, secs))
c0 = cpu(); time.sleep(secs); c1 = cpu()
print("not scraped:                        exporter CPU %.2f %% of a core" % ((c1 - c0) / secs * 100))
for name, headers in (("text, no compression", {}), ("as Prometheus (OpenMetrics, gzip)", PROM)):
    times, size = [], 0
    c0 = cpu(); t0 = time.monotonic()
    while time.monotonic() - t0 < secs:
        t, body = scrape(headers)
        times.append(t); size = len(body)
        time.sleep(max(0, 1 - t))
    c1 = cpu(); el = time.monotonic() - t0
    times.sort()
    plain = len(gzip.decompress(body)) if headers else size
    print("scraped every 1 s, %-34s exporter CPU %.2f %% of a core; scrape %.1f ms median, "
          "%.1f ms p90 (wall, %d scrapes); %d bytes (%d uncompressed)" %
          (name + ":", (c1 - c0) / el * 100, times[len(times) // 2] * 1e3,
           times[int(len(times) * 0.9)] * 1e3, len(times), size, plain))
PY
echo "# uptime: $(uptime)"
