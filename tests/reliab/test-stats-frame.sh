#!/bin/bash
# A guest with a large label table makes a Stats that would pass the 4 MiB frame: the
# client still gets its Stats, cut to fit, and told how much was left out
# (labels_omitted); the per-guest caps (256 counters, 256 failure strings) count what
# they drop, and clients see it (counters_dropped, failures_dropped).  Before: "cannot
# encode" in the log and no statistics at all for every --label-stats client; the
# drop counts were never sent.
. "$MTRACE_SRC/tests/rig.sh"
HC="$RELIAB_DIR/hostile-client.py"
: "${TABLE_GUEST:?}"

sim_start
daemon_start --set max_labels_per_guest=65536
A=$(guest tables -- "$TABLE_GUEST" tables 20000 250)
EA=$(json_events tables)
wait_field "$A" events "$EA" 30
snap
[ "$(field "$A" lost)" = 0 ] || fail "the guest lost events: the test proves nothing"
"$PYTHON" "$HC" stats "$SOCK" labels >"$T/stats.out" || fail "no Stats: $(cat "$T/stats.out")"
cat "$T/stats.out"
read -r bytes labels omitted < <(sed -n \
	's/^stats bytes=\([0-9]*\) .* labels=\([0-9]*\) .*labels_omitted=\([0-9]*\) .*/\1 \2 \3/p' \
	"$T/stats.out")
[ "$bytes" -le 4194304 ] || fail "Stats of $bytes bytes"
[ "$omitted" -gt 0 ] && [ $((labels + omitted)) = 20000 ] ||
	fail "$labels labels + $omitted omitted, expected 20000 in all"
grep -q "^domain $A labels_dropped=0 counters_dropped=44 failures_dropped=44 counters=256" \
	"$T/stats.out" || fail "caps not reported as documented"
grep -q "cannot encode" "$DLOG" && fail "the daemon could not encode a message"
alive
daemon_stop
