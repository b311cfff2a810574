"""The creation sites of an OCaml source under ppx_mtrace, found by reading the text
alone: tests/ocaml/source_forms.py's scan (every traced form docs/ocaml.md lists, at the
position it gives it), as a set of (line, column), column from 0 as ppx_mtrace's
"file:line:col" counts it.  One scanner: this module is only the name its callers
(tests/ocaml/test-lwt.sh, tests/top/ocaml_sites_check.py,
tests/xen/check_ocaml_sites.py) import it by.

As a program: lwt_forms.py SOURCE.ml prints "line:col" a line."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_forms import sites  # noqa: E402,F401

if __name__ == "__main__":
    for line, col in sorted(sites(sys.argv[1])):
        print("%d:%d" % (line, col))
