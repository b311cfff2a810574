#!/bin/bash
# google-decode.sh - the stream's EventBatch frames against Google's protobuf: a
# recording of stream-harness's events (mtrace-cat -f proto keeps the frames as mtraced
# packed them, docs/recording.md) parsed frame by frame by python3-protobuf and written
# again by its encoder, which must give the same bytes (mtraced packs the batches by
# hand, daemon/stream-blob.c). Needs protoc and python3-protobuf (Debian: apt-get
# install protobuf-compiler python3-protobuf); not a test, so not a dependency.
#
#   bench/stream/google-decode.sh BUILD [EVENTS]     (default 200000)
set -eu
B=$(cd "${1:?usage: google-decode.sh BUILD [EVENTS]}" && pwd)
N=${2:-200000}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/mtrace-google.XXXXXX)
trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3 # Debian's python3-protobuf is for the system interpreter
protoc -I "$SRC/proto" --python_out="$T" "$SRC/proto/mtrace.proto"
"$B/tests/stream/stream-harness" -s "$T/sock" -N "$N" -r 0 -D 2 -R 2 -w 1 -L 100 >/dev/null 2>&1 &
HP=$!
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.05; done
"$B/client/cat/mtrace-cat" -s "$T/sock" -f proto -O "$T/rec.mtr" 2>/dev/null || true
wait "$HP"
echo "+ stream-harness -N $N -r 0 -D 2 -R 2 -w 1; mtrace-cat -f proto -O rec.mtr; python3-protobuf"
"$PY" - "$T" "$N" <<'PYEOF'
import struct, sys
sys.path.insert(0, sys.argv[1])
import mtrace_pb2
from google.protobuf.internal.decoder import _DecodeVarint

d = open(sys.argv[1] + "/rec.mtr", "rb").read()
off = struct.unpack_from("<H", d, 10)[0]  # the header's length (docs/recording.md)
batches = events = same = 0
while off < len(d):
    n, off = _DecodeVarint(d, off)
    raw = d[off:off + n]
    off += n
    m = mtrace_pb2.ServerMsg()
    m.ParseFromString(raw)
    if m.WhichOneof("msg") != "events":
        continue
    eb = m.events
    batches += 1
    events += len(eb.op)
    ok = len(eb.ts_delta) == len(eb.op) == len(eb.thread) == len(eb.arg) == len(eb.type)
    ok = ok and all(r < len(eb.str) for r in eb.str_ref)
    same += ok and m.SerializeToString() == raw
print("%d EventBatch frames, %d events (of %s): %d byte-identical when Google's encoder "
      "writes what its decoder read" % (batches, events, sys.argv[2], same))
sys.exit(0 if batches and same == batches and events == int(sys.argv[2]) else 1)
PYEOF
