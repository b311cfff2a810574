#!/usr/bin/env python3
"""[SRC_ROOT=DIR] daemon-graph.py [-b BUILD_DIR] [--tree | FOLDER...] - the dependency
graphs between the C files of each FOLDER (default: daemon client), or of the whole
tree, and their cycles.

  includes: node X = X.c + X.h, named by its path under FOLDER without the suffix
            (daemon/stream.c: "stream"; client/lib/recording.c: "lib/recording");
            X -> Y when X.c or X.h includes "Y.h".  An include is resolved as the
            compiler would find it first: beside the including file, then the one
            file of that name in FOLDER; headers outside FOLDER are not nodes.
  calls:    X -> Y when X.o calls a function Y.o defines: in each program (or shared
            library) that links X.o, the definition the linker takes (build.ninja names
            every link's objects and static libraries, nm what they define and call).
            A library's calls are read in the programs the project ships when one
            links it: a test program may swap in a double (tests/stream/fake-state.c
            for the daemon's state), which is not what the library depends on.  A call
            to a hook, a function a header of the caller's own folder declares for
            others to define (tests/lib/fuzz.h's LLVMFuzzerTestOneInput, which every fuzz
            target defines for fuzz-main.c), is the definer's dependency on that header
            (an include edge), not the caller's on the definer.  Data (a table's
            globals) and inline accessors are not calls.  Sources the build generates
            (proto/mtrace.pb-c.c) are named by their path under the build directory.
  --tree:   every C file of the tree (git's, or all under SRC_ROOT) in one graph, nodes
            named by their path under SRC_ROOT; and the rooms, each folder one node,
            folder A -> folder B when a file of A includes or calls one of B: a cycle
            between rooms is an arrow up (xenif including a header of sim, which
            includes xenif's).

Every cycle (strongly connected component of more than one node) is printed, none
exempted.  Exit status 1 on a cycle, 2 when a folder has no sources or no objects
(nothing was checked)."""
import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # run from the source tree: leave no __pycache__ there
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ninja_link  # noqa: E402

ROOT = os.path.abspath(os.environ.get("SRC_ROOT") or
                       os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SKIP_DIRS = ("node_modules", "_build")


def node_of(folder, path):
    return os.path.splitext(os.path.relpath(path, folder))[0]


def sources(folder):
    """The C files of folder: git's when it is a checkout (a build directory inside it is
    not sources), else every one under it."""
    try:
        out = subprocess.run(["git", "-C", folder, "ls-files", "-z", "--", "*.c", "*.h"],
                             capture_output=True, check=True).stdout.decode()
        files = [os.path.join(folder, f) for f in out.split("\0") if f]
        if files:
            return sorted(f for f in files if os.path.exists(f) and
                          not any(d in f.split(os.sep) for d in SKIP_DIRS))
    except (OSError, subprocess.CalledProcessError):
        pass
    out = []
    for dirpath, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and
                         not os.path.exists(os.path.join(dirpath, d, "build.ninja")))
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


PROTOTYPE = re.compile(r"([\w*])\s*\**\s*\b([A-Za-z_]\w*)\s*\(")
NOT_TYPES = {"return", "else", "do", "case", "sizeof", "if", "while", "for", "switch"}
_hooks = {}


def hooks(directory):
    """The functions the headers of directory declare (a type before the name)."""
    if directory not in _hooks:
        names = set()
        for h in os.listdir(directory) if os.path.isdir(directory) else []:
            if not h.endswith(".h"):
                continue
            text = open(os.path.join(directory, h), encoding="utf-8", errors="replace").read()
            text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
            for m in PROTOTYPE.finditer(text):
                before = text[:m.start(2)].split()
                if before and before[-1].strip("*") not in NOT_TYPES:
                    names.add(m.group(2))
        _hooks[directory] = names
    return _hooks[directory]


def shipped(build, target):
    rel = os.path.relpath(target.out, build.dir).split(os.sep)[0]
    return rel not in ("tests", "bench")


def call_graph(build, folder):
    """X -> Y for the objects of folder: what the linker binds X.o's calls to."""
    def named(src):
        """A generated source as if it were in the tree: its path under the build."""
        if os.path.commonpath([build.dir, src]) == build.dir:
            return os.path.join(ROOT, os.path.relpath(src, build.dir))
        return src

    inside = {o: named(s) for o, s in build.source.items()
              if os.path.commonpath([folder, named(s)]) == folder}
    linked_by = {}
    for t in build.targets.values():
        for o in t.all_objects():
            linked_by.setdefault(o, []).append(t)
    syms = {}

    def nm(o):
        if o not in syms:
            d, u = ninja_link.nm_symbols(o)
            syms[o] = ({s for s, k in d.items() if k in ("T", "W")}, u)
        return syms[o]

    defs = {}

    def definitions(t):
        """symbol -> the object the linker takes it from: the first definition in link
        order (the program's own objects, then the archives)."""
        if t.out not in defs:
            d = {}
            for x in t.all_objects():
                if os.path.exists(x):
                    for s in nm(x)[0]:
                        d.setdefault(s, x)
            defs[t.out] = d
        return defs[t.out]

    g = {}
    for o, src in inside.items():
        if not os.path.exists(o):
            continue
        node = node_of(folder, src)
        g.setdefault(node, set())
        targets = linked_by.get(o, [])
        targets = [t for t in targets if shipped(build, t)] or targets
        calls = nm(o)[1] - nm(o)[0]
        for t in targets:
            d = definitions(t)
            for s in calls:
                x = d.get(s)
                if x not in inside or node_of(folder, inside[x]) == node:
                    continue
                here = os.path.dirname(src)
                if os.path.dirname(inside[x]) != here and s in hooks(here):
                    continue
                g[node].add(node_of(folder, inside[x]))
    return g


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

    sys.setrecursionlimit(max(1000, 4 * len(g) + 100))
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def report(title, g, unres, listing):
    print("%s:" % title)
    if listing:
        width = max([len(n) for n in g] + [0]) + 2
        for n in sorted(g):
            print("  %-*s -> %s" % (width, n, " ".join(sorted(g[n])) or "-"))
    else:
        print("  %d nodes, %d edges" % (len(g), sum(len(v) for v in g.values())))
    for u in unres:
        print("  ambiguous: %s" % u)
    cyc = cycles(g)
    print("  cycles: %s" % ("; ".join(" <-> ".join(c) for c in cyc) if cyc else "none"))
    return 1 if cyc else 0


def rooms(*graphs):
    """Each folder one node: A -> B when a file of A depends on one of B."""
    r = {}
    for g in graphs:
        for a, deps in g.items():
            ra = os.path.dirname(a) or "."
            r.setdefault(ra, set())
            for b in deps:
                rb = os.path.dirname(b) or "."
                r.setdefault(rb, set())
                if rb != ra:
                    r[ra].add(rb)
    return r


def check_tree(build):
    files = sources(ROOT)
    if not files:
        print("no C sources under %s" % ROOT)
        return 2
    inc, unres = include_graph(ROOT, files)
    calls = call_graph(build, ROOT)
    status = 0
    if not calls:
        print("no objects under %s (build it first)" % build.dir)
        status = 2
    built = {os.path.dirname(n) for n in calls}
    unbuilt = sorted({os.path.dirname(n) for n in inc} - built)
    print("tree: %d C files in %d folders; objects of %d folders (includes only: %s)" % (
        len(files), len({os.path.dirname(n) for n in inc}), len(built),
        " ".join(unbuilt) or "-"))
    status = max(status, report("tree includes", inc, unres, False))
    status = max(status, report("tree calls", calls, [], False))
    status = max(status, report("rooms (folders; includes and calls)", rooms(inc, calls), [],
                                True))
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--tree", action="store_true", help="the whole tree, and its rooms")
    ap.add_argument("folders", nargs="*", default=["daemon", "client"])
    a = ap.parse_args()
    build = ninja_link.Build(a.build)
    if a.tree:
        return check_tree(build)
    status = 0
    for rel in a.folders:
        folder = os.path.abspath(os.path.join(ROOT, rel))
        files = sources(folder)
        if not files:
            print("%s: no sources" % rel)
            status = max(status, 2)
            continue
        inc, inc_unres = include_graph(folder, files)
        calls = call_graph(build, folder)
        if not calls:
            print("%s: no objects under %s (build it first)" % (rel, a.build))
            status = max(status, 2)
        for name, g, unres in (("includes", inc, inc_unres), ("calls", calls, [])):
            status = max(status, report("%s/ %s" % (rel, name), g, unres, True))
    return status


if __name__ == "__main__":
    sys.exit(main())
