"""ninja_link - what a meson build directory's build.ninja says was compiled and linked:
each object's source, each static library's objects, and each program's (or shared
library's) objects, static libraries of ours and outside libraries, in link order.
Shared by daemon-graph.py (what really calls what) and symbol-shadow.py (which
library's names ours may shadow)."""
import os
import re
import subprocess

# ninja's escapes: "$ " a space, "$:" a colon, "$$" a dollar, "$\n" a continuation.
_ESC = re.compile(r"\$([ :$\n])")


def _statements(path):
    """(outputs, rule, explicit inputs, implicit inputs, variables) of every build
    statement."""
    text = open(path, encoding="utf-8", errors="replace").read().replace("$\n", "")
    cur = None
    for line in text.split("\n"):
        if line.startswith("build "):
            if cur:
                yield cur
            cur = None
            # split on unescaped spaces, then undo the escapes
            toks = [_ESC.sub(lambda m: m.group(1), t)
                    for t in re.split(r"(?<!\$) +", line[len("build "):].strip())]
            colon = next((i for i, t in enumerate(toks) if t.endswith(":")
                          and not t.endswith("$:")), None)
            if colon is None:
                continue
            outs = toks[:colon] + [toks[colon][:-1]]
            rest = toks[colon + 1:]
            rule, rest = (rest[0], rest[1:]) if rest else ("", [])
            explicit, implicit, mode = [], [], 0
            for t in rest:
                if t == "|":
                    mode = 1
                elif t == "||":
                    mode = 2
                elif mode == 0:
                    explicit.append(t)
                elif mode == 1:
                    implicit.append(t)
            cur = (outs, rule, explicit, implicit, {})
        elif cur and line.startswith(" ") and "=" in line:
            k, v = line.strip().split("=", 1)
            cur[4][k.strip()] = v.strip()
        elif cur and not line.startswith(" "):
            yield cur
            cur = None
    if cur:
        yield cur


def _cc():
    return os.environ.get("CC", "cc")


_lib_cache = {}


def find_library(name):
    """The file the linker takes for -lNAME (the shared one first), or None."""
    if name not in _lib_cache:
        found = None
        for f in (name if name.startswith(":") else None,
                  "lib%s.so" % name, "lib%s.a" % name):
            if not f:
                continue
            f = f.lstrip(":")
            try:
                p = subprocess.run([_cc(), "-print-file-name=" + f], capture_output=True,
                                   text=True, check=True).stdout.strip()
            except (OSError, subprocess.CalledProcessError):
                p = ""
            if os.path.isabs(p) and os.path.exists(p):
                found = real_library(p)
                break
        _lib_cache[name] = found
    return _lib_cache[name]


def real_library(path):
    """A linker script (libc.so: "GROUP ( /lib/.../libc.so.6 ... )") names the real
    libraries; the first shared one it names stands for it."""
    try:
        head = open(path, "rb").read(4096)
    except OSError:
        return path
    if head.startswith(b"\x7fELF") or head.startswith(b"!<arch>"):
        return path
    m = re.search(rb"(/[^\s()]+\.so[.\d]*)", head)
    return m.group(1).decode() if m and os.path.exists(m.group(1).decode()) else path


class Build:
    def __init__(self, build_dir):
        self.dir = os.path.abspath(build_dir)
        self.source = {}   # object (absolute) -> source (absolute)
        self.archive = {}  # static library of ours (absolute) -> [objects]
        self.targets = {}  # program or shared library (absolute) -> Target
        ninja = os.path.join(self.dir, "build.ninja")
        if not os.path.exists(ninja):
            return
        links = []
        for outs, rule, explicit, implicit, var in _statements(ninja):
            if rule.startswith("c_COMPILER") and explicit:
                self.source[self._abs(outs[0])] = self._abs(explicit[0])
            elif rule == "STATIC_LINKER":
                self.archive[self._abs(outs[0])] = [self._abs(o) for o in explicit
                                                    if o.endswith(".o")]
            elif rule.startswith("c_LINKER"):
                links.append((outs[0], explicit, var.get("LINK_ARGS", "")))
        for out, explicit, args in links:
            self.targets[self._abs(out)] = Target(self, out, explicit, args.split())

    def _abs(self, p):
        return os.path.normpath(p if os.path.isabs(p) else os.path.join(self.dir, p))


class Target:
    """One link: its own objects, our static libraries in link order, and the outside
    libraries (shared or static) it is linked against, libc always among them."""

    def __init__(self, build, out, explicit, args):
        self.out = build._abs(out)
        self.objects = [build._abs(o) for o in explicit if o.endswith(".o")]
        self.archives, self.libraries = [], []
        for t in [o for o in explicit if not o.endswith(".o")] + args:
            if t.startswith("-l"):
                lib = find_library(t[2:])
                if lib and lib not in self.libraries:
                    self.libraries.append(lib)
                continue
            if t.startswith("-") or not re.search(r"\.(a|so)(\.[\d.]+)?$", t):
                continue
            p = build._abs(t)
            if p in build.archive:
                if p not in self.archives:
                    self.archives.append(p)
            elif os.path.isabs(t) and os.path.exists(t):
                lib = real_library(t)
                if lib not in self.libraries:
                    self.libraries.append(lib)
        libc = find_library(":libc.so.6")
        if libc and libc not in self.libraries:
            self.libraries.append(libc)
        self.archive_objects = [o for a in self.archives for o in build.archive[a]]

    def all_objects(self):
        return self.objects + self.archive_objects


def nm_symbols(path, dynamic=False):
    """(defined globals, undefined) of an object, archive or library: names without
    their symbol version."""
    args = ["nm", "-D", "--defined-only"] if dynamic else ["nm"]
    try:
        out = subprocess.run(args + [path], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}, set()
    defined, undefined = {}, set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("U", "w", "v"):
            undefined.add(parts[1].split("@")[0])
        elif len(parts) == 3 and (parts[1].isupper() or parts[1] in ("i", "u")) and \
                parts[1] != "U":
            # upper case: global; i: an indirect function (glibc's memcpy and the like);
            # u: a unique global
            defined[parts[2].split("@")[0]] = parts[1]
    return defined, undefined
