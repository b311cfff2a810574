#!/bin/bash
# bench/daemon/growth.sh BUILD_DIR [guests] [threads] [full] - how mtraced's cost per
# event and its memory grow, with real processes on the simulated Xen and one stream client:
#   guests   1, 10 and 100 busy guests (GUESTS), TOTAL_RATE events/s in all, split evenly
#   full     the same with full thread tables: max_threads_per_guest = FULL_CAP (default
#            1024), so that once a guest has created that many threads every new one
#            evicts one (the row prints the evictions mtraced counted)
#   threads  one guest (2 rings) with 1 k, 100 k and 1 M live threads (THREADS), the
#            per-guest thread cap raised to fit (max_threads_per_guest = 2 x threads)
# Each row: events written; read (written less what was lost in the rings, which is what
# mtraced decoded and applied), received by the client and dropped for it (the stream
# dropped them for a client that fell behind: mtraced still did their work); mtraced's
# CPU ns per event read (utime + stime over the run, so other people's load on the
# machine does not count; per event *received* it would charge the client's drops to
# mtraced), beside it per event received and the client's own CPU per event; mtraced's
# peak and final memory (VmHWM, RssAnon: the daemon's own heap; RssShmem: the rings).
# Knobs: TOTAL_RATE (default 10000000), SECS (seconds of events, default 4), GUESTS,
# THREADS, PAGES (data pages per ring, default 128), GUEST_CLOCK (mtrace-load --clock,
# default tsc), MTRACED_OPTS, PERF_OUT (a path prefix: `perf record` of mtraced during
# each row into PERF_OUT.LABEL, with PERF_OPTS, default -g), KEEP=1 (keep the last
# row's files: the guests' and the client's summaries), CLIENT_OPTS (say -T FILE: the
# client's timeline of batches), CLIENT_IDLE_MS (the client ends this long after the
# last message once events came; default 3000).
set -u
B=$(cd "${1:?usage: growth.sh BUILD_DIR [guests] [threads] [full]}" && pwd)
shift
WHAT=${*:-guests threads}
FULL_CAP=${FULL_CAP:-1024}
TOTAL_RATE=${TOTAL_RATE:-10000000}
SECS=${SECS:-4}
GUESTS=${GUESTS:-1 10 100}
THREADS=${THREADS:-1000 100000 1000000}
PAGES=${PAGES:-128}
GUEST_CLOCK=${GUEST_CLOCK:-tsc}
SIMXEN=$B/sim/mtrace-simxen
MTRACED=$B/daemon/mtraced
LOAD=$B/guest/mtrace-load
CLIENT=$B/bench/stream/stream-bench-client
T=$(mktemp -d /tmp/mtrace-growth.XXXXXX)
DPID=
CPID=
cleanup() {
	[ -n "$CPID" ] && kill "$CPID" 2>/dev/null
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null
	[ -d "$T/sim" ] && "$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
	if [ -n "${KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

kib() { awk -v k="$1" '/^'"$1"':/ { print $2 }' "/proc/$DPID/status"; }

# run LABEL GUESTS RINGS THREADS MAXTHREADS: one configuration, one table row
run() {
	local label=$1 ng=$2 rings=$3 nthr=$4 maxthr=$5 i per n
	rm -rf "$T/sim" "$T/sock" "$T"/load*.json
	export MTRACE_SIM_DIR=$T/sim
	"$SIMXEN" --dir "$T/sim" start >/dev/null || exit 1
	# shellcheck disable=SC2086
	"$MTRACED" --foreground -c /dev/null --sim-dir "$T/sim" -s "$T/sock" --set drop_privileges=false -q \
		--set max_threads_per_guest="$maxthr" --set max_guests=$((ng + 16)) \
		--set max_pages_total=$(((ng * rings * (PAGES + 1)) + 4096)) ${MTRACED_OPTS:-} &
	DPID=$!
	for _ in $(seq 200); do [ -S "$T/sock" ] && break; sleep 0.05; done
	# shellcheck disable=SC2086
	timeout $((SECS + 120)) "$CLIENT" -s "$T/sock" -q -i "${CLIENT_IDLE_MS:-3000}" ${CLIENT_OPTS:-} >"$T/client.json" &
	CPID=$!
	per=$((TOTAL_RATE / ng / rings))
	n=$((per * SECS))
	# A guest paces in batches; many guests use longer ones so that waking them does
	# not take the CPU mtraced is measured on.
	local bus=$((ng >= 10 ? 10000 : 1000))
	echo "+ $ng x mtrace-load --rings $rings -p $PAGES -N $nthr --rate $per -n $n --batch-us $bus --clock $GUEST_CLOCK" \
		"; mtraced --set max_threads_per_guest=$maxthr ${MTRACED_OPTS:-}"
	for ((i = 0; i < ng; i++)); do
		"$SIMXEN" --dir "$T/sim" create --name "g$i" -- "$LOAD" --wait-reader 20 --linger 20 \
			--summary "$T/load$i.json" --rings "$rings" -p "$PAGES" -N "$nthr" --rate "$per" \
			-n "$n" --batch-us "$bus" --clock "$GUEST_CLOCK" >/dev/null || exit 1
	done
	local ppid=
	if [ -n "${PERF_OUT:-}" ]; then
		# shellcheck disable=SC2086
		perf record -q ${PERF_OPTS:--g} -e cpu-clock -p "$DPID" -o "$PERF_OUT.$label" 2>/dev/null &
		ppid=$!
	fi
	wait "$CPID"
	CPID=
	[ -n "$ppid" ] && kill -INT "$ppid" && wait "$ppid"
	kill -0 "$DPID" 2>/dev/null || { echo "ROW $label: mtraced died (see dmesg)"; DPID=; return 1; }
	for _ in $(seq 600); do
		[ "$(ls "$T"/load*.json 2>/dev/null | wc -l)" -ge "$ng" ] && break
		sleep 0.1
	done
	local cpu hwm anon shm evicted
	# the evictions and threads created, as mtraced's Stats count them (the guests linger)
	evicted=$("$B/client/cat/mtrace-cat" -s "$T/sock" -f json --no-events --stats 100 -n 1 2>/dev/null |
		python3 -c '
import json, sys
ev = tot = 0
for line in sys.stdin:
    for d in json.loads(line).get("domains", []):
        ev += d.get("threads_evicted", 0)
        tot += d.get("threads_total", 0)
print("%d %d" % (ev, tot))')
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$DPID/stat")
	hwm=$(kib VmHWM)
	anon=$(kib RssAnon)
	shm=$(kib RssShmem)
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	DPID=
	"$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
	python3 - "$T" "$ng" "$label" "$cpu" "$hwm" "$anon" "$shm" ${evicted:-0 0} <<'EOF'
import glob, json, sys
d, ng, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cpu, hwm, anon, shm = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
evicted, created = int(sys.argv[8]), int(sys.argv[9])
loads = [json.load(open(f)) for f in glob.glob(d + "/load*.json")]
c = json.load(open(d + "/client.json"))
w = sum(l["events"] for l in loads)
span = max(l["elapsed_s"] for l in loads)
got = c["events"]
ring = c.get("lost_in_ring", 0)
dropped = c.get("dropped_for_client", 0)
read = w - ring  # what mtraced decoded and applied: received + dropped for the client
print("ROW %-16s guests %3d  written %9d (%.1f M/s while all ran ~%.1f s)  read %9d  "
      "received %9d  lost in ring %6.3f %%  dropped for client %6.3f %%  "
      "mtraced %6.1f ns/event read (%.1f per event received)  client %.1f ns/event  "
      "VmHWM %7.1f MiB  RssAnon %7.1f MiB  RssShmem %6.1f MiB"
      % (label, len(loads), w, w / span / 1e6, span, read, got, 100.0 * ring / max(w, 1),
         100.0 * dropped / max(w, 1), cpu * 1e9 / max(read, 1), cpu * 1e9 / max(got, 1),
         c.get("cpu_ns_per_event", 0), hwm / 1024, anon / 1024, shm / 1024))
print("    threads created %d, evicted from full tables %d (%.1f %% of those created)"
      % (created, evicted, 100.0 * evicted / max(created, 1)))
if read + 0 != got + dropped:
    print("  (read %d != received %d + dropped %d: the client ended early)" % (read, got, dropped))
if len(loads) != ng:
    print("  (only %d of %d guest summaries)" % (len(loads), ng))
EOF
}

echo "== growth: TOTAL_RATE=$TOTAL_RATE events/s in all, $SECS s of events, GUEST_CLOCK=$GUEST_CLOCK"
echo "   load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
for w in $WHAT; do
	case $w in
	guests)
		for g in $GUESTS; do
			run "guests=$g" "$g" 1 64 16384
		done
		;;
	full)
		for g in $GUESTS; do
			run "full=$g" "$g" 1 64 "$FULL_CAP"
		done
		;;
	threads)
		for t in $THREADS; do
			# the guest's threads are split over its 2 rings
			run "threads=$t" 1 2 $((t / 2)) $((t * 2))
		done
		;;
	*)
		echo "unknown: $w" >&2
		exit 2
		;;
	esac
done
echo "(load average at the end $(cut -d' ' -f1-3 /proc/loadavg); command: bench/daemon/growth.sh $B $WHAT)"
