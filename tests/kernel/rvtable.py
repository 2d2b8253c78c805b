#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The ftrace table of a linked riscv64 kernel as binutils show it, for
tests/kernel/riscv-relax.sh: an oracle that is neither patchsite nor
mcounttab.py's ELF reader.

Strategy: `riscv64-linux-gnu-nm -S --defined-only` gives the symbols
(__start_mcount_loc, __stop_mcount_loc, _sinittext ...) and the sized
functions (types t, T, w, W); `riscv64-linux-gnu-readelf -SW` the PROGBITS
section that holds the region between the two table symbols, whose 8-byte
little-endian slots, read from the file, are the table (`vals`, zeros
included).  `owner(v)` is the sized function v lies in, or None: the
kernel's sorttable rule keeps only the entries inside one (an entry outside
is the code of an overridden weak function).  Used as a module:

    sys.path.insert(0, "tests/kernel"); from rvtable import Table
"""
import bisect
import struct
import subprocess
import sys


class Table:
    def __init__(self, img):
        self.syms, self.funcs = {}, []
        for line in subprocess.run(["riscv64-linux-gnu-nm", "-S", "--defined-only", img],
                                   capture_output=True, text=True).stdout.splitlines():
            f = line.split()
            if len(f) == 3:
                self.syms[f[2]] = int(f[0], 16)
            elif len(f) == 4:
                self.syms[f[3]] = int(f[0], 16)
                if f[2] in "tTwW":
                    self.funcs.append((int(f[0], 16), int(f[1], 16), f[3]))
        self.funcs.sort()
        self.starts = [a for a, _, _ in self.funcs]
        start, stop = self.syms["__start_mcount_loc"], self.syms["__stop_mcount_loc"]
        out = subprocess.run(["riscv64-linux-gnu-readelf", "-SW", img],
                             capture_output=True, text=True).stdout
        data = open(img, "rb").read()
        self.vals = None
        for line in out.splitlines():
            f = line.replace("[ ", "[").split()
            if len(f) > 6 and f[0].startswith("[") and f[2] == "PROGBITS":
                addr, off, size = int(f[3], 16), int(f[4], 16), int(f[5], 16)
                if addr <= start and stop <= addr + size:
                    b = data[off + start - addr: off + stop - addr]
                    self.vals = [struct.unpack_from("<Q", b, i)[0] for i in range(0, len(b), 8)]
        if self.vals is None:
            sys.exit("%s: no section holds the table" % img)

    def owner(self, v):
        """(start, size, name) of the sized function v lies in, or None"""
        i = bisect.bisect_right(self.starts, v) - 1
        while i >= 0 and self.starts[i] > v - (1 << 20):
            a, n, _ = self.funcs[i]
            if a <= v < a + n:
                return self.funcs[i]
            i -= 1
        return None
