#!/bin/bash
# ppx_mtrace's rewriting, expect style: ppxlib's driver with ppx_mtrace prints
# ocaml/ppx/test/input.ml rewritten; it must equal the committed expected.ml.
# (After a deliberate change: cd ocaml/ppx/test && $PPX_DRIVER -impl input.ml >expected.ml)
set -eu
: "${PPX_DRIVER:?}" "${MTRACE_SRC:?}"
cd "$MTRACE_SRC/ocaml/ppx/test"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$PPX_DRIVER" -impl input.ml >"$out"
diff -u expected.ml "$out"
echo "ppx_mtrace rewrites input.ml as expected.ml says"
