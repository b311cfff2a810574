#!/bin/bash
# mtrace-load --labels-from FILE: real label strings (one a line, hostile bytes
# included) reach a client as the guest wrote them (what is not UTF-8 as '?'), and the
# guest's summary counts each under the string a reader shows; bad files are refused.
. "$MTRACE_SRC/tests/rig.sh"
sim_start
daemon_start
cd "$T" || exit 1
printf '%s\n' 'plain' 'with space' $'esc\e[31mred\e[0m' $'bad\xff\xfeutf8' 'größe' \
	'quote"back\slash' $'cr\rtab\tbell\a' '' "$(printf 'L%.0s' {1..300})" >"$T/labels"

"$CAT" -s "$SOCK" -f json -o label -D lf >"$T/cat.json" 2>"$T/cat.err" &
PIDS+=($!)
wait_until 10 grep -q "client.*mtrace-cat\|mtrace-cat" "$DLOG" || fail "mtrace-cat did not connect"
guest lf -- "$LOAD" --labels-from "$T/labels" -n 1500 --rate 3000 -p 64 --wait-reader 10 --summary "$T/sum.json" \
	>/dev/null
wait_until 30 test -s "$T/sum.json" || fail "no summary from mtrace-load"
"$PYTHON" - "$T/sum.json" "$T/cat.json" "$T/labels" <<'PY' || fail "labels differ"
import collections, json, sys, time
summ = json.load(open(sys.argv[1]))["labels"]
want = sum(summ.values())
deadline = time.time() + 20
while True:
    got = collections.Counter()
    for line in open(sys.argv[2], encoding="utf-8"):
        e = json.loads(line)
        if e.get("op") == "label":
            got[e["str"]] += 1
    if sum(got.values()) >= want or time.time() > deadline:
        break
    time.sleep(0.2)
lines = [l for l in open(sys.argv[3], "rb").read().split(b"\n") if l]
shown = {l.decode("utf-8", "replace").replace("\ufffd", "?") for l in lines}
if set(summ) != shown or len(summ) != 8:
    sys.exit("summary labels %r, file's %r" % (sorted(summ), sorted(shown)))
if dict(got) != summ:
    sys.exit("client saw %r, summary says %r" % (dict(got), summ))
print("ok: %d labels, %d label events, as written" % (len(summ), want))
PY

refused() {	# WHAT FILE: mtrace-load refuses it with status 2, saying why
	local rc=0
	"$LOAD" --labels-from "$2" -n 10 >/dev/null 2>"$T/refused.err" || rc=$?
	[ "$rc" = 2 ] || fail "--labels-from $1: status $rc, not 2"
	grep -q "mtrace-load: .*$1" "$T/refused.err" || fail "--labels-from $1: $(cat "$T/refused.err")"
}
printf 'a\0b\n' >"$T/nul"
refused "NUL byte" "$T/nul"
seq 65 | sed 's/^/l/' >"$T/many"
refused "more than 64 labels" "$T/many"
printf '\n\n' >"$T/empty"
refused "no labels" "$T/empty"
refused "No such file" "$T/missing"
pass "labels-from"
