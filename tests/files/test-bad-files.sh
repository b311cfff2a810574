#!/bin/bash
# Recordings that are not whole: mtrace-cat -i names what is wrong and where (the byte
# offset), exits 1, never crashes, for every output format.
. "$MTRACE_SRC/tests/rig.sh"
seed=$HERE/fuzz-corpus/rec-mixed
[ -s "$seed" ] || fail "no seed recording $seed"
size=$(stat -c %s "$seed")

expect() {	# file pattern
	local f=$1 pat=$2 fmt rc
	for fmt in json chrome ctf; do
		rm -rf "$T/out"
		"$CAT" -i "$f" -f "$fmt" -O "$T/out" 2>"$T/err.txt" >/dev/null
		rc=$?
		[ $rc -eq 1 ] || fail "$(basename "$f") -f $fmt: exit $rc, not 1 ($(cat "$T/err.txt"))"
		grep -q -E "$pat" "$T/err.txt" ||
			fail "$(basename "$f") -f $fmt: '$(cat "$T/err.txt")' does not match '$pat'"
	done
	echo "  $(basename "$f"): $(head -1 "$T/err.txt")"
}

# the whole seed reads
"$CAT" -i "$seed" -f count --summary 2>"$T/sum.txt" || fail "the seed does not read"

: >"$T/empty"
expect "$T/empty" "empty file"
printf 'hello world, not a recording' >"$T/text"
expect "$T/text" "bad magic at offset 0"
head -c 12 "$seed" >"$T/short-header"
expect "$T/short-header" "truncated header at offset 12"
{ head -c 8 "$seed"; printf '\002\000'; tail -c +11 "$seed"; } >"$T/version2"
expect "$T/version2" "recording version 2 \(at offset 8\) is not supported"
# cut inside a frame's message, then inside a frame's length
head -c $((size - 7)) "$seed" >"$T/truncated"
expect "$T/truncated" "truncated frame at offset [0-9]+ \([0-9]+ bytes announced, [0-9]+ left"
{ cat "$seed"; printf '\377\377'; } >"$T/cut-length"
expect "$T/cut-length" "truncated frame length at offset $size "
{ cat "$seed"; printf '\377\377\377\377\377\377\377\377\377\377\001'; } >"$T/bad-length"
expect "$T/bad-length" "bad frame length at offset $size$"
{ cat "$seed"; printf '\377\377\377\377\017'; } >"$T/huge"
expect "$T/huge" "frame at offset $size announces [0-9]+ bytes, more than"
{ cat "$seed"; printf '\005\377\377\377\377\377'; } >"$T/garbage"
expect "$T/garbage" "the 5-byte frame at offset $size does not decode"
pass "bad recordings: clear errors with offsets, exit 1, for every format"

# Hostile messages in a whole file (make_hostile.py): strings that are not UTF-8,
# control bytes, references past the dictionary, unknown ops, extreme ids and times,
# unequal columns.  Every format still writes what its readers take.
"$PYTHON" "$HERE/make_hostile.py" "$T/hostile.mtr"
cmp "$T/hostile.mtr" "$HERE/fuzz-corpus/rec-hostile" || fail "the corpus seed rec-hostile is stale"
"$CAT" -i "$T/hostile.mtr" -f json -O "$T/h.jsonl" 2>"$T/h.err" || fail "hostile: -f json"
grep -q "malformed event batch" "$T/h.err" || fail "hostile: unequal columns not refused"
"$PYTHON" -c '
import json, sys
n = 0
for line in open(sys.argv[1], "rb"):
    json.loads(line.decode("utf-8"))
    n += 1
assert n > 40, n
' "$T/h.jsonl" || fail "hostile: JSON lines do not parse"
"$CAT" -i "$T/hostile.mtr" -f text -O "$T/h.txt" 2>/dev/null || fail "hostile: -f text"
"$PYTHON" -c '
import sys
bad = {b for b in open(sys.argv[1], "rb").read() if (b < 0x20 and b != 10) or b >= 0x7f}
sys.exit("text carries bytes %s" % sorted(bad) if bad else 0)
' "$T/h.txt" || fail "hostile: text output"
"$CAT" -i "$T/hostile.mtr" -f chrome -O "$T/h.json" 2>/dev/null || fail "hostile: -f chrome"
"$PYTHON" "$HERE/check_chrome.py" "$T/h.json" "$T/h.jsonl" || fail "hostile: chrome"
"$CAT" -i "$T/hostile.mtr" -f ctf -O "$T/h.ctf" 2>"$T/hctf.err" || fail "hostile: -f ctf"
grep -q "4 events of ops CTF has no type for" "$T/hctf.err" || fail "hostile: unknown ops not counted"
if command -v babeltrace2 >/dev/null; then
	babeltrace2 "$T/h.ctf" >"$T/h.bt" 2>"$T/h.bterr" || fail "hostile: babeltrace2 exited $?"
	[ -s "$T/h.bterr" ] && { head "$T/h.bterr"; fail "hostile: babeltrace2 wrote to stderr"; }
	[ "$(wc -l <"$T/h.bt")" -eq 42 ] || fail "hostile: babeltrace2 prints $(wc -l <"$T/h.bt") lines, not one for each of 42 events"
fi
for f in "$T/h.ctf"/dom*; do
	"$PYTHON" "$HERE/check_ctf.py" mtv-events "$f" >/dev/null || fail "hostile: $f"
done
pass "hostile recording: JSON, text, Chrome, CTF all stay well-formed"
