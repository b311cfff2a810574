#!/bin/bash
# mtrace-exporter out of descriptors (issue 25 #6): run with a soft limit of 64
# descriptors, 150 connections held open make accept() fail with EMFILE.  libevent
# would retry at once, spinning and logging every failure; the exporter must pause its
# listener instead (little CPU, one log line a minute), and serve scrapes again as
# soon as the connections go.  Every answer carries nosniff.
. "$(dirname "$0")/lib.sh"
need "$EXPORTER"

"$EXPORTER" -s "$T/none.sock" -l 127.0.0.1:0 2>"$T/exporter.log" &
EXP_PID=$!
PIDS+=("$EXP_PID")
prlimit --pid "$EXP_PID" --nofile=64: || fail "prlimit"
for _ in $(seq 100); do
	port=$(sed -n 's|^mtrace-exporter: listening on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$T/exporter.log")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || fail "mtrace-exporter did not start"
"$PYTHON" - "$port" "$EXP_PID" "$T/exporter.log" <<'PY' || fail "EMFILE"
import socket, sys, time, urllib.request
port, pid, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
fails = 0
def check(ok, what):
    global fails
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    fails += not ok
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / 100.0
r = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
check(r.headers.get("X-Content-Type-Options") == "nosniff", "nosniff on /metrics")
held = []
for i in range(150):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        pass
    held.append(s)
c0, t0 = cpu(), time.monotonic()
time.sleep(3)
used = cpu() - c0
lines = sum(1 for l in open(log, errors="replace") if "accept" in l or "Too many open files" in l)
check(used < 1.0, f"out of descriptors for 3 s: {used:.2f} s of CPU (a spinning accept takes ~3)")
check(lines <= 2, f"  {lines} log lines about accept")
for s in held:
    s.close()
t0 = time.monotonic()
ok = False
while time.monotonic() - t0 < 5 and not ok:
    try:
        ok = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1).status == 200
    except OSError:
        time.sleep(0.1)
check(ok, f"scrapes served again {time.monotonic() - t0:.2f} s after the connections went")
sys.exit(1 if fails else 0)
PY
kill -0 "$EXP_PID" || fail "mtrace-exporter died"
pass "mtrace-exporter out of descriptors"
