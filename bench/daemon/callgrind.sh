#!/bin/bash
# callgrind.sh - instructions per event of mtraced's hot paths, by callgrind: a count
# that other people's load does not change, for comparing two builds on a shared
# machine where wall-clock and CPU-time figures are not repeatable.
#
#   bench/daemon/callgrind.sh BUILD [BASE_BUILD]    (KEEP=DIR keeps the callgrind files)
#   PARTS="drain stream e2e" (the default) picks workloads; E2E_RUNS=N (default 1) runs
#   e2e N times a build, alternating, and prints each build's median
#
# drain   bench-drain 1 2: 2,040,065 events of the Lwt-like mix decoded and applied,
#         counting only inside ring_reader_drain_batch (decode + state, not the fill)
# stream  stream-harness -N 1000000 -r 0 -R 2 -w 1 with one stream-bench-client: the
#         real stream server (filter, columns, dictionary, protobuf-c, socket write)
#         fed by the generator, counting inside stream_events (each ring batch in)
#         and stream_batch_flush (packing and writing)
# e2e     mtraced itself on the simulated Xen: one mtrace-load guest (1 ring, 512
#         pages, E2E_EVENTS events, default 500000, paced at E2E_RATE/s, default 100000,
#         slow enough for mtraced under valgrind to read them all), one
#         stream-bench-client; counting inside drain_guest (decode, state, the stream's
#         columns) and stream_batch_flush (packing, queueing), per event the client got
# shm16   (not in the default PARTS) mtraced on the simulated Xen with 16 shared-memory
#         readers of one filter (stream-probe -S -M, ending at the guest's DomainDown)
#         and a guest writing 20 events a millisecond (SHM_EVENTS, default 100000, at
#         20000/s in 1 ms batches), so that the readers sleep and are woken again and
#         again: everything inside mtraced's event_base_loop per event, and wake_all (the
#         wake-ups of the region's readers) per call
# Each line prints the command that reproduces it; callgrind_annotate on the kept
# files shows where the instructions go.
set -u
B=$(cd "${1:?usage: callgrind.sh BUILD [BASE_BUILD]}" && pwd)
BASE=${2:+$(cd "$2" && pwd)}
K=${KEEP:-$(mktemp -d /tmp/mtrace-callgrind.XXXXXX)}
mkdir -p "$K"

ir() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$1" | head -n 1; }

drain() { # build tag
	local out=$K/drain-$2.out
	valgrind --tool=callgrind --callgrind-out-file="$out" \
		--toggle-collect=ring_reader_drain_batch "$1/bench/daemon/bench-drain" 1 2 \
		>"$K/drain-$2.txt" 2>&1
	local n
	n=$(sed -n 's/^bench-drain: 1 guest, \([0-9]*\) events.*/\1/p' "$K/drain-$2.txt")
	awk -v i="$(ir "$out")" -v n="$n" -v t="$2" -v b="$1" 'BEGIN {
		printf "drain  %-5s %.1f instructions/event (%d over %d events)  " \
			"valgrind --tool=callgrind --toggle-collect=ring_reader_drain_batch " \
			"%s/bench/daemon/bench-drain 1 2\n", t, i / n, i, n, b }'
}

stream() { # build tag
	local out=$K/stream-$2.out sock=$K/s-$2.sock n=1000000
	rm -f "$sock"
	valgrind --tool=callgrind --callgrind-out-file="$out" \
		--toggle-collect=stream_events --toggle-collect=stream_batch_flush \
		"$1/tests/stream/stream-harness" -s "$sock" -N $n -r 0 -D 1 -R 2 -w 1 -L 100 \
		>"$K/stream-$2.json" 2>"$K/stream-$2.err" &
	local hp=$!
	for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done
	"$1/bench/stream/stream-bench-client" -s "$sock" -q >"$K/client-$2.json"
	wait "$hp"
	awk -v i="$(ir "$out")" -v n="$n" -v t="$2" -v b="$1" 'BEGIN {
		printf "stream %-5s %.1f instructions/event (%d over %d events)  " \
			"valgrind --tool=callgrind --toggle-collect=stream_events " \
			"--toggle-collect=stream_batch_flush %s/tests/stream/stream-harness " \
			"-s S -N %d -r 0 -D 1 -R 2 -w 1 & stream-bench-client -s S -q\n",
			t, i / n, i, n, b, n }'
	grep -o '"events":[0-9]*' "$K/client-$2.json" | head -n 1 | sed "s/^/       client received /"
}

e2e() { # build tag
	local t=$K/e2e-$2 out=$K/e2e-$2.out n=${E2E_EVENTS:-500000} rate=${E2E_RATE:-100000}
	rm -rf "$t"
	mkdir -p "$t"
	export MTRACE_SIM_DIR=$t/sim
	"$1/sim/mtrace-simxen" --dir "$t/sim" start >/dev/null || return 1
	valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect=drain_guest \
		--toggle-collect=stream_batch_flush "$1/daemon/mtraced" -f -c /dev/null \
		--sim-dir "$t/sim" -s "$t/sock" -o drop_privileges=false -q 2>"$t/mtraced.err" &
	local dp=$!
	for _ in $(seq 600); do [ -S "$t/sock" ] && break; sleep 0.1; done
	"$1/bench/stream/stream-bench-client" -s "$t/sock" -q -i 5000 >"$t/client.json" &
	local cp=$!
	sleep 1
	"$1/sim/mtrace-simxen" --dir "$t/sim" create --name bench -- "$1/guest/mtrace-load" \
		--wait-reader 60 --linger 60 --summary "$t/load.json" --rings 1 -p 512 -n "$n" \
		--rate "$rate" >/dev/null
	wait "$cp"
	kill -TERM "$dp"
	wait "$dp"
	"$1/sim/mtrace-simxen" --dir "$t/sim" stop >/dev/null 2>&1
	local got
	got=$(grep -o '"events":[0-9]*' "$t/client.json" | head -n 1 | cut -d: -f2)
	awk -v i="$(ir "$out")" -v n="$got" -v w="$n" -v t="$2" -v b="$1" -v r="$rate" 'BEGIN {
		printf "e2e    %-5s %.1f instructions/event (%d over %d events received of %d " \
			"written)  valgrind --tool=callgrind --toggle-collect=drain_guest " \
			"--toggle-collect=stream_batch_flush %s/daemon/mtraced ...; mtrace-load --rings 1 " \
			"-p 512 -n %d --rate %d; stream-bench-client -q\n", t, i / n, i, n, w, b, w, r }'
}

shm16() { # build tag
	local t=$K/shm16-$2 out=$K/shm16-$2.out n=${SHM_EVENTS:-100000} p ps=()
	rm -rf "$t"
	mkdir -p "$t"
	export MTRACE_SIM_DIR=$t/sim
	"$1/sim/mtrace-simxen" --dir "$t/sim" start >/dev/null || return 1
	valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect=event_base_loop \
		"$1/daemon/mtraced" -f -c /dev/null --sim-dir "$t/sim" -s "$t/sock" \
		-o drop_privileges=false 2>"$t/mtraced.err" &
	local dp=$!
	for _ in $(seq 600); do [ -S "$t/sock" ] && break; sleep 0.1; done
	for p in $(seq 16); do
		"$1/tests/stream/stream-probe" -s "$t/sock" -S -M -d 5 -T 120 >"$t/p$p.out" &
		ps+=($!)
	done
	sleep 3
	"$1/sim/mtrace-simxen" --dir "$t/sim" create --name bench --domid 5 -- \
		"$1/guest/mtrace-load" --wait-reader 60 --linger 60 --summary "$t/load.json" \
		--rings 1 -p 512 -n "$n" --rate 20000 --batch-us 1000 >/dev/null
	wait "${ps[@]}"
	kill -TERM "$dp"
	wait "$dp"
	"$1/sim/mtrace-simxen" --dir "$t/sim" stop >/dev/null 2>&1
	local w
	w=$(callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
		sed -n 's/^ *\([0-9,]*\) .*:wake_all \[.*/\1/p' | head -n 1 | tr -d ,)
	awk -v i="$(ir "$out")" -v n="$n" -v w="${w:-0}" -v t="$2" -v b="$1" 'BEGIN {
		printf "shm16  %-5s %.1f instructions/event (%d over %d events), wake_all %d  " \
			"valgrind --tool=callgrind --toggle-collect=event_base_loop %s/daemon/mtraced ...; " \
			"16 x stream-probe -S -M; mtrace-load --rings 1 -p 512 -n %d --rate 20000 " \
			"--batch-us 1000\n", t, i / n, i, n, w, b, n }'
	grep -o 'wake-ups: .*' "$t/mtraced.err" | sed 's/^/       /'
	tail -n 1 "$t/p1.out" | sed 's/^/       a reader: /'
}

# e2e varies with how many events each wake-up finds: E2E_RUNS rounds, alternating
# the builds, give a median each.
for what in ${PARTS:-drain stream e2e}; do
	if [ "$what" = e2e ]; then
		rm -f "$K/e2e-this.runs" "$K/e2e-base.runs"
		for r in $(seq "${E2E_RUNS:-1}"); do
			e2e "$B" "this$r" | tee -a "$K/e2e-this.runs"
			[ -n "$BASE" ] && e2e "$BASE" "base$r" | tee -a "$K/e2e-base.runs"
		done
		for t in this base; do
			[ -s "$K/e2e-$t.runs" ] || continue
			awk '{ print $3 }' "$K/e2e-$t.runs" | sort -n | awk -v t="$t" \
			    '{ v[NR] = $1 } END { printf "e2e    %-5s median %.1f of %d runs\n", t, v[int((NR + 1) / 2)], NR }'
		done
		continue
	fi
	"$what" "$B" this
	[ -n "$BASE" ] && "$what" "$BASE" base
done
echo "callgrind files in $K"
