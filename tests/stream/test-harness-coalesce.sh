#!/bin/bash
# Clients past client_coalesce_rate events a second get coalesced writes
# (client_coalesce_us): the server does put writes off, and every event still arrives,
# in order and counted exactly, with the Goodbye at the end; a client that turns bad
# while its writes are put off still gets its Error and is closed.  Both settings are
# far from what the machine gives: the threshold far below the rate generated (1,000 of
# 300,000 events/s), the interval far above a loop turn (100 ms: on a loaded machine
# turns come more than 2 ms apart, and writes that far apart are never put off), so
# the test asserts what it controls, not the speed it happens to get.
. "$MTRACE_SRC/tests/rig.sh"

N=600000
# 300 k events/s for 2 s, queues large enough that no loaded machine makes a client drop.
start_harness -N $N -r 300000 -D 1 -R 2 -w 3 -q 536870912 -C 100000 -K 1000 -v
PC=()
for i in 0 1; do
	"$CAT" -s "$SOCK" -f count --summary >/dev/null 2>"$T/fast$i.sum" &
	PC+=($!)
	PIDS+=($!)
done
# The third sends a malformed frame once it has events flowing: Error, then closed.
"$PROBE" -s "$SOCK" -S -I 0 -T 20 -x ffffffffffffffffffffff -a 100 >"$T/bad.out" 2>&1 &
BAD=$!
PIDS+=("$BAD")
for p in "${PC[@]}"; do wait_pid "$p" 60 || fail "fast client exited $?"; done
wait_pid "$BAD" 30 || true
wait_pid "$HPID" 20
for i in 0 1; do
	python3 - "$T/fast$i.sum" "$N" <<'PY' || fail "client $i"
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
n = int(sys.argv[2])
ok = s["events"] == n and s["dropped_for_client"] == 0 and s["goodbye"]
print("%s client: %d events of %d, dropped %d, goodbye %s" % (
      "ok" if ok else "FAIL", s["events"], n, s["dropped_for_client"], s["goodbye"]))
sys.exit(0 if ok else 1)
PY
done
put_off=$(sed -n 's/.* \([0-9][0-9]*\) client writes put off.*/\1/p' "$T/harness.err")
[ "${put_off:-0}" -gt 0 ] || fail "no write was put off: coalescing never engaged"
pass "2 fast clients got all $N events with $put_off writes put off"
grep -q "^error 1" "$T/bad.out" || { cat "$T/bad.out" >&2; fail "bad client: no Error"; }
pass "a client turning bad mid-stream got its Error"
