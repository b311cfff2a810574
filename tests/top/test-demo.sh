#!/bin/bash
# ./demo without a terminal: it runs, prints mtrace-top's text for every guest, exits 0
# in bounded time, and leaves no process or directory behind; stopped with SIGTERM
# half-way, it cleans up just the same.
. "$MTRACE_SRC/tests/rig.sh"
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp

demo() {	# iterations
	env TMPDIR="$T" MTRACE_BUILD="$MTRACE_BUILD_ROOT" MTRACE_DEMO_NO_BUILD=1 \
		MTRACE_DEMO_ITERATIONS="$1" "$MTRACE_SRC/demo" </dev/null
}

leftovers() {
	local p=$(rig_pids)
	[ -z "$p" ] || { ps -o pid,args -p $p >&2; fail "$1: processes left behind"; }
	[ -z "$(ls -A "$T" | grep mtrace-demo)" ] || fail "$1: temporary directory left behind"
}

timeout 60 bash -c "$(declare -f demo); demo 2" >"$T/demo.out" 2>"$T/demo.err"
rc=$?
[ $rc -eq 0 ] || { cat "$T/demo.err" >&2; fail "./demo exited $rc"; }
for want in "^mtrace-top" "^mirage-blk " "^DOMAIN +TID" "^DOMAIN +COUNT" "blkfront" "Xs.read waiting"; do
	grep -Eq "$want" "$T/demo.out" || { cat "$T/demo.out" >&2; fail "demo output lacks '$want'"; }
done
if [ -x "$RIG_LOAD" ]; then
	grep -q "^synthetic " "$T/demo.out" || fail "demo output lacks the synthetic guest"
fi
# the OCaml example, where the OCaml part is built: its domain and its labelled threads
if [ -x "$MTRACE_BUILD_ROOT/ocaml/_build/default/examples/blk_demo.exe" ]; then
	for want in "^ocaml-blk +[0-9]+ running" "^ocaml-blk .* Process data\$" "^ocaml-blk .* blkfront\.poll\$"; do
		grep -Eq "$want" "$T/demo.out" || { cat "$T/demo.out" >&2; fail "demo output lacks '$want'"; }
	done
fi
[ "$(grep -c '^mtrace-top' "$T/demo.out")" -eq 3 ] || fail "want 2 updates and the label view"
if [ -x "$MTRACE_BUILD_ROOT/client/web/mtrace-web" ]; then
	grep -q '^demo: live timeline in a browser: http://127\.0\.0\.1:[0-9]*/' "$T/demo.err" ||
		{ cat "$T/demo.err" >&2; fail "./demo did not print the page's URL"; }
fi
leftovers "after a normal exit"

# SIGTERM half-way through a long run.
env TMPDIR="$T" MTRACE_BUILD="$MTRACE_BUILD_ROOT" MTRACE_DEMO_NO_BUILD=1 \
	MTRACE_DEMO_ITERATIONS=1000 "$MTRACE_SRC/demo" </dev/null >"$T/demo2.out" 2>"$T/demo2.err" &
d=$!
for i in $(seq 300); do
	grep -q "^mtrace-top" "$T/demo2.out" 2>/dev/null && break
	sleep 0.1
done
grep -q "^mtrace-top" "$T/demo2.out" || { cat "$T/demo2.err" >&2; fail "second demo never printed"; }
kill -TERM "$d"
for i in $(seq 100); do
	kill -0 "$d" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$d" 2>/dev/null && fail "./demo still running 10 s after SIGTERM"
wait "$d"
leftovers "after SIGTERM"
echo "ok"
