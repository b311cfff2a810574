#!/bin/bash
# Mtrace_lwt's whole vocabulary against Lwt 5.6's own (ocaml/test/lwt_vocab.ml): every
# wrapper's result, callback order and cancellation as Lwt's, nothing written with
# tracing off; on, read back from the ring it wrote: every thread a callback creates
# has the call's thread as parent (callbacks run at once and later from Lwt's loop),
# every thread resolved exactly once, "Lwt.Canceled" for a cancellation.
set -eu
: "${OCAML_VOCAB:?}"
"$OCAML_VOCAB"
