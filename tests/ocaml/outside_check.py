"""The outside program (tests/ocaml/outside, an OCaml user's Lwt program), its one set of
helpers for tests/ocaml/test-outside.sh (a simulated domain), tests/xen (a real-Xen domU)
and bench/ocaml/shop.sh:

  outside_check.py stanzas DOC PROJECT    write PROJECT's dune-project, lib/dune and
                                          bin/dune from DOC's blocks (docs/ocaml.md),
                                          verbatim: the one beginning `(lang dune`, the
                                          ones whose first line is `; lib/dune`, `; bin/dune`
  outside_check.py json SUMMARY EVENTS PROJECT
                                          check the program's run: SUMMARY its JSON line,
                                          EVENTS mtrace-cat -f json's lines of its session
  outside_check.py account ACCOUNT PROJECT
                                          the same from dom0's reduction of those lines
                                          (tests/xen/ocaml-tests.sh, shop_reduce), beside
                                          the program's summary.  Lines:
  summary JSON                         the program's stdout
  rc N                                 its exit status
  op NAME COUNT                        events received, per op
  name SITE TEXT                       each SITE_NAME (TEXT JSON-escaped)
  t THREAD CREATES CREATOR SITE RES    each thread created: how many CREATES named it, by
                                       which thread (the last), its SITE (- none), how
                                       many FULFILLS/FAILS resolved it
  r THREAD RES                         resolved, never created
  s THREAD SITE                        a SITE for a thread never created
  fail COUNT TEXT                      each FAILS text (JSON-escaped), how often
Checked, as tests/ocaml/test-outside.sh checks the same program in a simulated domain:
it exited 0; every op it counted itself arrived exactly (and the library's RING_START),
and nothing else; no thread created twice, resolved twice or resolved uncreated; the
creation sites, named "FILE:LINE:COL", are exactly the traced forms a scan of the two
sources finds (tests/ocaml/source_forms.py, from the text alone), each one used, every
thread with one; thread 0 creates only on the lines the source marks `root`; a thread
failed with "Lwt.Canceled" and none with Lwt.Resolution_loop's.  Prints a one-line
result; exit 1 with the reasons if not."""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import source_forms  # noqa: E402

FILES = ["lib/shop.ml", "bin/main.ml"]


def text(escaped):
    """A string as mtrace-cat -f json wrote it, between its quotes (guest-written:
    anything that is not valid JSON stays as it came)."""
    try:
        return json.loads('"%s"' % escaped)
    except ValueError:
        return escaped


def stanzas(doc, project):
    blocks = re.findall(r"```(?:[a-z]*)\n(.*?)```", open(doc).read(), flags=re.S)
    want = {"dune-project": None, "lib/dune": None, "bin/dune": None}
    for b in blocks:
        first = b.split("\n", 1)[0]
        for name in want:
            if re.match(r";\s*%s\b" % re.escape(name), first) or (
                    name == "dune-project" and first.startswith("(lang dune ")):
                want[name] = b
    missing = [n for n, b in want.items() if b is None]
    if missing:
        return "no block for %s in %s" % (missing, doc)
    for name, b in want.items():
        open(os.path.join(project, name), "w").write(b)
    return None


def from_json(summary_line, events):
    """The account of a run from the program's summary and mtrace-cat -f json's lines."""
    # (no exit status here: the summary line is printed only at the program's normal end)
    a = {"summary": json.loads(summary_line), "rc": None, "ops": collections.Counter(), "names": {},
         "created": {}, "creates": collections.Counter(), "resolved": collections.Counter(),
         "site_of": {}, "fails": collections.Counter()}
    last = None
    for line in open(events):
        e = json.loads(line)
        op = e.get("op")
        if op is None:
            continue
        a["ops"][op] += 1
        if op == "site_name":
            a["names"][e["arg"]] = e.get("str", "")
        elif op == "creates":
            a["creates"][e["arg"]] += 1
            a["created"][e["arg"]] = e["thread"]
            last = e["arg"]
        elif op == "site":
            a["site_of"][last] = e["arg"]
        elif op in ("fulfills", "fails"):
            a["resolved"][e["arg"]] += 1
            if op == "fails":
                a["fails"][e.get("str", "")] += 1
    return a


def read(path):
    a = {"summary": None, "rc": None, "ops": collections.Counter(), "names": {},
         "created": {}, "creates": {}, "resolved": {}, "site_of": {}, "fails": collections.Counter()}
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        kind, _, rest = line.partition(" ")
        f = rest.split(" ")
        try:
            if kind == "summary":
                a["summary"] = json.loads(rest)
            elif kind == "rc":
                a["rc"] = rest
            elif kind == "op" and len(f) == 2:
                a["ops"][f[0]] += int(f[1])
            elif kind == "name" and len(f) >= 1:
                a["names"][int(f[0])] = text(rest.partition(" ")[2])
            elif kind == "t" and len(f) == 5:
                t = int(f[0])
                a["creates"][t], a["created"][t] = int(f[1]), int(f[2])
                if f[3] != "-":
                    a["site_of"][t] = int(f[3])
                a["resolved"][t] = int(f[4])
            elif kind == "r" and len(f) == 2:
                a["resolved"][int(f[0])] = int(f[1])
            elif kind == "s" and len(f) == 2:
                a["site_of"][int(f[0])] = int(f[1])
            elif kind == "fail" and len(f) >= 1:
                a["fails"][text(rest.partition(" ")[2])] += int(f[0])
        except ValueError:
            a.setdefault("bad", []).append(line[:80])
    if a["rc"] is None:
        a["rc"] = "(none in the account)"
    return a


def check(a, root):
    problems = []
    if a.get("bad"):
        problems.append("unreadable account lines: %s" % a["bad"][:3])
    summary = a["summary"]
    if summary is None:
        return ["no summary from the program (its stdout was not one JSON line)"]
    if a["rc"] is not None and a["rc"] != "0":
        problems.append("the program exited %s" % a["rc"])
    # the ring's first record, RING_START, is the library's
    want, got = dict(summary.get("per_op", {}), ring_start=1), a["ops"]
    diff = {op: (want.get(op, 0), got.get(op, 0))
            for op in set(want) | set(got) if want.get(op, 0) != got.get(op, 0)}
    if diff:
        problems.append("per op (written, received): %s" % diff)
    created, creator, site_of, names = a["creates"], a["created"], a["site_of"], a["names"]
    twice_made = sorted(t for t, n in created.items() if n > 1)
    if twice_made:
        problems.append("threads created twice: %s" % twice_made[:5])
    twice = sorted(t for t, n in a["resolved"].items() if n > 1)
    never = sorted(set(a["resolved"]) - set(created))
    if twice or never:
        problems.append("resolved twice: %s; resolved, never created: %s" % (twice[:5], never[:5]))
    expect = {(f, l, c) for f in FILES for (l, c) in source_forms.sites(os.path.join(root, f))}
    roots = {(f, l) for f in FILES for l in source_forms.roots(os.path.join(root, f))}
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
    orphans = collections.Counter(where.get(t) for t, p in creator.items()
                                  if p == 0 and where.get(t, ("", 0))[:2] not in roots)
    if orphans:
        problems.append("threads created by thread 0 outside the root lines, by site: %s"
                        % dict(orphans.most_common(10)))
    fails = a["fails"]
    if "Lwt.Canceled" not in fails:
        problems.append("no thread failed with Lwt.Canceled: %s" % fails.most_common(5))
    if any("Resolution_loop" in f for f in fails):
        problems.append("a failure named Lwt.Resolution_loop.Canceled")
    if not problems:
        print("%d threads from %d sites (all %d forms of lib/shop.ml and bin/main.ml), %d events "
              "exact, parents true, %d failures (%d cancelled), %d rounds"
              % (len(created), len(seen), len(expect), sum(got.values()), sum(fails.values()),
                 fails["Lwt.Canceled"], summary.get("rounds", -1)))
    return problems


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "stanzas" and len(sys.argv) == 4:
        err = stanzas(sys.argv[2], sys.argv[3])
        if err:
            sys.exit(err)
    elif cmd in ("json", "account") and len(sys.argv) == 4 + (cmd == "json"):
        a = from_json(open(sys.argv[2]).read(), sys.argv[3]) if cmd == "json" else read(sys.argv[2])
        found = check(a, sys.argv[-1])
        if found:
            print("\n".join(found))
            sys.exit(1)
    else:
        sys.exit(__doc__)
