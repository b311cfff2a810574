#!/bin/bash
# The outlets agree (docs/figures.md): one recording, and the same created, pending,
# ended and labelled threads and the same per-label count/current/live from
#   mtraced's Stats (mtrace-cat -f json), the rules applied to that JSON's events,
#   mtrace-exporter's /metrics, mtrace-web's page model (model.js in node, fed a capture
#   of /events), mtrace-cat -f chrome and -f ctf (babeltrace2's reader) of the recording,
# for
#  1. the shipped 2014 MirageOS trace replayed (859 created, 133 pending, 726 ended,
#     198 labelled: held to those too);
#  2. an mtrace-load capture (two rings, ids reused, failures, labels).
# The guests hold their domains once written (--hold) so that every outlet reads the
# same settled state; outlets_agree.py prints what differs.
. "$MTRACE_SRC/tests/rig.sh"

command -v node >/dev/null || { echo "SKIP: node is not installed" >&2; exit 77; }
"$PYTHON" -c 'import bt2' 2>/dev/null ||
	{ echo "SKIP: python3-bt2 is not installed (scripts/bootstrap installs it)" >&2; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl is not installed" >&2; exit 77; }

sim_start
daemon_start

"$EXPORTER" -s "$SOCK" -l 127.0.0.1:0 -i 100 --max-labels 10000 2>"$T/exporter.log" &
PIDS+=($!)
"$WEB" -s "$SOCK" -l 127.0.0.1:0 --no-token >"$T/web.out" 2>"$T/web.err" &
PIDS+=($!)
url() { sed -n "$2" "$1"; }
wait_until 10 grep -q 'listening on http' "$T/exporter.log" || fail "mtrace-exporter did not start"
EXP_URL=$(url "$T/exporter.log" 's|^mtrace-exporter: listening on \(http://[^ ]*/metrics\)$|\1|p')
wait_until 10 grep -q 'serving http' "$T/web.out" || fail "mtrace-web did not start"
WEB_URL=$(url "$T/web.out" 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p')

# settled NAME DOMID: mtrace-cat's last two Stats of the domain name the same figures
# and the exporter's scrape the same events: every reader has read everything
last_stats() {
	grep '"type":"stats"' "$T/$1.jsonl" | tail -"$3" | head -1 | "$PYTHON" -c '
import json, sys
d = json.loads(sys.stdin.read() or "{}")
x = [s for s in d.get("domains", []) if s["domid"] == int(sys.argv[1])]
print(x and "%(events)d %(threads_total)d %(threads_ended)d %(threads_labelled)d" % x[0] or "none")' "$2"
}
settled() {
	local a b m
	a=$(last_stats "$1" "$2" 1)
	b=$(last_stats "$1" "$2" 2)
	[ "$a" != none ] && [ "$a" = "$b" ] && [ "${a%% *}" -ge "$3" ] || return 1
	curl -sf "$EXP_URL" >"$T/$1.metrics" || return 1
	m=$(grep "^mtrace_domain_events_total{.*domid=\"$2\"" "$T/$1.metrics" | awk '{s += $2} END {print s + 0}')
	[ "$m" = "${a%% *}" ]
}

# run NAME DOMID MIN_EVENTS -- GUEST...: capture, settle, every outlet's figures
run() {
	local n=$1 dom=$2 min=$3 cat_pid curl_pid
	shift 4
	"$CAT" -s "$SOCK" -f json --stats 100 --label-stats -w "$T/$n.mtr" \
		>"$T/$n.jsonl" 2>"$T/$n.cat.err" &
	cat_pid=$!
	PIDS+=($cat_pid)
	curl -sN "${WEB_URL}events" >"$T/$n.sse" 2>/dev/null &
	curl_pid=$!
	PIDS+=($curl_pid)
	wait_until 10 grep -q 'event: hello' "$T/$n.sse" || fail "$n: no hello on /events"
	wait_until 10 grep -q '"type":"stats"' "$T/$n.jsonl" || fail "$n: mtrace-cat saw no stats"
	guest "$n" --domid "$dom" -- "$@" >/dev/null
	wait_until 60 settled "$n" "$dom" "$min" || fail "$n: the figures did not settle: $(last_stats "$n" "$dom" 1)"
	kill -INT "$cat_pid"
	wait_pid "$cat_pid" 10 || fail "$n: mtrace-cat exited $?"
	kill -TERM "$curl_pid"
	wait "$curl_pid" 2>/dev/null
	"$PYTHON" -c 'import sys; d=open(sys.argv[1],"rb").read(); open(sys.argv[1],"wb").write(d[:d.rfind(b"\n\n")+2])' "$T/$n.sse"
	"$CAT" -i "$T/$n.mtr" -f chrome -O "$T/$n-chrome.json" || fail "$n: -f chrome"
	"$CAT" -i "$T/$n.mtr" -f ctf -O "$T/$n-ctf" || fail "$n: -f ctf"
	node "$HERE/page-figures.js" "$T/$n.sse" "${MODEL_JS:-$MTRACE_SRC/client/web/page/model.js}" \
		>"$T/$n.page.json" || fail "$n: model.js"
	"$SIMXEN" --dir "$SIM" destroy "$dom" >/dev/null || fail "destroy $n"
	"$PYTHON" "$HERE/outlets_agree.py" "$dom" --stats "$T/$n.jsonl" --metrics "$T/$n.metrics" \
		--chrome "$T/$n-chrome.json" --ctf "$T/$n-ctf" --page "$T/$n.page.json" \
		${EXPECT:+--expect "$EXPECT"} >"$T/$n.agree" || { cat "$T/$n.agree"; fail "$n: the outlets differ"; }
	cat "$T/$n.agree"
}

# 1. the 2014 trace (3915 events and ring_start)
EXPECT=859,133,726,198 run mirage 6 3916 -- "$REPLAY" --speed 10 --hold \
	"$MTRACE_SRC/data/mirage/log-x86.sexp"
pass "the 2014 trace: every outlet the same figures"

# 2. mtrace-load: two rings of 6000 events, failures, 8 labels, ids reused
EXPECT= run load 5 12000 -- "$LOAD" --wait-reader 10 --hold --rings 2 -n 6000 --rate 30000 --fail 20 \
	--labels 8 -c 3
pass "an mtrace-load capture: every outlet the same figures"
daemon_stop
