#!/bin/sh
# The dune project's own tests (alias runtest): ppx_mtrace's expect test and the
# Mtrace_lwt smoke test, in the dune tree meson builds (ocaml/meson.build).
# Usage: test-dune.sh SRC_OCAML DUNE_BUILD_DIR LINK-FLAGS...
set -eu
src=$1 bdir=$2
shift 2
MTRACE_SRC=$(cd "$src/.." && pwd)
MTRACE_GUEST_LIBS="$*"
export MTRACE_SRC MTRACE_GUEST_LIBS
exec dune build --root "$src" --build-dir "$bdir" --display short --profile release @runtest 2>&1
