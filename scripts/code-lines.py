#!/usr/bin/env python3
"""[SRC_ROOT=DIR] code-lines.py [--max N] - no code file of ours is longer than N lines
(650: docs/HACKING.md), so that a file stays one subsystem a reader can hold.

Code: C and its headers, OCaml (.ml, .mli), Python, shell, JavaScript (.js, .mjs), and
any file without one of those suffixes whose first line is a #! of sh, bash, python or
node.  Ours: what git tracks (every file under SRC_ROOT when it is not a checkout),
never what npm or dune put in node_modules/ or _build/.  Exit status 1 naming each
file over the limit, 2 when no code file was found."""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.environ.get("SRC_ROOT") or
                       os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUFFIXES = (".c", ".h", ".ml", ".mli", ".py", ".sh", ".js", ".mjs")
SHEBANG = re.compile(rb"^#!.*\b(sh|bash|dash|python3?|node)\b")
NOT_OURS = ("node_modules", "_build", ".git")


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             check=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in NOT_OURS and
                   not os.path.exists(os.path.join(dirpath, d, "build.ninja"))]
        files += [os.path.relpath(os.path.join(dirpath, n), root) for n in names]
    return files


def is_code(path):
    if path.endswith(SUFFIXES):
        return True
    if "." in os.path.basename(path):
        return False
    try:
        with open(path, "rb") as f:
            return bool(SHEBANG.match(f.readline(200)))
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=650)
    a = ap.parse_args()
    over, n = [], 0
    for rel in sorted(tracked(ROOT)):
        if any(p in NOT_OURS for p in rel.split("/")):
            continue
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path) or not is_code(path):
            continue
        n += 1
        with open(path, "rb") as f:
            lines = f.read().count(b"\n")
        if lines > a.max:
            over.append((lines, rel))
    if not n:
        print("no code files under %s" % ROOT)
        return 2
    for lines, rel in sorted(over, reverse=True):
        print("%s: %d lines (at most %d)" % (rel, lines, a.max))
    if over:
        print("FAIL: %d of %d code files over %d lines: split them by subsystem" %
              (len(over), n, a.max))
        return 1
    print("ok: %d code files, none over %d lines" % (n, a.max))
    return 0


if __name__ == "__main__":
    sys.exit(main())
