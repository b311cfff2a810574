"""subscribe_model.py - what a Subscribe selects, as the tests model it: the one Python
copy of the daemon's filter (daemon/stream*.c), used by every checker that compares
what a client received with what was written.

A filter is mtrace-cat's options: -D ID|NAME (any of them), -o OP[,OP] (any of them),
--label PREFIX (an event of a thread whose label starts with any of them), --no-events.
Empty sets select everything."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import mtrace_ops  # noqa: E402  (the op table of common/ops.c)

# Op codes by name.
OPS = mtrace_ops.BY_NAME

# mtrace-cat's options that take a value (the rest are flags).
_VALUED = ("-D", "--domain", "-d", "-o", "-l", "--label", "-f", "--stats", "-s", "--socket", "-n", "-t", "--time")


def op_code(name):
    """An op given by name or number."""
    return int(name) if name.isdigit() else OPS[name]


class Subscribe:
    def __init__(self, args):
        self.ids, self.names, self.ops, self.labels = set(), set(), set(), []
        self.no_events = "--no-events" in args
        i = 0
        while i < len(args):
            flag = args[i]
            if flag not in _VALUED or i + 1 == len(args):
                i += 1
                continue
            v = args[i + 1]
            i += 2
            if flag in ("-D", "--domain", "-d"):  # -d: the old spelling
                (self.ids.add(int(v)) if v.isdigit() else self.names.add(v))
            elif flag == "-o":
                self.ops.update(op_code(o) for o in v.split(","))
            elif flag in ("--label", "-l"):  # -l: the old spelling
                self.labels.append(v)

    def selects_domain(self, domid, name):
        return not (self.ids or self.names) or domid in self.ids or name in self.names

    def selects(self, domid, name, op, label):
        """Whether an event of op in domain (domid, name), on a thread labelled label
        (None: not labelled), reaches the client."""
        if self.no_events or not self.selects_domain(domid, name):
            return False
        if self.ops and op not in self.ops:
            return False
        if self.labels and (label is None or not any(label.startswith(p) for p in self.labels)):
            return False
        return True
