"""check_ocaml_sites.py ACCOUNT SOURCE.ml: the real-Xen OCaml domU (ocaml-tests.sh).

ACCOUNT is what dom0 made of mtrace-cat -f json's lines for the domain, beside the
program's own account (lines: "summary JSON", "rc N", "op NAME COUNT", "site ID
THREADS", "name ID FILE:LINE:COL", "sited N CREATES").  Checked: the program exited 0;
every op it counted itself arrived, exactly, and nothing else; every created thread
carries a site; every site used has a SITE_NAME naming SOURCE's file and the line and
column of a form ppx_mtrace rewrites there -- found by scanning SOURCE
(tests/ocaml/lwt_forms.py), not from anything the program says -- and every such form
made threads.  Prints a one-line result; exit 1 with the reasons if not."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ocaml"))
import lwt_forms  # noqa: E402

account, src = sys.argv[1], sys.argv[2]
summary, rc, ops, used, names, sited = None, None, {}, {}, {}, None
for line in open(account, errors="replace"):
    f = line.rstrip("\n").split(" ", 2)
    if f[0] == "summary":
        try:
            summary = json.loads(line.split(" ", 1)[1])
        except (IndexError, ValueError):
            summary = None
    elif f[0] == "rc" and len(f) > 1:
        rc = f[1]
    elif f[0] == "op" and len(f) == 3:
        ops[f[1]] = int(f[2])
    elif f[0] == "site" and len(f) == 3:
        used[int(f[1])] = int(f[2])
    elif f[0] == "name" and len(f) == 3:
        names[int(f[1])] = f[2]
    elif f[0] == "sited" and len(f) == 3:
        sited = (int(f[1]), int(f[2]))

bad = []
if summary is None:
    print("no account from the program (its stdout was not one JSON line)")
    sys.exit(1)
if rc != "0":
    bad.append("the program exited %s" % rc)
want = summary.get("per_op", {})
diff = {op: (want.get(op, 0), ops.get(op, 0)) for op in set(want) | set(ops) if want.get(op, 0) != ops.get(op, 0)}
if diff:
    bad.append("per op (counted by the program, received by mtrace-cat): %s" % diff)
creates = ops.get("creates", 0)
if creates == 0:
    bad.append("no threads")
if sited != (creates, creates):
    bad.append("threads with a site, creates: %s, want %d of %d" % (sited, creates, creates))
expect = lwt_forms.sites(src)
base = os.path.basename(src)
seen = set()
for site, n in sorted(used.items()):
    name = names.get(site)
    if name is None:
        bad.append("site %d (%d threads) has no SITE_NAME" % (site, n))
        continue
    m = re.fullmatch(r"(.*):(\d+):(\d+)", name)
    if not m or os.path.basename(m.group(1)) != base or (int(m.group(2)), int(m.group(3))) not in expect:
        bad.append("site %d is named %r: not a traced form of %s" % (site, name, base))
        continue
    seen.add((int(m.group(2)), int(m.group(3))))
if seen != expect:
    bad.append("source sites without threads: %s" % sorted(expect - seen))
if bad:
    print("; ".join(bad))
    sys.exit(1)
print("%d events exact per op (%d kinds), %d threads, each from one of %d source sites of %s"
      % (sum(ops.values()), len(ops), creates, len(seen), base))
