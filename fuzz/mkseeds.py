#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed corpora for the harnesses in fuzz/ (python3 stdlib; the zstd CLI
for .zst seeds).

  mkseeds.py --corpus DIR --fixtures FIXTURES
      Working corpora DIR/HARNESS/ from the fixtures' images
      (FIXTURES/out/**, FIXTURES/minikernel/out/** when built): whole images
      for the file harnesses, their executable sections for fuzz_arch (the
      image's e_machine in front, which picks the architecture), a command
      byte in front for fuzz_cli, compressed copies
      for fuzz_elf; plus the committed seeds/HARNESS/.  Big static images
      are left out: they add little coverage and slow every execution.

  mkseeds.py --regressions DIR
      Small hand-made stand-ins for the inputs fuzzing found (DIR/HARNESS/NAME).

  mkseeds.py --tiny DIR
      The small committed seeds DIR/HARNESS/: hand-made images (x86_64
      fentry with __mcount_loc, the same with SHF_COMPRESSED .text and as
      .gz/.xz/.zst, an ET_REL with its relocations, arm64 CALL_OPS and
      riscv64 -pg images) and instruction byte strings for fuzz_arch, each
      behind the e_machine of its architecture.
      Deterministic: the same bytes every time.
"""
import argparse
import gzip
import hashlib
import lzma
import os
import shutil
import struct
import subprocess
import sys
import zlib

FILE_HARNESSES = ["elf", "record", "audit", "inplace", "zmodule"]
# fuzz_arch's input: e_machine (16-bit LE), the address of the first byte
# (64-bit LE), the bytes.  The harness takes the architecture from the
# machine, so the corpus follows arch/arch.c's table with no list here.
NCLI_MODES = 20
# fuzz_cli modes of the rewriting commands, and the fixtures that suit them
# (built by make -C fixtures/repad and tests/e2e/embed.sh; absent ones are
# simply not seeds)
CLI_REWRITE_SEEDS = [
    ((15, 16), ["out/riscv64-mcount", "out/riscv64-callops-c", "out/riscv64-callops-noc"], 243, (1,)),
    ((17, 18), ["repad/out"], None, (1,)),
    ((19,), ["embed/out"], 183, (2, 3)),
]
MAX_SEED = 300 * 1024

# ------------------------------------------------------------------ reading


def elf_sections(data):
    """[(name, type, flags, addr, offset, size)] of a little-endian ELF64, or None."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    if shentsize != 64 or shoff + shnum * 64 > len(data) or shstrndx >= shnum:
        return None
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i) for i in range(shnum)]
    stro, strs = hdrs[shstrndx][4], hdrs[shstrndx][5]
    out = []
    for h in hdrs[1:]:
        n = data[stro + h[0]:stro + strs].split(b"\0", 1)[0].decode("latin-1")
        out.append((n, h[1], h[2], h[3], h[4], h[5]))
    return out


def machine(data):
    return struct.unpack_from("<H", data, 18)[0] if len(data) >= 20 else 0


def fixture_images(fixdir):
    seen, imgs = set(), []
    for top in (os.path.join(fixdir, "out"), os.path.join(fixdir, "minikernel", "out")):
        for dirpath, dirnames, files in os.walk(top):
            dirnames.sort()
            for f in sorted(files):
                p = os.path.join(dirpath, f)
                if f.endswith((".meta", ".link")) or os.path.getsize(p) > MAX_SEED:
                    continue
                with open(p, "rb") as fh:
                    d = fh.read()
                if d[:4] != b"\x7fELF":
                    continue
                h = hashlib.sha1(d).hexdigest()
                if h not in seen:
                    seen.add(h)
                    imgs.append((os.path.relpath(p, fixdir), d))
    return imgs


def put(dirname, data):
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def zstd_bytes(data):
    if not shutil.which("zstd"):
        raise SystemExit("mkseeds: the zstd program is needed (apt-get install zstd)")
    return subprocess.run(["zstd", "-q", "-c", "-1", "--no-check"], input=data,
                          stdout=subprocess.PIPE, check=True).stdout


def make_corpus(outdir, fixdir, tinydir):
    imgs = fixture_images(fixdir)
    if not imgs:
        raise SystemExit("mkseeds: no fixture images in %s/out (run make -C fixtures)" % fixdir)
    for h in FILE_HARNESSES + ["arch", "cli"]:
        os.makedirs(os.path.join(outdir, h), exist_ok=True)
    for i, (name, d) in enumerate(imgs):
        for h in FILE_HARNESSES:
            put(os.path.join(outdir, h), d)
        put(os.path.join(outdir, "cli"), bytes([i % NCLI_MODES]) + d)
        secs = elf_sections(d) or []
        for (sname, typ, flags, addr, off, size) in secs:
            if typ == 1 and flags & 4 and size:     # PROGBITS, EXECINSTR
                chunk = d[off:off + min(size, 4096)]
                put(os.path.join(outdir, "arch"), arch_input(machine(d), addr, chunk))
    # every command on a few small images of each machine
    small = {}
    for name, d in imgs:
        m = machine(d)
        if name.endswith("lib.o") or m not in small or len(d) < len(small[m]):
            small.setdefault(m, d)
    for d in small.values():
        for mode in range(NCLI_MODES):
            put(os.path.join(outdir, "cli"), bytes([mode]) + d)
    # the rewriting commands on inputs they accept: pin on riscv64 objects,
    # repad on the repad fixtures' objects, embed on the embed fixtures
    for modes, dirs, mach, etype in CLI_REWRITE_SEEDS:
        for sub in dirs:
            top = os.path.join(fixdir, sub)
            for dirpath, dirnames, files in os.walk(top):
                dirnames.sort()
                for f in sorted(files):
                    p = os.path.join(dirpath, f)
                    if os.path.getsize(p) > MAX_SEED:
                        continue
                    with open(p, "rb") as fh:
                        d = fh.read()
                    if d[:4] != b"\x7fELF" or len(d) < 20 or \
                            struct.unpack_from("<H", d, 16)[0] not in etype or \
                            (mach is not None and machine(d) != mach):
                        continue
                    for mode in modes:
                        put(os.path.join(outdir, "cli"), bytes([mode]) + d)
    # compressed modules for the reader harness
    for name, d in imgs:
        if name.endswith(".o") and "/" in name and name.count("/") == 2:
            put(os.path.join(outdir, "elf"), gzip.compress(d, 6, mtime=0))
            put(os.path.join(outdir, "elf"), lzma.compress(d, preset=0))
            put(os.path.join(outdir, "elf"), zstd_bytes(d))
            break
    # the committed seeds too
    if os.path.isdir(tinydir):
        for h in os.listdir(tinydir):
            for f in os.listdir(os.path.join(tinydir, h)):
                with open(os.path.join(tinydir, h, f), "rb") as fh:
                    put(os.path.join(outdir, h), fh.read())
    counts = {h: len(os.listdir(os.path.join(outdir, h))) for h in sorted(os.listdir(outdir))
              if os.path.isdir(os.path.join(outdir, h))}  # not the .stamp of an earlier run
    print("mkseeds: " + ", ".join("%s %d" % kv for kv in counts.items()))


# ------------------------------------------------------------------ writing


class Elf:
    """A tiny ELF64 LE writer: sections in order, then .symtab, .strtab, .shstrtab."""

    def __init__(self, etype, mach, flags=0):
        self.etype, self.mach, self.flags = etype, mach, flags
        self.secs = []          # dicts
        self.syms = []          # (name, value, size, secname or None, type, bind)

    def sec(self, name, typ, flags, addr, data, align=1, link=None, info=0, entsize=0):
        self.secs.append(dict(name=name, type=typ, flags=flags, addr=addr, data=data,
                              align=align, link=link, info=info, entsize=entsize))
        return len(self.secs)   # section index (0 is the null section)

    def index(self, name):
        for i, s in enumerate(self.secs):
            if s["name"] == name:
                return i + 1
        raise KeyError(name)

    def sym(self, name, value, size=0, sec=None, typ=2, bind=1):
        self.syms.append((name, value, size, sec, typ, bind))

    def build(self, phdr=True):
        nsec = len(self.secs)
        i_symtab, i_strtab, i_shstr = nsec + 1, nsec + 2, nsec + 3
        strtab = bytearray(b"\0")
        syms = [bytes(24)]
        order = sorted(self.syms, key=lambda s: s[5] != 0)     # locals first
        nlocal = 1 + sum(1 for s in order if s[5] == 0)
        for (name, value, size, sec, typ, bind) in order:
            off = 0
            if name:
                off = len(strtab)
                strtab += name.encode() + b"\0"
            shndx = self.index(sec) if isinstance(sec, str) else (sec or 0)
            syms.append(struct.pack("<IBBHQQ", off, (bind << 4) | typ, 0, shndx, value, size))
        shstr = bytearray(b"\0")
        names = []
        for n in [s["name"] for s in self.secs] + [".symtab", ".strtab", ".shstrtab"]:
            names.append(len(shstr))
            shstr += n.encode() + b"\0"
        all_secs = list(self.secs) + [
            dict(name=".symtab", type=2, flags=0, addr=0, data=b"".join(syms), align=8,
                 link=i_strtab, info=nlocal, entsize=24),
            dict(name=".strtab", type=3, flags=0, addr=0, data=bytes(strtab), align=1,
                 link=0, info=0, entsize=0),
            dict(name=".shstrtab", type=3, flags=0, addr=0, data=bytes(shstr), align=1,
                 link=0, info=0, entsize=0),
        ]
        nph = 1 if phdr and self.etype != 1 else 0
        off = 64 + 56 * nph
        body = bytearray()
        offs = []
        for s in all_secs:
            a = max(s["align"], 1)
            # linked images: file offset congruent to the address modulo 4 KiB
            if s["addr"] and self.etype != 1:
                want = s["addr"] % 0x1000
                while (off + len(body)) % 0x1000 != want:
                    body += b"\0"
            while (off + len(body)) % a:
                body += b"\0"
            offs.append(off + len(body))
            if s["type"] != 8:
                body += s["data"]
        while (off + len(body)) % 8:
            body += b"\0"
        shoff = off + len(body)
        shdrs = [bytes(64)]
        for i, s in enumerate(all_secs):
            link = s["link"]
            if isinstance(link, str):
                link = self.index(link)
            info = s["info"]
            if isinstance(info, str):
                info = self.index(info)
            if link is None:
                link = i_symtab if s["type"] in (4, 9) else 0
            size = len(s["data"]) if s["type"] != 8 else s.get("nobits_size", 0)
            shdrs.append(struct.pack("<IIQQQQIIQQ", names[i], s["type"], s["flags"], s["addr"],
                                     offs[i], size, link, info, s["align"], s["entsize"]))
        ehdr = struct.pack("<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0, bytes(7),
                           self.etype, self.mach, 1, self.entry(), 64 if nph else 0, shoff,
                           self.flags, 64, 56, nph, 64, len(shdrs), i_shstr)
        ph = b""
        if nph:
            alloc = [(s, offs[i]) for i, s in enumerate(all_secs) if s["flags"] & 2]
            lo = min(s["addr"] for s, o in alloc) & ~0xfff
            hi = max(s["addr"] + len(s["data"]) for s, o in alloc)
            ph = struct.pack("<IIQQQQQQ", 1, 7, 0, lo, lo, hi - lo + (offs[0] & 0xfff) * 0,
                             hi - lo, 0x1000)
        return ehdr + ph + bytes(body) + b"".join(shdrs)

    def entry(self):
        for (name, value, size, sec, typ, bind) in self.syms:
            if typ == 2 and value:
                return value
        return 0


def le64s(vals):
    return b"".join(struct.pack("<Q", v) for v in vals)


def rel32(frm, to):
    return struct.pack("<i", to - frm)


def x86_fentry(compress_text=False):
    """f: call __fentry__; ret   g: endbr64; call __fentry__; ret   plus __mcount_loc."""
    base = 0x401000
    text = bytearray()
    f = base
    text += b"\xe8" + rel32(f + 5, base + 0x20) + b"\xc3"
    g = base + len(text)
    text += b"\xf3\x0f\x1e\xfa" + b"\xe8" + rel32(g + 9, base + 0x20) + b"\xc3"
    while len(text) < 0x20:
        text += b"\xcc"
    text += b"\xc3"                                       # __fentry__
    e = Elf(2, 62)
    flags = 6
    data = bytes(text)
    if compress_text:
        # SHF_COMPRESSED: Elf64_Chdr (ELFCOMPRESS_ZLIB, size, align) + zlib stream
        data = struct.pack("<IIQQ", 1, 0, len(text), 16) + zlib.compress(bytes(text), 9)
        flags |= 0x800
    e.sec(".text", 1, flags, base, data, align=16)
    e.sec("__mcount_loc", 1, 2, 0x402000, le64s([f, g + 4, 0]), align=8)
    e.sym("f", f, 6, ".text")
    e.sym("g", g, 10, ".text")
    e.sym("__fentry__", base + 0x20, 1, ".text")
    e.sym("__start_mcount_loc", 0x402000, 0, "__mcount_loc", typ=0)
    e.sym("__stop_mcount_loc", 0x402018, 0, "__mcount_loc", typ=0)
    return e.build()


def x86_rel():
    """An object: two -mfentry functions, their relocations, and __mcount_loc."""
    text = b"\xe8\0\0\0\0\xc3" + b"\xf3\x0f\x1e\xfa\xe8\0\0\0\0\xc3"
    e = Elf(1, 62)
    e.sec(".text", 1, 6, 0, text, align=16)
    e.sec("__mcount_loc", 1, 2, 0, bytes(16), align=8)
    e.sec(".rela.text", 4, 0x40, 0, b"", align=8, info=".text", entsize=24)
    e.sec(".rela__mcount_loc", 4, 0x40, 0, b"", align=8, info="__mcount_loc", entsize=24)
    e.sym("", 0, 0, ".text", typ=3, bind=0)               # section symbol, index 1
    e.sym("f", 0, 6, ".text")
    e.sym("g", 6, 10, ".text")
    e.sym("__fentry__", 0, 0, None, typ=0)
    # symbol indexes after sorting: 0 null, 1 .text section (local), 2 f, 3 g, 4 __fentry__
    r_text = struct.pack("<QQq", 1, (4 << 32) | 4, -4) + struct.pack("<QQq", 11, (4 << 32) | 4, -4)
    r_loc = struct.pack("<QQq", 0, (1 << 32) | 1, 0) + struct.pack("<QQq", 8, (1 << 32) | 1, 10)
    e.secs[2]["data"] = r_text
    e.secs[3]["data"] = r_loc
    return e.build()


def arm64_callops():
    """CALL_OPS: two NOPs (the literal) before each function, BTI C NOP NOP at entry."""
    nop, bti, ret = 0xd503201f, 0xd503245f, 0xd65f03c0
    base = 0x400000 + 0x1000
    words, pfe, funcs, sizes = [], [], [], []
    for k in range(3):
        pfe.append(base + 4 * len(words))
        words += [nop, nop]
        funcs.append(base + 4 * len(words))
        body = ([bti] if k != 1 else []) + [nop, nop, ret]
        sizes.append(4 * len(body))
        words += body
    if (pfe[-1] % 8) == 0:                  # one misaligned literal, for audit
        words.insert(0, nop)
        pfe = [p + 4 for p in pfe]
        funcs = [f + 4 for f in funcs]
    e = Elf(2, 183)
    e.sec(".text", 1, 6, base, b"".join(struct.pack("<I", w) for w in words), align=8)
    e.sec("__patchable_function_entries", 1, 0x82, 0x402000, le64s(pfe), align=8, link=".text")
    for k, f in enumerate(funcs):
        e.sym("f%d" % k, f, sizes[k], ".text")
    return e.build()


def riscv_mcount():
    """-pg: auipc ra; jalr ra (to _mcount) in the prologue, and a relaxed jal ra."""
    base = 0x10000 + 0x1000
    mcount = base + 0x40

    def auipc_jalr(at):
        d = mcount - at
        hi = (d + 0x800) & 0xfffff000
        lo = d & 0xfff
        return [hi | (1 << 7) | 0x17, (lo << 20) | (1 << 15) | (1 << 7) | 0x67]

    def jal_ra(at):
        d = mcount - at
        imm = ((d >> 20) & 1) << 31 | ((d >> 1) & 0x3ff) << 21 | ((d >> 11) & 1) << 20 | \
              ((d >> 12) & 0xff) << 12
        return [imm | (1 << 7) | 0x6f]

    words = [0x00000013]                                  # f: nop (prologue)
    words += auipc_jalr(base + 4)
    words += [0x00008067]                                 # ret
    g = base + 4 * len(words)
    words += jal_ra(g) + [0x00008067]
    while base + 4 * len(words) < mcount:
        words.append(0x00000013)
    words += [0x00008067]                                 # _mcount: ret
    e = Elf(2, 243, flags=0x4)                            # EF_RISCV_FLOAT_ABI_DOUBLE, no RVC
    e.sec(".text", 1, 6, base, b"".join(struct.pack("<I", w) for w in words), align=4)
    e.sym("f", base, 16, ".text")
    e.sym("g", g, 8, ".text")
    e.sym("_mcount", mcount, 4, ".text")
    return e.build()


def arch_input(mach, addr, code):
    """fuzz_arch's input: the bytes at addr, for the architecture of e_machine mach."""
    return struct.pack("<HQ", mach, addr) + code


# Instruction strings by e_machine (the ELF numbers: EM_X86_64 62, EM_AARCH64
# 183, EM_RISCV 243, EM_PPC64 21)
ARCH_BYTES = {
    62: [
        b"\xf3\x0f\x1e\xfa\xe8\x00\x00\x00\x00\xc3",              # endbr64; call; ret
        b"\x0f\x1f\x44\x00\x00\x55\x48\x89\xe5\xe8\x10\x00\x00\x00",  # nop5; push; mov; call
        b"\xff\x15\x10\x20\x00\x00\x67\xe8\x00\x00\x00\x00\xc3",    # call *GOT; addr32 call
        b"\xff\x25\x02\x2f\x00\x00\x68\x00\x00\x00\x00\xe9\xe0\xff\xff\xff",  # PLT entry
        b"\xf3\x0f\x1e\xfa\xf2\xff\x25\xad\x2f\x00\x00\x0f\x1f\x44\x00\x00",  # IBT .plt.sec
        b"\xc4\xe2\x79\x18\x05\x00\x00\x00\x00\x62\xf1\x7c\x48\x10\x44\x24\x01",  # VEX, EVEX
        b"\x8f\xe8\x78\xa2\xc0\x10\x48\xb8\x88\x77\x66\x55\x44\x33\x22\x11",  # XOP, movabs
        b"\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00\x66\x90\x90",  # long NOPs
    ],
    183: [
        struct.pack("<5I", 0xd503245f, 0xd503201f, 0xd503201f, 0x94000010, 0xd65f03c0),
        struct.pack("<4I", 0x90000090, 0xf9400611, 0x91002210, 0xd61f0220),   # PLTn
        struct.pack("<6I", 0xd503245f, 0x90000090, 0xf9400611, 0x91002210, 0xd503219f,
                    0xd61f0220),                                            # BTI+PAC PLT
        struct.pack("<4I", 0xd503233f, 0xd503201f, 0x14000002, 0x00000000),  # paciasp, udf
        struct.pack("<4I", 0xd503201f, 0xd503201f, 0xd503201f, 0xd503201f),  # CALL_OPS site
        struct.pack("<5I", 0xd503201f, 0xd503201f, 0xd503245f, 0xd503201f, 0xd503201f),  # BTI
    ],
    243: [
        struct.pack("<IIH", 0x00000097, 0x000080e7, 0x0001),            # auipc ra; jalr ra; c.nop
        struct.pack("<III", 0x00000297, 0x000282e7, 0x0000006f),       # auipc t0; jalr t0; j
        struct.pack("<IIII", 0x00002e17, 0x000e3e03, 0x000e0367, 0x00000013),  # PLTn
        struct.pack("<HHHI", 0x0001, 0x0001, 0xa001, 0x0ef000ef),      # c.nop c.nop c.j jal ra
        bytes.fromhex("1f00000000"),                                   # 48-bit (reserved)
    ],
    # powerpc64le-linux-gnu-as -mpower10 (GNU as 2.40), words as objdump -d shows them
    21: [
        # f: addis r2,r12; addi r2,r2 (global entry); mflr r0; bl _mcount; nop; blr
        struct.pack("<6I", 0x3c4c0000, 0x38420000, 0x7c0802a6, 0x48000085, 0x60000000,
                    0x4e800020),
        # g: nop; nop (patchable entry); mflr r0; std r0,16(r1); bl g; ld r2,24(r1); b;
        # nop; ori r2,r2,0; xnop; bctrl
        struct.pack("<11I", 0x60000000, 0x60000000, 0x7c0802a6, 0xf8010010, 0x4bfffff1,
                    0xe8410018, 0x48000000, 0x60000000, 0x60420000, 0x68000000, 0x4e800421),
        # PLT call stubs: std r2,24(r1); addis r12,r2,-2; ld r12,32712(r12); mtctr r12;
        # bctr, and the short form ld r12,-32720(r2)
        struct.pack("<5I", 0xf8410018, 0x3d82fffe, 0xe98c7fc8, 0x7d8903a6, 0x4e800420),
        struct.pack("<4I", 0xf8410018, 0xe9828030, 0x7d8903a6, 0x4e800420),
        # prefixed: pld r3,8 (pc-relative); pnop; pla r3,-16; then bla 0x100; beq;
        # bdnz g; trap; blr
        struct.pack("<11I", 0x04100000, 0xe4600008, 0x07000000, 0x00000000, 0x0613ffff,
                    0x3860fff0, 0x48000103, 0x41820000, 0x4200ff90, 0x7fe00008, 0x4e800020),
        # the same pld cut after its prefix word: the suffix is missing (TRUNC)
        struct.pack("<2I", 0x60000000, 0x04100000),
    ],
}


def make_tiny(outdir):
    if os.path.isdir(outdir):
        shutil.rmtree(outdir)
    x86 = x86_fentry()
    images = [x86, x86_fentry(compress_text=True), x86_rel(), arm64_callops(), riscv_mcount()]
    for h in ["record", "audit", "inplace", "zmodule"]:
        for d in images:
            put(os.path.join(outdir, h), d)
    for d in images:
        put(os.path.join(outdir, "elf"), d)
    put(os.path.join(outdir, "elf"), gzip.compress(x86, 9, mtime=0))
    put(os.path.join(outdir, "elf"), lzma.compress(x86, preset=6))
    put(os.path.join(outdir, "elf"), zstd_bytes(x86))
    for i, d in enumerate(images):
        for mode in range(NCLI_MODES):
            if (mode + i) % 3 == 0 or d is x86:
                put(os.path.join(outdir, "cli"), bytes([mode]) + d)
    for mach, seqs in ARCH_BYTES.items():
        for s in seqs:
            put(os.path.join(outdir, "arch"), arch_input(mach, 0x401000, s))
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(outdir) for f in fs)
    print("mkseeds: tiny seeds in %s, %d bytes" % (outdir, total))


def make_regressions(outdir):
    """Small stand-ins for what fuzzing found (see README.md)."""
    # __stop_mcount_loc 2^47 bytes after __start: the table must not size an array
    e = x86_image_with(stop_delta=1 << 47)
    put_named(os.path.join(outdir, "cli"), "table-region-huge", bytes([0]) + e)
    # a symbol whose name holds a newline and an escape, with a bad section index:
    # the error line names it and must stay one line
    e = x86_image_with(bad_name="f\n\x1b[31mred\x7f", bad_shndx=0xfeff)
    put_named(os.path.join(outdir, "cli"), "error-message-control-bytes", bytes([11]) + e)
    # SHF_ALLOC|SHF_COMPRESSED .text: refused once, not an error per read
    put_named(os.path.join(outdir, "cli"), "alloc-compressed-text",
              bytes([5]) + x86_fentry(compress_text=True))
    # function sizes: one huge, one nested (function lookups, the call scan)
    put_named(os.path.join(outdir, "elf"), "function-sizes-huge-nested",
              x86_image_with(f_size=1 << 40, g_size=1 << 63))


def put_named(dirname, name, data):
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, name), "wb") as f:
        f.write(data)


def x86_image_with(stop_delta=0x18, bad_name=None, bad_shndx=None, f_size=6, g_size=10):
    """x86_fentry's image with one thing changed."""
    base = 0x401000
    text = bytearray()
    f = base
    text += b"\xe8" + rel32(f + 5, base + 0x20) + b"\xc3"
    g = base + len(text)
    text += b"\xf3\x0f\x1e\xfa" + b"\xe8" + rel32(g + 9, base + 0x20) + b"\xc3"
    while len(text) < 0x20:
        text += b"\xcc"
    text += b"\xc3"
    e = Elf(2, 62)
    e.sec(".text", 1, 6, base, bytes(text), align=16)
    e.sec("__mcount_loc", 1, 2, 0x402000, le64s([f, g + 4, 0]), align=8)
    e.sym("f", f, f_size, ".text")
    e.sym("g", g, g_size, ".text")
    e.sym("__fentry__", base + 0x20, 1, ".text")
    e.sym("__start_mcount_loc", 0x402000, 0, "__mcount_loc", typ=0)
    e.sym("__stop_mcount_loc", 0x402000 + stop_delta, 0, "__mcount_loc", typ=0)
    if bad_name:
        e.sym(bad_name, base, 1, bad_shndx)
    return e.build()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus")
    ap.add_argument("--fixtures")
    ap.add_argument("--tiny")
    ap.add_argument("--regressions")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if a.tiny:
        make_tiny(a.tiny)
    if a.regressions:
        make_regressions(a.regressions)
    if a.corpus:
        make_corpus(a.corpus, a.fixtures or os.path.join(here, "..", "fixtures"),
                    os.path.join(here, "seeds"))
    if not a.tiny and not a.corpus and not a.regressions:
        ap.error("--corpus, --tiny or --regressions")


if __name__ == "__main__":
    sys.exit(main())
