#!/bin/bash
# bench/peer-lttng/run.sh BUILD_DIR [cost] [live] - LTTng-UST 2.13 and mtrace side by side,
# in one run, on this machine: medians of RUNS rounds, each round running both, and the
# ratios.  Needs lttng-tools, liblttng-ust-dev and babeltrace2 (Debian 12), gcc, root
# (LTTng's root session daemon: none may be running already) and a built tree (ninja).
#
#   cost  per-event cost of the producer, one thread flat out, CPU time of the thread:
#         LTTng-UST tracepoint into a snapshot session (overwrite, nothing consumed:
#         the tracepoint and ring buffer alone) and into a default local session
#         (discard, consumer writing to disk); mtrace's bench-ring: a whole event
#         with a CLOCK_MONOTONIC timestamp and with the TSC clock (flight recorder
#         ring overwritten flat out, no reader)
#   live  delivered rate: LTTng live (lttng-relayd, babeltrace2 lttng-live source with a
#         counter sink), producer flat out, events received / (client exit - producer
#         start); mtrace: bench/stream/run.sh zl1 at ZL1_RATE (paced, 1 client,
#         zero loss or not) and e2e1 (guest flat out, events/s the client received)
#
# Knobs: RUNS (3), N (LTTng events per cost run, 10000000), LIVE_N (10000000), ZL1_RATE
# (10000000), GUEST_CLOCK (mtrace-load's clock for zl1/e2e1: monotonic or tsc; tsc),
# PORT_BASE (lttng-relayd's control/data/live ports, 5342..5344), WORK (scratch dir).
set -u -o pipefail
B=$(cd "${1:?usage: run.sh BUILD_DIR [cost] [live]}" && pwd)
shift
WHAT=${*:-cost live}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUNS=${RUNS:-3}
N=${N:-10000000}
LIVE_N=${LIVE_N:-10000000}
export ZL1_RATE=${ZL1_RATE:-10000000}
export GUEST_CLOCK=${GUEST_CLOCK:-tsc}
PORT_BASE=${PORT_BASE:-5342}
WORK=${WORK:-$(mktemp -d /tmp/mtrace-peer-lttng.XXXXXX)}
export LTTNG_HOME=$WORK/home
LOAD=$WORK/peer-load
HOST=$(hostname)
SESSIOND=
RELAYD=
CLIENT=

for p in lttng-tools liblttng-ust-dev babeltrace2; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || {
		echo "run.sh: $p is not installed (apt-get install lttng-tools liblttng-ust-dev babeltrace2)" >&2
		exit 1
	}
done
[ -x "$B/bench/ring/bench-ring" ] || { echo "run.sh: build $B first (ninja -C $B)" >&2; exit 1; }

stop() { # PID: TERM, wait up to 10 s, KILL; only processes this script started
	local p=$1 i
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 0
	kill -TERM "$p" 2>/dev/null
	for i in $(seq 100); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null
}
cleanup() {
	stop "$CLIENT"
	[ -n "$SESSIOND" ] && timeout 60 lttng destroy --all >/dev/null 2>&1
	stop "$RELAYD"
	stop "$SESSIOND"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

median() { sort -g | awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : "NA" }'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "NA" }'; }

mkdir -p "$WORK" "$LTTNG_HOME"
echo "+ gcc -O2 -I$HERE -o peer-load peer-load.c mtrace_peer_tp.c \$(pkg-config --libs lttng-ust)"
gcc -O2 -Wall -I"$HERE" -o "$LOAD" "$HERE/peer-load.c" "$HERE/mtrace_peer_tp.c" \
	$(pkg-config --cflags --libs lttng-ust) -ldl || exit 1

if [ -e /var/run/lttng/lttng-sessiond.pid ] &&
	kill -0 "$(cat /var/run/lttng/lttng-sessiond.pid)" 2>/dev/null; then
	echo "run.sh: an lttng-sessiond is already running (not ours); not touching it" >&2
	exit 1
fi
lttng-sessiond --no-kernel >"$WORK/sessiond.log" 2>&1 &
SESSIOND=$!
for _ in $(seq 100); do timeout 5 lttng list >/dev/null 2>&1 && break; sleep 0.2; done
timeout 5 lttng list >/dev/null 2>&1 || { cat "$WORK/sessiond.log" >&2; exit 1; }

echo "(machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-);" \
	"lttng-tools $(dpkg-query -W -f='${Version}' lttng-tools)," \
	"lttng-ust $(dpkg-query -W -f='${Version}' liblttng-ust-dev); RUNS=$RUNS)"

# lttng_local NAME [create args...]: one local session, peer-load N; prints its line
lttng_local() {
	local s=$1
	shift
	timeout 30 lttng create "$s" "$@" >"$WORK/$s.log" 2>&1 || { cat "$WORK/$s.log" >&2; return 1; }
	timeout 30 lttng enable-event -u mtrace_peer:ev -s "$s" >>"$WORK/$s.log" 2>&1
	timeout 30 lttng start "$s" >>"$WORK/$s.log" 2>&1
	timeout 300 "$LOAD" "$N"
	timeout 300 lttng stop "$s" >>"$WORK/$s.log" 2>&1
	timeout 300 lttng destroy "$s" >>"$WORK/$s.log" 2>&1
	rm -rf "$WORK/tr-$s"
}

cost() {
	local r snap=() disc=() mono=() tsc=() l m
	echo "== producer cost per event, one thread flat out (CPU time of the thread)"
	for r in $(seq "$RUNS"); do
		echo "-- round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
		l=$(lttng_local "snap$r" --snapshot --output="$WORK/tr-snap$r") || return 1
		snap+=("$(echo "$l" | field cpu_ns_per_event)")
		echo "LTTng-UST snapshot (overwrite): $l"
		l=$(lttng_local "disc$r" --output="$WORK/tr-disc$r") || return 1
		disc+=("$(echo "$l" | field cpu_ns_per_event)")
		echo "LTTng-UST default channel (discard, to disk): $l"
		echo "+ $B/bench/ring/bench-ring -n 20000000 -r 1"
		m=$("$B/bench/ring/bench-ring" -n 20000000 -r 1)
		mono+=("$(echo "$m" | sed -n 's/^ring producer, CLOCK_MONOTONIC ts: *\([0-9.]*\).*/\1/p')")
		tsc+=("$(echo "$m" | sed -n 's/^ring producer, TSC clock ts: *\([0-9.]*\).*/\1/p')")
		echo "mtrace: whole event, CLOCK_MONOTONIC ${mono[-1]} ns, TSC clock ${tsc[-1]:-n/a} ns"
	done
	local ms ds mm mt
	ms=$(printf '%s\n' "${snap[@]}" | median)
	ds=$(printf '%s\n' "${disc[@]}" | median)
	mm=$(printf '%s\n' "${mono[@]}" | median)
	mt=$(printf '%s\n' "${tsc[@]}" | median)
	echo "LTTng-UST per event: snapshot $ms ns (runs ${snap[*]}), default channel $ds ns (runs ${disc[*]})"
	echo "mtrace per event: CLOCK_MONOTONIC $mm ns (runs ${mono[*]}), TSC clock ${mt:-n/a} ns (runs ${tsc[*]})"
	echo "RATIO LTTng-UST snapshot / mtrace TSC clock:       $(ratio "$ms" "$mt")x"
	echo "RATIO LTTng-UST default / mtrace TSC clock:        $(ratio "$ds" "$mt")x"
	echo "RATIO LTTng-UST snapshot / mtrace CLOCK_MONOTONIC: $(ratio "$ms" "$mm")x"
}

# one LTTng live run, producer flat out; prints "rate received"
lttng_live_once() {
	local s=$1 cl=$WORK/$1.client t0 t1 ev end
	timeout 30 lttng create "$s" --live \
		--set-url="net://127.0.0.1:$PORT_BASE:$((PORT_BASE + 1))" >"$WORK/$s.log" 2>&1 ||
		{ cat "$WORK/$s.log" >&2; return 1; }
	timeout 30 lttng enable-event -u mtrace_peer:ev -s "$s" >>"$WORK/$s.log" 2>&1
	timeout 30 lttng start "$s" >>"$WORK/$s.log" 2>&1
	(timeout 600 babeltrace2 --input-format=lttng-live \
		"net://localhost:$((PORT_BASE + 2))/host/$HOST/$s" \
		--params='session-not-found-action="end"' -c sink.utils.counter -p step=+0 \
		>"$cl" 2>"$cl.err"
	 echo "end_ns=$(date +%s%N)" >>"$cl") &
	CLIENT=$!
	sleep 2 # the viewer attaches before the producer starts
	t0=$(date +%s%N)
	timeout 300 "$LOAD" "$LIVE_N" >"$WORK/$s.load"
	t1=$(date +%s%N)
	timeout 300 lttng stop "$s" >>"$WORK/$s.log" 2>&1
	timeout 300 lttng destroy "$s" >>"$WORK/$s.log" 2>&1
	wait "$CLIENT"
	CLIENT=
	rm -rf "$WORK/relay/$HOST/$s"-*
	ev=$(awk '/ Event messages?$/ { print $1 }' "$cl" | tail -1)
	end=$(echo "$(cat "$cl")" | field end_ns)
	awk -v e="${ev:-0}" -v d=$((end - t0)) -v l=$((t1 - t0)) \
		'BEGIN { printf "%.0f %d %.2f\n", e * 1e9 / d, e, (d - l) / 1e9 }'
}

live() {
	local r lt=() zl=() zlok=0 e2=() l o
	echo "== delivered rate: LTTng live vs mtraced to one client"
	lttng-relayd -C "tcp://127.0.0.1:$PORT_BASE" -D "tcp://127.0.0.1:$((PORT_BASE + 1))" \
		-L "tcp://127.0.0.1:$((PORT_BASE + 2))" -o "$WORK/relay" >"$WORK/relayd.log" 2>&1 &
	RELAYD=$!
	for _ in $(seq 50); do ss -ltn | grep -q "127.0.0.1:$((PORT_BASE + 2))" && break; sleep 0.2; done
	kill -0 "$RELAYD" 2>/dev/null || { cat "$WORK/relayd.log" >&2; return 1; }
	for r in $(seq "$RUNS"); do
		echo "-- round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
		read -r rate got lag < <(lttng_live_once "live$r") || return 1
		lt+=("$rate")
		echo "LTTng live, $LIVE_N events flat out: client received $got" \
			"($(awk -v g="$got" -v n="$LIVE_N" 'BEGIN { printf "%.2f", 100 * (n - g) / n }') % lost)," \
			"$(awk -v x="$rate" 'BEGIN { printf "%.2f", x / 1e6 }') M events/s delivered, drained ${lag} s after the producer ended"
		echo "+ bench/stream/run.sh $B zl1 e2e1   (ZL1_RATE=$ZL1_RATE GUEST_CLOCK=$GUEST_CLOCK)"
		o=$("$ROOT/bench/stream/run.sh" "$B" zl1 e2e1 2>&1)
		echo "$o" | grep -E 'ZERO LOSS|^LOSS|aggregate|lost in ring|CPU:'
		l=$(echo "$o" | awk '/^== stream zero loss/ { z = 1 } /^== stream e2e/ { z = 0 }
			z && /ZERO LOSS/ { print "yes" } z && /^LOSS/ { print "no" }')
		[ "$l" = yes ] && zlok=$((zlok + 1))
		zl+=("$(echo "$o" | awk '/^== stream zero loss/ { z = 1 } /^== stream e2e/ { z = 0 }
			z && /aggregate/ { sub(/.*aggregate /, ""); sub(/ M\/s.*/, ""); print $0 * 1e6 }')")
		e2+=("$(echo "$o" | awk '/^== stream e2e/ { z = 1 }
			z && /aggregate/ { sub(/.*aggregate /, ""); sub(/ M\/s.*/, ""); print $0 * 1e6 }')")
	done
	local ml mz me
	ml=$(printf '%s\n' "${lt[@]}" | median)
	mz=$(printf '%s\n' "${zl[@]}" | median)
	me=$(printf '%s\n' "${e2[@]}" | median)
	echo "LTTng live delivered: median $ml events/s (runs ${lt[*]})"
	echo "mtrace zl1 at $ZL1_RATE events/s: ZERO LOSS in $zlok of $RUNS; received median $mz events/s (runs ${zl[*]})"
	echo "mtrace e2e1 flat out: received median $me events/s (runs ${e2[*]})"
	echo "RATIO mtrace zl1 (paced, $zlok of $RUNS zero loss) / LTTng live: $(ratio "$mz" "$ml")x"
	echo "RATIO mtrace e2e1 flat out / LTTng live:                   $(ratio "$me" "$ml")x"
}

for w in $WHAT; do
	case $w in
	cost) cost || exit 1 ;;
	live) live || exit 1 ;;
	*) echo "unknown: $w" >&2; exit 2 ;;
	esac
done
echo "(load average at the end $(cut -d' ' -f1-3 /proc/loadavg); command: bench/peer-lttng/run.sh $B $WHAT)"
