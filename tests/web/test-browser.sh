#!/bin/bash
# test-browser.sh MODE - the page in chromium-headless-shell against the real mtraced
# on the simulated Xen (drive.mjs says what each MODE checks), with mtrace-cat as the
# reference for what was streamed.
. "$(dirname "$0")/lib.sh"
MODE=${1:?mode}
need_browser
[ "$MODE" != ocaml ] || [ -x "${OCAML_BLK:-}" ] || skip "the OCaml example is not built"
rig_start || fail "the rig did not start"
case $MODE in
slow)	web_start --queue 1 --history 4
	"$CAT" -s "$RIG_SOCK" -f count --summary 2>"$RIG_DIR/cat.summary" &
	CAT_PID=$! ;;
*)	web_start
	"$CAT" -s "$RIG_SOCK" -f json >"$RIG_DIR/cat.json" 2>"$RIG_DIR/cat.err" &
	CAT_PID=$! ;;
esac
BG="$CAT_PID"
note "mtrace-web at $WEB_URL"
export WEB_URL RIG_DIR RIG_SIM SIMXEN=$RIG_SIMXEN REPLAY=$RIG_REPLAY LOAD=$RIG_LOAD \
	LABEL_GUEST=$RIG_BUILD/tests/web/label-guest FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp \
	CAT_JSON=$RIG_DIR/cat.json OCAML_BLK=${OCAML_BLK:-}
node "$MTRACE_SRC/tests/web/drive.mjs" "$MODE"
rc=$?
kill -TERM "$CAT_PID" 2>/dev/null
wait "$CAT_PID" 2>/dev/null
BG=
if [ "$MODE" = slow ] && [ $rc -eq 0 ]; then
	total=$(cat "$RIG_DIR/total")
	got=$(grep -o '"events":[0-9]*' "$RIG_DIR/cat.summary" | head -1 | cut -d: -f2)
	dropped=$(grep -o '"dropped_for_client":[0-9]*' "$RIG_DIR/cat.summary" | cut -d: -f2)
	[ "$got" = "$total" ] && [ "$dropped" = 0 ] ||
		fail "mtrace-cat got $got events (dropped $dropped), mtraced counted $total"
	echo "ok: mtrace-cat received all $total events beside the stalled browser"
fi
kill -0 "$WEB_PID" 2>/dev/null || fail "mtrace-web died"
# A clean stop (and, in the sanitizer build, no leak or bad access on the way out).
kill -TERM "$WEB_PID"
wait "$WEB_PID"
st=$?
WEB_PID=
[ $st -eq 0 ] || { cat "$RIG_DIR/web.err"; fail "mtrace-web exited with status $st on SIGTERM"; }
exit $rc
