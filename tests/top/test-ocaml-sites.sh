#!/bin/bash
# mtrace-top's site view (-x, batch) on the OCaml example (ocaml/examples/blk_demo.ml,
# traced through ppx_mtrace) running as a simulated domain: its rows name exactly the
# file:line:col of every let%lwt, Lwt.async, Lwt.wait, Lwt_condition.wait and
# Lwt_unix.sleep of that source -- found by scanning the source (tests/ocaml/lwt_forms.py),
# not from anything the program or mtrace says -- each with its threads.
. "$MTRACE_SRC/tests/rig.sh"
: "${OCAML_BLK:?}"
SRC_ML=$MTRACE_SRC/ocaml/examples/blk_demo.ml

rig_start || fail "rig"
# until stopped, a read every 2 ms
rig_guest ocaml-blk "$OCAML_BLK" 0 64 0.002 >/dev/null || fail "could not start the OCaml example"
shown() {
	"$RIG_TOP" -b -n 1 -d 0.2 -x -D ocaml-blk -s "$RIG_SOCK" >"$T/top.out" 2>"$T/top.err" || return 1
	"$PYTHON" "$HERE/ocaml_sites_check.py" --wait "$SRC_ML" ocaml-blk "$T/top.out" >"$T/check.out"
	[ $? -ne 2 ]
}
wait_until 30 shown || { cat "$T/top.out" "$T/check.out" >&2; fail "the site view never showed every site of the source"; }
"$PYTHON" "$HERE/ocaml_sites_check.py" "$SRC_ML" ocaml-blk "$T/top.out" ||
	{ cat "$T/top.out" >&2; fail "the site view's rows differ from the source's sites"; }
pass "mtrace-top -x names every creation site of blk_demo.ml by its line and column"
