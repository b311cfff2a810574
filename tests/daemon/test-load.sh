#!/bin/bash
# mtrace-load, the project's workload guest, against its own JSON summary: every event
# it wrote is decoded and counted (total, per label), streamed exactly once per op to a
# client (mtrace-cat), nothing lost or corrupt; a garbage-writing mtrace-load next to it
# is counted as corrupt and changes nothing for the others.
. "$MTRACE_SRC/tests/rig.sh"
: "${LOAD:?}" "${CAT:?}"

sim_start
daemon_start
"$CAT" -s "$SOCK" -f count --summary --time 120 2>"$T/cat.json" &
CAT_PID=$!
PIDS+=("$CAT_PID")
# a's creations, to check that its rings create threads of their own
"$CAT" -s "$SOCK" -f json -D a -o creates --time 120 >"$T/creates.json" 2>/dev/null &
CR_PID=$!
PIDS+=("$CR_PID")
sleep 0.3
# flat out, rings big enough to hold everything: the counts must be exact
A=$(guest a --preserve-poweroff -- "$LOAD" --rings 2 -p 128 -n 8000 --labels 3 --counters 2 --seed 7 --wait-reader 10 --linger 10)
B=$(guest b --preserve-poweroff -- "$LOAD" --rings 1 -p 16 --garbage mixed --duration 3 --rate 20000)
# c stamps raw TSC ticks where the TSC is invariant: mtraced converts them at decode
CCLOCK=monotonic
grep -qw nonstop_tsc /proc/cpuinfo 2>/dev/null && CCLOCK=tsc
C=$(guest c --preserve-poweroff -- "$LOAD" --rings 4 -p 64 -n 3000 --labels 5 --seed 9 --wait-reader 10 --linger 10 \
	--clock "$CCLOCK")
EA=$(json_events a); EC=$(json_events c)
note "mtrace-load a wrote $EA events, c $EC"
wait_field "$A" events "$EA" 20
wait_field "$C" events "$EC" 20
note "a and c counted exactly"
wait_match "$B" corrupt '^[1-9]' 20
snap
for d in $A $C; do
	[ "$(field $d lost)" = 0 ] && [ "$(field $d corrupt)" = 0 ] && [ "$(field $d unknown)" = 0 ] ||
		fail "domain $d: lost/corrupt/unknown"
done
# label counts as the guest wrote them
"$PYTHON" - "$T/a.log" "$T/stats" "$A" <<'PY' || fail "label counts differ"
import json, sys
want = json.load(open(sys.argv[1]))["labels"]
got = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f and f[0] == "label" and f[1] == sys.argv[3]:
        got[f[2]] = int(f[3].split("=")[1])
if got != want:
    print("labels: guest wrote %s, daemon counted %s" % (want, got))
    sys.exit(1)
PY
note "labels checked"
# Thread ids are the domain's: two rings (vCPUs) never create the same one.  When
# mtrace-load's rings shared one id space, both created thread 65 at about the same
# time, and the label counts above depended on how mtraced interleaved the rings.
kill -TERM "$CR_PID"
wait "$CR_PID"
"$PYTHON" - "$T/creates.json" "$(json_events a)" <<'PY' || fail "a thread id created twice"
import collections, json, sys
by_ring = collections.defaultdict(set)
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("op") == "creates":
        by_ring[e["ring"]].add(e["arg"])
        n += 1
if len(by_ring) != 2 or n < int(sys.argv[2]) // 40:
    print("creations: %d over rings %s" % (n, sorted(by_ring)))
    sys.exit(1)
both = by_ring[0] & by_ring[1]
if both:
    print("%d thread ids created on both rings, e.g. %s" % (len(both), sorted(both)[:5]))
    sys.exit(1)
PY
note "each ring creates threads of its own"
"$SIMXEN" --dir "$SIM" destroy "$B" >/dev/null
wait_field "$B" state destroyed 20
sleep 0.5
note "stopping the client"
kill -TERM "$CAT_PID"
wait "$CAT_PID"
# the stream carried every event of a and c once, op by op (b's are its own)
"$PYTHON" - "$T/a.log" "$T/c.log" "$T/cat.json" "$(field "$B" events)" "$MTRACE_SRC/tests/lib" <<'PY' || fail "stream differs"
import json, sys
sys.path.insert(0, sys.argv[5])
from subscribe_model import OPS as ops
want = {}
for p in sys.argv[1:3]:
    for name, n in json.load(open(p))["per_op"].items():
        want[ops[name]] = want.get(ops[name], 0) + n
cat = json.loads(open(sys.argv[3]).read().strip().splitlines()[-1])
got = {int(k): v for k, v in cat["by_op"].items()}
b_events = int(sys.argv[4])
total_want = sum(want.values()) + b_events
if cat["events"] < sum(want.values()) or cat["dropped_for_client"]:
    print("stream: %d events, %d dropped; a + c wrote %d" % (cat["events"], cat["dropped_for_client"], sum(want.values())))
    sys.exit(1)
for op, n in want.items():
    if got.get(op, 0) < n:
        print("op %d: %d streamed, %d written by a + c" % (op, got.get(op, 0), n))
        sys.exit(1)
# what is beyond a + c is b's, no more than the daemon decoded from b
extra = cat["events"] - sum(want.values())
if extra > b_events:
    print("stream: %d events beyond a + c, b decoded only %d" % (extra, b_events))
    sys.exit(1)
PY
alive
daemon_stop
echo "ok: mtrace-load counted exactly"
