#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Damage a relocatable object's __mcount_loc, without patchsite.

  mcountrel.py shift OBJ       the first entry's addend moved by one byte
  mcountrel.py reverse OBJ     the entries' targets in reverse order
"""
import struct
import sys


def main(cmd, path):
    d = bytearray(open(path, "rb").read())
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    sh = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    strs = sh[shstrndx][4]
    name = lambda s: d[strs + s[0]:d.index(b"\0", strs + s[0])].decode()
    rela = next(s for s in sh if name(s) == ".rela__mcount_loc")
    n = rela[5] // 24
    ents = [struct.unpack_from("<QQq", d, rela[4] + 24 * i) for i in range(n)]
    if cmd == "shift":
        off, info, add = ents[0]
        struct.pack_into("<q", d, rela[4] + 16, add + 1)
    elif cmd == "reverse":
        for i, (off, _, _) in enumerate(ents):
            o2 = ents[n - 1 - i]
            struct.pack_into("<QQq", d, rela[4] + 24 * i, off, o2[1], o2[2])
    else:
        sys.exit("mcountrel.py: unknown command " + cmd)
    open(path, "wb").write(d)


main(sys.argv[1], sys.argv[2])
