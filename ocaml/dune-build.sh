#!/bin/sh
# Build the dune project ocaml/ for meson (ocaml/meson.build): SRC BUILD_DIR STAMP LINK-FLAGS...
# The link flags (libmtrace-guest.a from meson's build, libxenif.a, libxen*) reach dune
# as MTRACE_GUEST_LIBS (ocaml/guest/dune); dune's tree lives in meson's build dir.
# By hand, over an existing meson build `build`:
#   ninja -C build ocaml/ocaml.stamp     (or: ninja -C build, which builds it by default)
set -eu
src=$1 bdir=$2 stamp=$3
shift 3
MTRACE_SRC=$(cd "$src/.." && pwd)
MTRACE_GUEST_LIBS="$*"
export MTRACE_SRC MTRACE_GUEST_LIBS
dune build --root "$src" --build-dir "$bdir" --display quiet --profile release 2>&1
touch "$stamp"
