#!/bin/bash
# The OCaml part installed like any OCaml library: `meson install --destdir` puts the
# findlib packages mtrace.* and ppx_mtrace into the OCaml libdir (under the destdir), with
# nothing that names the build or source tree and mtrace.guest linking the installed
# libmtrace-guest by -lmtrace-guest.  A project outside the tree, in dune's default (dev)
# profile, then builds against them as a user of a non-standard prefix would (OCAMLPATH,
# LIBRARY_PATH, LD_LIBRARY_PATH) and runs: outside any domain (it says how to run it),
# with MTRACE=off (untraced), as a simulated domain with nobody reading (it runs to the
# end and says so; its output where create's own goes, or in the console log create
# names), and traced by mtraced (its let%lwt sites in the events).
. "$MTRACE_SRC/tests/rig.sh"
: "${MESON:?}" "${MTRACE_PREFIX:?}" "${MTRACE_LIBDIR:?}" "${OCAML_LIBDIR:?}" "${CAT:?}"

install_destdir
case $OCAML_LIBDIR in
/*) OL=$D$OCAML_LIBDIR ;;
*) OL=$D$MTRACE_PREFIX/$OCAML_LIBDIR ;;
esac
CL=$D$MTRACE_LIBDIR
[ -f "$CL/libmtrace-guest.so" ] || fail "no libmtrace-guest.so in $CL"
export OCAMLPATH=$OL

# findlib sees every package, from the destdir
ocamlfind list >"$T/list" 2>&1 || fail "ocamlfind list: $(cat "$T/list")"
for p in mtrace.ring mtrace.guest mtrace.lwt mtrace.lwt_unix mtrace.lwt_guest ppx_mtrace; do
	grep -q "^$p " "$T/list" || fail "ocamlfind list shows no $p: $(grep mtrace "$T/list")"
	dir=$(ocamlfind query "$p" 2>&1) || fail "ocamlfind query $p: $dir"
	case $dir in "$OL"/*) ;; *) fail "$p found in $dir, not under $OL" ;; esac
done
pass "ocamlfind finds mtrace.{ring,guest,lwt,lwt_unix,lwt_guest} and ppx_mtrace in $OCAML_LIBDIR"

# nothing installed names the build tree or the sources (link flags, load paths, debug
# information), and mtrace.guest's link flags are exactly the installed library's
bad=$(grep -rlF -e "$MTRACE_BUILD_ROOT" -e "$MTRACE_SRC" "$OL")
[ -z "$bad" ] || fail "installed files name the build tree: $bad"
[ -n "$(find "$OL/mtrace" -name '*.cmxa')" ] || fail "no .cmxa under $OL/mtrace"
cflags=$(ocamlobjinfo "$OL/mtrace/guest/mtrace_guest.cmxa" | sed -n 's/^Extra C object files: //p')
[ "$cflags" = "-lmtrace_guest_stubs -lmtrace-guest" ] ||
	fail "mtrace_guest.cmxa links '$cflags', not '-lmtrace_guest_stubs -lmtrace-guest'"
pass "no build or source path in what was installed; mtrace.guest links -lmtrace-guest"

# a user's project, its own directory, dune's default profile
mkdir -p "$T/app"
cat >"$T/app/dune-project" <<'EOF'
(lang dune 2.9)
EOF
cat >"$T/app/dune" <<'EOF'
(executable
 (name hello)
 (libraries mtrace.lwt mtrace.guest mtrace.lwt_guest lwt.unix)
 (preprocess (pps ppx_mtrace)))
EOF
cat >"$T/app/hello.ml" <<'EOF'
let rec sum n =
  if n = 0 then Lwt.return 0
  else
    let%lwt v = Lwt.return n in
    let%lwt rest = sum (n - 1) in
    Lwt.return (v + rest)

(* hello LINGER_S WAIT_READER_S *)
let main () =
  let%lwt s = sum 100 in
  Printf.printf "sum %d, traced %b\n%!" s (Mtrace_lwt.enabled ());
  Lwt_unix.sleep (float_of_string Sys.argv.(1))

let () = Mtrace_lwt_guest.run ~wait_reader:(float_of_string Sys.argv.(2)) main
EOF
LIBRARY_PATH=$CL timeout 300 dune build --root "$T/app" ./hello.exe >"$T/build.log" 2>&1 ||
	fail "the outside project does not build: $(cat "$T/build.log")"
APP=$T/app/_build/default/hello.exe
pass "an outside dune project builds with mtrace.lwt, mtrace.guest and ppx_mtrace"

# outside any domain: it says where to run, and how to opt out
rc=0
env -u MTRACE_SIM_DIR -u MTRACE LD_LIBRARY_PATH="$CL" "$APP" 0 0 >"$T/out.out" 2>"$T/out.err" || rc=$?
[ "$rc" -eq 2 ] || fail "outside a domain: status $rc, not 2: $(cat "$T/out.err")"
for want in "Mtrace_guest.Unavailable: not in a Xen domain" "MTRACE_SIM_DIR" \
	"mtrace-simxen create --name NAME -- PROG" "MTRACE=off"; do
	grep -qF -- "$want" "$T/out.err" || fail "outside a domain, no '$want' in: $(cat "$T/out.err")"
done
env -u MTRACE_SIM_DIR MTRACE=off LD_LIBRARY_PATH="$CL" "$APP" 0 0 >"$T/off.out" 2>"$T/off.err" ||
	fail "MTRACE=off: $(cat "$T/off.err")"
grep -qx "sum 5050, traced false" "$T/off.out" || fail "MTRACE=off printed: $(cat "$T/off.out")"
rc=0
env -u MTRACE_SIM_DIR MTRACE=of LD_LIBRARY_PATH="$CL" "$APP" 0 0 >/dev/null 2>"$T/typo.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q 'MTRACE=of: expected on or off' "$T/typo.err" ||
	fail "MTRACE=of (a typo): status $rc, $(cat "$T/typo.err")"
pass "outside a domain it says how to run it; MTRACE=off runs it untraced"

# a simulated domain, nobody reading: it runs to its end, saying so after 2 s; its
# output goes where create's own goes (a file here), or, create's stdout being a pipe,
# into the console log create names
sim_start
domain_gone() { ! "$SIMXEN" --dir "$SIM" list | grep -q " $1 "; }
"$SIMXEN" --dir "$SIM" create --name alone -- env LD_LIBRARY_PATH="$CL" "$APP" 3 0 \
	>"$T/alone.out" 2>"$T/alone.err" || fail "create alone: $(cat "$T/alone.err")"
wait_until 30 domain_gone alone || fail "the guest with no reader did not end"
grep -qx "sum 5050, traced true" "$T/alone.out" || fail "no reader: the guest printed $(cat "$T/alone.out")"
grep -q "no reader has attached to domain .* (is mtraced running?)" "$T/alone.err" ||
	fail "no reader: nothing said so: $(cat "$T/alone.err")"
domid=$("$SIMXEN" --dir "$SIM" create --name piped -- env LD_LIBRARY_PATH="$CL" "$APP" 0 0 \
	2>"$T/piped.err") || fail "create piped: $(cat "$T/piped.err")"
log=$SIM/console/guest-piped.log
grep -qF "domain $domid (piped): its standard output goes to $log" "$T/piped.err" ||
	fail "create did not name the console log: $(cat "$T/piped.err")"
wait_until 30 grep -qx "sum 5050, traced true" "$log" || fail "nothing in $log: $(cat "$log")"
pass "with no reader it runs to its end and says so; its output reaches the user"

# traced: the installed ppx's creation sites arrive at mtrace-cat
daemon_start
"$CAT" -s "$SOCK" -f json -D traced --time 60 >"$T/events.json" 2>"$T/cat.err" &
CAT_PID=$!
PIDS+=("$CAT_PID")
cat_in() { grep -q 'mtrace-cat' "$T/mtraced.log"; }
wait_until 30 cat_in || fail "mtrace-cat did not connect"
"$SIMXEN" --dir "$SIM" create --name traced --log "$T/traced.log" -- \
	env LD_LIBRARY_PATH="$CL" "$APP" 1 10 >/dev/null || fail "create traced"
wait_until 30 domain_gone traced || fail "the traced guest did not end"
grep -qx "sum 5050, traced true" "$T/traced.log" || fail "traced: $(cat "$T/traced.log")"
sites() { grep -c '"op":"site_name".*hello\.ml:[0-9]' "$T/events.json"; }
wait_until 20 test "$(sites)" -ge 2 || fail "no hello.ml site among $(grep -c . "$T/events.json") events"
kill -TERM "$CAT_PID"
pass "traced by mtraced: $(grep -c '"op"' "$T/events.json") events, $(sites) hello.ml sites"
