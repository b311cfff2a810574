#!/usr/bin/env python3
# notify-listen.py SOCKET OUT: a stand-in for systemd's NOTIFY_SOCKET that appends every
# datagram it receives to OUT, one message a line (newlines inside become " | ").
import os, socket, sys
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a", buffering=1) as f:
    while True:
        msg = s.recv(4096).decode("utf-8", "replace")
        f.write(msg.replace("\n", " | ") + "\n")
