#!/bin/bash
# Timestamps survive the batch encoding exactly when the guest clock jumps ahead or
# steps back by more than a batch's 32-bit deltas hold: the server starts a new batch
# there, and every event's ts comes out as the harness wrote it.
. "$MTRACE_SRC/tests/rig.sh"

start_harness -N 20000 -D 1 -R 1 -w 1 --clock-jumps
"$CAT" -s "$SOCK" -f json >"$T/c.out" 2>"$T/c.err" || fail "mtrace-cat: $(cat "$T/c.err")"
wait_pid "$HPID" 10
python3 - "$T/c.out" <<'PY' || fail "timestamps differ"
import json, sys
n = bad = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("type") != "event":
        continue
    k = e["arg"]
    want = 1000000000000 + k * 1000 + (k // 997) * 3000000000 - (2500000000 if k % 101 == 50 else 0)
    n += 1
    if e["ts"] != want:
        bad += 1
        if bad < 5:
            print("event %d: ts %d, want %d" % (k, e["ts"], want))
print("%d events, %d with a wrong ts" % (n, bad))
sys.exit(0 if n == 20000 and bad == 0 else 1)
PY
pass "20000 events through 20 forward jumps and 198 steps back, every ts exact"
