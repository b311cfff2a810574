#!/bin/bash
# mtrace-cat -f folded rendered by two real flame-graph renderers: flamegraph.pl (the
# copy Debian 12 ships in libdevel-nytprof-perl; there is no package of its own) and
# speedscope (npm, pinned in tests/web/package-lock.json) in chromium-headless-shell.
# Three folded files from the real mtraced: sites-guest's site paths, the replayed
# 2014 MirageOS trace's label paths, and the seed's ten parallel sleeps weighted by
# pending time.  What flamegraph.pl draws (every box: its path from the root and its
# weight, from the SVG) and what speedscope's sandwich view shows (every frame's total
# and self weight) must be, for the sites, what sites-guest's own account of its
# threads says; for the 2014 trace, what the folded file says, its weights adding up to
# the trace's threads; for the sleeps, the parent weighing its own time plus every
# child's in full (11 sleeps' worth, not 1).  A guest whose labels are markup and
# script written for those renderers: each drawn as its text, nothing of it run.
. "$(dirname "$0")/../rig.sh"
: "${CAT:?}" "${REPLAY:?}" "${FIXTURE:?}" "${SITES_GUEST:?}"
skip() { echo "SKIP: $*"; exit 77; }
NM=$MTRACE_SRC/tests/web/node_modules
FLAMEGRAPH=/usr/share/perl5/Devel/NYTProf/flamegraph.pl
[ -f "$FLAMEGRAPH" ] || skip "flamegraph.pl is not installed (scripts/bootstrap: libdevel-nytprof-perl)"
[ -x /usr/bin/chromium-headless-shell ] ||
	skip "chromium-headless-shell is not installed (scripts/bootstrap installs it)"
[ -f "$NM/speedscope/package.json" ] && [ -f "$NM/puppeteer-core/package.json" ] ||
	skip "speedscope or puppeteer-core is not installed (scripts/bootstrap: npm ci in tests/web)"
command -v node >/dev/null || skip "node is not installed"

. "$HERE/lib.sh"
sites_debug_dir "$T/debug"

sim_start
printf 'debug_dirs = %s/debug\n' "$T" >"$T/d.conf"
daemon_start -c "$T/d.conf"
"$CAT" -s "$SOCK" -D a -f folded --frames site --time 30 >"$T/sites.folded" 2>"$T/a.err" &
FA=$!
"$CAT" -s "$SOCK" -D m -f folded --frames label --time 30 >"$T/2014.folded" 2>"$T/m.err" &
FM=$!
PIDS+=("$FA" "$FM")
# the seed's example: main creates 10 sleeps at t=1 s, all resolve at t=2 s, main too;
# played 10 times the recorded pace, so 0.1 s each on the guest's (rebased) clock
{
	echo '((time 1.0)(op(Creates 0 1 Task)))'
	echo '((time 1.0)(op(Label 1 main)))'
	for i in $(seq 2 11); do
		echo "((time 1.0)(op(Creates 1 $i Task)))"
		echo "((time 1.0)(op(Label $i sleep)))"
	done
	for i in $(seq 2 11) 1; do echo "((time 2.0)(op(Resolves 0 $i())))"; done
} >"$T/sleeps.sexp"
"$CAT" -s "$SOCK" -D s -f folded --frames label --weight pending --time 30 >"$T/sleeps.folded" \
	2>"$T/s.err" &
FS=$!
PIDS+=("$FS")
D=100000000
printf '{"subset": true, "frames": {"main": [%d, %d], "sleep": [%d, %d]}, "nodes": %s}\n' \
	$((11 * D)) $D $((10 * D)) $((10 * D)) \
	"{\"(Unknown);main\": $((11 * D)), \"(Unknown);main;sleep\": $((10 * D))}" >"$T/sleeps.json"
# labels written against the renderers: flamegraph.pl quotes a name into a JavaScript
# string of its SVG (quotes escaped, backslashes not), speedscope into its DOM
cat >"$T/hostile.sexp" <<'EOF'
((time 1.0)(op(Creates 0 1 Task)))
((time 1.0)(op(Label 1 "x\\')+(window.pwned=1)//")))
((time 1.0)(op(Creates 0 2 Task)))
((time 1.0)(op(Label 2 "<img src=x onerror=window.pwned=2>")))
((time 1.0)(op(Creates 0 3 Task)))
((time 1.0)(op(Label 3 "\"q&amp;b")))
((time 1.0)(op(Creates 0 4 Task)))
((time 1.0)(op(Label 4 "</title><script>window.pwned=4</script>")))
EOF
"$CAT" -s "$SOCK" -D h -f folded --frames label --time 30 >"$T/hostile.folded" 2>"$T/h.err" &
FH=$!
PIDS+=("$FH")
# as the folded format must carry them: ';' as ':', the backslash as '/'
"$PYTHON" - "$T/hostile.json" <<'PY'
import json, sys
names = ["x/')+(window.pwned=1)//", "<img src=x onerror=window.pwned=2>", '"q&amp:b',
         "</title><script>window.pwned=4</script>"]
nodes = {"(Unknown)": 5}
nodes.update({"(Unknown);" + n: 1 for n in names})
frames = {"(Unknown)": [5, 1]}
frames.update({n: [1, 1] for n in names})
json.dump({"frames": frames, "nodes": nodes}, open(sys.argv[1], "w"))
PY
sleep 0.3
H=$(guest h --preserve-poweroff -- "$REPLAY" --hold --quiet --speed 0 "$T/hostile.sexp")
S=$(guest s --preserve-poweroff -- "$REPLAY" --hold --quiet --speed 10 "$T/sleeps.sexp")
A=$(guest a --preserve-poweroff -- "$SITES_GUEST" --linger 20)
M=$(guest m --preserve-poweroff -- "$REPLAY" --hold --quiet --speed 0 "$FIXTURE")
"$REPLAY" --dump "$FIXTURE" 2>/dev/null >"$T/dump"
THREADS=$("$PYTHON" "$HERE/trace_threads.py" "$T/dump")
wait_field "$M" events $(($(wc -l <"$T/dump") + 1)) 20 # + ring_start
wait_field "$S" events 34 20 # 11 creates, 11 labels, 11 resolves, ring_start
wait_field "$H" events 9 20
wait_until 20 sites_ready a "$A" || fail "the daemon never had all of sites-guest's sites"
sleep 0.5 # a Stats with every site resolved has reached the folded clients
kill -INT "$FA" "$FM" "$FS" "$FH"
wait "$FH" || fail "mtrace-cat -f folded of the hostile guest: $(cat "$T/h.err")"
wait "$FS" || fail "mtrace-cat -f folded --weight pending: $(cat "$T/s.err")"
wait "$FA" || fail "mtrace-cat -f folded --frames site: $(cat "$T/a.err")"
wait "$FM" || fail "mtrace-cat -f folded --frames label: $(cat "$T/m.err")"
"$PYTHON" "$HERE/flame_expect.py" guest "$T/a.log" "$T/sites.json" || fail "expectation"
"$PYTHON" "$HERE/flame_expect.py" folded "$T/2014.folded" "$T/2014.json" "$THREADS" ||
	fail "2014 folded totals"
for f in sites 2014 sleeps hostile; do
	perl "$FLAMEGRAPH" --minwidth 0 --countname "$([ $f = sleeps ] && echo ns || echo threads)" \
		"$T/$f.folded" >"$T/$f.svg" 2>"$T/$f.svg.err" || fail "flamegraph.pl: $(cat "$T/$f.svg.err")"
done
"$PYTHON" "$HERE/check_flamegraph_svg.py" "$T/sites.svg" "$T/sites.json" "$T/2014.svg" \
	"$T/2014.json" "$T/sleeps.svg" "$T/sleeps.json" "$T/hostile.svg" "$T/hostile.json" ||
	fail "flamegraph.pl does not draw what the folded stacks should be"
node "$HERE/flame.mjs" "$T/sites.folded" "$T/sites.json" "$T/2014.folded" "$T/2014.json" \
	"$T/sleeps.folded" "$T/sleeps.json" "$T/hostile.folded" "$T/hostile.json" \
	--svg "$T/sites.svg" "$T/2014.svg" "$T/hostile.svg" ||
	fail "speedscope does not show what the folded stacks should be"
daemon_stop
