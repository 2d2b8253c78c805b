#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""mkvmlinuz.py - a small boot image from a linked ELF, for tests/e2e/vmlinuz.sh:
an x86_64 bzImage, or (--format) an arm64 or riscv64 Image (--comp none,
or gzip: Image.gz).

Strategy: as a kernel build does it.  The ELF's symbols (nm -n) become
kallsyms tables laid out as scripts/kallsyms.c writes them (--layout=6.12:
num_syms, names, markers, token table, token index, offsets, relative base,
seqs_of_names; --layout=6.1: offsets and relative base first, no seqs), the
names compressed with tokens the way the kernel's tool makes them (every
byte a name uses is its own token; free slots get the most frequent pairs).
The tables and a "Linux version" banner go into a new allocated section
(objcopy --add-section) of the ELF stripped of its symbols (objcopy -S, as
arch/x86/boot/compressed does), which is compressed and put behind a
setup header (boot protocol 2.15: setup_sects, "HdrS", payload_offset,
payload_length).  Options make the bad inputs: --no-kallsyms,
--corrupt-kallsyms, --truncate, --payload-garbage.  --map writes the
System.map the symbols came from (--map-shift moves its addresses: a map of
another build).

An Image is what objcopy -O binary makes of a kernel: its allocated bytes
from its first address on, the 64-byte header of arch/arm64/include/asm/
image.h or arch/riscv/include/asm/image.h over its first bytes (arm64:
_text is the ELF's first page, its ELF header; riscv64: _start is a header
page before _text, as head.S is), the banner and the kallsyms tables in a
page after the bss, which the Image covers (as a kernel's init data is).
The symbols a kernel has and a minikernel does not are added: _text,
_sinittext = _einittext (no init text) where the data starts, _end.
"""
import argparse
import bz2
import gzip
import lzma
import os
import struct
import subprocess
import sys
import tempfile


def sh(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def objcopy_for(elf):
    """The host's objcopy writes only its own machine's ELF: a cross one for the others."""
    with open(elf, "rb") as f:
        machine, = struct.unpack_from("<H", f.read(20), 18)
    return {21: "powerpc64le-linux-gnu-objcopy", 183: "aarch64-linux-gnu-objcopy",
            243: "riscv64-linux-gnu-objcopy"}.get(machine, "objcopy")


def sections(elf):
    out = []
    for line in sh("readelf", "-SW", elf).splitlines():
        line = line.replace("[ ", "[")
        f = line.split()
        if len(f) > 7 and f[0].startswith("[") and f[0] != "[Nr]":
            out.append((f[1], int(f[3], 16), int(f[5], 16), f[7] if len(f) > 10 else ""))
    return out


def tokenize(names):
    """The kernel's scheme: used bytes are their own token; free slots take the best pairs."""
    seqs = [list(n.encode()) for n in names]
    table = [None] * 256
    for s in seqs:
        for c in s:
            table[c] = bytes([c])
    for slot in range(255, -1, -1):
        if table[slot] is not None:
            continue
        counts = {}
        for s in seqs:
            for a, b in zip(s, s[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        (a, b), n = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        if n < 2:
            break
        table[slot] = table[a] + table[b]
        for i, s in enumerate(seqs):
            r, j = [], 0
            while j < len(s):
                if j + 1 < len(s) and s[j] == a and s[j + 1] == b:
                    r.append(slot)
                    j += 2
                else:
                    r.append(s[j])
                    j += 1
            seqs[i] = r
    return [t if t is not None else b"" for t in table], seqs


def align8(b):
    return b + b"\0" * (-len(b) % 8)


def tables(syms, layout, base):
    """syms: [(addr, type, name)] sorted by address.  The bytes, from an 8-aligned start."""
    names = [t + n for a, t, n in syms]
    toks, seqs = tokenize(names)
    blob_names, markers, off = b"", [], 0
    for i, s in enumerate(seqs):
        if i % 256 == 0:
            markers.append(off)
        ln = len(s)
        hdr = bytes([ln]) if ln <= 0x7F else bytes([(ln & 0x7F) | 0x80, ln >> 7])
        blob_names += hdr + bytes(s)
        off += len(hdr) + ln
    tt, ti, o = b"", [], 0
    for t in toks:
        ti.append(o)
        tt += t + b"\0"
        o += len(t) + 1
    num = struct.pack("<I", len(syms))
    offsets = b"".join(struct.pack("<I", a - base) for a, t, n in syms)
    order = sorted(range(len(syms)), key=lambda i: (syms[i][2], i))
    seqs_of_names = b"".join(struct.pack(">I", i)[1:] for i in order)
    mk = b"".join(struct.pack("<I", m) for m in markers)
    idx = b"".join(struct.pack("<H", x) for x in ti)
    rb = struct.pack("<Q", base)
    if layout == "6.12":
        parts = [num, blob_names, mk, tt, idx, offsets, rb, seqs_of_names]
    else:
        parts = [offsets, rb, num, blob_names, mk, tt, idx]
    return b"".join(align8(p) for p in parts)


def compress(data, kind):
    if kind == "gzip":
        return gzip.compress(data, 9)
    if kind == "xz":
        return lzma.compress(data, lzma.FORMAT_XZ, check=lzma.CHECK_CRC32)
    if kind == "lzma":
        return lzma.compress(data, lzma.FORMAT_ALONE)
    if kind == "zstd":
        return subprocess.run(["zstd", "-19", "-q", "-c"], input=data, check=True,
                              capture_output=True).stdout
    if kind == "bzip2":
        return bz2.compress(data, 9)
    if kind == "lzo":                   # as the kernel's build: lzop -9
        return subprocess.run(["lzop", "-9", "-c"], input=data, check=True,
                              capture_output=True).stdout
    raise SystemExit("unknown compression " + kind)


def bzimage(payload, truncate=0):
    setup = bytearray(5 * 512)          # setup_sects = 4, plus the boot sector
    setup[0x1F1] = 4
    setup[0x1FE:0x200] = b"\x55\xaa"
    setup[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", setup, 0x206, 0x020F)
    pm = bytearray(0x100)              # stands for the decompressor's code
    struct.pack_into("<II", setup, 0x248, len(pm), len(payload))
    img = bytes(setup) + bytes(pm) + payload + struct.pack("<I", 0)
    return img[:truncate] if truncate else img


def elf_sections(b):
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shnum, = struct.unpack_from("<H", b, 0x3C)
    return [struct.unpack_from("<IIQQQQ", b, shoff + 64 * i) for i in range(shnum)]


def raw_image(fmt, elf, syms, banner_blob_at, blob, clear=False):
    """The Image's bytes (header included) and the symbols it adds."""
    b = open(elf, "rb").read()
    secs = [s for s in elf_sections(b) if s[2] & 2]       # SHF_ALLOC
    data = min(a for _, t, f, a, o, z in secs if f & 1 or t == 4)  # first writable or RELA
    stext = min(a for _, t, f, a, o, z in secs if f & 4)
    start = 0 if fmt == "arm64" else stext - 0x1000
    end = banner_blob_at + len(blob)
    img = bytearray(end - start)
    for _, t, f, a, o, z in secs:
        if t != 8:                                          # not NOBITS
            img[a - start:a - start + z] = b[o:o + z]
    img[banner_blob_at - start:end] = blob
    if clear:
        # the table cleared: its slots and the addends of the RELATIVE
        # relocations that fill them (arm64's values live there)
        sym = {n: ad for ad, t, n in syms}
        lo, hi = sym["__start_mcount_loc"], sym["__stop_mcount_loc"]
        img[lo - start:hi - start] = bytes(hi - lo)
        for _, t, f, a, o, z in secs:
            for k in range(z // 24 if t == 4 else 0):
                r = a - start + 24 * k
                off, info = struct.unpack_from("<QQ", img, r)
                if lo <= off < hi:
                    struct.pack_into("<Q", img, r + 16, 0)
    if fmt == "arm64":
        hdr = struct.pack("<IIQQQQQQ", 0xFA405A4D, 0x14000000 | ((stext - start) // 4),
                          0, len(img), 0xA, 0, 0, 0) + b"ARM\x64" + struct.pack("<I", 0)
        add = [(start, "T", "_text")]
    else:
        hdr = struct.pack("<IIQQQIIQ", 0x0000106F, 0, 0x200000, len(img), 0, 2, 0, 0) + \
            b"RISCV\0\0\0" + b"RSC\x05" + struct.pack("<I", 0)
        add = [(start, "T", "_start"), (stext, "T", "_text")]
    img[0:64] = hdr
    add += [(data, "T", "_sinittext"), (data, "T", "_einittext"), (end, "B", "_end")]
    return bytes(img), add


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("elf")
    ap.add_argument("out")
    ap.add_argument("--comp", default="gzip")
    ap.add_argument("--format", default="bzimage", choices=["bzimage", "arm64", "riscv64", "stripped"],
                    help="stripped: the payload itself, an ELF with no symbols (and an "
                    ".init.text, as a kernel has), as powerpc64le packages ship vmlinux")
    ap.add_argument("--text-only", action="store_true",
                    help="kallsyms as a build without CONFIG_KALLSYMS_ALL makes it: text symbols")
    ap.add_argument("--layout", default="6.12", choices=["6.12", "6.1"])
    ap.add_argument("--map")
    ap.add_argument("--map-shift", type=lambda s: int(s, 0), default=0)
    ap.add_argument("--map-banner-shift", type=lambda s: int(s, 0), default=0,
                    help="linux_banner elsewhere in the map (another build's)")
    ap.add_argument("--no-kallsyms", action="store_true")
    ap.add_argument("--corrupt-kallsyms", action="store_true")
    ap.add_argument("--truncate", type=int, default=0)
    ap.add_argument("--payload-garbage", action="store_true")
    ap.add_argument("--bomb", action="store_true")
    ap.add_argument("--clear-table", action="store_true",
                    help="an Image whose table is cleared (slots and relocation addends zero)")
    ap.add_argument("--unsorted", action="store_true",
                    help="swap the table's first two entries (a build that did not sort it)")
    ap.add_argument("--ikconfig", help="a config to embed as IKCONFIG does")
    a = ap.parse_args()

    secs = sections(a.elf)
    text = min(ad for n, ad, sz, fl in secs if "X" in fl and "A" in fl)
    top = max(ad + sz for n, ad, sz, fl in secs if "A" in fl)
    where = (top + 0xFFF) & ~0xFFF
    syms = []
    for line in sh("nm", "-n", a.elf).splitlines():
        f = line.split()
        if len(f) == 3 and f[1] not in "Uu" and not f[2].startswith(("$", ".L")):
            syms.append((int(f[0], 16), f[1], f[2]))
    if a.format not in ("bzimage", "stripped"):
        return image_main(a, syms, top)
    if not any(n == "_text" for _, _, n in syms):
        syms.append((text, "T", "_text"))
    banner = b"Linux version 6.12.0-minikernel (mkvmlinuz.py) #1 SMP\n\0"
    # the tables' own section: a banner, and a name with every digit (a real
    # kernel's names have them all: scripts/kallsyms keeps them as tokens)
    syms.append((where, "D", "linux_banner"))
    syms.append((where + 64, "r", "kallsyms_digits_0123456789"))
    syms.sort(key=lambda s: (s[0], s[2]))
    base = min(s[0] for s in syms)
    blob = banner + b"\0" * (64 - len(banner)) + b"\0" * 64
    if a.ikconfig:
        with open(a.ikconfig, "rb") as f:
            blob += b"IKCFG_ST" + gzip.compress(f.read()) + b"IKCFG_ED"
        blob += b"\0" * (-len(blob) % 8)
    if not a.no_kallsyms:
        # (the digits: a real kernel's text symbols have them all)
        ks = [x for x in syms if x[1] in "Tt" or x[2].startswith("kallsyms_digits")] \
            if a.text_only else syms
        t = bytearray(tables(ks, a.layout, base))
        if a.corrupt_kallsyms:
            # names: a length byte pointing far past them
            i = t.find(struct.pack("<I", len(syms)))
            t[i + 8] = 0x7F
            t[i + 9] = 0x7F
        blob += bytes(t)
    if a.map:
        with open(a.map, "w") as f:
            for ad, ty, n in syms:
                f.write("%016x %s %s\n" % (ad + a.map_shift, ty, n))

    with tempfile.TemporaryDirectory() as d:
        stripped, tab, out = (os.path.join(d, x) for x in ("s.elf", "t.bin", "o.elf"))
        src = a.elf
        if a.unsorted:
            src = os.path.join(d, "u.elf")
            b = bytearray(open(a.elf, "rb").read())
            names = {n: ad for ad, t, n in syms}
            lo = names["__start_mcount_loc"]
            shoff, = struct.unpack_from("<Q", b, 0x28)
            shnum, = struct.unpack_from("<H", b, 0x3C)
            for i in range(shnum):
                _, typ, _, addr, off, size = struct.unpack_from("<IIQQQQ", b, shoff + 64 * i)
                if addr <= lo < addr + size and typ != 8:
                    o = off + lo - addr
                    b[o:o + 16] = b[o + 8:o + 16] + b[o:o + 8]
            with open(src, "wb") as f:
                f.write(b)
        objcopy = objcopy_for(src)
        sh(objcopy, "-S", src, stripped)
        with open(tab, "wb") as f:
            f.write(blob)
        sh(objcopy, "--add-section", ".rodata.kallsyms=" + tab,
           "--set-section-flags", ".rodata.kallsyms=alloc,load,readonly,data,contents",
           "--change-section-address", ".rodata.kallsyms=%#x" % where,
           "--set-section-alignment", ".rodata.kallsyms=4096", stripped, out)
        if a.format == "stripped":
            sh(objcopy, "--add-section", ".init.text=/dev/null",
               "--set-section-flags", ".init.text=alloc,code,readonly", out)
        with open(out, "rb") as f:
            payload = f.read()
    if a.format == "stripped":
        with open(a.out, "wb") as f:
            f.write(payload)
        return 0
    if a.bomb:
        payload = compress(b"\0" * (64 << 20), "gzip")
    elif a.payload_garbage:
        payload = b"\x7fELF" + payload[4:]
    else:
        payload = compress(payload, a.comp)
    with open(a.out, "wb") as f:
        f.write(bzimage(payload, a.truncate))
    return 0


def image_main(a, syms, top):
    """An arm64 or riscv64 Image (Image.gz with --comp gzip)."""
    where = (top + 0xFFF) & ~0xFFF
    banner = b"Linux version 6.12.0-minikernel (mkvmlinuz.py) #1 SMP\n\0"
    syms = [s for s in syms if s[2] not in ("_start", "_text", "_end")]
    extra = [(where, "D", "linux_banner"), (where + 64, "r", "kallsyms_digits_0123456789")]
    head = banner + b"\0" * (64 - len(banner)) + b"\0" * 64
    # two passes: the Image's own symbols (_end) depend on the tables' length
    blob, add = head, []
    for _ in range(3):
        _, add = raw_image(a.format, a.elf, syms, where, blob, b"")
        allsyms = sorted(syms + extra + add, key=lambda s: (s[0], s[2]))
        base = min(s[0] for s in allsyms)
        t = bytearray(tables(allsyms, a.layout, base)) if not a.no_kallsyms else bytearray()
        if a.corrupt_kallsyms:
            i = t.find(struct.pack("<I", len(allsyms)))
            t[i + 8] = 0x7F
            t[i + 9] = 0x7F
        blob = head + bytes(t)
        blob += b"\0" * (-len(blob) % 0x1000)
    img, add2 = raw_image(a.format, a.elf, syms, where, blob, a.clear_table)
    assert add2 == add
    if a.map:
        with open(a.map, "w") as f:
            for ad, ty, n in allsyms:
                ad += a.map_banner_shift if n == "linux_banner" else 0
                f.write("%016x %s %s\n" % (ad + a.map_shift, ty, n))
    if a.comp == "gzip":
        img = gzip.compress(img, 9)
    elif a.comp != "none":
        raise SystemExit("an Image is raw (--comp none) or an Image.gz (--comp gzip)")
    with open(a.out, "wb") as f:
        f.write(img[:a.truncate] if a.truncate else img)
    return 0


if __name__ == "__main__":
    sys.exit(main())
