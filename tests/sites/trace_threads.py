"""The threads of a trace as mtraced counts them, from `mtrace-replay --dump`: every id
an event names as its thread or as the thread it creates, resolves or signals; a
CREATES of a known id is a new thread.  Usage: trace_threads.py DUMP (prints N)."""
import sys


def count(dump_path):
    seen, n = set(), 0
    for line in open(dump_path):
        f = line.split(" ", 5)
        op, thread, arg = f[1], int(f[2]), int(f[3])
        if op in ("gc",):
            continue
        if thread != -1 and thread not in seen:
            seen.add(thread)
            n += 1
        if op == "creates" and arg != -1 and arg != thread:
            n += 1
            seen.add(arg)
        elif op in ("fulfills", "fails", "signal", "signal_new") and arg != -1 and arg not in seen:
            seen.add(arg)
            n += 1
    return n


if __name__ == "__main__":
    print(count(sys.argv[1]))
