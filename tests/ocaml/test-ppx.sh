#!/bin/bash
# ppx_mtrace, expect style and by building and running what it rewrites:
# - ocaml/ppx/test/input.ml (every form in every shape) and vocabulary.ml (every traced
#   function as a value) rewritten by ppxlib's driver with ppx_mtrace must equal the
#   committed expected.ml and vocabulary.expected.ml, saying nothing on stderr;
# - warn.ml (forms it cannot trace) must draw exactly the warnings of warn.expected, and
#   be left as written;
# - ppxlib's -check finds no attribute of ppx_mtrace's undeclared or unused;
# - every entry of its table is a value of the installed Lwt (vocab_check.exe);
# - dev/forms.exe, built with dune's dev-profile warnings as errors, computes what its
#   source says in every form and shape.
# (After a deliberate change: cd ocaml/ppx/test && $PPX_DRIVER -impl input.ml >expected.ml,
#  $PPX_DRIVER -impl vocabulary.ml >vocabulary.expected.ml and
#  $PPX_DRIVER -impl warn.ml 2>warn.expected >/dev/null)
set -eu
: "${PPX_DRIVER:?}" "${MTRACE_SRC:?}"
bin=$(dirname "$PPX_DRIVER")
cd "$MTRACE_SRC/ocaml/ppx/test"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for pair in input.ml:expected.ml vocabulary.ml:vocabulary.expected.ml; do
	in=${pair%%:*} want=${pair#*:}
	"$PPX_DRIVER" -impl "$in" >"$out/$in" 2>"$out/$in.err"
	diff -u "$want" "$out/$in"
	[ ! -s "$out/$in.err" ] || { cat "$out/$in.err"; fail "$in drew warnings"; }
	echo "ppx_mtrace rewrites $in as $want says"
done

"$PPX_DRIVER" -impl warn.ml >"$out/warn.ml" 2>"$out/warn.err"
diff -u warn.expected "$out/warn.err"
! grep -n "Mtrace_lwt" "$out/warn.ml" || fail "a form of warn.ml was rewritten"
echo "ppx_mtrace says what it cannot trace in warn.ml as warn.expected says"

for f in input.ml vocabulary.ml warn.ml dev/forms.ml dev/shapes.ml; do
	"$PPX_DRIVER" -check -impl "$f" >/dev/null 2>"$out/check.err" || { cat "$out/check.err"; fail "ppxlib -check on $f"; }
done
echo "ppxlib -check: ppx_mtrace's attributes declared and used"

"$bin/vocab_check.exe"
"$bin/dev/forms.exe"
