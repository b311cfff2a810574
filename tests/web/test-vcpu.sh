#!/bin/bash
# test-vcpu.sh - the page's vCPU bands (drive-vcpu.mjs) with mtraced's hypervisor source
# on, mtrace-cat -f json the reference for what was streamed.
. "$(dirname "$0")/lib.sh"
need_browser
rig_start --vcpu-source --set vcpu_interval_ms=100 || fail "the rig did not start"
web_start
"$CAT" -s "$RIG_SOCK" -f json >"$RIG_DIR/cat.json" 2>"$RIG_DIR/cat.err" &
CAT_PID=$!
BG="$CAT_PID"
export WEB_URL RIG_DIR RIG_SIM SIMXEN=$RIG_SIMXEN LOAD=$RIG_LOAD CAT_JSON=$RIG_DIR/cat.json
node "$MTRACE_SRC/tests/web/drive-vcpu.mjs"
rc=$?
kill -TERM "$CAT_PID" 2>/dev/null
wait "$CAT_PID" 2>/dev/null
BG=
exit $rc
