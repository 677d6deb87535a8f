#!/usr/bin/env python3
"""diskcache_damage.py DIR CASE (diskcache.sh runs it): damages every prompt cache entry under DIR (inferkv v1)
in the way CASE says, keeping the checksum sound."""
import glob, os, struct, sys

def crc32c(data, table=[]):
    if not table:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

def parse(b):
    assert b[:8] == b"inferkv\n"
    klen = struct.unpack_from("<I", b, 12)[0]
    off = 16 + klen
    ntok, slen = struct.unpack_from("<IQ", b, off)
    off += 12
    head = b[:off + 4 * ntok]
    state = b[off + 4 * ntok: off + 4 * ntok + slen]
    return head, state, off - 8  # offset of the state length

def write(path, head, slen_off, state):
    head = bytearray(head)
    struct.pack_into("<Q", head, slen_off, len(state))
    body = bytes(head) + bytes(state)
    with open(path, "wb") as f:
        f.write(body + struct.pack("<I", crc32c(body)))

def main():
    d, case = sys.argv[1], sys.argv[2]
    for path in glob.glob(os.path.join(d, "*", "*.kv")):
        b = open(path, "rb").read()
        head, state, slen_off = parse(b)
        s = bytearray(state)
        cells = struct.unpack_from("<I", s, 4)[0]
        data = 8 + 12 * cells
        if case == "pos-1":
            struct.pack_into("<i", s, 8 + 12 * 5, -1)
        elif case == "huge-cells":
            struct.pack_into("<I", s, 4, 0x40000000)
        elif case == "layers":
            struct.pack_into("<I", s, data + 4, struct.unpack_from("<I", s, data + 4)[0] + 1)
        elif case == "rowsize":
            struct.pack_into("<Q", s, data + 12, 2 * struct.unpack_from("<Q", s, data + 12)[0])
        elif case == "truncated":
            s = s[: len(s) // 2]
        else:
            sys.exit("unknown case " + case)
        write(path, head, slen_off, s)
        print("damaged", path, "cells", cells, "state", len(state), "->", len(s))

main()
