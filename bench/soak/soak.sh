#!/bin/bash
# soak.sh - mtraced for N minutes under churn (issue 13), on demand, not in CI: guests
# created, destroyed and crashed (well-behaved, flooding, scribbling), clients
# connecting, subscribing and vanishing (mtrace-cat with filters, mtrace-top -b, raw
# protocol fuzz, Ping floods, silent connections), while mtraced's RSS, descriptors
# and CPU are printed every 10 s.  At the end: the figures' first and last values,
# and whether mtraced is still alive and serving.
#
#   bench/soak/soak.sh BUILD_DIR [MINUTES]      (default 30)
set -u
B=$(readlink -f "${1:?usage: soak.sh BUILD_DIR [MINUTES]}")
MIN=${2:-30}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-soak.XXXXXX")
SIMX=$B/sim/mtrace-simxen
SIM=$T/sim
SOCK=$T/sock
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
KIDS=()

cleanup() {
	for p in "${KIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	[ -n "${DPID:-}" ] && kill -TERM "$DPID" 2>/dev/null && sleep 1
	"$SIMX" -d "$SIM" stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$SIM"
"$SIMX" -d "$SIM" start >/dev/null || exit 1
"$B/daemon/mtraced" --foreground --backend sim --sim-dir "$SIM" -s "$SOCK" 2>"$T/mtraced.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { echo "mtraced did not start"; exit 1; }

# background client and guest makers; each child is bounded in time itself
spawn() { "$@" >/dev/null 2>&1 & KIDS+=($!); }
reap() {
	local alive=() p
	for p in "${KIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
	KIDS=("${alive[@]}")
}
rnd() { echo $((RANDOM % $1)); }

guest_churn() {
	local ids k
	mapfile -t ids < <("$SIMX" -d "$SIM" list 2>/dev/null | awk '$1 != 0 {print $1}')
	if [ "${#ids[@]}" -lt 10 ]; then
		case $(rnd 6) in
		0|1|2) "$SIMX" -d "$SIM" create --name "load$RANDOM" -- "$B/guest/mtrace-load" \
			-d $((5 + $(rnd 40))) -R $((1000 + $(rnd 50000))) -r $((1 + $(rnd 3))) \
			-t $((8 + $(rnd 3000))) --labels $(rnd 40) -c $(rnd 30) --seed $RANDOM >/dev/null 2>&1 ;;
		3) "$SIMX" -d "$SIM" create --name "flood$RANDOM" -- "$B/tests/daemon/hostile-guest" \
			flood >/dev/null 2>&1 ;;
		4) "$SIMX" -d "$SIM" create --name "scrib$RANDOM" -- "$B/tests/daemon/hostile-guest" \
			scribble >/dev/null 2>&1 ;;
		5) "$SIMX" -d "$SIM" create --name "garb$RANDOM" -- "$B/guest/mtrace-load" \
			--garbage mixed -d 20 -R 20000 >/dev/null 2>&1 ;;
		esac
	fi
	if [ "${#ids[@]}" -gt 3 ]; then
		k=${ids[$(rnd ${#ids[@]})]}
		case $(rnd 3) in
		0) "$SIMX" -d "$SIM" destroy "$k" >/dev/null 2>&1 ;;
		1) "$SIMX" -d "$SIM" crash "$k" >/dev/null 2>&1 ;;
		esac
	fi
	# finished guests (powered off) are released by the toolstack; nothing to do
}

client_churn() {
	case $(rnd 8) in
	0|1) spawn timeout 10 "$B/client/cat/mtrace-cat" -s "$SOCK" -f count --time $((1 + $(rnd 6))) ;;
	2) spawn timeout 10 "$B/client/cat/mtrace-cat" -s "$SOCK" -f count --time 3 --label label-$(rnd 9) \
		--stats 100 --top 100 --label-stats ;;
	3) spawn timeout 10 "$B/client/top/mtrace-top" -b -n 3 -d 0.2 -S "$SOCK" ;;
	4) spawn timeout 10 "$B/bench/fuzz/proto-fuzz" -S "$SOCK" -n 200 -s $RANDOM ;;
	5) spawn timeout 5 "$PY" "$SRC/tests/reliab/hostile-client.py" pings "$SOCK" 1 ;;
	6) spawn timeout 10 "$PY" "$SRC/tests/reliab/hostile-client.py" silent "$SOCK" 4 6 ;;
	7) spawn timeout 10 "$PY" "$SRC/tests/reliab/hostile-client.py" noread "$SOCK" 3 4 ;;
	esac
}

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$DPID/stat"; }
rss() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$DPID/status"; }
fds() { ls "/proc/$DPID/fd" | wc -l; }

echo "# soak: $MIN min, mtraced pid $DPID, build $B, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%6s %9s %5s %6s %7s %7s\n" "t_s" "rss_kib" "fds" "cpu%" "guests" "clients"
start=$(date +%s)
last_t=$start
last_cpu=$(cpu_ticks)
first_rss=
end=$((start + MIN * 60))
while [ "$(date +%s)" -lt "$end" ]; do
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$DPID" 2>/dev/null || { echo "FAIL: mtraced died"; tail -20 "$T/mtraced.log"; exit 1; }
		guest_churn
		client_churn
		client_churn
		reap
		sleep 1
	done
	now=$(date +%s)
	cpu=$(cpu_ticks)
	pct=$(( (cpu - last_cpu) * 100 / hz / (now - last_t) ))
	last_cpu=$cpu
	last_t=$now
	r=$(rss)
	[ -z "$first_rss" ] && first_rss=$r && first_fds=$(fds)
	printf "%6d %9d %5d %6d %7d %7d\n" $((now - start)) "$r" "$(fds)" "$pct" \
		"$("$SIMX" -d "$SIM" list 2>/dev/null | awk '$1 != 0' | wc -l)" "${#KIDS[@]}"
done
for p in "${KIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
KIDS=()
sleep 6	# the silent connections' deadline, the queues drained
r=$(rss)
f=$(fds)
timeout 20 "$B/client/top/mtrace-top" -b -n 1 -S "$SOCK" >"$T/final.out" 2>&1 && serving=yes || { serving=NO; tail -5 "$T/final.out"; tail -20 "$T/mtraced.log"; }
echo "# end: rss $first_rss -> $r KiB, fds $first_fds -> $f (clients gone), serving: $serving," \
	"log lines: $(wc -l <"$T/mtraced.log"), sanitizer reports: $(grep -cE "Sanitizer|runtime error" "$T/mtraced.log")"
[ "$serving" = yes ]
