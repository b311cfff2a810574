#!/bin/bash
# Mtrace_xen.Make over its Linux instance (Mtrace_xen_linux: xenif) end to end:
# xen_linux_guest runs as a simulated domain under mtrace-simxen with the real mtraced.
# Its announcement is read back from xenstore as dom0 (section 7 of ring-protocol.md:
# keys, values, nothing else; clock-sync too), then it writes a known script of events on 2 rings, and
# mtrace-cat -f json must receive exactly that script, ring by ring, record by record;
# on close the announcement must be withdrawn while the domain still lives.
. "$MTRACE_SRC/tests/rig.sh"
: "${OCAML_XEN_GUEST:?}" "${CAT:?}" "${SIMXEN:?}"
ROUNDS=3000 RINGS=2 PAGES=128

xs() { "$SIMXEN" --dir "$SIM" "$@"; }

sim_start
daemon_start
"$CAT" -s "$SOCK" -f json -D xenocaml --time 170 >"$T/events.json" 2>"$T/cat.err" &
CAT_PID=$!
PIDS+=("$CAT_PID")
wait_clients 1
DOM=$(guest xenocaml -- "$OCAML_XEN_GUEST" "$ROUNDS" "$RINGS" "$PAGES" 30 30 30)
wait_until 20 grep -q '"domid"' "$T/xenocaml.log" || fail "the guest announced nothing"
head -1 "$T/xenocaml.log" | grep -q "\"backend\": \"sim\", \"domid\": $DOM," ||
	fail "the guest's first line is not the sim backend as domain $DOM: $(head -1 "$T/xenocaml.log")"
PORT=$(head -1 "$T/xenocaml.log" | sed -n 's/.*"port": \([0-9]*\)}.*/\1/p')

# the announcement, as dom0 reads it
B=/local/domain/$DOM/data/mtrace
want_key() {	# KEY VALUE
	local v
	v=$(xs xs-read "$B/$1" 2>>"$T/xs.err") || fail "$B/$1 is missing"
	[ "$v" = "$2" ] || fail "$B/$1 is '$v', expected '$2'"
}
want_key state ready
want_key version 1
want_key clock monotonic
want_key event-channel "$PORT"
want_key rings "$RINGS"
[ "$(xs xs-ls "$B" | sort | tr '\n' ' ')" = "clock clock-sync event-channel ring rings state version " ] ||
	fail "keys of $B: $(xs xs-ls "$B" | tr '\n' ' ')"
# the ring clock against Xen system time: on the simulated Xen, which IS CLOCK_MONOTONIC,
# the same reading, exact (docs/xen-time.md)
read -r seq ring xen width < <(xs xs-read "$B/clock-sync")
[ "$seq" = 1 ] && [[ "$ring" =~ ^[1-9][0-9]*$ ]] && [ "$xen" = "$ring" ] && [ "$width" = 0 ] ||
	fail "clock-sync is '$seq $ring $xen $width', not the sim's exact identity"
[ "$(xs xs-ls "$B/ring" | sort | tr '\n' ' ')" = "0 1 " ] ||
	fail "rings listed under $B/ring: $(xs xs-ls "$B/ring" | tr '\n' ' ')"
REFS=()
for i in 0 1; do
	want_key "ring/$i/pages" "$PAGES"
	[ "$(xs xs-ls "$B/ring/$i" | sort | tr '\n' ' ')" = "pages ref " ] ||
		fail "keys of $B/ring/$i: $(xs xs-ls "$B/ring/$i" | tr '\n' ' ')"
	r=$(xs xs-read "$B/ring/$i/ref") || fail "$B/ring/$i/ref is missing"
	[[ "$r" =~ ^[1-9][0-9]*$ ]] || fail "ring/$i/ref is '$r'"
	REFS+=("$r")
done
[ "$(printf '%s\n' "${REFS[@]}" | sort -u | wc -l)" = 2 ] || fail "the rings share a header ref: ${REFS[*]}"
note "announced: port $PORT, header refs ${REFS[*]}"
xs xs-write "/local/domain/$DOM/data/e2e-go" 1 || fail "writing the go-ahead"

wait_until 60 grep -q '"written"' "$T/xenocaml.log" || fail "the guest printed no summary"
SUMMARY=$(grep '"written"' "$T/xenocaml.log")
note "guest: $SUMMARY"
for kv in '"go": true' '"attached": true' '"caught_up": true' '"overwritten": 0,' '"notify_failures": 0}'; do
	[[ "$SUMMARY" == *"$kv"* ]] || fail "the guest's summary lacks $kv: $SUMMARY"
done
N=$(( (ROUNDS + 1) * RINGS ))
[[ "$SUMMARY" == *"\"written\": $N,"* ]] || fail "the guest wrote other than $N records: $SUMMARY"

# withdrawn on close, while the domain is still there
wait_until 30 grep -qx closed "$T/xenocaml.log" || fail "the guest did not close"
xs xs-read "$B/state" >/dev/null 2>&1 && fail "$B/state is still there after close"
[ "$(xs xs-read "/local/domain/$DOM/domid")" = "$DOM" ] || fail "domain $DOM is gone already"

got() { [ "$(grep -c '"op"' "$T/events.json")" -ge "$N" ]; }
short=
wait_until 60 got || short="mtrace-cat received $(grep -c '"op"' "$T/events.json") of $N events"
sleep 0.5 # anything beyond N would be a duplicate: give it time to show
kill -TERM "$CAT_PID"
wait "$CAT_PID" 2>/dev/null
# the guest's script (xen_linux_guest.ml), regenerated, against what arrived
"$PYTHON" - "$T/events.json" "$DOM" "$ROUNDS" "$RINGS" <<'PY' || fail "${short:-the events mtrace-cat received differ from the script of the guest}"
import json, sys
path, dom, rounds, rings = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def expect(r, i):
    th = r * 1000000 + i
    k = i % 6
    if k == 0: return ("creates", th, th + 1, None, "Task")
    if k == 1: return ("read", th, th - 1, None, None)
    if k == 2: return ("fails", th, th + 1, "E%d.%d" % (r, i), None)
    if k == 3: return ("label", th, 0, "l%d" % (i % 7), None)
    if k == 4: return ("counter", th, -i, "depth", None)
    return ("evtchn_send", th, i & 7, None, None)

want = {r: [("ring_start", -1, r, "ring%d" % r, None)] + [expect(r, i) for i in range(1, rounds + 1)]
        for r in range(rings)}
got = {r: [] for r in range(rings)}
for line in open(path):
    e = json.loads(line)
    if e.get("type") != "event":
        continue
    if e["domid"] != dom or e["ring"] not in got:
        print("an event of domain %s ring %s" % (e["domid"], e["ring"]))
        sys.exit(1)
    got[e["ring"]].append((e["op"], e["thread"], e["arg"], e.get("str"), e.get("thread_type")))
bad = 0
for r in range(rings):
    if got[r] != want[r]:
        bad += 1
        first = next((i for i, (a, b) in enumerate(zip(got[r], want[r])) if a != b), min(len(got[r]), len(want[r])))
        print("ring %d: %d events received, %d written; first difference at %d: got %s, want %s" % (
            r, len(got[r]), len(want[r]), first,
            got[r][first] if first < len(got[r]) else None, want[r][first] if first < len(want[r]) else None))
if bad:
    sys.exit(1)
print("rings %s: exactly the script, %d events each" % (list(range(rings)), rounds + 1))
PY
[ -z "$short" ] || fail "$short"
alive
daemon_stop
pass "Mtrace_xen.Make over the Linux instance: announced, traced exactly, withdrawn"
