#!/bin/bash
# bench/fleet/run.sh BUILD_DIR [RATE...] - mtrace-ship into a real JetStream nats-server
# (loopback, store in a temporary directory): for each RATE (events/s in all, default
# 1000000 2000000 3000000 4000000), one mtrace-load guest paced at RATE for SECONDS
# (default 4) over RINGS rings (default 2) -> mtraced -> mtrace-ship -> JetStream; then
# mtrace-cat --nats reads the whole stream back.  Prints, with the commands:
#   ZERO LOSS or LOSS (what the guest wrote against what JetStream holds, read back),
#   mtrace-ship's CPU per event and bytes per event on the wire (its own figures),
#   the reader's events/s (wall clock) and CPU per event.
# Needs nats-server (scripts/bootstrap installs it).  CPU times are utime + stime.
set -u
B=$(cd "${1:?usage: run.sh BUILD_DIR [RATE...]}" && pwd)
shift
RATES=${*:-1000000 2000000 3000000 4000000}
SECONDS_EACH=${SECONDS_EACH:-4}
RINGS=${RINGS:-2}
PAGES=${PAGES:-512}
SIMXEN=$B/sim/mtrace-simxen
MTRACED=$B/daemon/mtraced
LOAD=$B/guest/mtrace-load
SHIP=$B/client/ship/mtrace-ship
CAT=$B/client/cat/mtrace-cat
NATS_SERVER=${NATS_SERVER:-$(command -v nats-server)}
[ -x "$NATS_SERVER" ] || { echo "run.sh: nats-server is not installed" >&2; exit 1; }
T=$(mktemp -d /tmp/mtrace-fleet-bench.XXXXXX)
PIDS=()
cleanup() {
	[ -d "$T/sim" ] && "$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
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

echo "# $(date -u +%FT%TZ) $(uname -n), load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
echo "# nats-server $("$NATS_SERVER" --version 2>&1 | head -1)"
for rate in $RATES; do
	rm -rf "$T/nats" "$T/sim" "$SOCK" "$T"/*.log "$T/load.json"
	"$NATS_SERVER" -js -sd "$T/nats" -a 127.0.0.1 -p "$port" >"$T/nats.log" 2>&1 &
	NPID=$!
	PIDS+=("$NPID")
	for _ in $(seq 100); do grep -q "Server is ready" "$T/nats.log" && break; sleep 0.1; done
	export MTRACE_SIM_DIR=$T/sim
	"$SIMXEN" --dir "$T/sim" start >/dev/null || exit 1
	"$MTRACED" --foreground -c /dev/null --sim-dir "$T/sim" -s "$SOCK" \
		--set drop_privileges=false -q &
	DPID=$!
	PIDS+=("$DPID")
	for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.05; done
	"$SHIP" -s "$SOCK" --nats "$URL" --host bench --stats 0 --log-every 1 2>"$T/ship.log" &
	SPID=$!
	PIDS+=("$SPID")
	for _ in $(seq 100); do grep -q "shipped=" "$T/ship.log" && break; sleep 0.1; done
	per=$((rate / RINGS))
	echo "== fleet: $((rate / 1000)) k events/s in all for $SECONDS_EACH s ($RINGS rings)"
	echo "+ nats-server -js; mtraced; mtrace-ship -s SOCK --nats $URL --host bench --stats 0;" \
		"mtrace-simxen create -- mtrace-load --rings $RINGS -p $PAGES -n $((per * SECONDS_EACH))" \
		"--rate $per; mtrace-cat --nats $URL -f count --summary"
	"$SIMXEN" --dir "$T/sim" create --name bench -- "$LOAD" --wait-reader 10 --linger 20 \
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
	scpu=$(cpu_of "$SPID")
	kill -TERM "$SPID"
	wait "$SPID" 2>/dev/null
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$T/cat.time" "$CAT" --nats "$URL" -f count --summary \
		>/dev/null 2>"$T/cat.err"
	t1=$(date +%s.%N)
	python3 - "$T/load.json" "$T/ship.log" "$T/cat.err" "$T/cat.time" "$scpu" "$t0" "$t1" <<'PY'
import json, re, sys
load = json.load(open(sys.argv[1]))
fig = [l for l in open(sys.argv[2]) if "shipped=" in l][-1]
f = dict((k, int(v)) for k, v in re.findall(r" (\w+)=(\d+)", fig))
back = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")]
read = back[-1]["events"] if back else 0
ut, st = (float(x) for x in open(sys.argv[4]).read().split())
scpu, t0, t1 = float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
w = load["events"]
print("guest wrote %d events in %.3f s (%.2f M events/s)" % (w, load["elapsed_s"],
      w / load["elapsed_s"] / 1e6))
print("%s: JetStream holds %d of %d events; mtrace-ship published %d messages, dropped %d" % (
      "ZERO LOSS" if read == w and not f["dropped"] else "LOSS", read, w, f["shipped"],
      f["dropped"]))
if read != w:
    print("  what the reader was told of the loss: %s" % ", ".join(
          "%s %s" % (k, v) for k, v in sorted(back[-1].items()) if k != "events"))
print("mtrace-ship: %.1f ns CPU per event; %.2f bytes per event on the wire (%d bytes, "
      "%.0f events per message)" % (scpu * 1e9 / max(read, 1), f["bytes"] / max(read, 1),
      f["bytes"], read / max(f["shipped"], 1)))
print("reader (mtrace-cat --nats, the whole stream): %.2f M events/s wall, %.1f ns CPU per "
      "event" % (read / max(t1 - t0, 1e-9) / 1e6, (ut + st) * 1e9 / max(read, 1)))
PY
	kill -TERM "$DPID" "$NPID" 2>/dev/null
	wait "$DPID" "$NPID" 2>/dev/null
	"$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
done
