# shop-build.sh - the two builds of the shop (tests/ocaml/outside) that shop.sh and
# callgrind.sh run: "traced" against the installed mtrace exactly as docs/ocaml.md says,
# "plain" the same sources under lwt_ppx.  Sourced, not run.  The caller sets BUILD (the
# meson build directory), SRC (the source tree) and W (a fresh directory); afterwards
# $W/traced/_build/default/bin/main.exe and $W/plain/_build/default/bin/main.exe exist,
# LIBDIR is the installed libdir and OCAMLPATH the installed findlib tree.
shop_build() {
	meson install -C "$BUILD" --no-rebuild --quiet --destdir "$W/root" >"$W/install.log" ||
		{ cat "$W/install.log"; return 1; }
	local prefix OL v
	prefix=$(meson introspect "$BUILD" --buildoptions | python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"]); print(o["prefix"] + "/" + o["libdir"]); print(o.get("ocaml_libdir", ""))')
	LIBDIR=$W/root$(echo "$prefix" | sed -n 2p)
	OL=$(echo "$prefix" | sed -n 3p)
	[ -n "$OL" ] || OL=$(ocamlfind printconf destdir)
	case $OL in /*) ;; *) OL=$(echo "$prefix" | sed -n 1p)/$OL ;; esac
	export OCAMLPATH=$W/root$OL
	for v in traced plain; do
		mkdir -p "$W/$v/lib" "$W/$v/bin"
		cp "$SRC/tests/ocaml/outside/lib/shop.ml" "$W/$v/lib/"
		cp "$SRC/tests/ocaml/outside/bin/main.ml" "$W/$v/bin/"
	done
	python3 "$SRC/tests/ocaml/outside_check.py" stanzas "$SRC/docs/ocaml.md" "$W/traced" || return 1
	# plain Lwt: the same sources under lwt_ppx, and the three names main.ml takes from mtrace
	echo '(lang dune 2.9)' >"$W/plain/dune-project"
	echo '(library (name shop) (libraries lwt lwt.unix) (preprocess (pps lwt_ppx)))' >"$W/plain/lib/dune"
	echo '(executable (name main) (libraries shop lwt lwt.unix) (preprocess (pps lwt_ppx)))' >"$W/plain/bin/dune"
	echo 'let run ?pages:_ ?clock:_ ?wait_reader:_ main = Lwt_main.run (main ())' >"$W/plain/bin/mtrace_lwt_guest.ml"
	echo 'let stats () : (string * int) list = []' >"$W/plain/bin/mtrace_lwt.ml"
	echo 'let clock_tsc = 4' >"$W/plain/bin/mtrace_ring.ml"
	for v in traced plain; do
		(cd "$W/$v" && LIBRARY_PATH=$LIBDIR dune build --profile release ./bin/main.exe) ||
			{ echo "shop: the $v build failed" >&2; return 1; }
	done
}

# the program of a variant (untraced, off, mono, tsc): its executable and environment
shop_variant() {	# variant: sets SHOP_EXE and SHOP_ENV
	SHOP_EXE=$W/traced/_build/default/bin/main.exe
	SHOP_ENV=()
	case $1 in
	untraced) SHOP_EXE=$W/plain/_build/default/bin/main.exe ;;
	off) SHOP_ENV=(MTRACE=off) ;;
	tsc) SHOP_ENV=(SHOP_CLOCK=tsc) ;;
	esac
}
