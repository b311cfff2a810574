#!/bin/bash
# Mtrace_lwt's resolution bookkeeping at its edges (ocaml/test/lwt_edges.ml): each case
# read back from the ring it wrote, every thread resolved exactly once (rejected before
# the callback, raising callbacks, untraced and older traced promises returned,
# cancellation, two binds becoming one thread, chains of binds becoming the next).
set -eu
: "${OCAML_EDGES:?}"
"$OCAML_EDGES"
