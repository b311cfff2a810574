"""Every table of mtrace-top -b output is aligned: in each row the i-th cell overlaps
the i-th title and no neighbouring one (the last column, free text, is not checked;
a line in parentheses is a note, not a row).
Reads the output on stdin; exits 1 naming the first misaligned row."""
import re
import sys


def spans(line):
    return [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", line)]


def overlaps(a, b):
    return a[0] < b[1] and b[0] < a[1]


def main():
    tables = 0
    rows = 0
    head = None
    for line in sys.stdin.read().splitlines():
        if line.startswith("DOMAIN "):
            head = spans(line)[:-1]
            tables += 1
            continue
        if head is None or not line.strip():
            head = None
            continue
        if line.startswith("("):  # a note under the domain rows, no row of the table
            continue
        cells = spans(line)
        for i, t in enumerate(head):
            if i >= len(cells):
                break
            c = cells[i]
            bad = not overlaps(c, t) or any(
                overlaps(c, head[j]) for j in (i - 1, i + 1) if 0 <= j < len(head))
            if bad:
                print("misaligned: cell %r (%d..%d) under title %r (%d..%d) in:\n%s"
                      % (c[2], c[0], c[1], t[2], t[0], t[1], line))
                return 1
        rows += 1
    if tables < 2 or rows < 2:
        print("only %d tables, %d rows" % (tables, rows))
        return 1
    print("aligned: %d tables, %d rows" % (tables, rows))
    return 0


sys.exit(main())
