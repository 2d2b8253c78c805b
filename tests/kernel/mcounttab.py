#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Read or damage a linked kernel's ftrace table, without patchsite.

The table is the region between __start_mcount_loc and __stop_mcount_loc.
A slot's value is its content or, in an arm64 kernel linked with
--no-apply-dynamic-relocs, the addend of the R_AARCH64_RELATIVE relocation
in .rela.dyn that covers it (likewise R_RISCV_RELATIVE, and R_PPC64_RELATIVE
in a relocatable powerpc64le kernel).  This is the oracle the kernel tests compare
patchsite with, and the tool that makes the broken tables it must catch.

  mcounttab.py dump IMAGE                 the non-zero values, sorted, one a line
  mcounttab.py sites IMAGE                what sorttable keeps: values inside a
                                          sized function symbol (counting the
                                          8 bytes before it on arm64)
  mcounttab.py misaligned IMAGE           of those, the ones not 8-byte aligned
                                          (arm64 CALL_OPS literals the kernel
                                          skips: "Misaligned patch-site")
  mcounttab.py functions IMAGE            of those, the function each is the
                                          site of, by name (the smallest of its
                                          aliases), sorted: comparable between
                                          two links of the same code
  mcounttab.py clear IMAGE OUT            every slot (and addend) zeroed
  mcounttab.py move IMAGE OUT N DELTA     N entries spread over the table moved
                                          by DELTA bytes; prints their old values
  mcounttab.py shift IMAGE OUT DELTA      every non-zero entry moved by DELTA
"""
import bisect
import struct
import sys

R_AARCH64_RELATIVE = 1027
R_RISCV_RELATIVE = 3
R_PPC64_RELATIVE = 22
# e_machine -> its R_*_RELATIVE (relocation numbers are per machine)
RELATIVE = {183: R_AARCH64_RELATIVE, 243: R_RISCV_RELATIVE, 21: R_PPC64_RELATIVE}


class Image:
    def __init__(self, path):
        self.data = bytearray(open(path, "rb").read())
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            sys.exit(f"mcounttab: {path}: not an ELF64 little-endian file")
        self.machine = struct.unpack_from("<H", d, 18)[0]
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        self.secs = []
        for i in range(shnum):
            f = struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
            self.secs.append(dict(name=f[0], type=f[1], flags=f[2], addr=f[3], off=f[4],
                                  size=f[5], link=f[6], info=f[7], entsize=f[9]))
        strtab = self.secs[shstrndx]
        for s in self.secs:
            s["name"] = self.cstr(strtab["off"] + s["name"])
        self.syms = {}
        self.funcs = []
        self.fname = {}   # start of a sized function -> its smallest name
        for s in self.secs:
            if s["type"] != 2:  # SHT_SYMTAB
                continue
            names = self.secs[s["link"]]["off"]
            for o in range(s["off"], s["off"] + s["size"], 24):
                name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", d, o)
                n = self.cstr(names + name)
                if shndx:
                    self.syms[n] = value
                if info & 0xF == 2 and shndx and size:  # STT_FUNC, defined, sized
                    self.funcs.append((value, size))
                    if n < self.fname.get(value, "\xff"):
                        self.fname[value] = n
        self.funcs.sort()
        self.start = self.syms["__start_mcount_loc"]
        self.stop = self.syms["__stop_mcount_loc"]
        self.relas = {}   # slot address -> file offset of its Elf64_Rela
        for s in self.secs:
            if s["type"] == 4 and s["flags"] & 2:  # SHT_RELA, SHF_ALLOC
                for o in range(s["off"], s["off"] + s["size"], 24):
                    off, info, addend = struct.unpack_from("<QQq", d, o)
                    if self.start <= off < self.stop and \
                            info & 0xFFFFFFFF == RELATIVE.get(self.machine):
                        self.relas[off] = o

    def cstr(self, o):
        return self.data[o:self.data.index(0, o)].decode("latin-1")

    def file_off(self, addr):
        for s in self.secs:
            if s["type"] == 1 and s["addr"] <= addr < s["addr"] + s["size"]:
                return s["off"] + addr - s["addr"]
        sys.exit(f"mcounttab: address {addr:#x} is not in a PROGBITS section")

    def slots(self):
        return range(self.start, self.stop, 8)

    def get(self, slot):
        if slot in self.relas:
            v = struct.unpack_from("<q", self.data, self.relas[slot] + 16)[0]
            if v:
                return v & (2**64 - 1)
        return struct.unpack_from("<Q", self.data, self.file_off(slot))[0]

    def put(self, slot, value):
        if slot in self.relas:
            struct.pack_into("<Q", self.data, self.relas[slot] + 16, value)
            inplace = struct.unpack_from("<Q", self.data, self.file_off(slot))[0]
            if inplace == 0 and value:
                return      # --no-apply-dynamic-relocs: the addend alone
        struct.pack_into("<Q", self.data, self.file_off(slot), value)

    def values(self):
        return [self.get(s) for s in self.slots()]

    def function(self, v):
        """The start of the sized function v belongs to (counting the 8 bytes
        before it on arm64), or None: sorttable's rule."""
        before = 8 if self.machine == 183 else 0     # EM_AARCH64: the literal
        if not hasattr(self, "starts"):
            self.starts = [a for a, _ in self.funcs]
        i = bisect.bisect_right(self.starts, v + before) - 1
        while i >= 0:
            a, n = self.funcs[i]
            if a - before <= v < a + n:
                return a
            if a + n + (1 << 20) < v:
                break
            i -= 1
        return None

    def inside(self, v):
        return self.function(v) is not None


def main():
    cmd, img = sys.argv[1], Image(sys.argv[2])
    if cmd == "dump":
        for v in sorted(v for v in img.values() if v):
            print(f"{v:#x}")
    elif cmd == "sites":
        for v in sorted(v for v in img.values() if v and img.inside(v)):
            print(f"{v:#x}")
    elif cmd == "functions":
        for n in sorted(img.fname[img.function(v)] for v in img.values() if v and img.inside(v)):
            print(n)
    elif cmd == "misaligned":
        for v in sorted(v for v in img.values() if v and img.inside(v) and v % 8):
            print(f"{v:#x}")
    elif cmd in ("clear", "move", "shift"):
        out = sys.argv[3]
        vals = img.values()
        if cmd == "clear":
            for s in img.slots():
                img.put(s, 0)
        elif cmd == "shift":
            delta = int(sys.argv[4], 0)
            for s, v in zip(img.slots(), vals):
                if v:
                    img.put(s, v + delta)
        else:
            n, delta = int(sys.argv[4]), int(sys.argv[5], 0)
            live = [(s, v) for s, v in zip(img.slots(), vals) if v and img.inside(v)]
            step = max(1, len(live) // n)
            for s, v in live[step // 2::step][:n]:
                img.put(s, v + delta)
                print(f"{v:#x}")
        open(out, "wb").write(img.data)
    else:
        sys.exit(f"mcounttab: unknown command {cmd}")


if __name__ == "__main__":
    main()
