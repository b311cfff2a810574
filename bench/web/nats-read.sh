#!/bin/bash
# bench/web/nats-read.sh BUILD_DIR [EVENTS] - what mtrace-web --nats sustains reading the
# fleet stream: one mtrace-load guest (EVENTS in all, default 2000000, at RATE events/s
# over 2 rings, default 1000000) -> mtraced -> mtrace-ship -> a real JetStream
# nats-server (loopback, store in a temporary directory); then, with the stream full,
# `mtrace-cat --nats -f count` reads it all (the reference reader) and
# `mtrace-web --nats --from-start` takes it all in (until its /api/state counts every
# event), each timed, with its CPU.  Prints events/s (wall) and ns CPU per event for
# both, and the load.  Needs nats-server and curl.
set -u
B=$(cd "${1:?usage: nats-read.sh BUILD_DIR [EVENTS]}" && pwd)
EVENTS=${2:-2000000}
RATE=${RATE:-1000000}
RINGS=2
SIMXEN=$B/sim/mtrace-simxen
MTRACED=$B/daemon/mtraced
LOAD=$B/guest/mtrace-load
SHIP=$B/client/ship/mtrace-ship
CAT=$B/client/cat/mtrace-cat
WEB=$B/client/web/mtrace-web
NATS_SERVER=${NATS_SERVER:-$(command -v nats-server)}
[ -x "$NATS_SERVER" ] || { echo "nats-read.sh: nats-server is not installed" >&2; exit 1; }
T=$(mktemp -d /tmp/mtrace-web-nats-bench.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -d "$T/sim" ] && "$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
HZ=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$HZ" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
URL=nats://127.0.0.1:$(port)
SOCK=$T/sock

echo "# $(date -u +%FT%TZ) $(uname -n), load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
"$NATS_SERVER" -js -sd "$T/nats" -a 127.0.0.1 -p "${URL##*:}" >"$T/nats.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do grep -q "Server is ready" "$T/nats.log" && break; sleep 0.1; done
export MTRACE_SIM_DIR=$T/sim
"$SIMXEN" --dir "$T/sim" start >/dev/null || exit 1
"$MTRACED" --foreground -c /dev/null --sim-dir "$T/sim" -s "$SOCK" --set drop_privileges=false -q &
PIDS+=("$!")
for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.05; done
"$SHIP" -s "$SOCK" --nats "$URL" --host bench --stats 0 --log-every 1 --spool "$T/spool" 2>"$T/ship.log" &
SPID=$!
PIDS+=("$SPID")
for _ in $(seq 100); do grep -q "shipped=" "$T/ship.log" && break; sleep 0.1; done
per=$((RATE / RINGS))
echo "+ mtrace-simxen create -- mtrace-load --rings $RINGS -p 512 -n $((EVENTS / RINGS)) --rate $per" \
	"(mtraced; mtrace-ship --nats $URL --host bench --stats 0 --spool DIR)"
"$SIMXEN" --dir "$T/sim" create --name bench -- "$LOAD" --wait-reader 10 --linger 20 \
	--summary "$T/load.json" --rings "$RINGS" -p 512 -n $((EVENTS / RINGS)) --rate "$per" >/dev/null
for _ in $(seq 600); do [ -s "$T/load.json" ] && break; sleep 0.1; done
last=-1
for _ in $(seq 120); do
	now=$(grep -o ' shipped=[0-9]*' "$T/ship.log" | tail -1)
	[ "$now" = "$last" ] && break
	last=$now
	sleep 1
done
kill -TERM "$SPID"
wait "$SPID" 2>/dev/null
echo "# mtrace-ship: $(grep 'exit:' "$T/ship.log")"

echo "+ mtrace-cat --nats $URL -f count --summary"
t0=$(date +%s.%N)
/usr/bin/time -f '%U %S' -o "$T/cat.time" "$CAT" --nats "$URL" -f count --summary >/dev/null 2>"$T/cat.err"
t1=$(date +%s.%N)
held=$(grep -o '"events":[0-9]*' "$T/cat.err" | tail -1 | cut -d: -f2)
read -r ut st <"$T/cat.time"
python3 -c 'import sys; n, t, c = int(sys.argv[1]), float(sys.argv[3]) - float(sys.argv[2]), float(sys.argv[4]) + float(sys.argv[5])
print("mtrace-cat --nats: %d events in %.2f s: %.2f M events/s, %.0f ns CPU per event" % (n, t, n / t / 1e6, c * 1e9 / n))' \
	"$held" "$t0" "$t1" "$ut" "$st"

echo "+ mtrace-web --nats $URL --from-start -l 127.0.0.1:0 --no-token (until /api/state has all $held)"
t0=$(date +%s.%N)
"$WEB" --nats "$URL" --from-start -l 127.0.0.1:0 --no-token >"$T/web.out" 2>"$T/web.err" &
WPID=$!
PIDS+=("$WPID")
for _ in $(seq 100); do
	W=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/web.out")
	[ -n "$W" ] && break
	sleep 0.05
done
got=0
for _ in $(seq 1200); do
	got=$(curl -sf "${W}api/state" | python3 -c 'import json, sys; print(sum(h["events"] for h in json.load(sys.stdin).get("hosts", [])))' 2>/dev/null)
	[ "${got:-0}" -ge "$held" ] && break
	sleep 0.05
done
t1=$(date +%s.%N)
wcpu=$(cpu_of "$WPID")
rss=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$WPID/status")
python3 -c 'import sys; n, want, t, c = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[4]) - float(sys.argv[3]), float(sys.argv[5])
print("mtrace-web --nats: %d of %d events in %.2f s (from its start, polled every 50 ms): %.2f M events/s, %.0f ns CPU per event (all its threads), peak RSS %s kB" % (n, want, t, n / t / 1e6, c * 1e9 / max(n, 1), sys.argv[6]))' \
	"${got:-0}" "$held" "$t0" "$t1" "$wcpu" "$rss"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
