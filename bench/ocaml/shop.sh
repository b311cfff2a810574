#!/bin/bash
# The cost of tracing a realistic Lwt program: tests/ocaml/outside (the shop: a functor
# over a store, a connection pool, a request stream, mailboxes, pick with timeouts,
# exceptions, bytes through a pipe, the rest of Lwt's vocabulary), built outside the tree
# against the installed mtrace exactly as docs/ocaml.md says, run as a simulated domain
# traced by the real mtraced, against the same sources built with plain Lwt.
#
#   bench/ocaml/shop.sh BUILD [RUNS [ROUNDS]]      (defaults: 5 runs, 400 rounds)
#
# Variants, alternated run by run: untraced (lwt_ppx, no mtrace), off (ppx_mtrace,
# MTRACE=off), mono (traced, CLOCK_MONOTONIC ring), tsc (traced, TSC ring).  The figure is
# the program's own CPU time (Sys.time: user + system) over the whole run; the waits are
# scaled down (SHOP_TIME_SCALE) so that CPU, not timers, is most of a run.  Prints the
# load before and after, every run, and medians and ranges.  Never run beside anything
# else: see bench/README.md.
set -u
BUILD=$(cd "${1:?usage: shop.sh BUILD [RUNS [ROUNDS]]}" && pwd)
RUNS=${2:-5}
ROUNDS=${3:-400}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export SHOP_TIME_SCALE=${SHOP_TIME_SCALE:-0.02}
RIG_DIR=$(mktemp -d /tmp/mtrace-shop.XXXXXX)
RIG_BUILD=$BUILD
trap 'rig_stop >/dev/null 2>&1; rm -rf "$RIG_DIR"' EXIT
. "$SRC/scripts/rig.sh"
W=$RIG_DIR

. "$SRC/bench/ocaml/shop-build.sh"
shop_build || exit 1

rig_start >/dev/null || exit 1
echo "# bench/ocaml/shop.sh $BUILD $RUNS $ROUNDS  (SHOP_TIME_SCALE=$SHOP_TIME_SCALE, $(nproc) CPUs)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {	# variant: the program's CPU seconds
	local v=$1
	shop_variant "$v"
	rm -f "$W/$v.log"
	rig_guest "$v" -- env LD_LIBRARY_PATH="$LIBDIR" "${SHOP_ENV[@]}" "$SHOP_EXE" "$ROUNDS" >/dev/null
	for _ in $(seq 1200); do
		grep -q '^{"rounds"' "$W/$v.log" 2>/dev/null && break
		sleep 0.1
	done
	sed -n 's/^{"rounds":[0-9]*,"cpu_s":\([0-9.]*\),.*/\1/p' "$W/$v.log"
	while "$RIG_SIMXEN" --dir "$RIG_SIM" list | grep -q " $v "; do sleep 0.1; done
}
declare -A all
VARIANTS="untraced off mono tsc"
for r in $(seq "$RUNS"); do
	line="run $r:"
	for v in $VARIANTS; do
		t=$(run "$v")
		[ -n "$t" ] || { echo "shop.sh: no figure from $v: $(tail -3 "$W/$v.log")" >&2; exit 1; }
		all[$v]="${all[$v]:-} $t"
		line="$line $v $t s"
	done
	echo "$line"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for v in $VARIANTS; do echo "$v ${all[$v]}"; done | python3 -c '
import statistics, sys
rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in sys.stdin}
base = statistics.median(rows["untraced"])
for v, xs in rows.items():
    m = statistics.median(xs)
    print("%-9s median %.3f s (%.3f-%.3f), %.2fx untraced" % (v, m, min(xs), max(xs), m / base))'
