#!/bin/bash
# callgrind.sh - instructions the OCaml tracing costs, counted by callgrind: a figure that
# other people's load does not change, for steering on a shared machine where CPU times
# are not repeatable.  Instructions are not time: a clock read is a few instructions
# (rdtsc one) but 10-20 ns, so each row also says how many clock reads it made.
#
#   bench/ocaml/callgrind.sh BUILD       (KEEP=DIR keeps the callgrind files)
#
# PARTS (default "bind shop") and VARIANTS (default "untraced off on tsc") choose what
# runs; "on" is the monotonic clock.
#
# bind   bench_lwt.exe's bind loop, BENCH_LWT_ONLY=untraced|off|on|on-tsc, at BINDS1 and
#        BINDS2 binds (default 50000, 150000): instructions a bind are the difference of
#        the two totals over the difference of binds (start-up and the end cancel out)
# shop   the whole program of shop.sh (tests/ocaml/outside, built as shop.sh builds it)
#        as a simulated domain under the real mtraced: untraced, off, mono, tsc, at
#        ROUNDS1 and ROUNDS2 rounds (default 10, 40): the total of the longer run, and a
#        round as the difference over the rounds.  SHOP_TIME_SCALE (default 1) scales
#        its waits: at 1 the timeouts the program races (50 ms) stay far above what
#        valgrind slows a round to, so every run takes the same paths ("timeouts" in each
#        row is the program's own count: it must not differ between variants).  The
#        program runs with OCAMLRUNPARAM=$SHOP_GC (default O=1000000: no heap
#        compaction): a compaction is a one-off of a few million instructions that
#        falls in the longer run or not as the heap happens to stand (in 40 rounds
#        and not 10 after 245f750, in 100 and not 40 before), adding 60,000-90,000 to
#        a round that the code did not cost
# Each variant's clock reads are its calls (callgrind's call counts) of the clock stubs
# (`mtrace_ocaml_monotonic_ns`, `mtrace_ocaml_rdtsc`) and of the ring's C calls that read
# the clock themselves (`mtrace_ocaml_emit_now`, `mtrace_ocaml_emit_ext_now`), a round's
# or a bind's as the instructions are.  The
# shop's notifications of mtraced (`mtrace_ocaml_guest_kick`: on the simulated Xen one
# datagram to its broker, no reply awaited; a hypercall on Xen) are
# counted apart and their instructions (inclusive) left out: how many there are
# depends on when mtraced, running beside it, asks for one, not on the program.
set -u
BUILD=$(cd "${1:?usage: callgrind.sh BUILD}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BINDS1=${BINDS1:-50000}
BINDS2=${BINDS2:-150000}
ROUNDS1=${ROUNDS1:-10}
ROUNDS2=${ROUNDS2:-40}
export SHOP_TIME_SCALE=${SHOP_TIME_SCALE:-1}
SHOP_GC=${SHOP_GC-O=1000000}
PARTS=${PARTS:-bind shop}
VARIANTS=${VARIANTS:-untraced off on tsc}
RIG_DIR=$(mktemp -d /tmp/mtrace-cg.XXXXXX)
RIG_BUILD=$BUILD
K=${KEEP:-$RIG_DIR/cg}
mkdir -p "$K"
trap 'rig_stop >/dev/null 2>&1; rm -rf "$RIG_DIR"' EXIT
. "$SRC/scripts/rig.sh"
W=$RIG_DIR
. "$SRC/bench/ocaml/shop-build.sh"

ir() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$1" | head -n 1; }

# calls of the functions matching $2, from the callgrind file's call records (cfn= then
# calls=; a name is given once with its id, "(id) name", and then by its id alone)
calls() {
	awk -v re="$2" '/^c?fn=\([0-9]+\) / { id = $1; sub(/^c?fn=/, "", id); name[id] = $2 }
		/^cfn=/ { id = $1; sub(/^cfn=/, "", id); cur = name[id] }
		/^calls=/ && cur ~ re { split($1, a, "="); n += a[2] }
		/^calls=/ { cur = "" }
		END { print n + 0 }' "$1"
}
# the instructions spent in a function and what it calls
incl() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f=":$2 " '{ l = $0 " " } index(l, f) { gsub(/,/, "", $1); n += $1 } END { print n + 0 }'
}
CLOCKS='^mtrace_ocaml_(monotonic_ns|rdtsc|emit_now|emit_ext_now)$'
KICK=mtrace_ocaml_guest_kick

row() {	# what variant n1 n2 file1 file2 unit
	local i1 i2 c1 c2 k1 k2
	i1=$(($(ir "$5") - $(incl "$5" $KICK))) i2=$(($(ir "$6") - $(incl "$6" $KICK)))
	c1=$(calls "$5" "$CLOCKS") c2=$(calls "$6" "$CLOCKS")
	k1=$(calls "$5" "^$KICK\$") k2=$(calls "$6" "^$KICK\$")
	awk -v w="$1" -v v="$2" -v n1="$3" -v n2="$4" -v i1="$i1" -v i2="$i2" -v c1="$c1" \
		-v c2="$c2" -v k1="$k1" -v k2="$k2" -v u="$7" 'BEGIN {
		printf "%-5s %-8s %9.1f instructions a %s, %5.2f clock reads", w, v,
			(i2 - i1) / (n2 - n1), u, (c2 - c1) / (n2 - n1)
		if (w == "shop") printf ", %.1f notifications", (k2 - k1) / (n2 - n1)
		printf "; %d in all at %d %ss\n", i2, n2, u }'
}

EXE=$BUILD/ocaml/_build/default/bench/bench_lwt.exe
case " $PARTS " in *" bind "*)
echo "# bench/ocaml/callgrind.sh $BUILD (bind loop: $EXE at $BINDS1 and $BINDS2 binds)"
for v in $VARIANTS; do
	[ "$v" = tsc ] && v=on-tsc
	for n in $BINDS1 $BINDS2; do
		BENCH_LWT_ONLY=$v valgrind --tool=callgrind --callgrind-out-file="$K/bind-$v-$n.out" \
			"$EXE" "$n" 1 >/dev/null 2>"$K/bind-$v-$n.err" ||
			{ echo "callgrind.sh: bench_lwt $v failed:" >&2; tail -5 "$K/bind-$v-$n.err" >&2; exit 1; }
	done
	row bind "$v" "$BINDS1" "$BINDS2" "$K/bind-$v-$BINDS1.out" "$K/bind-$v-$BINDS2.out" bind
done
;; esac

case " $PARTS " in *" shop "*) ;; *) exit 0 ;; esac
shop_build || exit 1
rig_start >/dev/null || exit 1
echo "# shop: tests/ocaml/outside at $ROUNDS1 and $ROUNDS2 rounds (SHOP_TIME_SCALE=$SHOP_TIME_SCALE, OCAMLRUNPARAM=$SHOP_GC)"
shop_run() {	# variant rounds: runs it under callgrind, prints its JSON line
	local v=$1 n=$2 name=$1-$2
	shop_variant "$v"
	rig_guest "$name" -- env LD_LIBRARY_PATH="$LIBDIR" OCAMLRUNPARAM="$SHOP_GC" "${SHOP_ENV[@]}" \
		valgrind --tool=callgrind \
		--callgrind-out-file="$K/shop-$name.out" "$SHOP_EXE" "$n" \
		>/dev/null || return 1
	for _ in $(seq 6000); do
		grep -q '^{"rounds"' "$W/$name.log" 2>/dev/null && break
		sleep 0.1
	done
	while "$RIG_SIMXEN" --dir "$RIG_SIM" list | grep -q " $name "; do sleep 0.1; done
	grep '^{"rounds"' "$W/$name.log"
}
for v in $VARIANTS; do
	[ "$v" = on ] && v=mono
	for n in $ROUNDS1 $ROUNDS2; do
		j=$(shop_run "$v" "$n") && [ -s "$K/shop-$v-$n.out" ] ||
			{ echo "callgrind.sh: the shop ($v, $n rounds) gave no figure:" >&2; tail -5 "$W/$v-$n.log" >&2; exit 1; }
	done
	row shop "$v" "$ROUNDS1" "$ROUNDS2" "$K/shop-$v-$ROUNDS1.out" "$K/shop-$v-$ROUNDS2.out" round
	echo "$j" | sed -n 's/.*\("served":[0-9]*,"timeouts":[0-9]*\).*/               \1/p'
done
