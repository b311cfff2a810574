#!/bin/bash
# An OCaml user's own program, as the user meets mtrace: `meson install --destdir`, then
# a dune project of its own (tests/ocaml/outside: a library with a functor and
# first-class modules, and a main) built in dune's default dev profile from the dune
# stanzas of docs/ocaml.md taken verbatim (the blocks that begin
# `(lang dune`, `; lib/dune`, `; bin/dune`), against what was installed (OCAMLPATH,
# LIBRARY_PATH).  It runs as a simulated domain under the real mtraced, and:
# - the build says nothing is untraced (no ppx_mtrace warning) and stops on no warning;
# - every op it counted itself arrives at mtrace-cat -f json exactly;
# - the creation sites are exactly the traced forms a scan of its two sources finds
#   (tests/ocaml/source_forms.py, which reads the text alone), each exercised;
# - no thread is created by thread 0 but at the lines the source marks `root`: every
#   thread made inside a traced callback has its true parent;
# - a cancelled thread fails with "Lwt.Canceled".
. "$MTRACE_SRC/tests/rig.sh"
: "${MESON:?}" "${MTRACE_PREFIX:?}" "${MTRACE_LIBDIR:?}" "${OCAML_LIBDIR:?}" "${CAT:?}"
ROUNDS=${OUTSIDE_ROUNDS:-4}

install_destdir
case $OCAML_LIBDIR in
/*) export OCAMLPATH=$D$OCAML_LIBDIR ;;
*) export OCAMLPATH=$D$MTRACE_PREFIX/$OCAML_LIBDIR ;;
esac
CL=$D$MTRACE_LIBDIR

# the project: its sources, and the dune files exactly as docs/ocaml.md gives them
P=$T/shop
mkdir -p "$P/lib" "$P/bin"
cp "$MTRACE_SRC/tests/ocaml/outside/lib/shop.ml" "$P/lib/"
cp "$MTRACE_SRC/tests/ocaml/outside/bin/main.ml" "$P/bin/"
CHECK=$MTRACE_SRC/tests/ocaml/outside_check.py
"$PYTHON" "$CHECK" stanzas "$MTRACE_SRC/docs/ocaml.md" "$P" >"$T/stanzas.log" 2>&1 ||
	fail "docs/ocaml.md has no dune stanzas to take: $(cat "$T/stanzas.log")"
( cd "$P" && LIBRARY_PATH=$CL timeout 300 dune build ./bin/main.exe ) >"$T/build.log" 2>&1 ||
	fail "the outside project does not build in dune's dev profile: $(cat "$T/build.log")"
if grep -q 'ppx_mtrace\|Warning\|Error' "$T/build.log"; then
	fail "the build warned: $(cat "$T/build.log")"
fi
pass "the outside project builds in dev profile from docs/ocaml.md's stanzas, with no warning"

sim_start
daemon_start
"$CAT" -s "$SOCK" -f json -D shop --time 200 >"$T/events.json" 2>"$T/cat.err" &
CAT_PID=$!
PIDS+=("$CAT_PID")
cat_in() { grep -q 'mtrace-cat' "$T/mtraced.log"; }
wait_until 30 cat_in || fail "mtrace-cat did not connect"
guest shop -- env LD_LIBRARY_PATH="$CL" "$P/_build/default/bin/main.exe" "$ROUNDS" >/dev/null
domain_gone() { ! "$SIMXEN" --dir "$SIM" list | grep -q " shop "; }
wait_until 120 domain_gone || fail "the program did not end"
summary=$(grep '^{"rounds"' "$T/shop.log") || fail "no summary from the program: $(cat "$T/shop.log")"
want=$(printf '%s' "$summary" | "$PYTHON" -c 'import json,sys; print(sum(json.load(sys.stdin)["per_op"].values()))')
got() { [ "$(grep -c '"op"' "$T/events.json")" -ge "$want" ]; }
wait_until 60 got || note "mtrace-cat received $(grep -c '"op"' "$T/events.json") of $want events"
sleep 0.5 # anything beyond would be a duplicate: give it time to show
kill -TERM "$CAT_PID"
wait "$CAT_PID" 2>/dev/null

printf '%s\n' "$summary" >"$T/summary.json"
"$PYTHON" "$CHECK" json "$T/summary.json" "$T/events.json" "$P" >"$T/check.out" 2>&1 ||
	fail "the trace of the outside program is not what its source says: $(cat "$T/check.out")"
note "$(cat "$T/check.out")"
daemon_stop
pass "the outside program's trace: every op exact, every site a form of its source, every parent true"
