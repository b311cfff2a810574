#!/usr/bin/env python3
"""[SRC_ROOT=DIR] daemon-graph.py [BUILD_DIR] - the dependency graphs between daemon/ files, and
their cycles.

  includes: node X = daemon/X.c + daemon/X.h; X -> Y when X.c or X.h includes "Y.h".
  calls:    X -> Y when X.o calls a function Y.o defines (nm over the build's objects
            of daemon/: what really calls what).  Data (a table's globals, such as
            state_cfg) and inline accessors are not calls.

Cycles (strongly connected components of more than one node) are printed; headers
that are only the layout of a table and its inline accessors (TABLES) are left out of
the include graph, as their users only read the table.  Exit status 1 on a cycle."""
import glob
import os
import re
import subprocess
import sys

ROOT = os.environ.get("SRC_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DAEMON = os.path.join(ROOT, "daemon")
TABLES = {"guest", "state-int"}


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def include_graph():
    g = {}
    for f in glob.glob(os.path.join(DAEMON, "*.[ch]")):
        node = stem(f)
        g.setdefault(node, set())
        for m in re.finditer(r'^#include "([^"]+)\.h"', open(f).read(), re.M):
            dep = m.group(1)
            if dep != node and os.path.exists(os.path.join(DAEMON, dep + ".h")) \
                    and dep not in TABLES:
                g[node].add(dep)
    return g


def call_graph(build):
    defs, uses = {}, {}
    for o in glob.glob(os.path.join(build, "daemon", "*.p", "*.c.o")):
        node = stem(stem(o))
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] == "T":
                defs[parts[2]] = node
            elif len(parts) == 2 and parts[0] == "U":
                uses.setdefault(node, set()).add(parts[1])
        uses.setdefault(node, set())
    return {n: {defs[s] for s in syms if s in defs and defs[s] != n} for n, syms in uses.items()}


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
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    bad = False
    for name, g in (("includes", include_graph()), ("calls", call_graph(build))):
        print("%s:" % name)
        for n in sorted(g):
            print("  %-16s -> %s" % (n, " ".join(sorted(g[n])) or "-"))
        cyc = cycles(g)
        print("  cycles: %s" % ("; ".join(" <-> ".join(c) for c in cyc) if cyc else "none"))
        bad |= bool(cyc)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
