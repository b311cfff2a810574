#!/bin/bash
# test-outlets.sh - mtraced's hypervisor source (issue 38) on the simulated Xen, through
# every outlet, each held to its consumer: the JSON lines to docs/json.md's schema and
# to the statistics' own sums, Chrome JSON to the model of Perfetto's importer
# (tests/files/check_chrome.py), CTF to babeltrace2 and to mirage-trace-viewer's layout
# (check_ctf.py), the exposition to promtool and to the statistics around the scrape,
# mtrace-top's %RUN, %STEAL and the waits' steal; and with the source off, none of it.
. "$MTRACE_SRC/tests/exporter/lib.sh"
need "$EXPORTER" "$LOAD" "$SIMXEN" "$MTRACED" promtool
FILES=$MTRACE_SRC/tests/files
CHECK=$MTRACE_SRC/tests/vcpu/vcpu_check.py

sim_start
daemon_start --vcpu-source --set vcpu_interval_ms=100 || fail "mtraced"
"$CAT" -s "$SOCK" -f proto -w "$T/rec.mtr" --label-stats --stats 500 >/dev/null 2>"$T/rec.err" &
REC=$!
PIDS+=("$REC")
exporter_start -i 200 || fail "exporter"
guest busy -- "$LOAD" --rate 20000 --duration 60 --labels 4 --threads 16 >/dev/null ||
	fail "the load guest"
stats_now() {	# FILE: one statistics line of mtraced now
	"$CAT" -s "$SOCK" -f json --no-events --stats 200 --label-stats -n 1 >"$1" 2>>"$T/cat.err"
}
has_vcpu() {
	stats_now "$T/s.json" && grep -q '"vcpu":{' "$T/s.json" && grep -q '"waits":[1-9]' "$T/s.json"
}
wait_until 30 has_vcpu || fail "no vCPU figures: $(tail -c 300 "$T/s.json")"
sleep 1
stats_now "$T/s.json"
"$PYTHON" "$CHECK" stats "$T/s.json" busy || fail "statistics"

"$TOP" -s "$SOCK" -b -n 3 -d 0.3 >"$T/top.txt" 2>"$T/top.err" || fail "mtrace-top"
"$PYTHON" "$CHECK" top "$T/top.txt" busy || fail "mtrace-top's domain line"
"$TOP" -s "$SOCK" -b -n 1 -g >"$T/top-g.txt" 2>>"$T/top.err" || fail "mtrace-top -g"
"$PYTHON" "$CHECK" top-labels "$T/top-g.txt" || fail "mtrace-top's label view"

stats_now "$T/before.json"
sleep 0.6 # the exporter's own statistics (every 200 ms) are then newer than these
scrape "$T/metrics.txt" || fail "scrape"
stats_now "$T/after.json"
"$PYTHON" "$CHECK" prom "$T/metrics.txt" "$T/before.json" "$T/after.json" busy ||
	fail "mtrace_vcpu_seconds_total"

sleep 1
kill -INT "$REC"
wait "$REC" 2>/dev/null
"$CAT" -i "$T/rec.mtr" -f json >"$T/rec.jsonl" || fail "json from the recording"
grep -q '"type":"vcpu"' "$T/rec.jsonl" || fail "no vcpu lines in the recording"
"$PYTHON" "$MTRACE_SRC/tests/web/json_schema.py" "$MTRACE_SRC/docs/json.md" lines "$T/rec.jsonl" ||
	fail "docs/json.md's schema"
"$CAT" -i "$T/rec.mtr" -f chrome -O "$T/trace.json" 2>"$T/chrome.err" || fail "chrome"
"$PYTHON" "$FILES/check_chrome.py" "$T/trace.json" "$T/rec.jsonl" || fail "chrome: the importer's model"
grep -q '"cat":"vcpu"' "$T/trace.json" || fail "no vCPU track in the Chrome trace"
"$CAT" -i "$T/rec.mtr" -f ctf -O "$T/ctf" 2>"$T/ctf.err" || fail "ctf"
[ -s "$T/ctf/dom1-vcpu" ] || fail "no vCPU stream in the CTF trace"
"$PYTHON" "$FILES/check_ctf.py" mtv "$T/ctf" "$T/rec.jsonl" || fail "ctf: mirage-trace-viewer's layout"
if "$PYTHON" -c 'import bt2' 2>/dev/null; then
	"$PYTHON" "$FILES/check_ctf.py" bt2 "$T/ctf" "$T/rec.jsonl" || fail "ctf: babeltrace2"
else
	note "python3-bt2 is not installed: babeltrace2's reading not checked"
fi

# the source off: nothing of it anywhere
daemon_stop
daemon_start || fail "mtraced without the source"
sleep 1
"$CAT" -s "$SOCK" -f json --stats 300 --label-stats --time 2 >"$T/off.jsonl" 2>>"$T/cat.err"
"$PYTHON" "$CHECK" off "$T/off.jsonl" || fail "the source off"
pass "vCPU figures in every outlet"
