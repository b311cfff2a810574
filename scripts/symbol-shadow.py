#!/usr/bin/env python3
"""[SRC_ROOT=DIR] symbol-shadow.py [-b BUILD_DIR] - no global name of ours shadows a name
a library we link exports.

For every program and shared library the build links (build.ninja: its objects and our
static libraries), each global symbol our objects define is looked up in what the
outside libraries of that link export (nm -D --defined-only of a shared one, nm -g of a
static one; libc always): a name defined on both sides is one the linker takes from us
for every caller, the library's own callers included (the simulated xenstore's xs_open
once answered xenif-xen.c's call meant for libxenstore's).  The C stubs dune builds for
ocaml/ are one more link, against the OCaml runtime, libxen*, libm and libc.

Exit status 1 when a name is shadowed (each printed with its object and library), 2
when the build has no link to check (not built)."""
import argparse
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ninja_link  # noqa: E402

ROOT = os.environ.get("SRC_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_exports = {}


def exports(lib):
    """What an outside library gives its users: the dynamic symbol table of a shared
    one, the globals of a static one."""
    if lib not in _exports:
        dynamic = not lib.endswith(".a")
        _exports[lib] = set(ninja_link.nm_symbols(lib, dynamic=dynamic)[0])
    return _exports[lib]


_defs = {}


def defined(obj):
    if obj not in _defs:
        _defs[obj] = ninja_link.nm_symbols(obj)[0]
    return _defs[obj]


def ocaml_link(build):
    """The dune-built objects of ocaml/'s C stubs, and what they are linked against."""
    objs = []
    for src in glob.glob(os.path.join(ROOT, "ocaml", "**", "*.c"), recursive=True):
        rel = os.path.relpath(src, os.path.join(ROOT, "ocaml"))
        o = os.path.join(build.dir, "ocaml", "_build", "default", os.path.splitext(rel)[0] + ".o")
        if os.path.exists(o):
            objs.append(o)
    if not objs:
        return None
    libs = [ninja_link.find_library(n) for n in
            ("xenctrl", "xenevtchn", "xengnttab", "xenstore", "m", ":libc.so.6")]
    try:
        where = subprocess.run(["ocamlfind", "ocamlopt", "-where"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        where = ""
    if where and os.path.exists(os.path.join(where, "libasmrun.a")):
        libs.append(os.path.join(where, "libasmrun.a"))
    return ("ocaml/ C stubs (dune)", objs, [l for l in libs if l])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    build = ninja_link.Build(a.build)
    links = [(os.path.relpath(t.out, build.dir), t.all_objects(), t.libraries)
             for t in sorted(build.targets.values(), key=lambda t: t.out)]
    oc = ocaml_link(build)
    if oc:
        links.append(oc)
    if not links:
        print("no link in %s to check (build it first)" % a.build)
        return 2
    found, checked = {}, 0
    for name, objs, libs in links:
        checked += 1
        for o in objs:
            if not os.path.exists(o):
                continue
            for sym in defined(o):
                for lib in libs:
                    if sym in exports(lib):
                        src = build.source.get(o, o)
                        key = (sym, os.path.relpath(src, ROOT), os.path.basename(lib))
                        found.setdefault(key, []).append(name)
    for (sym, src, lib), where in sorted(found.items()):
        print("%s: %s shadows %s's (linked into %s)" % (src, sym, lib, ", ".join(sorted(set(where)))))
    if found:
        print("FAIL: %d name(s) of ours shadow a library's: rename ours (or make it static)"
              % len(found))
        return 1
    print("ok: %d links, no global of ours shadows a name their libraries export" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
