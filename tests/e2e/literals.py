#!/usr/bin/env python3
"""Count CALL_OPS ops literals, and the misaligned ones, without patchsite.

Usage:
    literals.py misaligned [--allow-none] FILE   one integer: misaligned literals
    literals.py total [--allow-none] FILE        one integer: all literals
    literals.py counts [--allow-none] FILE       two integers: misaligned, all
    literals.py list [--allow-none] FILE         one line per literal, with its verdict

Exit status 0 with the answer on stdout; 2 with one line on stderr for
anything this cannot read: not ELF64 little-endian, a section or table
outside the file, a compressed table, a table slot that a relocation this
does not model fills, and a FILE without any `__patchable_function_entries`
section (a count of 0 there would mean "nothing was looked at";
--allow-none prints 0 instead).  Nothing here runs patchsite: the counts are
for judging it (tests/e2e/repad.sh, tests/e2e/repad-zlib.sh,
bench/repad/run.sh).

The source is the compiler's and linker's own `__patchable_function_entries`
(PFE), read with tests/e2e/oracle.py's struct-only ELF reader:

  Linked image (ET_EXEC, ET_DYN): every 8-byte slot of every PFE section.
      Its value is the slot's content, or, where an R_*_RELATIVE dynamic
      relocation covers the slot (PIE; with --no-apply-dynamic-relocs the
      content is 0), that relocation's addend.  Zero slots are skipped (the
      kernel skips them too).  The value is the literal's address; it is
      misaligned when value % 8 != 0.

  Relocatable object (ET_REL): every slot is a RELA relocation (R_*_64)
      `symbol + addend` into a section S: the literal is at off = st_value +
      r_addend in S.  After any link it is 8-byte aligned only when
      off % 8 == 0 and S's sh_addralign >= 8, or, on riscv64, when an
      R_RISCV_ALIGN in S's relocations at offset o with addend a pads up to
      it (o + a == off) to a power of two >= 8 (the smallest power of two
      above a): that is GNU as' mark for `.balign 8` in a relaxed section;
      the linker deletes bytes of that padding so that the literal lands
      aligned.

A PFE entry is a CALL_OPS literal only when a sized STT_FUNC symbol of
.symtab starts exactly 8 bytes after it (in ET_REL: in the same section S):
the layouts -fpatchable-function-entry=4,2 (arm64, riscv64 without C) and
=8,4 (riscv64 with C) put the entry, the literal, at func-8.  Other entries
(other layouts, the leftovers of discarded functions) are not counted.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402  (the struct-only ELF reader)
from oracle import ET_REL, ET_EXEC, ET_DYN, EM_AARCH64, EM_RISCV, EM_X86_64, RELATIVE  # noqa: E402

PFE = "__patchable_function_entries"
ALIGN = 8
LITERAL_BEFORE_FUNC = 8
SHF_COMPRESSED = 0x800
SHN_LORESERVE = 0xff00
R_ABS64 = {EM_X86_64: 1, EM_AARCH64: 257, EM_RISCV: 2}
R_RISCV_ALIGN = 43


class Unreadable(Exception):
    pass


def pfe_sections(elf):
    secs = elf.by_name(PFE)
    for s in secs:
        if s["flags"] & SHF_COMPRESSED:
            raise Unreadable("%s [%d] is compressed" % (PFE, s["index"]))
        if s["type"] != oracle.SHT_NOBITS and s["offset"] + s["size"] > len(elf.data):
            raise Unreadable("%s [%d] runs past the end of the file" % (PFE, s["index"]))
        if s["size"] % 8:
            raise Unreadable("%s [%d] is %d bytes, not a multiple of 8" % (PFE, s["index"], s["size"]))
    return secs


def check_rela_bounds(elf):
    for s in elf.sections:
        if s["type"] in (oracle.SHT_RELA, oracle.SHT_SYMTAB, oracle.SHT_DYNSYM) and \
                s["offset"] + s["size"] > len(elf.data):
            raise Unreadable("section [%d] %s runs past the end of the file" % (s["index"], s["name"]))


def relas_by_target(elf):
    """{section index: [RELA entries applying to it]} over the non-allocated
    RELA sections, built once (oracle.Elf.relas_for scans every section per
    call, quadratic in an object with one PFE section per function)."""
    out = {}
    for s in elf.sections:
        if s["type"] == oracle.SHT_RELA and not (s["flags"] & oracle.SHF_ALLOC):
            out.setdefault(s["info"], []).extend(elf._relas(s))
    return out


def func_starts(elf):
    """{(shndx, value)} (ET_REL) or {value} (linked) of sized STT_FUNC symbols."""
    if elf.type == ET_REL:
        return set((s["shndx"], s["value"]) for s in elf.func_symbols())
    return set(s["value"] for s in elf.func_symbols())


def literals_linked(elf):
    """[(address, misaligned)] of the CALL_OPS literals of a linked image."""
    relative = RELATIVE[elf.machine]
    dyn = elf.dynamic_relocs()
    funcs = func_starts(elf)
    out = []
    for s in pfe_sections(elf):
        data = elf.contents(s)
        for i in range(len(data) // 8):
            slot = s["addr"] + 8 * i
            val = int.from_bytes(data[8 * i:8 * i + 8], "little")
            r = dyn.get(slot)
            if r is not None:
                if r["type"] != relative:
                    raise Unreadable("%s slot %#x: dynamic relocation type %d, not R_*_RELATIVE"
                                     % (PFE, slot, r["type"]))
                if val and val != r["addend"] & (2 ** 64 - 1):
                    raise Unreadable("%s slot %#x holds %#x, its R_*_RELATIVE says %#x"
                                     % (PFE, slot, val, r["addend"]))
                val = r["addend"] & (2 ** 64 - 1)
            if val and val + LITERAL_BEFORE_FUNC in funcs:
                out.append(("%#x" % val, val % ALIGN != 0))
    return out


def riscv_align_points(relas):
    """Offsets that an R_RISCV_ALIGN among RELAS pads up to, to >= 8."""
    pts = set()
    for r in relas:
        if r["type"] != R_RISCV_ALIGN or r["addend"] < 0:
            continue
        p = 1
        while p <= r["addend"]:
            p <<= 1
        if p >= ALIGN:
            pts.add(r["offset"] + r["addend"])
    return pts


def literals_rel(elf):
    """[(SECTION+0xOFF, misaligned)] of the CALL_OPS literals of an object."""
    abs64 = R_ABS64[elf.machine]
    funcs = func_starts(elf)
    by_target = relas_by_target(elf)
    align_pts = {}
    out = []
    for s in pfe_sections(elf):
        relas = {}
        for r in by_target.get(s["index"], []):
            if r["offset"] % 8 or r["offset"] + 8 > s["size"]:
                raise Unreadable("%s [%d]: relocation at %#x is not on a slot"
                                 % (PFE, s["index"], r["offset"]))
            if r["offset"] in relas:
                raise Unreadable("%s [%d]: two relocations at %#x" % (PFE, s["index"], r["offset"]))
            relas[r["offset"]] = r
        data = elf.contents(s)
        for slot in range(0, s["size"], 8):
            r = relas.get(slot)
            if r is None:
                if any(data[slot:slot + 8]):
                    raise Unreadable("%s [%d]: slot %#x holds a value without a relocation"
                                     % (PFE, s["index"], slot))
                continue
            sym = r["sym"]
            if r["type"] != abs64:
                raise Unreadable("%s [%d]: slot %#x: relocation type %d, not R_*_64"
                                 % (PFE, s["index"], slot, r["type"]))
            if sym is None or sym["shndx"] == 0 or sym["shndx"] >= SHN_LORESERVE or \
                    sym["shndx"] >= len(elf.sections):
                raise Unreadable("%s [%d]: slot %#x: relocation against %s, not a section's content"
                                 % (PFE, s["index"], slot, sym["name"] if sym else "no symbol"))
            shndx, off = sym["shndx"], sym["value"] + r["addend"]
            if (shndx, off + LITERAL_BEFORE_FUNC) not in funcs:
                continue
            text = elf.sections[shndx]
            aligned = off % ALIGN == 0 and text["align"] >= ALIGN
            if elf.machine == EM_RISCV and not aligned:
                if shndx not in align_pts:
                    align_pts[shndx] = riscv_align_points(by_target.get(shndx, []))
                aligned = off in align_pts[shndx]
            out.append(("%s+%#x" % (text["name"], off), not aligned))
    return out


def literals(path, allow_none):
    try:
        elf = oracle.Elf(path)
        if elf.machine not in R_ABS64:
            raise Unreadable("machine %d: not x86_64, aarch64 or riscv64" % elf.machine)
        check_rela_bounds(elf)
        if not pfe_sections(elf):
            if allow_none:
                return []
            raise Unreadable("no %s section" % PFE)
        if elf.type == ET_REL:
            return literals_rel(elf)
        if elf.type in (ET_EXEC, ET_DYN):
            return literals_linked(elf)
        raise Unreadable("ELF type %d: not ET_REL, ET_EXEC or ET_DYN" % elf.type)
    except oracle.ElfError as e:
        raise Unreadable(str(e).split(": ", 1)[-1])
    except (struct.error, IndexError, ValueError, KeyError, UnicodeDecodeError) as e:
        raise Unreadable("malformed ELF (%s: %s)" % (type(e).__name__, e))


def main(argv):
    args = argv[1:]
    allow_none = "--allow-none" in args
    args = [a for a in args if a != "--allow-none"]
    if len(args) != 2 or args[0] not in ("misaligned", "total", "counts", "list"):
        sys.stderr.write(__doc__)
        return 2
    what, path = args
    try:
        lits = literals(path, allow_none)
    except OSError as e:
        sys.stderr.write("literals.py: %s: %s\n" % (path, e.strerror or e))
        return 2
    except Unreadable as e:
        sys.stderr.write("literals.py: %s: %s\n" % (path, e))
        return 2
    if what == "misaligned":
        print(sum(1 for _, bad in lits if bad))
    elif what == "total":
        print(len(lits))
    elif what == "counts":
        print(sum(1 for _, bad in lits if bad), len(lits))
    else:
        for where, bad in lits:
            print("%s %s" % (where, "misaligned" if bad else "aligned"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
