#!/usr/bin/env python3
"""selftest.py lines|graph|symbols - each check of the style suite fails on a tree made
to break it, naming what breaks it, and passes once that is mended: the fixtures are
written (and, for the graphs of calls and the symbols, compiled, with a build.ninja as
meson writes one) in a temporary directory, never in the tree, whose own checks
(code-lines, graph-tree, symbols) must pass.

Usage: selftest.py CHECK   (SRC_ROOT: the source tree, for the scripts)"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
SRC = os.environ.get("SRC_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPTS = os.path.join(SRC, "scripts")
sys.path.insert(0, SCRIPTS)
import ninja_link  # noqa: E402


class Fail(Exception):
    pass


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(script, root, *args):
    env = dict(os.environ, SRC_ROOT=root, PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, script)] + list(args),
                       capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


def expect(what, rc, out, want_rc, needles):
    print("--- %s: exit %d\n%s" % (what, rc, out.rstrip()))
    if rc != want_rc:
        raise Fail("%s: exit %d, want %d" % (what, rc, want_rc))
    flat = " ".join(out.split())  # column widths vary with the names
    for n in needles:
        if " ".join(n.split()) not in flat:
            raise Fail("%s: %r not in its output" % (what, n))


def compile_tree(src, build, progs):
    """Compile each program's sources of src into build as meson lays them out, and
    write the build.ninja that says so.  progs: {name: ([sources], [link args])}."""
    lines = []
    for name, (srcs, args) in progs.items():
        objs = []
        for s in srcs:
            obj = "%s.p/%s.o" % (name, os.path.basename(s))
            os.makedirs(os.path.join(build, os.path.dirname(obj)), exist_ok=True)
            subprocess.run([os.environ.get("CC", "cc"), "-c", "-O0", "-w", "-o",
                            os.path.join(build, obj), os.path.join(src, s)], check=True)
            rel = os.path.relpath(os.path.join(src, s), build)
            lines += ["build %s: c_COMPILER %s" % (obj, rel), " ARGS = -O0", ""]
            objs.append(obj)
        lines += ["build %s: c_LINKER %s" % (name, " ".join(objs)),
                  " LINK_ARGS = %s" % " ".join(args), ""]
    write(build, "build.ninja", "\n".join(lines) + "\n")


def lines_check(tmp):
    src = os.path.join(tmp, "src")
    body = "".join("x%d\n" % i for i in range(651))
    bad = {"a.c": body, "b.ml": body, "c.py": body, "d.sh": body, "e.mjs": body,
           "sub/f.h": body, "tool": "#!/bin/sh\n" + body[body.index("x1\n"):]}
    for rel, text in bad.items():
        write(src, rel, text)
    write(src, "ok.c", "".join("y%d\n" % i for i in range(650)))
    write(src, "notes.txt", body * 2)                # not code
    write(src, "node_modules/dep/x.js", body * 2)    # not ours
    write(src, "data.json", body * 2)
    rc, out = run("code-lines.py", src)
    expect("651-line files", rc, out, 1, ["%s: 651 lines" % r for r in bad] +
           ["FAIL: 7 of 8 code files over 650"])
    for rel in ("ok.c", "notes.txt", "node_modules", "data.json"):
        if "\n" + rel in "\n" + out:
            raise Fail("code-lines named %s" % rel)
    for rel, text in bad.items():
        write(src, rel, text[:text.rindex("x650")])  # 650 lines (the script: 649 and #!)
    rc, out = run("code-lines.py", src)
    expect("the same at 650 lines", rc, out, 0, ["ok: 8 code files, none over 650 lines"])


def graph_check(tmp):
    src, build = os.path.join(tmp, "src"), os.path.join(tmp, "build")
    # r1: an include cycle (a.c includes b.h, b.c includes a.h) and a call cycle
    # (c.c calls d.c's fd, which calls c.c's fc; neither includes the other)
    write(src, "r1/a.h", "int fa(void);\n")
    write(src, "r1/a.c", '#include "a.h"\n#include "b.h"\nint fa(void) { return 1; }\n')
    write(src, "r1/b.h", "int fb(void);\n")
    write(src, "r1/b.c", '#include "b.h"\n#include "a.h"\nint fb(void) { return 2; }\n')
    write(src, "r1/c.c", "int fd(int);\nint fc(int n) { return n ? fd(n - 1) : 0; }\n")
    write(src, "r1/d.c", "int fc(int);\nint fd(int n) { return fc(n) + 1; }\n")
    # r2 and r3: no cycle between files, one between the folders (an arrow up)
    write(src, "r2/x.c", '#include "../r3/y.h"\n')
    write(src, "r2/z.h", "int fz(void);\n")
    write(src, "r3/y.h", '#include "../r2/z.h"\n')
    # lib and user: a hook (lib's header declares it, user defines it) is no cycle
    write(src, "lib/hook.h", "int hook(void);\nint lib_help(void);\n")
    write(src, "lib/main.c", '#include "hook.h"\nint lib_help(void) { return 3; }\n'
          "int main(void) { return hook(); }\n")
    write(src, "user/user.c", '#include "../lib/hook.h"\nint hook(void) { return lib_help(); }\n')
    progs = {"r1/prog": (["r1/a.c", "r1/b.c", "r1/c.c", "r1/d.c"], []),
             "lib/prog": (["lib/main.c", "user/user.c"], [])}
    compile_tree(src, build, progs)
    rc, out = run("daemon-graph.py", src, "-b", build, "--tree")
    expect("a tree with cycles", rc, out, 1, ["cycles: r1/a <-> r1/b", "cycles: r1/c <-> r1/d",
                                              "cycles: r2 <-> r3", "lib -> - r1"])
    rc, out = run("daemon-graph.py", src, "-b", build, "r1")
    expect("folder r1", rc, out, 1, ["r1/ includes:", "cycles: a <-> b", "r1/ calls:",
                                    "cycles: c <-> d"])
    # mended: b.c no longer includes a.h, d.c no longer calls back, y.h includes no r2
    write(src, "r1/b.c", '#include "b.h"\nint fb(void) { return 2; }\n')
    write(src, "r1/d.c", "int fd(int n) { return n + 1; }\n")
    write(src, "r3/y.h", "int fy(void);\n")
    compile_tree(src, build, progs)
    rc, out = run("daemon-graph.py", src, "-b", build, "--tree")
    expect("the tree mended", rc, out, 0, ["tree includes:", "tree calls:", "cycles: none"])
    if "<->" in out:
        raise Fail("a cycle left in the mended tree")
    rc, out = run("daemon-graph.py", src, "-b", build, "r1")
    expect("folder r1 mended", rc, out, 0, ["a      -> b", "c   -> d"])
    rc, out = run("daemon-graph.py", src, "-b", os.path.join(tmp, "nobuild"), "r1")
    expect("no objects", rc, out, 2, ["no objects"])


def symbols_check(tmp):
    src, build = os.path.join(tmp, "src"), os.path.join(tmp, "build")
    event = ninja_link.find_library("event_core")
    xs = ninja_link.find_library("xenstore")
    if not event:
        raise Fail("libevent_core not found: the fixture needs a library to shadow")
    # libevent's, libc's and (where it is installed) libxenstore's own names
    write(src, "s/bad.c", "int event_base_new(void) { return 0; }\n"
          "int clock_gettime(void) { return 0; }\n"
          "int xs_open(void) { return 0; }\nint fixture_fine(void) { return 1; }\n")
    args = [event] + ([xs] if xs else [])
    compile_tree(src, build, {"s/prog": (["s/bad.c"], args)})
    rc, out = run("symbol-shadow.py", src, "-b", build)
    want = ["s/bad.c: event_base_new shadows libevent_core", "s/bad.c: clock_gettime shadows libc"]
    if xs:
        want.append("s/bad.c: xs_open shadows libxenstore")
    expect("names of libevent, libc, libxenstore", rc, out, 1, want)
    if "fixture_fine" in out:
        raise Fail("symbol-shadow named a name no library has")
    write(src, "s/bad.c", "int fx_event_base_new(void) { return 0; }\n"
          "static int clock_gettime(void) { return 0; }\n"
          "int fx_xs_open(void) { return clock_gettime(); }\n")
    compile_tree(src, build, {"s/prog": (["s/bad.c"], args)})
    rc, out = run("symbol-shadow.py", src, "-b", build)
    expect("renamed, or static", rc, out, 0, ["ok: 1 links"])
    rc, out = run("symbol-shadow.py", src, "-b", os.path.join(tmp, "nobuild"))
    expect("no build", rc, out, 2, ["no link"])


def main():
    checks = {"lines": lines_check, "graph": graph_check, "symbols": symbols_check}
    if len(sys.argv) != 2 or sys.argv[1] not in checks:
        print(__doc__)
        return 2
    tmp = tempfile.mkdtemp(prefix="mtrace-style-")
    try:
        checks[sys.argv[1]](tmp)
    except Fail as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok: %s fails on the broken fixture, naming each fault, and passes once mended" %
          sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
