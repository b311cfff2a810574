#!/bin/bash
# ppx_mtrace's table of traced forms and Mtrace_lwt's interface agree (the contract of
# docs/ocaml.md): every function the ppx rewrites into exists, taking ?site:int first
# exactly when the ppx passes ~site, and every function of Mtrace_lwt that mirrors an
# Lwt one is rewritten into (ocaml/ppx/test/vocab_check.ml).
set -eu
: "${PPX_DRIVER:?}" "${MTRACE_SRC:?}"
"$(dirname "$PPX_DRIVER")/vocab_check.exe" -mtrace "$MTRACE_SRC/ocaml/lwt/mtrace_lwt.mli" \
	-mtrace-unix "$MTRACE_SRC/ocaml/lwt/mtrace_lwt_unix.mli"
