"""protowire.py - the protobuf wire format as the tests' hostile clients write it by hand
(proto/mtrace.proto), with no help from protobuf-c or the project's client library: a test
that speaks the protocol this way cannot share a bug with the code it tests."""


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wt, payload):
    """One field: wire type 0 takes an int, 2 takes bytes."""
    key = varint((num << 3) | wt)
    if wt == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def frame(msg):
    """A message as the stream carries it: its length as a varint, then the message."""
    return varint(len(msg)) + msg


def read_varint(buf, i):
    """(value, index after it) of the varint at buf[i]; IndexError when it runs off the end."""
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def fields(buf):
    """{num: [values]}: varints as ints, length-delimited as bytes, fixed as raw bytes."""
    out, i = {}, 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(buf, i)
        elif wt == 2:
            n, i = read_varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


def hello(name, version=1):
    """The client's Hello frame."""
    return frame(field(1, 2, field(1, 0, version) + field(2, 2, name.encode())))
