#!/bin/bash
# The clock kinds a ring allows, in pairs, on one host timeline: five guests, one on
# each clock -- monotonic, realtime, xen (the simulated Xen's system time), tsc on the
# monotonic timeline and tsc on the xen timeline (tsc falls back to monotonic where the
# TSC is not invariant: said, and still a pair) -- play event-channel ping-pong, every
# guest with every other (10 channels, ROUNDS round trips each: 20 x ROUNDS pairs, each
# send traced before its notification, each receive after its wake-up).  One recording;
#   - mtrace-cat -f json: every send before its receive by more than the two maps'
#     uncertainties, and mtrace-cat's own pairs the same, all "ordered";
#   - Chrome JSON through Perfetto's importer (modelled): one base for all pids, nothing
#     clamped, every flow bound, one arrow per pair across domains, none backwards;
#   - CTF through babeltrace2: the domains interleaved in time order, each event at its
#     host time, every send before its receive;
#   - mtrace-web's page model (model.js in node, fed /events): one axis, every domain
#     on it, each end drawn at its host time, every send before its receive.
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-1000}
CLOCKS=(monotonic realtime xen tsc tsc-xen)
DOMS=(21 22 23 24 25)

sim_start
daemon_start
record matrix
for i in 0 1 2 3 4; do
	serve= join=
	for j in 0 1 2 3 4; do
		[ "$j" -gt "$i" ] && serve=$serve${serve:+,}${DOMS[$j]}
		[ "$j" -lt "$i" ] && join=$join${join:+,}${DOMS[$j]}
	done
	pp_guest "g${CLOCKS[$i]}" "${DOMS[$i]}" "${CLOCKS[$i]}" "$serve" "$join" "$ROUNDS"
done
for i in 0 1 2 3 4; do
	for j in 0 1 2 3 4; do
		[ "$j" -gt "$i" ] && pp_link "${DOMS[$i]}" "${DOMS[$j]}"
	done
done
SUMS=()
for c in "${CLOCKS[@]}"; do SUMS+=("$T/g$c.json"); done
wait_until 120 eval '[ -s "$T/gmonotonic.json" ] && [ -s "$T/grealtime.json" ] &&
	[ -s "$T/gxen.json" ] && [ -s "$T/gtsc.json" ] && [ -s "$T/gtsc-xen.json" ]' ||
	fail "the guests did not finish: $(cat "$T"/g*.log | tail -5)"
record_stop
note "guests' clocks: $(cat "${SUMS[@]}" | grep -o '"clock":[0-9]*' | tr '\n' ' ')"
"$CAT" -i "$T/matrix.mtr" -f json -O "$T/matrix.jsonl" || fail "-i -f json"
grep -q '"source":"unknown"' "$T/matrix.jsonl" && fail "a domain's clock map is unknown"

"$PYTHON" "$CHECK" pairs "$T/matrix.jsonl" $((20 * ROUNDS)) "${SUMS[@]}" || fail "pairs"
pass "mtrace-cat -f json: $((20 * ROUNDS)) sends before their receives"

"$CAT" -i "$T/matrix.mtr" -f chrome -O "$T/matrix-chrome.json" || fail "-f chrome"
"$PYTHON" "$CHECK" chrome "$T/matrix-chrome.json" "$T/matrix.jsonl" "${SUMS[@]}" ||
	fail "Chrome JSON"
pass "Chrome JSON: one base, nothing clamped, every pair an arrow forward"

"$CAT" -i "$T/matrix.mtr" -f ctf -O "$T/matrix-ctf" 2>"$T/ctf.err" || fail "-f ctf"
"$PYTHON" "$CHECK" ctf "$T/matrix-ctf" "$T/matrix.jsonl" "${SUMS[@]}" || fail "CTF"
pass "CTF through babeltrace2: the domains interleaved in true order"

web_model matrix "$(events_in matrix)"
"$PYTHON" "$CHECK" web "$T/matrix.page.json" "$T/matrix.jsonl" "${SUMS[@]}" || fail "page"
pass "mtrace-web's page model: one axis, every send before its receive"
daemon_stop
