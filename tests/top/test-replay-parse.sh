#!/bin/bash
# mtrace-replay's trace reader: the fixture parses whole (counts per op equal those of
# fixture_model.py's separate parser), and hostile input — garbage, unbalanced or deep
# nesting, bad escapes, NUL, overlong lines, binary — is counted and reported line by
# line, never fatal.  No Xen needed: --check parses only.
. "$MTRACE_SRC/tests/rig.sh"
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp

out=$("$RIG_REPLAY" --check "$FIXTURE") || fail "--check on the fixture"
python3 - "$FIXTURE" "$out" "$HERE" <<'PY' || fail "fixture counts differ"
import os, sys
sys.path.insert(0, sys.argv[3])
import fixture_model
m = fixture_model.model(sys.argv[1])
got = dict(l.split() for l in sys.argv[2].split('\n'))
ops = m['ops']
want = {
    'events': m['trace_events'], 'bad': 0, 'lines': m['trace_events'],
    'creates': ops.get('Creates', 0), 'read': ops.get('Reads', 0),
    'becomes': ops.get('Becomes', 0), 'label': ops.get('Label', 0),
    'switch': ops.get('Switch', 0), 'gc': ops.get('Gc', 0),
    'increase': ops.get('Increases', 0),
    'fulfills': sum(1 for l in open(sys.argv[1]) if 'Resolves' in l and l.rstrip().endswith('())))')),
}
want['fails'] = ops.get('Resolves', 0) - want['fulfills']
bad = {k: (int(got.get(k, -1)), v) for k, v in want.items() if int(got.get(k, -1)) != v}
if bad:
    print('mismatch (got, want):', bad, file=sys.stderr)
    sys.exit(1)
print('fixture:', ' '.join('%s=%s' % kv for kv in sorted(got.items())))
PY

# Twelve bad lines among nine good ones; the good ones must still come through.  (The
# last: a binary line that starts with a NUL byte, read as blank and skipped before.)
{
	echo '((time 1.000001)(op(Label 3 "a \"q\" \\ \n \065 \x41 end")))'
	echo '((time 1.5)(op(Label 3 "unterminated)))'
	echo '((time 1.6)(op(Creates 3 4 Task)))'
	echo '((time 1.7)(op(Frobnicates 3)))'
	echo '((time 1.8)(op(Resolves 3 4("Failure(\"x\")"))))'
	printf '%0.s(' $(seq 100); echo
	echo '((time 1.9)(op(Gc 0.25)))'
	echo '((time x)(op(Switch 1)))'
	echo '((op(Increases 4 bytes 100))(time 2.0)) ; fields in any order, a comment'
	echo '((time 2.1)(op(Resolves 4 5 (a b))))'
	echo '((time 2.2)(op(Creates 4 5)))'
	echo ')('
	echo '((time 2.3)(op(Switch -1)))'
	echo '((time 2.4)(op(Label 3 "\999")))'
	echo '((time 2.5)(op(Label 3 "nul \000 inside")))'
	echo '((time 2.6)(op(Reads 3 -7)))'
	head -c 70000 /dev/zero | tr '\0' 'x'; echo
	echo '((time 2.7)(op(Becomes 4 5)))'
	head -c 3000 /dev/urandom | tr -d '\n'; echo
	echo '((time 2.8)(op(Resolves 5 5())))'
	printf '\000((time 2.9)(op(Switch 2)))\n'
} >"$T/hostile.sexp"
out=$("$RIG_REPLAY" --check "$T/hostile.sexp" 2>"$T/hostile.err") || fail "--check on hostile input"
for want in "events 9" "bad 12" "lines 21" "label 1" "creates 2" "fails 1" "fulfills 1" "gc 1" \
	    "increase 1" "switch 1" "becomes 1"; do
	grep -qx "$want" <<<"$out" || fail "hostile: want '$want' in: $out"
done
# Each bad line is reported with its number.
for n in 2 4 6 8 10 12 14 15 16 17 19 21; do
	grep -q "hostile.sexp:$n: bad event" "$T/hostile.err" || fail "line $n not reported: $(cat "$T/hostile.err")"
done
# What the good lines decode to: escapes, the exn of a failure, the two-argument
# Creates (type Unknown = 99), Gc seconds in ns, thread -1, exact microsecond times.
"$RIG_REPLAY" --dump "$T/hostile.sexp" >"$T/dump.txt" 2>/dev/null || fail "--dump"
for want in \
	'1000001000 label 3 0 0 "a \"q\" \\ \x0a A A end"' \
	'1600000000 creates 3 4 1' \
	'1800000000 fails 3 4 0 "Failure(\"x\")"' \
	'1900000000 gc -1 250000000 0' \
	'2000000000 increase 4 100 0 "bytes"' \
	'2200000000 creates 4 5 99' \
	'2300000000 switch -1 0 0' \
	'2700000000 becomes 4 5 0' \
	'2800000000 fulfills 5 5 0'; do
	grep -qxF -- "$want" "$T/dump.txt" || { cat "$T/dump.txt" >&2; fail "--dump lacks: $want"; }
done
[ "$(wc -l <"$T/dump.txt")" -eq 9 ] || fail "--dump: want 9 events"

# A trace with nothing good in it is an error for a replay (nothing to do), not for --check.
printf 'garbage\n(\n' >"$T/none.sexp"
"$RIG_REPLAY" --check "$T/none.sexp" >/dev/null 2>&1 || fail "--check on all-bad input"
MTRACE_SIM_DIR=$T/nosim "$RIG_REPLAY" "$T/none.sexp" 2>"$T/none.err"
[ $? -eq 1 ] && grep -q "no events" "$T/none.err" || fail "all-bad trace: $(cat "$T/none.err")"
"$RIG_REPLAY" --check "$T/missing.sexp" 2>"$T/missing.err"
[ $? -eq 1 ] && grep -q "missing.sexp" "$T/missing.err" || fail "missing file"
"$RIG_REPLAY" --speed -1 "$FIXTURE" 2>/dev/null; [ $? -eq 2 ] || fail "--speed -1"
"$RIG_REPLAY" --pages 3 "$FIXTURE" 2>/dev/null; [ $? -eq 2 ] || fail "--pages 3"
echo "ok: hostile input: $(tr '\n' ' ' <<<"$out")"
