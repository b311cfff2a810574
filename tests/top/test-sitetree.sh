#!/bin/bash
# mtrace-top's creation tree by site (-c, key c) against sites-guest's own account of
# who created whom: every edge of the site graph one line under its parent site with
# its count, the per-site figures, the cycles (a site creating its own site's threads,
# two sites creating each other's) marked and not walked again, manual labels apart
# from the automatic @site ones; in batch mode and on a real terminal (tmux), folded
# by level (-L, keys 1-9 and *) and by site (the cursor, - and +); next to
# sites-hostile, whose garbage site names print safely and whose 1024 sites and their
# edges end in a bounded tree.
. "$MTRACE_SRC/tests/rig.sh"
: "${TOP:?}" "${CAT:?}" "${SITES_GUEST:?}" "${SITES_HOSTILE:?}"

. "$MTRACE_SRC/tests/sites/lib.sh"
sites_debug_dir "$T/debug"

sim_start
printf 'debug_dirs = %s/debug\nmax_sites_per_guest = 1024\n' "$T" >"$T/d.conf"
daemon_start -c "$T/d.conf"
A=$(guest a --preserve-poweroff -- "$SITES_GUEST" --linger 60)
H=$(guest h --preserve-poweroff -- "$SITES_HOSTILE" --linger 60)
wait_until 20 sites_ready a "$A" || fail "the daemon never had all of sites-guest's sites"
note "sites-guest's sites resolved"
check() { # WHAT FILE [--depth N]
	local what=$1 f=$2
	shift 2
	"$PYTHON" "$HERE/sitetree_check.py" "$T/a.log" "$T/a.stats" "$f" a "$@" ||
		{ cat "$f"; fail "$what"; }
}
"$TOP" -b -n 1 -d 0.2 -X -D a -S "$SOCK" >"$T/tree.out" || fail "mtrace-top -X"
check "mtrace-top -X" "$T/tree.out"
"$TOP" -b -n 1 -d 0.2 --site-tree --depth 1 -D a -S "$SOCK" >"$T/tree1.out" || fail "mtrace-top -X -L 1"
check "mtrace-top -X --depth 1" "$T/tree1.out" --depth 1
grep -q 'view site-tree (depth 1)' "$T/tree1.out" || fail "the depth is not on the header"
note "batch: the tree and its depth limit as the guest made them"

# On a terminal: c switches to it, 1 folds to a level, * unfolds, the cursor with - and
# + folds and unfolds one site, h names it.
L=mtrace-top-sitetree-$$
TMUX_CMD=(tmux -L "$L" -f "$T/tmux.conf")
test_cleanup() { "${TMUX_CMD[@]}" kill-server >/dev/null 2>&1; }
printf 'set -g remain-on-exit on\nset -g status off\n' >"$T/tmux.conf"
"${TMUX_CMD[@]}" new-session -d -s top -x 200 -y 50 \
	"TERM=xterm $TOP -s $SOCK -d 0.2 -D a; echo \$? >$T/top.status" || fail "tmux"
# until_screen SECONDS WHAT CMD...: capture the screen until CMD accepts it
until_screen() {
	local secs=$1 what=$2
	shift 2
	for _ in $(seq $((secs * 5))); do
		"${TMUX_CMD[@]}" capture-pane -p -t top >"$T/screen"
		"$@" >"$T/screen.why" 2>&1 && return 0
		sleep 0.2
	done
	cat "$T/screen.why" "$T/screen"
	fail "on the terminal: $what"
}
keys() { "${TMUX_CMD[@]}" send-keys -t top "$@"; }
until_screen 10 "first screen" grep -q 'view threads' "$T/screen"
keys c
until_screen 10 "key c: the site tree" "$PYTHON" "$HERE/sitetree_check.py" "$T/a.log" \
	"$T/a.stats" "$T/screen" a
grep -q 'c site tree' "$T/screen" || fail "the bottom line does not name key c"
keys 1
until_screen 10 "key 1: one level" "$PYTHON" "$HERE/sitetree_check.py" "$T/a.log" \
	"$T/a.stats" "$T/screen" a --depth 1
grep -q 'view site-tree (depth 1)' "$T/screen" || fail "key 1: not on the header"
keys '*'
until_screen 10 "key *: every level" "$PYTHON" "$HERE/sitetree_check.py" "$T/a.log" \
	"$T/a.stats" "$T/screen" a
# the cursor to the first site with children, then - folds it and + unfolds it
read -r DOWN SITE < <(HERE=$HERE "$PYTHON" - "$T/screen" <<'PY'
import sys
sys.path.insert(0, __import__("os").environ["HERE"])
import sitetree_check
rows = sitetree_check.parse_screen(open(sys.argv[1]).read(), "a")
i = next(i for i in range(len(rows) - 1) if rows[i + 1]["depth"] > rows[i]["depth"])
print(i, rows[i]["name"][1:])
PY
)
[ -n "$SITE" ] || fail "no site with children on the screen"
# in one burst, as a quick typist's keys reach it before it draws again
downs=()
for _ in $(seq "$DOWN"); do downs+=(Down); done
keys "${downs[@]}" -
until_screen 10 "key -: $SITE folded" "$PYTHON" "$HERE/sitetree_check.py" "$T/a.log" \
	"$T/a.stats" "$T/screen" a --fold "$SITE"
grep -q 'view site-tree (1 folded)' "$T/screen" || fail "key -: not on the header"
keys +
until_screen 10 "key +: $SITE unfolded" "$PYTHON" "$HERE/sitetree_check.py" "$T/a.log" \
	"$T/a.stats" "$T/screen" a
keys h
until_screen 10 "help names the site tree" grep -q 'creation tree by site' "$T/screen"
keys x q
for _ in $(seq 50); do [ -s "$T/top.status" ] && break; sleep 0.1; done
[ "$(cat "$T/top.status" 2>/dev/null)" = 0 ] || fail "mtrace-top did not exit 0 on q"
note "terminal: c, 1, *, up/down with - and +, h, q"

# The hostile guest: its garbage site names print safely, its tree is bounded.
for _ in $(seq 300); do
	tail -c 3 "$T/h.log" 2>/dev/null | grep -q '}' && break
	sleep 0.1
done
"$TOP" -b -n 1 -d 0.2 -X -D h -S "$SOCK" >"$T/h.out" || fail "mtrace-top -X on the hostile guest"
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$T/h.out" &&
	fail "control bytes reached the output: $(LC_ALL=C grep -n "$(printf '[\001-\010\013-\037\177]')" "$T/h.out" | od -c | head)"
grep -qF '@?[2J?]0;owned? escapes' "$T/h.out" || fail "the escape-sequence site is not shown as text"
"$CAT" -s "$SOCK" -D "$H" --no-events --stats 100 --site-stats -n 1 -f json >"$T/h.stats" ||
	fail "mtrace-cat on the hostile guest"
# on a terminal of 15 lines: the cursor driven past the bottom stays on the last row
# shown, selected, while the tree is drawn again and again
"${TMUX_CMD[@]}" new-session -d -s small -x 120 -y 15 \
	"TERM=xterm $TOP -s $SOCK -d 0.2 -D h; echo \$? >$T/small.status" || fail "tmux"
small() { "${TMUX_CMD[@]}" capture-pane -e -p -t small >"$T/small"; }
for _ in $(seq 50); do small; grep -q 'view threads' "$T/small" && break; sleep 0.2; done
"${TMUX_CMD[@]}" send-keys -t small c
# (its rows, not just its title: the first Stats with sites follows the switch)
for _ in $(seq 50); do small; grep -q '^h .* @' "$T/small" && break; sleep 0.2; done
for _ in $(seq 30); do "${TMUX_CMD[@]}" send-keys -t small Down; done
sleep 1.5
small
[ ! -s "$T/small.status" ] || fail "mtrace-top exited: $(cat "$T/small.status")"
# the selected row: reverse video, the last table row above the bottom line
sel=$(grep -n $'\e\[[0-9;]*7m *h ' "$T/small" | cut -d: -f1)
[ "$sel" = 14 ] || { cat -v "$T/small"; fail "the cursor is not on the last row shown (line '$sel')"; }
"${TMUX_CMD[@]}" send-keys -t small q
note "terminal of 15 lines: the cursor stays on the screen"
"$PYTHON" - "$T/h.stats" "$T/h.out" <<'PY' || fail "hostile site tree"
import json, sys
st = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
rows = [l for l in open(sys.argv[2]) if l.startswith("h ")]
sites = len(st["sites"])
edges = len(st["site_edges"])
print("# hostile: %d tree rows for %d sites and %d edges" % (len(rows) - 1, sites, edges))
assert 0 < len(rows) - 1 <= sites + edges, (len(rows), sites, edges)
assert all("@" in r for r in rows[1:])
PY
