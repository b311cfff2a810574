#!/bin/bash
# An Lwt program traced through ppx_mtrace end to end: lwt_threads (Mtrace_lwt over
# Mtrace_guest) runs as a simulated domain under mtrace-simxen with the real mtraced and
# creates >= 50,000 Lwt threads; every event it counts itself arrives at mtrace-cat -f
# json exactly, op by op, and every thread's creation site names the file, line and
# column of a let%lwt / >>= / >|= / Lwt.async / Lwt_mvar.take ... in its source -- found here by scanning
# that source, not from anything the program says.
. "$MTRACE_SRC/tests/rig.sh"
: "${OCAML_LWT:?}" "${CAT:?}"
BATCHES=${LWT_BATCHES:-130} # 403 threads a batch
SRC_ML=$MTRACE_SRC/ocaml/test/lwt_threads.ml

sim_start
daemon_start
"$CAT" -s "$SOCK" -f json -D lwt --time 280 --stats 250 --site-stats >"$T/events.json" 2>"$T/cat.err" &
CAT_PID=$!
PIDS+=("$CAT_PID")
"$CAT" -s "$SOCK" -f folded --frames site -D lwt --time 280 >"$T/sites.folded" 2>"$T/folded.err" &
FOLD_PID=$!
PIDS+=("$FOLD_PID")
# the guest starts writing once mtraced attaches; events before mtrace-cat is a client
# would never reach it: start the guest only after mtraced has seen the client
cat_in() { [ "$(grep -c 'mtrace-cat' "$T/mtraced.log")" -ge 2 ]; }
wait_until 30 cat_in || fail "mtrace-cat did not connect"
# 1 MB ring; the program keeps mtraced within half of it between batches
# the guest keeps its domain (and so its sites in mtraced's statistics) until released
guest lwt -- "$OCAML_LWT" "$BATCHES" 256 20 60 inf "$T/release" >/dev/null
N=$(json_events lwt)
note "the Lwt guest wrote $N events"
got() { [ "$(grep -c '"op"' "$T/events.json")" -ge "$N" ]; }
wait_until 90 got || note "mtrace-cat received $(grep -c '"op"' "$T/events.json") of $N events"
sleep 0.5 # anything beyond N would be a duplicate: give it time to show
# the folded client learns site names from mtraced's statistics (every 250 ms, while
# the domain is there): once those the JSON client received have named every site,
# give the folded one a few periods more
sites_known() {
	grep -E '"op":"site_name"|"sites":' "$T/events.json" | "$PYTHON" -c '
import json, sys
named, listed = set(), set()
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue  # the line mtrace-cat is still writing (its output is block-buffered)
    if e.get("op") == "site_name":
        named.add(e.get("str"))
    else:
        listed |= {x.get("site") for x in e.get("sites", [])}
sys.exit(0 if named and named <= listed else 1)'
}
wait_until 30 sites_known || fail "mtrace-cat's statistics never named every site"
sleep 1
touch "$T/release"
kill -TERM "$CAT_PID" "$FOLD_PID"
wait "$CAT_PID" 2>/dev/null
wait "$FOLD_PID" 2>/dev/null
"$PYTHON" - "$T/lwt.log" "$T/events.json" "$SRC_ML" "$T/sites.folded" <<'PY' || fail "mtrace-cat's events differ from what the Lwt guest wrote"
import collections, json, os, re, sys
summary = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
want = summary["per_op"]
ok = True
def bad(msg):
    global ok
    print(msg)
    ok = False
if summary["threads"] < 50000:
    bad("only %d threads" % summary["threads"])

# the sites of the source: every form ppx_mtrace rewrites with a site, by a scan of it
sys.path.insert(0, os.path.join(os.environ["MTRACE_SRC"], "tests", "ocaml"))
import lwt_forms
expect = lwt_forms.sites(sys.argv[3])
base = os.path.basename(sys.argv[3])

got = collections.Counter()
names = {}
used = collections.Counter()
created = {}  # thread id -> thread_type
creator, site_of = {}, {}
last = None
resolved = collections.Counter()
reads, becomes, resolvers = [], [], set()
for line in open(sys.argv[2]):
    e = json.loads(line)
    if "op" not in e:
        continue
    op = e["op"]
    got[op] += 1
    if op == "site_name":
        names[e["arg"]] = e.get("str", "")
    elif op == "creates":
        if e["arg"] in created:
            bad("thread %d created twice" % e["arg"])
        created[e["arg"]] = e.get("thread_type")
        creator[e["arg"]] = e["thread"]
        last = e["arg"]
    elif op in ("fulfills", "fails"):
        resolved[e["arg"]] += 1
        resolvers.add(e["thread"])
    elif op == "read":
        reads.append(e["thread"])
    elif op == "becomes":
        becomes.append((e["thread"], e["arg"]))
    elif op == "site":
        used[e["arg"]] += 1
        site_of[last] = e["arg"]
bad_ops = {op: (n, got.get(op, 0)) for op, n in want.items() if got.get(op, 0) != n}
extra = {op: n for op, n in got.items() if op not in want}
if bad_ops or extra:
    bad("per op (written, received): %s; not written: %s" % (bad_ops, extra))
if got["creates"] != got["site"]:
    bad("%d creates but %d carry a site" % (got["creates"], got["site"]))
# thread identity: each thread is resolved once; callbacks run (READ) as a bind, map
# or try thread created before; what a callback returned (BECOMES) is a thread too
once = [t for t in created if resolved[t] != 1]
if once or set(resolved) - set(created):
    bad("threads not resolved exactly once: %s; resolved but never created: %s"
        % (once[:5], sorted(set(resolved) - set(created))[:5]))
if any(e_t not in created and e_t != 0 for e_t in resolvers):
    bad("FULFILLS/FAILS by threads never created")
kinds = collections.Counter(created.get(t) for t in reads)
if None in kinds or set(kinds) - {"Bind", "Map", "Try"}:
    bad("READs by threads of types %s" % dict(kinds))
if any(b not in created or o not in created for b, o in becomes):
    bad("BECOMES between threads never created: %s" % [x for x in becomes if x[0] not in created or x[1] not in created][:5])
seen = set()
for site, n in used.items():
    name = names.get(site)
    if name is None:
        bad("site %d has no SITE_NAME" % site)
        continue
    m = re.fullmatch(r"(.*):(\d+):(\d+)", name)
    if not m or os.path.basename(m.group(1)) != base or (int(m.group(2)), int(m.group(3))) not in expect:
        bad("site %d is named %r: not a traced form of %s" % (site, name, base))
        continue
    seen.add((int(m.group(2)), int(m.group(3))))
if seen != expect:
    bad("source sites without threads: %s" % sorted(expect - seen))
# mtrace-cat -f folded --frames site: each thread's creation stack by source line, as
# the creates above say (root: the program's main thread, created by no one)
want_f = collections.Counter()
for t in created:
    path, a = [], t
    while a in created:
        path.append(names.get(site_of.get(a), "?"))
        a = creator[a]
    want_f[";".join(["(Unknown)"] + list(reversed(path)))] += 1
want_f["(Unknown)"] += 1
got_f = collections.Counter()
for line in open(sys.argv[4]):
    m = re.match(r"^(.*) (\d+)$", line.rstrip("\n"))
    if not m:
        bad("not a folded line: %r" % line)
        continue
    got_f[m.group(1)] += int(m.group(2))
if got_f != want_f:
    diff = {k: (want_f.get(k, 0), got_f.get(k, 0)) for k in set(got_f) | set(want_f) if got_f.get(k) != want_f.get(k)}
    bad("folded stacks (want, got): %s" % dict(list(diff.items())[:6]))
if not ok:
    sys.exit(1)
print("folded: %d stacks exact" % len(got_f))
print("per op exact: %s; %d threads from %d source sites %s" % (dict(sorted(got.items())), got["creates"], len(seen), sorted(seen)))
PY
alive
daemon_stop
pass "every event of the Lwt guest arrived exactly once, every site names its source line"
