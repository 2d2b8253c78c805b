#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Make a corpus of broken ELF files from real fixtures (python3 stdlib only).

    mkcorpus.py [--fixtures DIR] OUTDIR

Every file is a real fixture image (fixtures/out, built by `make -C
fixtures`) with one thing broken: truncated at each header and table
boundary, section offsets and sizes past the end of the file, overlapping
sections, string indexes out of range, symbol counts in the millions,
sh_link loops, relocation sections pointing at themselves, a zero-size
.symtab, a __mcount_loc region of odd size, e_shstrndx out of range,
e_shnum 0 with SHN_XINDEX, e_phoff past EOF, SHF_COMPRESSED sections whose
header lies, compressed modules that inflate to garbage, and more.

OUTDIR/MANIFEST lists one file a line: NAME<TAB>EXPECT<TAB>WHAT, where EXPECT
is
    error   patchsite must refuse it: exit 2 and one line on stderr;
    any     exit 2 with one line, or exit 0/1 with a well-formed result;
    same    a legal encoding of the base image: exit 0 and the base's output;
    count=N a synthetic scale image: exit 0 with exactly N sites, in time.
tests/hostile/runcorpus.py runs patchsite on each and checks just that.
The output is the same for the same fixtures (no randomness without a seed).
"""
import argparse
import gzip
import lzma
import os
import random
import shutil
import struct
import subprocess
import sys
import zlib

# The fixtures the corpus is made from, and a tag for each.  Between them:
# ET_EXEC/ET_DYN/ET_REL, all three machines, DWARF, .rela.dyn RELATIVE
# relocations covering a table, __patchable_function_entries, calls to
# __fentry__/_mcount and compiler relocations against them.
BASES = [
    ("x86-exec", "x86_64-fentry/exec"),
    ("a64-pie", "aarch64-callops/pie"),
    ("rv-rel", "riscv64-mcount/vmlinux.o"),
    ("x86-pfe", "x86_64-pfe-3-1/exec"),
]

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 0, 1, 2, 3, 4
SHT_NOBITS, SHT_DYNSYM, SHT_SYMTAB_SHNDX = 8, 11, 18
SHF_ALLOC, SHF_EXECINSTR, SHF_COMPRESSED = 0x2, 0x4, 0x800
SHN_XINDEX = 0xffff

EH = {"e_type": (16, "H"), "e_machine": (18, "H"), "e_version": (20, "I"),
      "e_phoff": (32, "Q"), "e_shoff": (40, "Q"), "e_ehsize": (52, "H"),
      "e_phentsize": (54, "H"), "e_phnum": (56, "H"), "e_shentsize": (58, "H"),
      "e_shnum": (60, "H"), "e_shstrndx": (62, "H")}
SH = {"name": (0, "I"), "type": (4, "I"), "flags": (8, "Q"), "addr": (16, "Q"),
      "offset": (24, "Q"), "size": (32, "Q"), "link": (40, "I"), "info": (44, "I"),
      "addralign": (48, "Q"), "entsize": (56, "Q")}
SYM = {"name": (0, "I"), "info": (4, "B"), "shndx": (6, "H"), "value": (8, "Q"),
       "size": (16, "Q")}


class Image:
    """A parsed ELF64 LE image; mutations work on copies of its bytes."""

    def __init__(self, data):
        self.data = bytes(data)
        d = self.data
        self.e = {k: struct.unpack_from("<" + f, d, o)[0] for k, (o, f) in EH.items()}
        self.shdrs = []
        for i in range(self.e["e_shnum"]):
            base = self.e["e_shoff"] + 64 * i
            self.shdrs.append({k: struct.unpack_from("<" + f, d, base + o)[0]
                               for k, (o, f) in SH.items()})
        strsec = self.shdrs[self.e["e_shstrndx"]]
        for s in self.shdrs:
            start = strsec["offset"] + s["name"]
            s["sname"] = d[start:d.index(b"\0", start)].decode("latin-1")

    def find(self, pred):
        for i, s in enumerate(self.shdrs):
            if i and pred(s):
                return i
        return None

    def by_name(self, name):
        return self.find(lambda s: s["sname"] == name)

    def by_type(self, typ):
        return self.find(lambda s: s["type"] == typ)

    def shdr_off(self, i):
        return self.e["e_shoff"] + 64 * i

    def symbols(self, idx):
        s = self.shdrs[idx]
        out = []
        for k in range(s["size"] // 24):
            o = s["offset"] + 24 * k
            out.append({f: struct.unpack_from("<" + t, self.data, o + off)[0]
                        for f, (off, t) in SYM.items()})
        return out

    def sym_off(self, idx, k):
        return self.shdrs[idx]["offset"] + 24 * k


def put(buf, off, fmt, value):
    struct.pack_into("<" + fmt, buf, off, value & ((1 << (8 * struct.calcsize(fmt))) - 1))


def set_eh(buf, field, value):
    o, f = EH[field]
    put(buf, o, f, value)


def set_sh(img, buf, i, field, value):
    o, f = SH[field]
    put(buf, img.shdr_off(i) + o, f, value)


def set_sym(img, buf, symtab, k, field, value):
    o, f = SYM[field]
    put(buf, img.sym_off(symtab, k) + o, f, value)


class Corpus:
    def __init__(self, outdir):
        self.outdir = outdir
        self.manifest = []
        self.names = set()

    def add(self, name, data, expect, what):
        assert expect in ("error", "any", "same") or expect.startswith("count="), expect
        assert name not in self.names, name
        self.names.add(name)
        with open(os.path.join(self.outdir, name), "wb") as f:
            f.write(bytes(data))
        self.manifest.append((name, expect, what))

    def write_manifest(self):
        with open(os.path.join(self.outdir, "MANIFEST"), "w") as f:
            for row in self.manifest:
                f.write("\t".join(row) + "\n")


# ---------------------------------------------------------------- mutations


def truncations(c, tag, img):
    """Cut the file at every header boundary and at the edges of the tables that matter."""
    d = img.data
    e = img.e
    cuts = {0: "empty", 1: "one byte", 4: "magic only", 16: "e_ident only", 63: "ehdr less a byte",
            64: "ehdr only"}
    for k in range(e["e_phnum"] + 1):
        cuts.setdefault(e["e_phoff"] + 56 * k, "program header %d" % k)
    if e["e_phnum"]:
        cuts.setdefault(e["e_phoff"] + 56 * e["e_phnum"] - 1, "last program header less a byte")
    n = e["e_shnum"]
    for k in sorted({0, 1, 2, n // 2, n - 1}):
        cuts.setdefault(e["e_shoff"] + 64 * k, "section header %d" % k)
    cuts.setdefault(e["e_shoff"] + 32, "middle of section header 0")
    cuts.setdefault(e["e_shoff"] + 64 * n - 1, "last section header less a byte")
    for i in key_sections(img):
        s = img.shdrs[i]
        if not s["size"]:
            continue
        cuts.setdefault(s["offset"], "start of %s" % s["sname"])
        cuts.setdefault(s["offset"] + s["size"], "end of %s" % s["sname"])
        if s["type"] in (SHT_SYMTAB, SHT_DYNSYM, SHT_RELA) and s["size"] >= 48:
            cuts.setdefault(s["offset"] + (s["size"] // 48) * 24 + 11, "inside %s" % s["sname"])
        if s["type"] == SHT_STRTAB:
            cuts.setdefault(s["offset"] + s["size"] - 1, "%s less its last NUL" % s["sname"])
    for off in sorted(cuts):
        if off > len(d) - 1 or off < 0:
            continue
        c.add("%s--trunc-%06x" % (tag, off), d[:off], "error",
              "truncated at 0x%x (%s)" % (off, cuts[off]))


def key_sections(img):
    out = []
    for name in (".symtab", ".strtab", ".shstrtab", ".text", "__patchable_function_entries",
                 "__mcount_loc", ".rela.dyn", ".rela.text", ".dynsym", ".debug_info", ".plt"):
        i = img.by_name(name)
        if i is not None and img.shdrs[i]["type"] != SHT_NOBITS:
            out.append(i)
    return out


def bounds(c, tag, img):
    """Section offsets and sizes past the end of the file, and ones that wrap."""
    n = len(img.data)
    for i in key_sections(img)[:7]:
        s = img.shdrs[i]
        nm = s["sname"].lstrip(".") or "noname"
        cases = [
            ("off-past-eof", "offset", n + 16, "sh_offset past EOF"),
            ("off-at-eof", "offset", n, "sh_offset at EOF with a non-zero size"),
            ("off-huge", "offset", 1 << 63, "sh_offset 2^63"),
            ("size-past-eof", "size", n - s["offset"] + 1, "sh_size one byte past EOF"),
            ("size-huge", "size", (1 << 64) - 8, "sh_size 2^64-8 (offset+size wraps)"),
        ]
        for kind, field, val, what in cases:
            b = bytearray(img.data)
            set_sh(img, b, i, field, val)
            c.add("%s--%s-%s" % (tag, nm, kind), b, "error", "%s: %s" % (s["sname"], what))
        b = bytearray(img.data)
        set_sh(img, b, i, "offset", (1 << 64) - 8)
        set_sh(img, b, i, "size", 16)
        c.add("%s--%s-off-wraps" % (tag, nm), b, "error", "%s: offset+size wraps to 8" % s["sname"])


def overlaps(c, tag, img):
    """Sections that share bytes with each other or with the headers."""
    st = img.by_type(SHT_SYMTAB)
    text = img.by_name(".text")
    table = img.by_name("__patchable_function_entries") or img.by_name("__mcount_loc")
    pairs = []
    if text and st:
        pairs.append(("text-on-symtab", text, "offset", img.shdrs[st]["offset"],
                      ".text's bytes are the symbol table's"))
        pairs.append(("symtab-on-text", st, "offset", img.shdrs[text]["offset"],
                      ".symtab's bytes are .text's"))
    if st:
        pairs.append(("symtab-on-shdrs", st, "offset", img.e["e_shoff"],
                      ".symtab overlaps the section header table"))
        pairs.append(("symtab-on-ehdr", st, "offset", 0, ".symtab overlaps the ELF header"))
    if table:
        pairs.append(("table-on-ehdr", table, "offset", 0,
                      "the patch-site table's bytes are the ELF header"))
        pairs.append(("table-on-shdrs", table, "offset", img.e["e_shoff"],
                      "the patch-site table's bytes are the section headers"))
        if st:
            pairs.append(("table-on-symtab", table, "offset", img.shdrs[st]["offset"],
                          "the patch-site table's bytes are the symbol table's"))
        if text:
            pairs.append(("table-addr-in-text", table, "addr", img.shdrs[text]["addr"],
                          "the table's address range is .text's"))
    if text:
        rd = img.by_name(".rela.dyn")
        if rd:
            pairs.append(("reladyn-on-text", rd, "offset", img.shdrs[text]["offset"],
                          ".rela.dyn's bytes are .text's"))
    for kind, i, field, val, what in pairs:
        b = bytearray(img.data)
        set_sh(img, b, i, field, val)
        c.add("%s--overlap-%s" % (tag, kind), b, "any", what)
    # every ALLOC section at one address
    b = bytearray(img.data)
    for i, s in enumerate(img.shdrs):
        if i and s["flags"] & SHF_ALLOC:
            set_sh(img, b, i, "addr", 0x400000)
    c.add("%s--overlap-all-alloc-same-addr" % tag, b, "any", "every SHF_ALLOC section at 0x400000")


def strings(c, tag, img):
    """String indexes out of range, and string tables without their final NUL."""
    st = img.by_type(SHT_SYMTAB) or img.by_type(SHT_DYNSYM)
    shstr = img.e["e_shstrndx"]
    for i in sorted({1, img.by_name(".text") or 1, shstr}):
        b = bytearray(img.data)
        set_sh(img, b, i, "name", 0xffffffff)
        c.add("%s--shname-huge-%d" % (tag, i), b, "error", "section %d: sh_name 0xffffffff" % i)
        b = bytearray(img.data)
        set_sh(img, b, i, "name", img.shdrs[shstr]["size"])
        c.add("%s--shname-at-end-%d" % (tag, i), b, "error",
              "section %d: sh_name just past .shstrtab" % i)
    b = bytearray(img.data)
    s = img.shdrs[shstr]
    b[s["offset"] + s["size"] - 1] = ord("A")
    c.add("%s--shstrtab-no-nul" % tag, b, "any", ".shstrtab's last byte is not NUL")
    if st is None:
        return
    syms = img.symbols(st)
    funcs = [k for k, y in enumerate(syms) if y["info"] & 0xf == 2 and y["size"]]
    strndx = img.shdrs[st]["link"]
    for k in ([1] + funcs[:1] + funcs[-1:]):
        b = bytearray(img.data)
        set_sym(img, b, st, k, "name", 0xfffffff0)
        c.add("%s--stname-huge-%d" % (tag, k), b, "error", "symbol %d: st_name 0xfffffff0" % k)
        b = bytearray(img.data)
        set_sym(img, b, st, k, "name", img.shdrs[strndx]["size"])
        c.add("%s--stname-at-end-%d" % (tag, k), b, "error", "symbol %d: st_name at the end" % k)
    b = bytearray(img.data)
    ss = img.shdrs[strndx]
    b[ss["offset"] + ss["size"] - 1] = ord("A")
    c.add("%s--strtab-no-nul" % tag, b, "any", "the symbol string table's last byte is not NUL")
    b = bytearray(img.data)
    set_sh(img, b, strndx, "type", SHT_PROGBITS)
    c.add("%s--strtab-not-strtab" % tag, b, "error", "the symbols' sh_link is not SHT_STRTAB")
    b = bytearray(img.data)
    set_sh(img, b, shstr, "type", SHT_PROGBITS)
    c.add("%s--shstrtab-not-strtab" % tag, b, "error", "e_shstrndx names a PROGBITS section")


def symtabs(c, tag, img):
    """Symbol counts in the millions, zero-size and odd-size tables, bad section indexes."""
    st = img.by_type(SHT_SYMTAB) or img.by_type(SHT_DYNSYM)
    if st is None:
        return
    nm = img.shdrs[st]["sname"].lstrip(".")
    for count in (2_000_000, 50_000_000, (1 << 58) // 24):
        b = bytearray(img.data)
        set_sh(img, b, st, "size", 24 * count)
        c.add("%s--%s-count-%d" % (tag, nm, count), b, "error",
              "%s claims %d symbols (sh_size past EOF)" % (img.shdrs[st]["sname"], count))
    b = bytearray(img.data)
    set_sh(img, b, st, "size", 0)
    c.add("%s--%s-zero-size" % (tag, nm), b, "any", "zero-size %s" % img.shdrs[st]["sname"])
    b = bytearray(img.data)
    set_sh(img, b, st, "size", img.shdrs[st]["size"] - 12)
    c.add("%s--%s-size-not-multiple" % (tag, nm), b, "error", "sh_size not a multiple of 24")
    b = bytearray(img.data)
    set_sh(img, b, st, "entsize", 0)
    c.add("%s--%s-entsize-0" % (tag, nm), b, "error", "sh_entsize 0")
    b = bytearray(img.data)
    set_sh(img, b, st, "entsize", 16)
    c.add("%s--%s-entsize-16" % (tag, nm), b, "error", "sh_entsize 16 (ELF32 size)")
    syms = img.symbols(st)
    funcs = [k for k, y in enumerate(syms) if y["info"] & 0xf == 2 and y["size"] and y["shndx"]]
    if funcs:
        k = funcs[0]
        for kind, field, val, expect in (("shndx-out-of-range", "shndx", 0xfeff, "error"),
                                         ("shndx-xindex-no-table", "shndx", SHN_XINDEX, "any"),
                                         ("size-huge", "size", (1 << 63) + 5, "any"),
                                         ("size-wraps", "size", (1 << 64) - 1, "any"),
                                         ("value-zero", "value", 0, "any")):
            b = bytearray(img.data)
            set_sym(img, b, st, k, field, val)
            c.add("%s--func-%s" % (tag, kind), b, expect, "first function symbol: %s = 0x%x" %
                  (field, val))
        # every function the same huge size: the scan must stay linear
        b = bytearray(img.data)
        for k in funcs:
            set_sym(img, b, st, k, "size", 1 << 40)
        c.add("%s--funcs-all-huge" % tag, b, "any", "every function symbol 2^40 bytes long")
        b = bytearray(img.data)
        text = img.by_name(".text")
        if text:
            tsz = img.shdrs[text]["size"]
            for n, k in enumerate(funcs):
                set_sym(img, b, st, k, "value", img.shdrs[text]["addr"] + n)
                set_sym(img, b, st, k, "size", tsz - n)
            c.add("%s--funcs-nested" % tag, b, "any",
                  "function symbols one byte apart, each to the end of .text")
    # an SHT_SYMTAB_SHNDX that is too short, and one that links to itself
    b = bytearray(img.data)
    shx = img.by_name(".comment") or img.by_name(".shstrtab")
    set_sh(img, b, shx, "type", SHT_SYMTAB_SHNDX)
    set_sh(img, b, shx, "link", st)
    set_sh(img, b, shx, "entsize", 4)
    c.add("%s--symtab-shndx-short" % tag, b, "any",
          "an SHT_SYMTAB_SHNDX for %s shorter than the symbols" % img.shdrs[st]["sname"])


def links(c, tag, img):
    """sh_link loops and relocation sections that point at themselves."""
    st = img.by_type(SHT_SYMTAB) or img.by_type(SHT_DYNSYM)
    if st is not None:
        b = bytearray(img.data)
        set_sh(img, b, st, "link", st)
        c.add("%s--symtab-link-self" % tag, b, "error", "the symbol table's sh_link is itself")
        b = bytearray(img.data)
        set_sh(img, b, st, "link", 0)
        c.add("%s--symtab-link-0" % tag, b, "error", "the symbol table's sh_link is 0")
        b = bytearray(img.data)
        set_sh(img, b, st, "link", len(img.shdrs) + 100)
        c.add("%s--symtab-link-range" % tag, b, "error", "the symbol table's sh_link is past e_shnum")
    relas = [i for i, s in enumerate(img.shdrs) if i and s["type"] == SHT_RELA]
    for i in relas[:2]:
        nm = img.shdrs[i]["sname"].lstrip(".")
        for kind, fields in (("self-link", {"link": i}), ("self-info", {"info": i}),
                             ("self-both", {"link": i, "info": i}),
                             ("link-range", {"link": 0xfffffff0}),
                             ("info-range", {"info": 0xfffffff0})):
            b = bytearray(img.data)
            for f, v in fields.items():
                set_sh(img, b, i, f, v)
            c.add("%s--%s-%s" % (tag, nm, kind), b, "any",
                  "%s: %s" % (img.shdrs[i]["sname"], ", ".join("sh_%s=%d" % kv for kv in fields.items())))
        if st is not None and img.shdrs[i]["link"]:
            # a two-section loop: the relocations' symbol table links back to them
            b = bytearray(img.data)
            set_sh(img, b, img.shdrs[i]["link"], "link", i)
            c.add("%s--%s-link-loop" % (tag, nm), b, "error",
                  "%s -> its symbol table -> %s" % (img.shdrs[i]["sname"], img.shdrs[i]["sname"]))
        b = bytearray(img.data)
        set_sh(img, b, i, "entsize", 0)
        c.add("%s--%s-entsize-0" % (tag, nm), b, "any", "%s: sh_entsize 0" % img.shdrs[i]["sname"])
        b = bytearray(img.data)
        set_sh(img, b, i, "size", img.shdrs[i]["size"] - 8)
        c.add("%s--%s-size-odd" % (tag, nm), b, "any", "%s: size not a multiple of 24" %
              img.shdrs[i]["sname"])
        # relocations whose symbol index and offset are garbage
        b = bytearray(img.data)
        o = img.shdrs[i]["offset"]
        for k in range(min(img.shdrs[i]["size"] // 24, 64)):
            put(b, o + 24 * k, "Q", 0xfffffffffffffff8 - k)
            put(b, o + 24 * k + 8, "Q", (0xfffffff0 << 32) | (k & 0xff))
        c.add("%s--%s-garbage-entries" % (tag, nm), b, "any",
              "%s: r_offset/r_info garbage in the first 64 entries" % img.shdrs[i]["sname"])


def tables(c, tag, img):
    """The patch-site table: odd sizes, past the end, NOBITS, and a __start/__stop region."""
    t = img.by_name("__patchable_function_entries") or img.by_name("__mcount_loc")
    if t is None:
        return
    s = img.shdrs[t]
    for size, expect in ((12, "error"), (s["size"] + 4, "error"), (0, "any")):
        b = bytearray(img.data)
        set_sh(img, b, t, "size", size)
        c.add("%s--table-size-%d" % (tag, size), b, expect,
              "%s of %d bytes" % (s["sname"], size))
    b = bytearray(img.data)
    set_sh(img, b, t, "type", SHT_NOBITS)
    set_sh(img, b, t, "size", 1 << 40)
    c.add("%s--table-nobits-huge" % tag, b, "error", "%s as SHT_NOBITS of 2^40 bytes" % s["sname"])
    b = bytearray(img.data)
    set_sh(img, b, t, "addr", s["addr"] + 4)
    c.add("%s--table-addr-misaligned" % tag, b, "any", "%s at an address 4 mod 8" % s["sname"])
    # all entries garbage / all pointing at one function
    b = bytearray(img.data)
    for k in range(s["size"] // 8):
        put(b, s["offset"] + 8 * k, "Q", 0xdeadbeefdeadbeef ^ k)
    c.add("%s--table-garbage" % tag, b, "any", "%s entries are garbage" % s["sname"])
    if img.e["e_type"] != 1:
        for kind, start, stop, expect in (
                ("region-odd-12", s["addr"], s["addr"] + 12, "error"),
                ("region-exact", s["addr"], s["addr"] + s["size"], "any"),
                ("region-reversed", s["addr"] + 8, s["addr"], "error"),
                ("region-huge", s["addr"], s["addr"] + (1 << 47), "error"),
                ("region-unmapped", 0x10, 0x30, "error")):
            c.add("%s--%s" % (tag, kind), add_region(img, t, start, stop), expect,
                  "__start_mcount_loc=0x%x __stop_mcount_loc=0x%x" % (start, stop))


def add_region(img, t, start, stop):
    """A copy with __start_mcount_loc/__stop_mcount_loc appended to .symtab (moved to EOF)."""
    st = img.by_type(SHT_SYMTAB)
    b = bytearray(img.data)
    while len(b) % 8:
        b.append(0)
    sts = img.shdrs[st]
    strs = img.shdrs[sts["link"]]
    strtab = bytearray(img.data[strs["offset"]:strs["offset"] + strs["size"]])
    names = []
    for n in ("__start_mcount_loc", "__stop_mcount_loc"):
        names.append(len(strtab))
        strtab += n.encode() + b"\0"
    syms = bytearray(img.data[sts["offset"]:sts["offset"] + sts["size"]])
    for n, v in zip(names, (start, stop)):
        syms += struct.pack("<IBBHQQ", n, 0x10, 0, t, v, 0)     # GLOBAL NOTYPE
    sym_off = len(b)
    b += syms
    str_off = len(b)
    b += strtab
    set_sh(img, b, st, "offset", sym_off)
    set_sh(img, b, st, "size", len(syms))
    set_sh(img, b, sts["link"], "offset", str_off)
    set_sh(img, b, sts["link"], "size", len(strtab))
    return b


def headers(c, tag, img):
    """ELF and program header fields: e_shstrndx, e_shnum 0 with SHN_XINDEX, e_phoff, ..."""
    n = len(img.data)
    e = img.e
    sh0 = img.shdr_off(0)

    def mk(name, expect, what, eh=None, sh0f=None):
        b = bytearray(img.data)
        for f, v in (eh or {}).items():
            set_eh(b, f, v)
        for f, v in (sh0f or {}).items():
            o, t = SH[f]
            put(b, sh0 + o, t, v)
        c.add("%s--%s" % (tag, name), b, expect, what)

    mk("shstrndx-range", "error", "e_shstrndx past e_shnum", {"e_shstrndx": e["e_shnum"] + 3})
    mk("shstrndx-0", "error", "e_shstrndx 0 (SHN_UNDEF)", {"e_shstrndx": 0})
    mk("shstrndx-symtab", "error", "e_shstrndx names the symbol table",
       {"e_shstrndx": img.by_type(SHT_SYMTAB) or 1})
    mk("shstrndx-xindex-legal", "same", "e_shstrndx SHN_XINDEX, the index in section 0's sh_link",
       {"e_shstrndx": SHN_XINDEX}, {"link": e["e_shstrndx"]})
    mk("shstrndx-xindex-range", "error", "e_shstrndx SHN_XINDEX, section 0's sh_link out of range",
       {"e_shstrndx": SHN_XINDEX}, {"link": 0x7fffffff})
    mk("shstrndx-xindex-zero", "error", "e_shstrndx SHN_XINDEX, section 0's sh_link 0",
       {"e_shstrndx": SHN_XINDEX}, {"link": 0})
    mk("shnum-0-legal", "same", "e_shnum 0, the count in section 0's sh_size",
       {"e_shnum": 0}, {"size": e["e_shnum"]})
    mk("shnum-0-both-xindex", "same", "e_shnum 0 and e_shstrndx SHN_XINDEX, both in section 0",
       {"e_shnum": 0, "e_shstrndx": SHN_XINDEX}, {"size": e["e_shnum"], "link": e["e_shstrndx"]})
    mk("shnum-0-size-0", "error", "e_shnum 0 and section 0's sh_size 0", {"e_shnum": 0}, {"size": 0})
    mk("shnum-0-size-huge", "error", "e_shnum 0, section 0's sh_size 2^32-1",
       {"e_shnum": 0}, {"size": 0xffffffff})
    mk("shnum-0-size-2e60", "error", "e_shnum 0, section 0's sh_size 2^60",
       {"e_shnum": 0}, {"size": 1 << 60})
    mk("shnum-0-size-more", "error", "e_shnum 0, section 0's sh_size one more than there are",
       {"e_shnum": 0}, {"size": e["e_shnum"] + 1})
    mk("shnum-0-shoff-0", "error", "e_shnum 0 and e_shoff 0", {"e_shnum": 0, "e_shoff": 0})
    mk("shnum-max", "error", "e_shnum 0xffff", {"e_shnum": 0xffff})
    mk("shnum-less", "any", "e_shnum one less (the last section dropped)",
       {"e_shnum": e["e_shnum"] - 1})
    mk("shoff-past-eof", "error", "e_shoff past EOF", {"e_shoff": n + 64})
    mk("shoff-huge", "error", "e_shoff 2^64-64", {"e_shoff": (1 << 64) - 64})
    mk("shoff-0", "error", "e_shoff 0 (the ELF header read as section headers)", {"e_shoff": 0})
    mk("shoff-misaligned", "any", "e_shoff 4 bytes later (every header read shifted)",
       {"e_shoff": e["e_shoff"] + 4})
    mk("shentsize-32", "error", "e_shentsize 32", {"e_shentsize": 32})
    mk("shentsize-0", "error", "e_shentsize 0", {"e_shentsize": 0})
    # with no program headers (an object) e_phoff means nothing
    ph = "error" if e["e_phnum"] else "same"
    mk("phoff-past-eof", ph, "e_phoff past EOF", {"e_phoff": n + 8})
    mk("phoff-huge", ph, "e_phoff 2^64-8", {"e_phoff": (1 << 64) - 8})
    mk("phnum-max", "error", "e_phnum 0xffff (PN_XNUM), no section 0 sh_info", {"e_phnum": 0xffff})
    mk("phentsize-0", "error" if e["e_phnum"] else "any", "e_phentsize 0", {"e_phentsize": 0})
    mk("ehsize-0", "any", "e_ehsize 0", {"e_ehsize": 0})
    mk("version-0", "error", "e_version 0", {"e_version": 0})
    mk("type-core", "error", "e_type ET_CORE", {"e_type": 4})
    mk("type-huge", "error", "e_type 0xfe00 (ET_LOOS)", {"e_type": 0xfe00})
    mk("machine-sparc", "error", "e_machine EM_SPARCV9", {"e_machine": 43})
    b = bytearray(img.data)
    b[4] = 1                                        # ELFCLASS32
    c.add("%s--class-32" % tag, b, "error", "EI_CLASS ELFCLASS32 on a 64-bit body")
    b = bytearray(img.data)
    b[5] = 2
    c.add("%s--data-msb" % tag, b, "error", "EI_DATA big-endian on a little-endian body")
    b = bytearray(img.data)
    b[6] = 0
    c.add("%s--ident-version-0" % tag, b, "error", "EI_VERSION 0")
    # section 0 not empty
    b = bytearray(img.data)
    o, t = SH["type"]
    put(b, sh0 + o, t, SHT_SYMTAB)
    c.add("%s--shdr0-symtab" % tag, b, "any", "section 0 is SHT_SYMTAB")


def compressed(c, tag, img, full):
    """SHF_COMPRESSED sections with lying headers, in place of the section's bytes."""
    for name in (".debug_info", ".symtab", ".strtab") if full else ():
        i = img.by_name(name)
        if i is None:
            continue
        s = img.shdrs[i]
        raw = img.data[s["offset"]:s["offset"] + s["size"]]
        z = zlib.compress(raw, 9)
        if 24 + len(z) > s["size"]:
            continue
        nm = name.lstrip(".")

        def mk(kind, expect, what, ch_type=1, ch_size=len(raw), ch_align=s["addralign"] or 1,
               payload=z, flags=s["flags"] | SHF_COMPRESSED):
            b = bytearray(img.data)
            chdr = struct.pack("<IIQQ", ch_type, 0, ch_size, ch_align)
            b[s["offset"]:s["offset"] + 24 + len(payload)] = chdr + payload
            set_sh(img, b, i, "size", 24 + len(payload))
            set_sh(img, b, i, "flags", flags)
            c.add("%s--z-%s-%s" % (tag, nm, kind), b, expect, "%s compressed: %s" % (name, what))

        mk("ok", "same" if name.startswith(".debug") or name == ".comment" else "any",
           "a correct ELFCOMPRESS_ZLIB header")
        mk("chsize-big", "any", "ch_size twice the real size", ch_size=2 * len(raw))
        mk("chsize-small", "any", "ch_size half the real size", ch_size=len(raw) // 2)
        mk("chsize-huge", "any", "ch_size 2^62", ch_size=1 << 62)
        mk("chsize-0", "any", "ch_size 0", ch_size=0)
        mk("chtype-7", "any", "unknown ch_type 7", ch_type=7)
        mk("chtype-zstd", "any", "ch_type ELFCOMPRESS_ZSTD over a zlib stream", ch_type=2)
        mk("chalign-3", "any", "ch_addralign 3", ch_align=3)
        mk("stream-cut", "any", "zlib stream cut in half", payload=z[:len(z) // 2])
        bad = bytearray(z)
        for k in range(8, len(bad), 97):
            bad[k] ^= 0x5a
        mk("stream-corrupt", "any", "zlib stream with flipped bytes", payload=bytes(bad))
        mk("header-only", "any", "only the Elf64_Chdr, no stream", payload=b"")
    t = img.by_name(".text")
    if t is not None:
        b = bytearray(img.data)
        set_sh(img, b, t, "flags", img.shdrs[t]["flags"] | SHF_COMPRESSED)
        c.add("%s--z-text-alloc" % tag, b, "error", ".text marked SHF_COMPRESSED (SHF_ALLOC too)")


def modules(c, tag, img, rng):
    """Compressed modules: garbage inside, cut streams, a small bomb, a lying trailer."""
    d = img.data
    gz = gzip.compress(d, 6, mtime=0)
    xz = lzma.compress(d, preset=1)
    garbage = bytes(rng.getrandbits(8) for _ in range(40000))
    c.add("%s--gz-ok" % tag, gz, "same", "the image as .gz")
    c.add("%s--xz-ok" % tag, xz, "same", "the image as .xz")
    c.add("%s--gz-garbage" % tag, gzip.compress(garbage, 6, mtime=0), "error",
          ".gz that inflates to random bytes")
    c.add("%s--gz-elf-header-only" % tag, gzip.compress(d[:64], 6, mtime=0), "error",
          ".gz that inflates to the ELF header alone")
    c.add("%s--gz-truncated-elf" % tag, gzip.compress(d[:len(d) // 2], 6, mtime=0), "error",
          ".gz that inflates to half the image")
    c.add("%s--gz-cut" % tag, gz[:len(gz) // 2], "error", "a .gz stream cut in half")
    c.add("%s--gz-no-trailer" % tag, gz[:-8], "error", "a .gz without its CRC and size")
    bad = bytearray(gz)
    bad[-8] ^= 0xff
    c.add("%s--gz-bad-crc" % tag, bad, "error", "a .gz whose CRC is wrong")
    bad = bytearray(gz)
    for k in range(20, len(bad) - 8, 53):
        bad[k] ^= 0xa5
    c.add("%s--gz-corrupt" % tag, bad, "error", "a .gz with flipped bytes")
    c.add("%s--gz-magic-only" % tag, b"\x1f\x8b", "error", "the two gzip magic bytes alone")
    c.add("%s--gz-bomb" % tag, gzip.compress(bytes(64 << 20), 9, mtime=0), "error",
          ".gz that inflates to 64 MiB of zeros")
    c.add("%s--gz-twice" % tag, gzip.compress(gz, 6, mtime=0), "error", "a .gz of the .gz")
    c.add("%s--gz-concat" % tag, gz + gzip.compress(garbage[:100], 6, mtime=0), "any",
          "two gzip members: the image, then garbage")
    c.add("%s--xz-garbage" % tag, lzma.compress(garbage, preset=1), "error",
          ".xz that inflates to random bytes")
    c.add("%s--xz-cut" % tag, xz[:len(xz) // 2], "error", "an .xz stream cut in half")
    c.add("%s--xz-magic-only" % tag, b"\xfd7zXZ\x00", "error", "the xz magic alone")
    c.add("%s--zst-magic-only" % tag, b"\x28\xb5\x2f\xfd", "error", "the zstd magic alone")
    c.add("%s--zst-garbage-frame" % tag, b"\x28\xb5\x2f\xfd" + garbage[:4000], "error",
          "a zstd magic followed by random bytes")
    if shutil.which("zstd"):
        zs = subprocess.run(["zstd", "-q", "-c", "-3"], input=d, stdout=subprocess.PIPE,
                            check=True).stdout
        c.add("%s--zst-ok" % tag, zs, "same", "the image as .zst")
        c.add("%s--zst-cut" % tag, zs[:len(zs) // 2], "error", "a .zst stream cut in half")
        zg = subprocess.run(["zstd", "-q", "-c", "-3"], input=garbage, stdout=subprocess.PIPE,
                            check=True).stdout
        c.add("%s--zst-garbage" % tag, zg, "error", ".zst that inflates to random bytes")


# ---------------------------------------------------------------- scale
#
# Synthetic images, written from scratch, that are cheap for a linear
# patchsite and take minutes for a quadratic one, so the 10 s timeout
# catches a regression.  Each expects an exact number of sites.


def synth(etype, sections, syms, entry=0):
    """An ELF64 x86-64 file: sections = [(name, type, flags, addr, data, link, info,
    align, entsize)], link/info as section numbers (1-based among these, after
    the null section); then .symtab (syms: (name, value, size, shndx, info)),
    .strtab, .shstrtab.  e_shnum 0 and the count in section 0 when needed."""
    n = len(sections)
    i_sym, i_str, i_shstr = n + 1, n + 2, n + 3
    names = {}
    shstr = bytearray(b"\0")
    for nm in [x[0] for x in sections] + [".symtab", ".strtab", ".shstrtab"]:
        if nm not in names:
            names[nm] = len(shstr)
            shstr += nm.encode() + b"\0"
    strtab = bytearray(b"\0")
    symtab = bytearray(24)
    nlocal = 1
    for (nm, value, size, shndx, info) in syms:
        off = len(strtab)
        strtab += nm.encode() + b"\0"
        st_shndx = shndx if shndx < 0xff00 else SHN_XINDEX
        symtab += struct.pack("<IBBHQQ", off, info, 0, st_shndx, value, size)
        if info >> 4 == 0:
            nlocal += 1
    big = any(x[3] >= 0xff00 for x in syms)
    body = bytearray(64)
    offs = []
    for (nm, typ, flags, addr, data, link, info, align, ent) in sections:
        while len(body) % max(align, 1):
            body.append(0)
        offs.append(len(body))
        if typ != SHT_NOBITS:
            body += data
    extra = []
    if big:
        shndx_words = bytearray(4)
        for (nm, value, size, shndx, info) in syms:
            shndx_words += struct.pack("<I", shndx if shndx >= 0xff00 else 0)
        extra.append((".symtab_shndx", SHT_SYMTAB_SHNDX, 0, 0, bytes(shndx_words), i_sym, 0, 4, 4))
    tail = [(".symtab", SHT_SYMTAB, 0, 0, bytes(symtab), i_str, nlocal, 8, 24),
            (".strtab", SHT_STRTAB, 0, 0, bytes(strtab), 0, 0, 1, 0),
            (".shstrtab", SHT_STRTAB, 0, 0, bytes(shstr + b".symtab_shndx\0"), 0, 0, 1, 0)]
    names[".symtab_shndx"] = len(shstr)
    for (nm, typ, flags, addr, data, link, info, align, ent) in tail + extra:
        while len(body) % max(align, 1):
            body.append(0)
        offs.append(len(body))
        body += data
    while len(body) % 8:
        body.append(0)
    allsec = sections + tail + extra
    count = len(allsec) + 1
    shoff = len(body)
    sh = bytearray(struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, count if count >= 0xff00 else 0,
                               i_shstr if i_shstr >= 0xff00 else 0, 0, 0, 0))
    for k, (nm, typ, flags, addr, data, link, info, align, ent) in enumerate(allsec):
        size = len(data) if typ != SHT_NOBITS else 0
        sh += struct.pack("<IIQQQQIIQQ", names[nm], typ, flags, addr, offs[k], size, link, info,
                          align, ent)
    eh = struct.pack("<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0, bytes(7), etype, 62, 1,
                     entry, 0, shoff, 0, 64, 56, 0, 64, 0 if count >= 0xff00 else count,
                     SHN_XINDEX if i_shstr >= 0xff00 else i_shstr)
    body[0:64] = eh
    return bytes(body) + bytes(sh)


def calls_text(base, n, target_off):
    """n functions `call TARGET; ret` (6 bytes each) from base; TARGET at base+target_off."""
    text = bytearray()
    for k in range(n):
        at = base + 6 * k
        text += b"\xe8" + struct.pack("<i", base + target_off - (at + 5)) + b"\xc3"
    return text


def scale(c):
    base = 0x401000
    # 200k -pg functions (call mcount), one with a 2^40-byte st_size
    n = 200_000
    text = calls_text(base, n, 6 * n) + b"\xc3"
    syms = [("f%d" % k, base + 6 * k, 6, 1, 0x12) for k in range(n)] + \
           [("mcount", base + 6 * n, 1, 1, 0x12)]
    huge = list(syms)
    huge[0] = ("f0", base, 1 << 40, 1, 0x12)
    c.add("scale--funcs-200k-one-huge", synth(2, [(".text", SHT_PROGBITS, 6, base, text, 0, 0,
                                                   16, 0)], huge, base),
          "any", "200,000 functions, the first with st_size 2^40 (function lookups must not "
          "walk them all)")
    nested = [("f%d" % k, base + 6 * k, 6 * (n - k), 1, 0x12) for k in range(n)] + syms[n:]
    c.add("scale--funcs-200k-nested", synth(2, [(".text", SHT_PROGBITS, 6, base, text, 0, 0, 16,
                                                 0)], nested, base),
          "count=%d" % n, "200,000 functions, each running to the end of .text (the call scan "
          "must decode each byte once)")
    # a stale table: every entry one byte into its function (audit's findings sort)
    n2 = 50_000
    text2 = calls_text(base, n2, 6 * n2) + b"\xc3"
    loc = b"".join(struct.pack("<Q", base + 6 * k + 1) for k in range(n2))
    syms2 = [("f%d" % k, base + 6 * k, 6, 1, 0x12) for k in range(n2)] + \
            [("__fentry__", base + 6 * n2, 1, 1, 0x12)]
    c.add("scale--stale-table-50k", synth(2, [(".text", SHT_PROGBITS, 6, base, text2, 0, 0, 16, 0),
                                              ("__mcount_loc", SHT_PROGBITS, 2, 0x800000, loc, 0, 0,
                                               8, 0)], syms2, base),
          "count=%d" % n2, "50,000 sites, every __mcount_loc entry stale (50,000 + 50,000 "
          "findings to order)")
    # an object with a section per function, its own __patchable_function_entries and
    # .rela each (clang -ffunction-sections): more than 65,521 sections, so some
    # function sections have indexes equal to SHN_ABS/SHN_COMMON
    n3 = 25_000
    secs, syms3 = [], [("", 0, 0, 0, 0)] * 0
    fsyms = []
    for k in range(n3):
        ti = len(secs) + 1
        secs.append((".text.f%d" % k, SHT_PROGBITS, 6, 0, b"\x90" * 5 + b"\xc3", 0, 0,
                     16, 0))
        secs.append(("__patchable_function_entries", SHT_PROGBITS, 0x82, 0, bytes(8), ti, 0, 8, 0))
        secs.append((".rela__patchable_function_entries", SHT_RELA, 0x40, 0, None, 0,
                     ti + 1, 8, 24))
        fsyms.append(("f%d" % k, 0, 6, ti, 0x12))
    # section symbols first (locals), then the functions; relocations against them
    ssyms = [("", 0, 0, 1 + 3 * k, 0x03) for k in range(n3)]
    allsyms = ssyms + fsyms
    i_sym = len(secs) + 1
    fixed = []
    for (nm, typ, flags, addr, data, link, info, align, ent) in secs:
        if typ == SHT_RELA:
            k = (info - 2) // 3
            data = struct.pack("<QQq", 0, ((1 + k) << 32) | 1, 0)      # R_X86_64_64 .text.fK
            link = i_sym
        fixed.append((nm, typ, flags, addr, data, link, info, align, ent))
    c.add("scale--clang-object-75k-sections", synth(1, fixed, allsyms),
          "count=%d" % n3, "25,000 functions in 75,000 sections with a table and relocations "
          "each (SHN_XINDEX; some section indexes equal SHN_ABS)")
    # 100k table sections in an object, and 100k symbol tables in an executable
    n4 = 100_000
    secs4 = [(".text", SHT_PROGBITS, 6, 0, b"\xc3" * 16, 0, 0, 16, 0)]
    secs4 += [("__mcount_loc", SHT_PROGBITS, 2, 0, bytes(8), 0, 0, 8, 0)] * n4
    c.add("scale--tables-100k", synth(1, secs4, [("f", 0, 1, 1, 0x12)]), "any",
          "100,000 __mcount_loc sections in one object")
    secs5 = [(".text", SHT_PROGBITS, 6, base, b"\xc3" * 16, 0, 0, 16, 0),
             (".strtab2", SHT_STRTAB, 0, 0, b"\0f\0", 0, 0, 1, 0)]
    secs5 += [(".symtab2", SHT_SYMTAB, 0, 0, b"", 2, 0, 8, 24)] * n4
    c.add("scale--symtabs-100k", synth(2, secs5, [("f", base, 1, 1, 0x12)], base), "any",
          "100,000 (empty) symbol tables in one executable")


def main():
    ap = argparse.ArgumentParser(description="make a corpus of broken ELF files")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--fixtures", default=os.path.join(here, "..", "..", "fixtures", "out"))
    ap.add_argument("outdir")
    a = ap.parse_args()
    if os.path.isdir(a.outdir):
        shutil.rmtree(a.outdir)
    os.makedirs(a.outdir)
    c = Corpus(a.outdir)
    rng = random.Random(20261122)
    for tag, rel in BASES:
        path = os.path.join(a.fixtures, rel)
        if not os.path.isfile(path):
            raise SystemExit("mkcorpus: fixture %s is missing (run make -C fixtures)" % path)
        with open(path, "rb") as f:
            img = Image(f.read())
        c.add("%s--base" % tag, img.data, "same", "the unmodified fixture %s" % rel)
        truncations(c, tag, img)
        bounds(c, tag, img)
        overlaps(c, tag, img)
        strings(c, tag, img)
        symtabs(c, tag, img)
        links(c, tag, img)
        tables(c, tag, img)
        headers(c, tag, img)
        compressed(c, tag, img, full=tag in ("x86-exec", "rv-rel"))
        if tag in ("x86-exec", "rv-rel"):
            modules(c, tag, img, rng)
    scale(c)
    c.write_manifest()
    print("mkcorpus: %d files in %s" % (len(c.manifest), a.outdir))


if __name__ == "__main__":
    sys.exit(main())
