#!/bin/bash
# bench/stream/run.sh BUILD_DIR [what...] - stream benchmarks; prints figures and the
# commands that produced them.  what (default: zl1 zl16 e2e1 e2e16 latency server):
#   zl1      mtrace-load paced at ZL1_RATE events/s in all (default 6 M) on the simulated
#            Xen -> mtraced -> 1 client: is every event delivered (ZERO LOSS) or not
#   zl16     the same with 16 clients at ZL16_RATE in all (default 3 M, 0.5 x zl1)
#   sweep1   zl1 at 6, 7, 8, 9 and 10 M events/s: where loss starts
#   e2e1     mtrace-load flat out -> mtraced -> 1 client: events/s received, and what
#            was lost (in the ring: reader behind; for the client: dropped)
#   e2e16    the same with 16 clients
#   e2e16shm the same with 16 clients reading through shared memory (-S)
#   latency  100 k events/s from one guest ring; guest write -> client receipt p50/p99
#   server   the stream server alone (stream-harness generator, no rings) -> 1 client
#   serverflat  the same flat out to 1 and to 16 clients: the server's CPU per event
#            (filter, columns, dictionary, protobuf-c, socket writes; plus the generator),
#            then 16 mtrace-cat clients with 16 distinct filters that all take every event
# Knobs: SHM=1 (e2e*, zl*: the clients ask for shared memory), EVENTS (per ring for e2e*, default 5000000; zl*/sweep run 4 s), RINGS (default 2),
#   PAGES (default 512), LATENCY_BURSTS_ONLY=1 (latency: only the guest writing 1 ms
#   bursts), TIMELINE=FILE (latency: keep the client's per-batch timeline in FILE.1000 and
#   FILE.20), MTRACED_OPTS (more mtraced options, e.g. "--set poll_interval_us=200"),
#   GUEST_CLOCK (mtrace-load --clock: monotonic, the default, or tsc), BESIDE (zl1/zl16/e2e*:
#   a second guest, "beside", paced at BESIDE events/s in all for 4 s beside the bench guest;
#   the clients take both guests' events and ZERO LOSS means all of both arrived).
set -u
B=$(cd "${1:?usage: run.sh BUILD_DIR [zl1 zl16 sweep1 e2e1 e2e16 latency server]}" && pwd)
shift
WHAT=${*:-zl1 zl16 e2e1 e2e16 latency server}
ZL1_RATE=${ZL1_RATE:-6000000}
ZL16_RATE=${ZL16_RATE:-3000000}
EVENTS=${EVENTS:-5000000}
RINGS=${RINGS:-2}
PAGES=${PAGES:-512}
GUEST_CLOCK=${GUEST_CLOCK:-monotonic}
SIMXEN=$B/sim/mtrace-simxen
MTRACED=$B/daemon/mtraced
LOAD=$B/guest/mtrace-load
CLIENT=$B/bench/stream/stream-bench-client
HARNESS=$B/tests/stream/stream-harness
T=$(mktemp -d /tmp/mtrace-stream-bench.XXXXXX)
PIDS=()
cleanup() {
	[ -d "$T/sim" ] && "$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
SOCK=$T/sock

start_daemon() {
	rm -rf "$T/sim" "$SOCK"
	export MTRACE_SIM_DIR=$T/sim
	"$SIMXEN" --dir "$T/sim" start >/dev/null || exit 1
	# shellcheck disable=SC2086
	"$MTRACED" --foreground -c /dev/null --sim-dir "$T/sim" -s "$SOCK" --set drop_privileges=false -q \
		${MTRACED_OPTS:-} "$@" &
	DPID=$!
	PIDS+=("$DPID")
	for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.05; done
}

# CPU seconds mtraced has used (utime + stime), for ns/event independent of load.
daemon_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$DPID/stat"
}

stop_daemon() {
	DCPU=$(daemon_cpu)
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	"$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
}

# The bench guest's wake-ups as mtraced counted them (before it stops).
snap_wakeups() {
	"$B/client/cat/mtrace-cat" -s "$SOCK" -f json --no-events --stats 100 -n 1 2>/dev/null |
		python3 -c '
import json, sys
for line in sys.stdin:
    for d in json.loads(line).get("domains", []):
        print("mtraced: %d events, %d event-channel wake-ups served, %d held off" % (
              d["events"], d["wakeups"], d["ratelimited"]))'
}

# clients n, load args...: run n bench clients against one mtrace-load guest
e2e() {
	local n=$1 i
	shift
	local copt=()
	[ -n "${SHM:-}" ] && copt=(-S)
	start_daemon
	rm -f "$T/load.json" "$T/beside.json"
	# Clients end 3 s after their last message: they have drained what was queued.
	for ((i = 0; i < n; i++)); do
		"$CLIENT" -s "$SOCK" -q -i 3000 "${copt[@]}" >"$T/client$i.json" &
		PIDS+=($!)
		CP[$i]=$!
	done
	sleep 0.5
	echo "+ mtrace-simxen create --name bench -- mtrace-load --clock $GUEST_CLOCK $*"
	"$SIMXEN" --dir "$T/sim" create --name bench -- "$LOAD" --wait-reader 10 --linger 10 \
		--summary "$T/load.json" --clock "$GUEST_CLOCK" "$@" >/dev/null
	if [ -n "${BESIDE:-}" ]; then
		echo "+ mtrace-simxen create --name beside -- mtrace-load --clock $GUEST_CLOCK -r $RINGS" \
			"-p $PAGES -n $((BESIDE / RINGS * 4)) -R $((BESIDE / RINGS))"
		"$SIMXEN" --dir "$T/sim" create --name beside -- "$LOAD" --wait-reader 10 --linger 10 \
			--summary "$T/beside.json" --clock "$GUEST_CLOCK" -r "$RINGS" -p "$PAGES" \
			-n $((BESIDE / RINGS * 4)) -R $((BESIDE / RINGS)) >/dev/null
	fi
	# No polling while the clients measure: on a 2-CPU machine every fork + exec of
	# sleep(1) costs milliseconds of CPU that would show up in the figures.
	for ((i = 0; i < n; i++)); do wait "${CP[$i]}"; done
	for _ in $(seq 1200); do [ -s "$T/load.json" ] && break; sleep 0.1; done
	if [ -n "${BESIDE:-}" ]; then
		for _ in $(seq 1200); do [ -s "$T/beside.json" ] && break; sleep 0.1; done
	fi
	stop_daemon
	python3 - "$T/load.json" "$n" "$T" "$DCPU" <<'EOF'
import json, os, sys
load = json.load(open(sys.argv[1]))
n, d, dcpu = int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
cs = [json.loads(open("%s/client%d.json" % (d, i)).read()) for i in range(n)]
w = load["events"]
print("guest wrote %d events in %.3f s (%.1f M events/s), clock %s" % (w, load["elapsed_s"],
      w / load["elapsed_s"] / 1e6, load.get("clock", "?")))
if os.path.exists(d + "/beside.json"):
    b = json.load(open(d + "/beside.json"))
    print("beside it a second guest wrote %d events in %.3f s (%.1f M events/s); "
          "both count below" % (b["events"], b["elapsed_s"], b["events"] / b["elapsed_s"] / 1e6))
    w += b["events"]
rates = [c["events_per_s"] for c in cs]
lost = cs[0]["lost_in_ring"]
print("clients: %d; events/s per client min %.2f M avg %.2f M; aggregate %.2f M/s" % (
      n, min(rates) / 1e6, sum(rates) / n / 1e6, sum(rates) / 1e6))
print("received per client min %d of %d; lost in ring (reader behind) %d (%.2f %%); "
      "dropped for slow clients total %d" % (min(c["events"] for c in cs), w, lost,
      100.0 * lost / w, sum(c["dropped_for_client"] for c in cs)))
print("%s: %d of %d clients got all %d events" % (
      "ZERO LOSS" if all(c["events"] == w for c in cs) else "LOSS",
      sum(c["events"] == w for c in cs), n, w))
got = w - lost
ccpu = sum(c["cpu_ns_per_event"] for c in cs) / n
print("CPU: mtraced %.1f ns per event read (%.1f M events/s per core); client %.1f ns per "
      "event received (%.1f M events/s per core)" % (dcpu * 1e9 / max(got, 1),
      max(got, 1) / max(dcpu, 1e-9) / 1e6, ccpu, 1e3 / max(ccpu, 1e-9)))
EOF
}

# zero-loss run: clients, events/s in all; 4 s of events split over the rings
zero_loss() {
	local n=$1 rate=$2 per=$(($2 / RINGS))
	echo "== stream zero loss, $n client(s), guest paced at $((rate / 1000)) k events/s in all"
	e2e "$n" -r "$RINGS" -p "$PAGES" -n $((per * 4)) -R "$per"
}

# server_report DIR N bench|cat: the harness's CPU per event and what its N clients got
# (stream-bench-client JSON, or mtrace-cat --summary's last line).
server_report() {
	python3 - "$@" <<'EOF'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
h = json.load(open(d + "/h.json"))
if sys.argv[3] == "bench":
    cs = [json.loads(open("%s/client%d.json" % (d, i)).read()) for i in range(n)]
else:  # mtrace-cat --summary: its last line
    cs = [json.loads(open("%s/client%d.json" % (d, i)).read().splitlines()[-1]) for i in range(n)]
    for c in cs:
        c["events_per_s"] = c["events"] / max(h["seconds"], 1e-9)
ev = h["events"]
print("server CPU %.1f ns per event (user %.1f, sys %.1f); clients received min %d of %d, "
      "dropped for clients %d; %.2f M events/s per client (min)" % (
      (h["cpu_user_s"] + h["cpu_sys_s"]) * 1e9 / ev, h["cpu_user_s"] * 1e9 / ev,
      h["cpu_sys_s"] * 1e9 / ev, min(c["events"] for c in cs), ev,
      sum(c["dropped_for_client"] for c in cs), min(c["events_per_s"] for c in cs) / 1e6))
EOF
}

for what in $WHAT; do
	case $what in
	zl1) zero_loss 1 "$ZL1_RATE" ;;
	zl16) zero_loss 16 "$ZL16_RATE" ;;
	sweep1)
		for r in 6000000 7000000 8000000 9000000 10000000; do
			zero_loss 1 "$r"
		done
		;;
	e2e1)
		echo "== stream e2e, 1 client: guest rings -> mtraced -> client"
		e2e 1 -r "$RINGS" -p "$PAGES" -n "$EVENTS" -R 0
		;;
	e2e16)
		echo "== stream e2e, 16 clients"
		e2e 16 -r "$RINGS" -p "$PAGES" -n "$EVENTS" -R 0
		;;
	e2e16shm)
		echo "== stream e2e, 16 clients through shared memory"
		SHM=1 e2e 16 -r "$RINGS" -p "$PAGES" -n "$EVENTS" -R 0
		;;
	latency)
		# Two guest shapes: bursts every millisecond (mtraced is woken by the event
		# channel), and a steady trickle in 20 us batches, which notifies as often as
		# mtraced re-arms and so is drained on the poll tick instead.
		lat_shapes=(1000 20)
		[ -n "${LATENCY_BURSTS_ONLY:-}" ] && lat_shapes=(1000)
		for bus in "${lat_shapes[@]}"; do
			echo "== stream latency at 100 k events/s (1 ring, written in batches every" \
				"$bus us), guest write -> client receipt"
			start_daemon
			rm -f "$T/load.json"
			tl=()
			[ -n "${TIMELINE:-}" ] && tl=(-T "$TIMELINE.$bus")
			"$CLIENT" -s "$SOCK" -i 3000 "${tl[@]}" >"$T/lat.json" &
			CPID=$!
			PIDS+=("$CPID")
			sleep 0.5
			echo "+ mtrace-simxen create --name lat -- mtrace-load --rings 1 -p 64 --rate 100000" \
				"--batch-us $bus -d 5 --clock $GUEST_CLOCK"
			"$SIMXEN" --dir "$T/sim" create --name lat -- "$LOAD" --wait-reader 10 --linger 10 \
				--summary "$T/load.json" -r 1 -p 64 -R 100000 --batch-us "$bus" -d 5 \
				--clock "$GUEST_CLOCK" >/dev/null
			wait "$CPID"
			for _ in $(seq 300); do [ -s "$T/load.json" ] && break; sleep 0.1; done
			snap_wakeups
			stop_daemon
			cat "$T/lat.json"
			echo "mtraced CPU over the run: $DCPU s"
		done
		;;
	server)
		echo "== stream server alone (stream-harness generator, no rings), 1 client"
		for rate in 5000000 10000000; do
			rm -f "$SOCK"
			echo "+ stream-harness -N $((rate * 3)) -r $rate -D 1 -R 1 -w 1; stream-bench-client -q"
			"$HARNESS" -s "$SOCK" -N $((rate * 3)) -r $rate -D 1 -R 1 -w 1 -L 100 \
				>"$T/h.json" 2>/dev/null &
			HP=$!
			PIDS+=("$HP")
			for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
			"$CLIENT" -s "$SOCK" -q
			wait "$HP"
		done
		;;
	serverflat)
		for n in 1 16; do
			echo "== stream server alone, flat out, $n client(s)"
			rm -f "$SOCK"
			ev=$((n == 1 ? 20000000 : 5000000))
			echo "+ stream-harness -N $ev -r 0 -D 1 -R 2 -w $n; $n x stream-bench-client -q"
			"$HARNESS" -s "$SOCK" -N $ev -r 0 -D 1 -R 2 -w $n -L 100 >"$T/h.json" 2>/dev/null &
			HP=$!
			PIDS+=("$HP")
			for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
			for ((i = 0; i < n; i++)); do
				"$CLIENT" -s "$SOCK" -q >"$T/client$i.json" &
				CP[$i]=$!
				PIDS+=($!)
			done
			for ((i = 0; i < n; i++)); do wait "${CP[$i]}"; done
			wait "$HP"
			server_report "$T" "$n" bench
		done
		echo "== stream server alone, flat out, 16 clients of 16 distinct filters taking everything"
		rm -f "$SOCK"
		echo "+ stream-harness -N 3000000 -r 0 -D 1 -R 2 -w 16; mtrace-cat -f count -D 1 -D K, K = 2..17"
		"$HARNESS" -s "$SOCK" -N 3000000 -r 0 -D 1 -R 2 -w 16 -L 100 >"$T/h.json" 2>/dev/null &
		HP=$!
		PIDS+=("$HP")
		for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
		for ((i = 0; i < 16; i++)); do
			"$B/client/cat/mtrace-cat" -s "$SOCK" -f count -D 1 -D $((i + 2)) --summary \
				>/dev/null 2>"$T/client$i.json" &
			CP[$i]=$!
			PIDS+=($!)
		done
		for ((i = 0; i < 16; i++)); do wait "${CP[$i]}"; done
		wait "$HP"
		server_report "$T" 16 cat
		;;
	*)
		echo "unknown: $what" >&2
		exit 2
		;;
	esac
done
echo "(machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
