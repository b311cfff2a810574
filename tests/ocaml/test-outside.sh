#!/bin/bash
# An OCaml user's own program, as the user meets mtrace: `meson install --destdir`, then
# a dune project of its own (tests/ocaml/outside: a library with a functor and
# first-class modules, and a main) built in dune's default dev profile from the dune
# stanzas of docs/ocaml.md taken verbatim (the blocks that begin
# `(lang dune`, `; lib/dune`, `; bin/dune`), against what was installed (OCAMLPATH,
# LIBRARY_PATH).  It runs as a simulated domain under the real mtraced, and:
# - the build says nothing is untraced (no ppx_mtrace warning) and stops on no warning;
# - every op it counted itself arrives at mtrace-cat -f json exactly;
# - the creation sites are exactly the traced forms a scan of its two sources finds
#   (tests/ocaml/source_forms.py, which reads the text alone), each exercised;
# - no thread is created by thread 0 but at the lines the source marks `root`: every
#   thread made inside a traced callback has its true parent;
# - a cancelled thread fails with "Lwt.Canceled".
. "$MTRACE_SRC/tests/rig.sh"
: "${MESON:?}" "${MTRACE_PREFIX:?}" "${MTRACE_LIBDIR:?}" "${OCAML_LIBDIR:?}" "${CAT:?}"
ROUNDS=${OUTSIDE_ROUNDS:-4}

install_destdir
case $OCAML_LIBDIR in
/*) export OCAMLPATH=$D$OCAML_LIBDIR ;;
*) export OCAMLPATH=$D$MTRACE_PREFIX/$OCAML_LIBDIR ;;
esac
CL=$D$MTRACE_LIBDIR

# the project: its sources, and the dune files exactly as docs/ocaml.md gives them
P=$T/shop
mkdir -p "$P/lib" "$P/bin"
cp "$MTRACE_SRC/tests/ocaml/outside/lib/shop.ml" "$P/lib/"
cp "$MTRACE_SRC/tests/ocaml/outside/bin/main.ml" "$P/bin/"
"$PYTHON" - "$MTRACE_SRC/docs/ocaml.md" "$P" <<'PY' || fail "docs/ocaml.md has no dune stanzas to take"
import os, re, sys
doc = open(sys.argv[1]).read()
blocks = re.findall(r"```(?:[a-z]*)\n(.*?)```", doc, flags=re.S)
want = {"dune-project": None, "lib/dune": None, "bin/dune": None}
for b in blocks:
    first = b.split("\n", 1)[0]
    for name in want:
        if re.match(r";\s*%s\b" % re.escape(name), first) or (name == "dune-project" and first.startswith("(lang dune ")):
            want[name] = b
missing = [n for n, b in want.items() if b is None]
if missing:
    sys.exit("no block for %s" % missing)
for name, b in want.items():
    open(os.path.join(sys.argv[2], name), "w").write(b)
PY
( cd "$P" && LIBRARY_PATH=$CL timeout 300 dune build ./bin/main.exe ) >"$T/build.log" 2>&1 ||
	fail "the outside project does not build in dune's dev profile: $(cat "$T/build.log")"
if grep -q 'ppx_mtrace\|Warning\|Error' "$T/build.log"; then
	fail "the build warned: $(cat "$T/build.log")"
fi
pass "the outside project builds in dev profile from docs/ocaml.md's stanzas, with no warning"

sim_start
daemon_start
"$CAT" -s "$SOCK" -f json -D shop --time 200 >"$T/events.json" 2>"$T/cat.err" &
CAT_PID=$!
PIDS+=("$CAT_PID")
cat_in() { grep -q 'mtrace-cat' "$T/mtraced.log"; }
wait_until 30 cat_in || fail "mtrace-cat did not connect"
guest shop -- env LD_LIBRARY_PATH="$CL" "$P/_build/default/bin/main.exe" "$ROUNDS" >/dev/null
domain_gone() { ! "$SIMXEN" --dir "$SIM" list | grep -q " shop "; }
wait_until 120 domain_gone || fail "the program did not end"
summary=$(grep '^{"rounds"' "$T/shop.log") || fail "no summary from the program: $(cat "$T/shop.log")"
want=$(printf '%s' "$summary" | "$PYTHON" -c 'import json,sys; print(sum(json.load(sys.stdin)["per_op"].values()))')
got() { [ "$(grep -c '"op"' "$T/events.json")" -ge "$want" ]; }
wait_until 60 got || note "mtrace-cat received $(grep -c '"op"' "$T/events.json") of $want events"
sleep 0.5 # anything beyond would be a duplicate: give it time to show
kill -TERM "$CAT_PID"
wait "$CAT_PID" 2>/dev/null

"$PYTHON" - "$summary" "$T/events.json" "$P" <<'PY' || fail "the trace of the outside program is not what its source says"
import collections, json, os, re, sys
sys.path.insert(0, os.path.join(os.environ["MTRACE_SRC"], "tests", "ocaml"))
import source_forms
summary = json.loads(sys.argv[1])
root = sys.argv[3]
files = ["lib/shop.ml", "bin/main.ml"]
expect = {(f, l, c) for f in files for (l, c) in source_forms.sites(os.path.join(root, f))}
roots = {(f, l) for f in files for l in source_forms.roots(os.path.join(root, f))}
problems = []
got, names, created, creator, site_of = collections.Counter(), {}, {}, {}, {}
resolved, fails, last = collections.Counter(), [], None
for line in open(sys.argv[2]):
    e = json.loads(line)
    op = e.get("op")
    if op is None:
        continue
    got[op] += 1
    if op == "site_name":
        names[e["arg"]] = e.get("str", "")
    elif op == "creates":
        if e["arg"] in created:
            problems.append("thread %d created twice" % e["arg"])
        created[e["arg"]] = e.get("thread_type")
        creator[e["arg"]] = e["thread"]
        last = e["arg"]
    elif op == "site":
        site_of[last] = e["arg"]
    elif op in ("fulfills", "fails"):
        resolved[e["arg"]] += 1
        if op == "fails":
            fails.append(e.get("str", ""))
want = dict(summary["per_op"], ring_start=1)  # the ring's first record is the library's
diff = {op: (want.get(op, 0), got.get(op, 0)) for op in set(want) | set(got) if want.get(op, 0) != got.get(op, 0)}
if diff:
    problems.append("per op (written, received): %s" % diff)
twice = [t for t, n in resolved.items() if n > 1]
if twice or set(resolved) - set(created):
    problems.append("resolved twice: %s; resolved, never created: %s" % (twice[:5], sorted(set(resolved) - set(created))[:5]))
# every site a traced form of the text, every form a site
where = {}
for t, s in site_of.items():
    m = re.fullmatch(r"(.*):(\d+):(\d+)", names.get(s, "?"))
    if not m:
        problems.append("thread %d's site %d is named %r" % (t, s, names.get(s)))
        continue
    where[t] = (m.group(1), int(m.group(2)), int(m.group(3)))
seen = set(where.values())
if seen - expect:
    problems.append("sites that are no traced form of the text: %s" % sorted(seen - expect)[:10])
if expect - seen:
    problems.append("traced forms of the text never seen as a site: %s" % sorted(expect - seen)[:20])
if len(site_of) != len(created):
    problems.append("%d threads but %d with a site" % (len(created), len(site_of)))
# the creation tree: thread 0 creates only at the lines marked root
orphans = collections.Counter(where.get(t) for t, p in creator.items() if p == 0 and where.get(t, ("", 0))[:2] not in roots)
if orphans:
    problems.append("threads created by thread 0 outside the root lines, by site: %s" % dict(orphans.most_common(10)))
if "Lwt.Canceled" not in fails:
    problems.append("no thread failed with Lwt.Canceled: %s" % collections.Counter(fails).most_common(5))
if any("Resolution_loop" in f for f in fails):
    problems.append("a failure named Lwt.Resolution_loop.Canceled")
for p in problems:
    print(p)
if problems:
    sys.exit(1)
print("%d threads from %d sites (all %d forms of the text), %d events exact, parents true, %d failures (%d cancelled)"
      % (len(created), len(seen), len(expect), sum(got.values()), len(fails), fails.count("Lwt.Canceled")))
PY
daemon_stop
pass "the outside program's trace: every op exact, every site a form of its source, every parent true"
