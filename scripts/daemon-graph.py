#!/usr/bin/env python3
"""[SRC_ROOT=DIR] daemon-graph.py [-b BUILD_DIR] [FOLDER...] - the dependency graphs between
the files of each FOLDER (default: daemon client), and their cycles.

  includes: node X = X.c + X.h, named by its path under FOLDER without the suffix
            (daemon/stream.c: "stream"; client/lib/recording.c: "lib/recording");
            X -> Y when X.c or X.h includes "Y.h".  An include is resolved as the
            compiler would find it first: beside the including file, then the one
            file of that name in FOLDER; headers outside FOLDER are not nodes.
  calls:    X -> Y when X.o calls a function Y.o defines (nm over the build's objects
            of FOLDER: what really calls what).  A symbol defined in the caller's own
            directory (its program) wins over one elsewhere in FOLDER (a library).
            Data (a table's globals) and inline accessors are not calls.

Every cycle (strongly connected component of more than one node) is printed, none
exempted.  Exit status 1 on a cycle, 2 when a folder has no sources or no objects
(nothing was checked)."""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.environ.get("SRC_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def node_of(folder, path):
    return os.path.splitext(os.path.relpath(path, folder))[0]


def sources(folder):
    out = []
    for dirpath, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        out += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith((".c", ".h"))]
    return out


def include_graph(folder, files):
    by_name = {}
    for f in files:
        if f.endswith(".h"):
            by_name.setdefault(os.path.basename(f), []).append(f)
    g, unresolved = {}, []
    for f in files:
        node = node_of(folder, f)
        g.setdefault(node, set())
        for inc in INCLUDE.findall(open(f, encoding="utf-8", errors="replace").read()):
            beside = os.path.normpath(os.path.join(os.path.dirname(f), inc))
            if os.path.exists(beside):
                target = beside
            else:
                cands = by_name.get(os.path.basename(inc), [])
                if len(cands) > 1:
                    unresolved.append("%s: \"%s\" could be %s" % (
                        os.path.relpath(f, ROOT), inc,
                        " or ".join(os.path.relpath(c, ROOT) for c in cands)))
                if len(cands) != 1:
                    continue
                target = cands[0]
            if os.path.commonpath([folder, os.path.abspath(target)]) != folder:
                continue
            dep = node_of(folder, target)
            if dep != node:
                g[node].add(dep)
    return g, unresolved


def objects(build, folder):
    """(object, source node) for every object compiled from a file of folder."""
    rel = os.path.relpath(folder, ROOT)
    out = []
    for o in glob.glob(os.path.join(build, rel, "**", "*.p", "*.c.o"), recursive=True):
        src = os.path.join(folder, os.path.relpath(os.path.dirname(os.path.dirname(o)),
                                                   os.path.join(build, rel)),
                           os.path.basename(o)[:-2])
        if os.path.exists(src):
            out.append((o, node_of(folder, src)))
    return out


def call_graph(build, folder):
    defs, uses = {}, {}
    for o, node in objects(build, folder):
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        uses.setdefault(node, set())
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] == "T":
                defs.setdefault(parts[2], set()).add(node)
            elif len(parts) == 2 and parts[0] == "U":
                uses[node].add(parts[1])
    g, unresolved = {}, []
    for node, syms in uses.items():
        g[node] = set()
        here = os.path.dirname(node)
        for s in sorted(syms):
            cands = defs.get(s, set()) - {node}
            if node in defs.get(s, set()):
                continue
            own = {c for c in cands if os.path.dirname(c) == here}
            pick = own or cands
            if len(pick) > 1:
                unresolved.append("%s calls %s, defined in %s" % (node, s, " and ".join(sorted(pick))))
            g[node] |= pick
    return g, unresolved


def cycles(g):
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("folders", nargs="*", default=["daemon", "client"])
    a = ap.parse_args()
    status = 0
    for rel in a.folders:
        folder = os.path.abspath(os.path.join(ROOT, rel))
        files = sources(folder)
        if not files:
            print("%s: no sources" % rel)
            status = max(status, 2)
            continue
        inc, inc_unres = include_graph(folder, files)
        calls, call_unres = call_graph(a.build, folder)
        if not calls:
            print("%s: no objects under %s (build it first)" % (rel, a.build))
            status = max(status, 2)
        width = max(len(n) for n in list(inc) + list(calls)) + 2
        for name, g, unres in (("includes", inc, inc_unres), ("calls", calls, call_unres)):
            print("%s/ %s:" % (rel, name))
            for n in sorted(g):
                print("  %-*s -> %s" % (width, n, " ".join(sorted(g[n])) or "-"))
            for u in unres:
                print("  ambiguous: %s" % u)
            cyc = cycles(g)
            print("  cycles: %s" % ("; ".join(" <-> ".join(c) for c in cyc) if cyc else "none"))
            if cyc:
                status = max(status, 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
