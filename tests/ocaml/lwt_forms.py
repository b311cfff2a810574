"""The creation sites of an OCaml source that ppx_mtrace rewrites, found by scanning the
source itself (not from anything the traced program says): every let%lwt, >>=, >|=,
Lwt.async/wait/task/catch/... and Lwt_mvar/Lwt_condition.wait/Lwt_mutex/Lwt_stream/
Lwt_unix.sleep outside comments, as (line, column) -- column from 0, as __POS__ and
ppx_mtrace's "file:line:col" count it.  Lwt_condition.signal/broadcast carry no site.

As a program: lwt_forms.py SOURCE.ml prints "line:col" a line."""
import re
import sys

FORMS = re.compile(
    r"let%lwt|>>=|>\|=|\b(?:Lwt\.(?:bind|map|async|wait|task|catch|try_bind|join|pick|choose)"
    r"|Lwt_mvar\.(?:take|put)|Lwt_condition\.wait|Lwt_mutex\.(?:lock|with_lock)"
    r"|Lwt_stream\.(?:next|get)|Lwt_unix\.sleep)\b")


def sites(path):
    src = open(path).read()
    # comments become blanks of the same shape, so lines and columns stay put
    src = re.sub(r"\(\*.*?\*\)", lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)
    out = set()
    for n, line in enumerate(src.split("\n"), 1):
        for m in FORMS.finditer(line):
            out.add((n, m.start()))
    return out


if __name__ == "__main__":
    for line, col in sorted(sites(sys.argv[1])):
        print("%d:%d" % (line, col))
