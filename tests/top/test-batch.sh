#!/bin/bash
# mtrace-top -b against the 2014 trace replayed by mtrace-replay: the label groups,
# thread counts and event counts it prints equal those computed from the fixture by
# fixture_model.py.  Two guests: one pass at the recorded pace, and three passes flat
# out (mtrace-replay's id shift must make each pass's threads new threads).
. "$MTRACE_SRC/tests/rig.sh"
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp

rig_start || fail "rig"
rig_guest mirage-once "$RIG_REPLAY" --hold --quiet "$FIXTURE" >/dev/null || fail "guest 1"
rig_guest mirage-x3 "$RIG_REPLAY" --hold --quiet --passes 3 --speed 0 "$FIXTURE" >/dev/null ||
	fail "guest 2"
# A guest whose labels and failure carry terminal control bytes: they print as '?'.
printf '%s\n' '((time 1.0)(op(Creates 0 1 Task)))' \
	'((time 1.1)(op(Label 1 "evil\027[2J\027]0;title\007 label")))' \
	'((time 1.2)(op(Creates 0 2 Task)))' \
	'((time 1.3)(op(Resolves 0 2("bad\nexn\027[31m"))))' >"$T/hostile.sexp"
rig_guest hostile "$RIG_REPLAY" --hold --quiet "$T/hostile.sexp" >/dev/null || fail "guest 3"
python3 "$HERE/topcheck.py" wait "$RIG_TOP" "$RIG_SOCK" hostile=5 || fail "hostile guest"
"$RIG_TOP" -b -n 1 -d 0.2 --finished -D hostile -s "$RIG_SOCK" >"$T/hostile.out" || fail "top on hostile"
"$RIG_TOP" -b -n 1 -d 0.2 -g -D hostile --socket "$RIG_SOCK" >>"$T/hostile.out" || fail "top -g on hostile"
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$T/hostile.out" &&
	fail "control bytes reached the output: $(od -c "$T/hostile.out" | head)"
grep -qF 'evil?[2J?]0;title? label' "$T/hostile.out" || fail "hostile label not shown: $(cat "$T/hostile.out")"
grep -qF '[bad?exn?[31m]' "$T/hostile.out" || fail "hostile failure not shown: $(cat "$T/hostile.out")"

# Columns sized to what they show: thread ids past 2^40 (as the demo's synthetic guest
# has) and a long domain name keep every table aligned.
printf '%s\n' '((time 1.0)(op(Creates 0 1099511628695 Task)))' \
	'((time 1.1)(op(Label 1099511628695 "big")))' \
	'((time 1.2)(op(Creates 1099511628695 7 Task)))' >"$T/big.sexp"
rig_guest a-rather-long-domain-name-x "$RIG_REPLAY" --hold --quiet "$T/big.sexp" >/dev/null ||
	fail "guest 4"
python3 "$HERE/topcheck.py" wait "$RIG_TOP" "$RIG_SOCK" a-rather-long-domain-name-x=4 ||
	fail "big-id guest"
"$RIG_TOP" -b -n 1 -d 0.2 --finished -D a-rather-long-domain-name-x -s "$RIG_SOCK" >"$T/big.out" ||
	fail "top on the big-id guest"
grep -q " 1099511628695 " "$T/big.out" || fail "big id not shown: $(cat "$T/big.out")"
python3 "$HERE/aligncheck.py" <"$T/big.out" || fail "columns misaligned: $(cat "$T/big.out")"

python3 "$HERE/topcheck.py" fixture "$RIG_TOP" "$RIG_SOCK" "$FIXTURE" mirage-once:1 mirage-x3:3 ||
	fail "batch output differs from the fixture"

# Each domain's clock on the host timeline (issue 37): CLOCK and CLK-UNC are the map in
# force, as mtraced tells mtrace-cat at subscribe -- the replays' realtime clock is
# dom0's own (same-kernel, 0ns); a load guest's monotonic clock comes by its clock-sync
# announcement and dom0's Xen time (xen-system-time, the two uncertainties added).
rig_guest clocked "$RIG_LOAD" --rate 200 --duration 60 >/dev/null || fail "guest 5"
python3 "$HERE/topcheck.py" clock "$RIG_TOP" "$RIG_SOCK" "$CAT" mirage-once=same-kernel \
	clocked=xen-system-time || fail "the domains' clock maps"
"$RIG_TOP" -b -n 1 -d 0.2 -s "$RIG_SOCK" >"$T/clock.out" || fail "top with the clocks"
python3 "$HERE/aligncheck.py" <"$T/clock.out" || fail "columns misaligned: $(cat "$T/clock.out")"
