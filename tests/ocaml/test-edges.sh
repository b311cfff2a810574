#!/bin/bash
# Mtrace_lwt's resolution bookkeeping at its edges (ocaml/test/lwt_edges.ml): each case
# read back from the ring it wrote, every thread resolved exactly once (rejected before
# the callback, raising callbacks, untraced and older traced promises returned,
# cancellation, two binds becoming one thread, chains of binds becoming the next).
# And Mtrace_ring's overwrite after attach (ocaml/test/ring_attach.ml): byte for byte
# that of the writer that made the ring, which test-bytes.sh holds to the C producer.
set -eu
: "${OCAML_EDGES:?}" "${OCAML_ATTACH:?}"
"$OCAML_EDGES"
"$OCAML_ATTACH"
