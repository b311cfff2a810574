#!/bin/bash
# The OCaml producer end to end: guest_counts (Mtrace_guest over libmtrace-guest, writing
# with Mtrace_ring) runs as a simulated domain under mtrace-simxen with the real mtraced;
# every event it counts itself arrives at mtrace-cat -f json exactly once, op by op, and
# its named creation site arrives with its name.
. "$MTRACE_SRC/tests/rig.sh"
: "${OCAML_GUEST:?}" "${CAT:?}"
ROUNDS=4000

sim_start
daemon_start
"$CAT" -s "$SOCK" -f json -D ocaml --time 170 >"$T/events.json" 2>"$T/cat.err" &
CAT_PID=$!
PIDS+=("$CAT_PID")
# subscribed before the guest writes its RING_START, or that first event is not its to see
wait_clients 1
# a ring big enough to hold everything (1.7 MB in 2 MB; the guest waits for the
# reader to attach, then for it to catch up): the counts must be exact
guest ocaml -- "$OCAML_GUEST" "$ROUNDS" 512 20 20 >/dev/null
N=$(json_events ocaml)
note "the OCaml guest wrote $N events"
[ "$N" -ge $((ROUNDS * 12)) ] || fail "the OCaml guest wrote only $N events"
got() { [ "$(grep -c '"op"' "$T/events.json")" -ge "$N" ]; }
short=
wait_until 60 got || short="mtrace-cat received $(grep -c '"op"' "$T/events.json") of $N events"
sleep 0.5 # anything beyond N would be a duplicate: give it time to show
kill -TERM "$CAT_PID"
wait "$CAT_PID" 2>/dev/null
# on a shortfall too: the per-op comparison says which events are missing
"$PYTHON" - "$T/ocaml.log" "$T/events.json" <<'PY' || fail "${short:-the events mtrace-cat received differ from what the guest wrote}"
import collections, json, sys
want = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["per_op"]
got = collections.Counter()
sites = collections.Counter()
for line in open(sys.argv[2]):
    e = json.loads(line)
    if "op" in e:
        got[e["op"]] += 1
        if e["op"] == "site":
            sites[json.dumps({k: v for k, v in e.items() if k in ("site", "name", "site_name")}, sort_keys=True)] += 1
bad = {op: (n, got.get(op, 0)) for op, n in want.items() if got.get(op, 0) != n}
extra = {op: n for op, n in got.items() if op not in want}
if bad or extra:
    print("per op (written, received): %s; not written: %s" % (bad, extra))
    sys.exit(1)
print("per op exact: %s; sites %s" % (dict(sorted(got.items())), dict(sites)))
PY
[ -z "$short" ] || fail "$short"
alive
daemon_stop
pass "every event of the OCaml guest arrived exactly once"
