#!/bin/sh
# Drive the dune project ocaml/ for meson (ocaml/meson.build); dune's trees live in
# meson's build dir.  Three steps:
#
#   dune-build.sh build SRC BUILD_DIR STAMP LINK-FLAGS...
#       the in-tree build (libraries, tests, examples), linking libmtrace-guest.a
#       statically through the LINK-FLAGS (build-tree -L paths, libxenif.a, libxen*), as
#       tests/xen copies these programs into a domU image without libmtrace-guest.so;
#   dune-build.sh install-build SRC BUILD_DIR STAMP GUEST_LIBDIR
#       the installed flavour: `dune build @install` (the libraries and the ppx only)
#       with the plain `-lmtrace-guest` a user's program links through the installed
#       libdir; GUEST_LIBDIR (meson's build of libmtrace-guest.so) is on LIBRARY_PATH
#       only so that the .cmxs plugins link now; no build path goes into a file;
#   dune-build.sh install SRC BUILD_DIR GUEST_LIBDIR OCAML_LIBDIR
#       meson install's step (an install script): `dune install` of that tree into
#       OCAML_LIBDIR (absolute, or relative to the prefix), under $DESTDIR if set;
#   dune-build.sh test SRC BUILD_DIR ALIAS LINK-FLAGS...
#       a meson test run by dune: `dune build --force @ALIAS` in the in-tree build's
#       tree with the build step's environment (the same LINK-FLAGS, so that dune
#       rebuilds nothing), the alias's actions run again whatever dune remembers
#       (--force), and under the build dir's lock, as meson runs tests side by side.
#
# MTRACE_SRC (the headers) and MTRACE_GUEST_LIBS reach dune as environment variables
# (ocaml/guest/dune); install-build and install give dune the same ones, as dune
# rebuilds whatever depends on a variable that changed.
# By hand, over an existing meson build `build`:
#   ninja -C build ocaml/ocaml.stamp     (or: ninja -C build, which builds it by default)
set -eu
step=$1 src=$2 bdir=$3
shift 3
MTRACE_SRC=$(cd "$src/.." && pwd)
# The C stubs include headers of the source tree, which dune does not watch: their
# digest goes into the stubs' flags (ocaml/guest/dune), so that a changed header (a
# struct grown by a field) rebuilds them rather than leaving a stub on the old layout.
MTRACE_HEADERS_DIGEST=$(cat "$MTRACE_SRC"/guest/*.h "$MTRACE_SRC"/proto/*.h \
	"$MTRACE_SRC"/xenif/*.h | cksum | cut -d' ' -f1)
export MTRACE_SRC MTRACE_HEADERS_DIGEST
# The in-tree build links the static libmtrace-guest.a and libxenif.a, which dune does
# not watch either (they are -cclib flags): their digest goes into the link flags
# (ocaml/guest/dune), so that a changed library relinks every program rather than
# leaving one that speaks an older protocol to the simulated Xen's broker.
static_libs_digest() {	# LINK-FLAGS...: the digest of the -L dirs' -l:lib*.a files
	dirs= libs=
	for f in "$@"; do
		case $f in
		-L*) dirs="$dirs ${f#-L}" ;;
		-l:*.a) libs="$libs ${f#-l:}" ;;
		esac
	done
	for l in $libs; do for d in $dirs; do [ -f "$d/$l" ] && cat "$d/$l" && break; done; done |
		cksum | cut -d' ' -f1
}

# The installed flavour's environment (install-build and install: the same, or dune
# would rebuild): -lmtrace-guest, found now in GUEST_LIBDIR ($1) for the plugins; the
# build and source paths mapped out of the objects' debug information (OCaml's by
# BUILD_PATH_PREFIX_MAP, the C stubs' by -ffile-prefix-map: ocaml/dune).
installed_flavour() {
	ctx=$(cd "$bdir" 2>/dev/null && pwd || echo "$bdir")/default
	MTRACE_GUEST_LIBS=-lmtrace-guest
	LIBRARY_PATH=$1${LIBRARY_PATH:+:$LIBRARY_PATH}
	BUILD_PATH_PREFIX_MAP="mtrace-ocaml=$(bppm "$ctx"):mtrace-src=$(bppm "$MTRACE_SRC")"
	MTRACE_STUB_CFLAGS="-ffile-prefix-map=$ctx=mtrace-ocaml -ffile-prefix-map=$MTRACE_SRC=mtrace-src"
	export MTRACE_GUEST_LIBS LIBRARY_PATH BUILD_PATH_PREFIX_MAP MTRACE_STUB_CFLAGS
}

# dune 2.9 does not lock its build dir: an install (dune install checks its tree is up
# to date) while another runs, as two test suites' `meson install` may, waits its turn.
locked() {
	mkdir -p "$bdir"
	if command -v flock >/dev/null 2>&1; then
		flock "$bdir/.mtrace.lock" "$@"
	else
		"$@"
	fi
}

# A path as BUILD_PATH_PREFIX_MAP spells it (% : = escaped).
bppm() {
	printf '%s' "$1" | sed -e 's/%/%#/g' -e 's/=/%+/g' -e 's/:/%./g'
}

case $step in
build)
	stamp=$1
	shift
	MTRACE_GUEST_LIBS="$*"
	MTRACE_GUEST_LIBS_DIGEST=$(static_libs_digest "$@")
	export MTRACE_GUEST_LIBS MTRACE_GUEST_LIBS_DIGEST
	dune build --root "$src" --build-dir "$bdir" --display quiet --profile release 2>&1
	touch "$stamp"
	;;
install-build)
	stamp=$1
	installed_flavour "$2"
	locked dune build @install --root "$src" --build-dir "$bdir" --display quiet --profile release 2>&1
	touch "$stamp"
	;;
test)
	alias=$1
	shift
	MTRACE_GUEST_LIBS="$*"
	MTRACE_GUEST_LIBS_DIGEST=$(static_libs_digest "$@")
	export MTRACE_GUEST_LIBS MTRACE_GUEST_LIBS_DIGEST
	locked dune build --root "$src" --build-dir "$bdir" --display quiet --profile release \
		--force "@$alias" 2>&1
	;;
install)
	installed_flavour "$1"
	# lib (the libraries, META, dune-package), libexec (plugins, the ppx driver) and
	# stublibs (bytecode's C stubs); not dune's doc section ($prefix/doc/PACKAGE)
	locked dune install --root "$src" --build-dir "$bdir" --display quiet --profile release \
		--prefix "${MESON_INSTALL_PREFIX:?run by meson install}" --libdir "$2" \
		${DESTDIR:+--destdir "$DESTDIR"} --sections lib,libexec,stublibs \
		mtrace ppx_mtrace 2>&1
	;;
*)
	echo "dune-build.sh: unknown step '$step'" >&2
	exit 2
	;;
esac
