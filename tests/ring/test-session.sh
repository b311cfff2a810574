#!/bin/bash
# A guest session end to end on the simulated Xen: mtrace-load shares its rings and
# announces them, ring-read (a minimal dom0 reader over the same decoder as mtraced)
# maps them and reads until the guest withdraws; counts must match exactly.
. "$MTRACE_SRC/tests/rig.sh"
READ=$RING_READ

sim_start

# run NAME READ_TIMEOUT LOAD-ARGS...: start the guest and the reader, wait for both
run() {
	local name=$1 rt=$2; shift 2
	local domid
	domid=$(timeout 20 "$SIMXEN" --dir "$SIM" create --name "$name" --log "$T/$name.log" -- \
		"$LOAD" --summary "$T/$name.sum" --wait-reader 20 --linger 20 "$@") ||
		fail "create $name"
	# the announcement, read as dom0 would
	for i in $(seq 200); do
		[ "$("$SIMXEN" --dir "$SIM" xs-read /local/domain/$domid/data/mtrace/state 2>/dev/null)" = ready ] && break
		sleep 0.05
	done
	local base=/local/domain/$domid/data/mtrace
	[ "$("$SIMXEN" --dir "$SIM" xs-read $base/state)" = ready ] || fail "$name: state never ready"
	local want_version=1
	[ "${CLOCK:-}" = tsc ] && want_version=2
	[ "$("$SIMXEN" --dir "$SIM" xs-read $base/version)" = $want_version ] || fail "$name: version key"
	local ref0
	ref0=$("$SIMXEN" --dir "$SIM" xs-read $base/ring/0/ref)
	[[ $ref0 =~ ^[0-9]+$ ]] || fail "$name: ring ref"
	if [ -n "${REANNOUNCE:-}" ]; then
		# resume/migration: the toolstack's xenstore lost our keys; SIGUSR1 re-announces
		"$SIMXEN" --dir "$SIM" xs-rm $base || fail "xs-rm"
		"$SIMXEN" --dir "$SIM" xs-read $base/state >/dev/null 2>&1 && fail "$name: keys not removed"
		local pid
		pid=$("$SIMXEN" --dir "$SIM" list | awk -v d="$domid" '$1 == d { print $4 }')
		[ -n "$pid" ] || fail "$name: no pid in list"
		kill -USR1 "$pid"
		for i in $(seq 200); do
			[ "$("$SIMXEN" --dir "$SIM" xs-read $base/state 2>/dev/null)" = ready ] && break
			sleep 0.05
		done
		[ "$("$SIMXEN" --dir "$SIM" xs-read $base/state 2>/dev/null)" = ready ] ||
			fail "$name: not re-announced"
		[ "$("$SIMXEN" --dir "$SIM" xs-read $base/ring/0/ref)" = "$ref0" ] ||
			fail "$name: re-announced a different ref"
	fi
	timeout $((rt + 10)) "$READ" --timeout "$rt" "$domid" >"$T/$name.read" 2>"$T/$name.err" &
	RPID=$!
	PIDS+=("$RPID")
	wait $RPID || { cat "$T/$name.err"; fail "$name: ring-read failed"; }
	RPID=
	for i in $(seq 200); do [ -s "$T/$name.sum" ] && break; sleep 0.05; done
	[ -s "$T/$name.sum" ] || { cat "$T/$name.log"; fail "$name: no summary"; }
	# withdrawn: state closed or the directory gone
	local st
	st=$("$SIMXEN" --dir "$SIM" xs-read $base/state 2>/dev/null)
	[ "$st" != ready ] || fail "$name: still announced after close"
}

check() {	# NAME MODE: exact | overwrite | garbage
	"$PYTHON" - "$T/$1.sum" "$T/$1.read" "$2" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2])); mode = sys.argv[3]
bad = []
if not r["withdrawn"]: bad.append("reader never saw the guest withdraw")
if len(r["rings"]) != s["rings"]: bad.append("ring count")
for w, g in zip(s["per_ring"], r["rings"]):
    i = w["ring"]
    if g["name"] != "ring%d" % i or g["index"] != i: bad.append("ring %d name/index" % i)
    if mode == "garbage":
        continue
    if g["events"] + g["lost"] != w["events"]:
        bad.append("ring %d: read %d + lost %d != written %d" % (i, g["events"], g["lost"], w["events"]))
    if g["corrupt"] or g["unknown"]: bad.append("ring %d: corrupt %d unknown %d" % (i, g["corrupt"], g["unknown"]))
    if mode in ("exact", "reannounce"):
        if g["lost"]: bad.append("ring %d: lost %d" % (i, g["lost"]))
        if g["per_op"] != w["per_op"]: bad.append("ring %d per_op %s != %s" % (i, g["per_op"], w["per_op"]))
if mode == "overwrite" and sum(g["lost"] for g in r["rings"]) == 0:
    bad.append("expected overwrites with a 1-page ring flat out")
if mode == "garbage":
    if s["garbage_writes"] == 0: bad.append("no garbage written")
    if sum(g["corrupt"] for g in r["rings"]) == 0: bad.append("garbage not counted as corrupt")
if mode == "tsc":
    # the guest stamped raw TSC ticks; we must see CLOCK_MONOTONIC ns from this host
    if s["clock"] != "tsc" or r["clock"] != "tsc": bad.append("clock %s / %s" % (s["clock"], r["clock"]))
    for g in r["rings"]:
        if g["source_clock"] != 4 or g["clock"] != 1: bad.append("ring clocks %d/%d" % (g["source_clock"], g["clock"]))
        # written after the guest started (it ran before we attached: allow 60 s) and never after we read it
        if not (r["attach_ns"] - 60e9 < g["ts_min"] <= g["ts_max"] <= r["done_ns"]):
            bad.append("ts %d..%d outside [attach - 60 s, done %d]" % (g["ts_min"], g["ts_max"], r["done_ns"]))
        if g["ahead_ns"] > 1000: bad.append("a ts %d ns ahead of CLOCK_MONOTONIC" % g["ahead_ns"])
        if g["time_updates"] == 0: bad.append("no recalibration picked up")
if mode == "reannounce" and s["reannounced"] != 1: bad.append("reannounced %d" % s["reannounced"])
if mode == "exact" and r["wakeups"] == 0: bad.append("no event-channel wake-up")
print("%s: written %d, read %s, lost %s, corrupt %s, wakeups %d" % (sys.argv[4], s["events"],
      [g["events"] for g in r["rings"]], [g["lost"] for g in r["rings"]],
      [g["corrupt"] for g in r["rings"]], r["wakeups"]))
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY
}

# 1 MiB rings hold all 20000 events: no loss even if this loaded machine stalls the reader
run paced 40 -r 2 -p 256 -n 20000 --rate 40000 --seed 7
check paced exact || fail paced
run flat 40 -r 1 -p 1 -n 300000 --rate 0 --seed 8
check flat overwrite || fail flat
run hostile 40 -r 2 -p 4 -n 3000 --rate 20000 --garbage mixed --seed 9
check hostile garbage || fail hostile
# the TSC clock (skipped where the TSC is not invariant): ticks decoded as this host's
# CLOCK_MONOTONIC ns, recalibrations (every 100 ms) picked up during the 1 s run
if grep -qw nonstop_tsc /proc/cpuinfo 2>/dev/null; then
	CLOCK=tsc run tsc 40 -r 2 -p 256 -n 20000 --rate 20000 --seed 11 --clock tsc
	check tsc exact || fail tsc-exact
	check tsc tsc || fail tsc
fi
REANNOUNCE=1 run moved 40 -r 1 -p 64 -n 2000 --rate 20000 --seed 10
check moved reannounce || fail moved
echo "session: ok"
