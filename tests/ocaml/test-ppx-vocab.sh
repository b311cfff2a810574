#!/bin/bash
# ppx_mtrace's table of traced forms and Mtrace_lwt's interface agree (the contract of
# docs/ocaml.md): every function the ppx rewrites into exists in Mtrace_lwt (mtrace.lwt,
# the ppx's runtime library), taking ?site:int first exactly when the ppx passes ~site;
# every function of Mtrace_lwt that mirrors an Lwt one is rewritten into; and each of
# Mtrace_lwt_unix's is the very Mtrace_lwt.call the ppx makes of that Lwt_unix function
# (ocaml/ppx/test/vocab_check.ml).
set -eu
: "${PPX_DRIVER:?}" "${MTRACE_SRC:?}"
"$(dirname "$PPX_DRIVER")/vocab_check.exe" -mtrace "$MTRACE_SRC/ocaml/lwt/mtrace_lwt.mli" \
	-mtrace-unix "$MTRACE_SRC/ocaml/lwt/mtrace_lwt_unix.mli" -mtrace-unix-ml "$MTRACE_SRC/ocaml/lwt/mtrace_lwt_unix.ml"
