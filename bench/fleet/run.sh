#!/bin/bash
# bench/fleet/run.sh BUILD_DIR [RATE...] - mtrace-ship into a real JetStream nats-server
# (loopback, store in a temporary directory): for each RATE (events/s in all, default
# 1000000 2000000 3000000 4000000), one mtrace-load guest paced at RATE for SECONDS
# (default 4) over RINGS rings (default 2) -> mtraced -> mtrace-ship -> JetStream; then
# mtrace-cat --nats reads the whole stream back.  Prints, with the commands:
#   ZERO LOSS or LOSS (what the guest wrote against what JetStream holds, read back),
#   mtrace-ship's CPU per event and bytes per event on the wire (its own figures), the
#   most publishes it had waiting for their acknowledgement at once,
#   mtraced's CPU per event (from the guest's start until the shipper has it all),
#   the reader's events/s (wall clock) and CPU per event.
# RUNS=N repeats every rate N times (default 1); BASE=OTHER_BUILD_DIR runs that build too,
# alternately with BUILD_DIR in each round (the main of the day beside a branch, both on
# the machine as it is at that moment).  With RUNS > 1 or BASE, a summary per build and
# rate follows: runs with zero loss, and medians (ranges) of the figures.
# Needs nats-server (scripts/bootstrap installs it).  CPU times are utime + stime, all
# threads.
set -u
B=$(cd "${1:?usage: run.sh BUILD_DIR [RATE...]}" && pwd)
shift
RATES=${*:-1000000 2000000 3000000 4000000}
SECONDS_EACH=${SECONDS_EACH:-4}
RINGS=${RINGS:-2}
PAGES=${PAGES:-512}
RUNS=${RUNS:-1}
BUILDS=$B
[ -n "${BASE:-}" ] && BUILDS="$(cd "$BASE" && pwd) $B"
NATS_SERVER=${NATS_SERVER:-$(command -v nats-server)}
[ -x "$NATS_SERVER" ] || { echo "run.sh: nats-server is not installed" >&2; exit 1; }
T=$(mktemp -d /tmp/mtrace-fleet-bench.XXXXXX)
PIDS=()
SIMXEN=
cleanup() {
	[ -d "$T/sim" ] && [ -n "$SIMXEN" ] && "$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
SOCK=$T/sock
HZ=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$HZ" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=nats://127.0.0.1:$port

# one_run BUILD RATE: one round trip, its lines on stdout and a record in $T/results
one_run() {
	local b=$1 rate=$2 per npid dpid spid dcpu0 dcpu scpu last now t0 t1
	local mtraced=$b/daemon/mtraced load=$b/guest/mtrace-load ship=$b/client/ship/mtrace-ship
	local cat=$b/client/cat/mtrace-cat
	SIMXEN=$b/sim/mtrace-simxen
	rm -rf "$T/nats" "$T/sim" "$SOCK" "$T"/*.log "$T/load.json"
	"$NATS_SERVER" -js -sd "$T/nats" -a 127.0.0.1 -p "$port" >"$T/nats.log" 2>&1 &
	npid=$!
	PIDS+=("$npid")
	for _ in $(seq 100); do grep -q "Server is ready" "$T/nats.log" && break; sleep 0.1; done
	export MTRACE_SIM_DIR=$T/sim
	"$SIMXEN" --dir "$T/sim" start >/dev/null || exit 1
	"$mtraced" --foreground -c /dev/null --sim-dir "$T/sim" -s "$SOCK" \
		--set drop_privileges=false -q &
	dpid=$!
	PIDS+=("$dpid")
	for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.05; done
	"$ship" -s "$SOCK" --nats "$URL" --host bench --stats 0 --log-every 1 2>"$T/ship.log" &
	spid=$!
	PIDS+=("$spid")
	for _ in $(seq 100); do grep -q "shipped=" "$T/ship.log" && break; sleep 0.1; done
	per=$((rate / RINGS))
	echo "== fleet: $((rate / 1000)) k events/s in all for $SECONDS_EACH s ($RINGS rings), $b"
	echo "+ nats-server -js; mtraced; mtrace-ship -s SOCK --nats $URL --host bench --stats 0;" \
		"mtrace-simxen create -- mtrace-load --rings $RINGS -p $PAGES -n $((per * SECONDS_EACH))" \
		"--rate $per; mtrace-cat --nats $URL -f count --summary"
	dcpu0=$(cpu_of "$dpid")
	"$SIMXEN" --dir "$T/sim" create --name bench -- "$load" --wait-reader 10 --linger 20 \
		--summary "$T/load.json" --rings "$RINGS" -p "$PAGES" -n $((per * SECONDS_EACH)) \
		--rate "$per" >/dev/null
	for _ in $(seq 600); do [ -s "$T/load.json" ] && break; sleep 0.1; done
	# shipped until the figure stops moving (the guest's events are all through mtraced)
	last=-1
	for _ in $(seq 120); do
		now=$(grep -o ' shipped=[0-9]*' "$T/ship.log" | tail -1)
		[ "$now" = "$last" ] && break
		last=$now
		sleep 1
	done
	dcpu=$(awk -v a="$dcpu0" -v b="$(cpu_of "$dpid")" 'BEGIN { printf "%.3f", b - a }')
	scpu=$(cpu_of "$spid")
	kill -TERM "$spid"
	wait "$spid" 2>/dev/null
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$T/cat.time" "$cat" --nats "$URL" -f count --summary \
		>/dev/null 2>"$T/cat.err"
	t1=$(date +%s.%N)
	python3 - "$T/load.json" "$T/ship.log" "$T/cat.err" "$T/cat.time" "$scpu" "$t0" "$t1" \
		"$dcpu" "$b" "$rate" "$T/results" <<'PY'
import json, re, sys
load = json.load(open(sys.argv[1]))
fig = [l for l in open(sys.argv[2]) if "shipped=" in l][-1]
f = dict((k, int(v)) for k, v in re.findall(r" (\w+)=(\d+)", fig))
back = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")]
read = back[-1]["events"] if back else 0
ut, st = (float(x) for x in open(sys.argv[4]).read().split())
scpu, t0, t1, dcpu = (float(x) for x in sys.argv[5:9])
w = load["events"]
zero = read == w and not f["dropped"]
r = {"build": sys.argv[9], "rate": int(sys.argv[10]), "zero": zero, "written": w,
     "read": read, "ship_ns": scpu * 1e9 / max(read, 1),
     "bytes": f["bytes"] / max(read, 1), "per_msg": read / max(f["shipped"], 1),
     "mtraced_ns": dcpu * 1e9 / max(w, 1), "in_flight_max": f.get("in_flight_max", -1),
     "reader_mps": read / max(t1 - t0, 1e-9) / 1e6, "reader_ns": (ut + st) * 1e9 / max(read, 1)}
open(sys.argv[11], "a").write(json.dumps(r) + "\n")
print("guest wrote %d events in %.3f s (%.2f M events/s)" % (w, load["elapsed_s"],
      w / load["elapsed_s"] / 1e6))
print("%s: JetStream holds %d of %d events; mtrace-ship published %d messages, dropped %d" % (
      "ZERO LOSS" if zero else "LOSS", read, w, f["shipped"], f["dropped"]))
if read != w:
    print("  what the reader was told of the loss: %s" % ", ".join(
          "%s %s" % (k, v) for k, v in sorted(back[-1].items()) if k != "events"))
print("mtrace-ship: %.1f ns CPU per event; %.2f bytes per event on the wire (%d bytes, "
      "%.0f events per message); at most %s publishes in flight" % (r["ship_ns"], r["bytes"],
      f["bytes"], r["per_msg"], r["in_flight_max"] if r["in_flight_max"] >= 0 else "?"))
print("mtraced: %.1f ns CPU per event written" % r["mtraced_ns"])
print("reader (mtrace-cat --nats, the whole stream): %.2f M events/s wall, %.1f ns CPU per "
      "event" % (r["reader_mps"], r["reader_ns"]))
PY
	kill -TERM "$dpid" "$npid" 2>/dev/null
	wait "$dpid" "$npid" 2>/dev/null
	"$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
}

echo "# $(date -u +%FT%TZ) $(uname -n), load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
echo "# nats-server $("$NATS_SERVER" --version 2>&1 | head -1)"
for b in $BUILDS; do
	echo "# $b: $(git -C "$b/.." describe --always --dirty 2>/dev/null || echo "(not a git tree)")"
done
for round in $(seq "$RUNS"); do
	for rate in $RATES; do
		for b in $BUILDS; do
			[ "$RUNS" -gt 1 ] && echo "# round $round of $RUNS"
			one_run "$b" "$rate"
		done
	done
done
if [ "$RUNS" -gt 1 ] || [ -n "${BASE:-}" ]; then
	echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$T/results" <<'PY'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
def fig(xs, fmt):
    if min(xs) < 0:
        return "-"  # a shipper without the figure
    return "%s (%s-%s)" % (fmt % statistics.median(xs), fmt % min(xs), fmt % max(xs))
print("\n| build | rate | zero loss | mtrace-ship CPU/event | bytes/event | events/message "
      "| in flight at most | mtraced CPU/event | reader |")
print("|---|---|---|---|---|---|---|---|---|")
for key in sorted({(r["build"], r["rate"]) for r in rs}, key=lambda k: (k[1], k[0])):
    g = [r for r in rs if (r["build"], r["rate"]) == key]
    print("| %s | %g M/s | %d of %d | %s ns | %s | %d-%d | %s | %s ns | %s M/s |" % (
        key[0], key[1] / 1e6, sum(r["zero"] for r in g), len(g),
        fig([r["ship_ns"] for r in g], "%.1f"), fig([r["bytes"] for r in g], "%.2f"),
        min(r["per_msg"] for r in g), max(r["per_msg"] for r in g),
        fig([r["in_flight_max"] for r in g], "%d"), fig([r["mtraced_ns"] for r in g], "%.1f"),
        fig([r["reader_mps"] for r in g], "%.1f")))
PY
fi
