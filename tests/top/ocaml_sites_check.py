"""ocaml_sites_check.py SOURCE.ml DOMAIN TOP-OUTPUT: mtrace-top -b -x's rows for DOMAIN
name exactly the creation sites that a scan of SOURCE finds (tests/ocaml/lwt_forms.py),
as "dir/file.ml:line:col", each with a count.  Exit 1 (saying why) if not; with --wait,
exit 2 instead while some source site has no row yet (the caller polls)."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ocaml"))
import lwt_forms  # noqa: E402

args = sys.argv[1:]
wait = args[0] == "--wait"
if wait:
    args = args[1:]
src, domain, out = args
expect = lwt_forms.sites(src)
rel = os.path.join(os.path.basename(os.path.dirname(os.path.abspath(src))), os.path.basename(src))
# the last update only: rows of one snapshot
text = open(out, errors="replace").read()
blocks = text.split("mtrace-top ")
last = blocks[-1] if len(blocks) > 1 else ""
rows = {}
bad = []
in_sites = False
for line in last.split("\n"):
    f = line.split()
    if f[:2] == ["DOMAIN", "COUNT"] or (f and f[0] == "DOMAIN" and f[-1] == "SITE"):
        in_sites = True
        continue
    if not in_sites or not f or f[0] != domain:
        continue
    m = re.fullmatch(r"(.*):(\d+):(\d+)", f[-1])
    if len(f) < 8 or not m or not f[1].isdigit():
        bad.append("not a site row: %r" % line)
        continue
    if m.group(1) != rel:
        bad.append("site %s is not in %s" % (f[-1], rel))
        continue
    site = (int(m.group(2)), int(m.group(3)))
    if site not in expect:
        bad.append("site %s is no traced form of the source (%s)" % (f[-1], rel))
    if site in rows:
        bad.append("site %s shown twice" % f[-1])
    rows[site] = int(f[1])
missing = sorted(expect - set(rows))
if bad:
    print("\n".join(bad))
    sys.exit(1)
if missing:
    print("source sites without a row: %s" % ", ".join("%d:%d" % s for s in missing))
    sys.exit(2 if wait else 1)
if any(n < 1 for n in rows.values()):
    print("rows without threads: %s" % rows)
    sys.exit(1)
print("%d rows, each a traced form of %s: %s" % (len(rows), rel,
      " ".join("%d:%d=%d" % (s[0], s[1], rows[s]) for s in sorted(rows))))
