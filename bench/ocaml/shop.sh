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

# the installed tree, and the two builds of the same sources
meson install -C "$BUILD" --no-rebuild --quiet --destdir "$W/root" >"$W/install.log" || { cat "$W/install.log"; exit 1; }
prefix=$(meson introspect "$BUILD" --buildoptions | python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"]); print(o["prefix"] + "/" + o["libdir"]); print(o.get("ocaml_libdir", ""))')
LIBDIR=$W/root$(echo "$prefix" | sed -n 2p)
OL=$(echo "$prefix" | sed -n 3p)
[ -n "$OL" ] || OL=$(ocamlfind printconf destdir)
case $OL in /*) ;; *) OL=$(echo "$prefix" | sed -n 1p)/$OL ;; esac
export OCAMLPATH=$W/root$OL
for v in traced plain; do
	mkdir -p "$W/$v/lib" "$W/$v/bin"
	cp "$SRC/tests/ocaml/outside/lib/shop.ml" "$W/$v/lib/"
	cp "$SRC/tests/ocaml/outside/bin/main.ml" "$W/$v/bin/"
done
python3 - "$SRC/docs/ocaml.md" "$W/traced" <<'PY'
import os, re, sys
for b in re.findall(r"```(?:[a-z]*)\n(.*?)```", open(sys.argv[1]).read(), flags=re.S):
    m = re.match(r";\s*(lib/dune|bin/dune)\b", b)
    if m or b.startswith("(lang dune "):
        open(os.path.join(sys.argv[2], m.group(1) if m else "dune-project"), "w").write(b)
PY
# plain Lwt: the same sources under lwt_ppx, and the three names main.ml takes from mtrace
echo '(lang dune 2.9)' >"$W/plain/dune-project"
echo '(library (name shop) (libraries lwt lwt.unix) (preprocess (pps lwt_ppx)))' >"$W/plain/lib/dune"
echo '(executable (name main) (libraries shop lwt lwt.unix) (preprocess (pps lwt_ppx)))' >"$W/plain/bin/dune"
echo 'let run ?pages:_ ?clock:_ ?wait_reader:_ main = Lwt_main.run (main ())' >"$W/plain/bin/mtrace_lwt_guest.ml"
echo 'let stats () : (string * int) list = []' >"$W/plain/bin/mtrace_lwt.ml"
echo 'let clock_tsc = 4' >"$W/plain/bin/mtrace_ring.ml"
for v in traced plain; do
	(cd "$W/$v" && LIBRARY_PATH=$LIBDIR dune build --profile release ./bin/main.exe) ||
		{ echo "shop.sh: the $v build failed" >&2; exit 1; }
done

rig_start >/dev/null || exit 1
echo "# bench/ocaml/shop.sh $BUILD $RUNS $ROUNDS  (SHOP_TIME_SCALE=$SHOP_TIME_SCALE, $(nproc) CPUs)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {	# variant: the program's CPU seconds
	local v=$1 exe=$W/traced/_build/default/bin/main.exe env=()
	case $v in
	untraced) exe=$W/plain/_build/default/bin/main.exe ;;
	off) env=(MTRACE=off) ;;
	tsc) env=(SHOP_CLOCK=tsc) ;;
	esac
	rm -f "$W/$v.log"
	rig_guest "$v" -- env LD_LIBRARY_PATH="$LIBDIR" "${env[@]}" "$exe" "$ROUNDS" >/dev/null
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
