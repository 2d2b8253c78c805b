#!/usr/bin/env python3
"""Expected patch sites of an e2e fixture, computed without patchsite.

Usage:
    oracle.py IMAGE              print the expected `patchsite record IMAGE`
    oracle.py --detail IMAGE     the same sites as JSON, with the function(s)
                                 each site belongs to (for --symbolize/--format=json)
    oracle.py --selfcheck IMAGE  cross-check this file's ELF reader with readelf

IMAGE is a fixture built by fixtures/Makefile; IMAGE.meta next to it says its
arch, ELF type, flavour and which oracle applies.

Where each oracle comes from (none of them is patchsite):

  oracle=pfe (-fpatchable-function-entry=N,M, arm64 CALL_OPS, riscv CALL_OPS):
      the compiler's and linker's own `__patchable_function_entries`.
      Linked images: every 8-byte slot of that output section; the value is
      the section content, or, when the slot has an R_*_RELATIVE dynamic
      relocation (PIE; `--no-apply-dynamic-relocs` leaves the content zero),
      that relocation's addend.  Relocatable objects: the section is all
      zeros, each slot is a RELA relocation `symbol + addend`; the site is
      SECTION+0xOFF with SECTION the symbol's section and OFF = st_value +
      r_addend (GCC uses a section symbol on x86/arm64 and a local .LPFE label
      on riscv).  Zero slots are dropped, as the kernel skips them.

  oracle=mcountloc (x86 -pg -mfentry -mnop-mcount -mrecord-mcount):
      the compiler's own `__mcount_loc`, read the same way.

  oracle=calls (-pg, -pg -mfentry, also with kernel-style call padding):
      binutils' disassembly (the arch's objdump -d -w) of the whole image:
      every call to a target in `targets=` of the .meta (mcount, _mcount,
      __fentry__):
        x86_64   `call ADDR <...>`, `addr32 call ADDR <...>` (ld's relaxation of
                 a GOT call): ADDR is the target or a PLT entry `NAME@plt`;
                 `call *DISP(%rip) # SLOT`: SLOT is a GOT slot whose dynamic
                 relocation (.rela.dyn, R_X86_64_GLOB_DAT) names the target, or
                 which holds the target's address;
        aarch64  `bl ADDR <...>`;
        riscv64  `jal ADDR <...>` (relaxed call), or `auipc ra` followed by
                 `jalr ...(ra) # ADDR <...>`: the site is the auipc.
      The target is matched by address against every symbol there (glibc's
      mcount/_mcount/__mcount are aliases, objdump prints any one of them)
      or by objdump's `NAME@plt` label.  In relocatable objects the call is
      still a relocation (objdump -dr -w): a call relocation (R_X86_64_PLT32,
      R_X86_64_GOTPCRELX, R_AARCH64_CALL26, R_RISCV_CALL_PLT, ...) against a
      target symbol; the site is the instruction that holds it.  An x86
      `__patchable_function_entries` from call padding is not consulted.

  Hand-written assembly has no compiler-made patch area: in a linked image,
  a NOP-shaped site (oracles pfe and mcountloc) in a function of a unit that
  the assembler produced (readelf's DWARF: DW_AT_producer "GNU AS") is not
  expected, even where the table lists it (fixtures/src/asm_*.S writes such
  an entry by hand).  Calls are calls wherever they are.

  Then the rule of the kernel's scripts/sorttable, applied to every oracle:
  a site is kept only inside a sized STT_FUNC symbol of .symtab (in ET_REL:
  of the same section), counting the `pre=` bytes before the symbol (the M
  NOP units of -fpatchable-function-entry=N,M: 8 for CALL_OPS).  This drops
  the leftovers of overridden weak functions and functions without .size.

Output: linked images one `0x%x` per line, ascending; relocatable objects
`SECTION+0x%x`, by section index then offset; deduplicated.
"""

import json
import os
import re
import struct
import subprocess
import sys

ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
SHT_SYMTAB, SHT_RELA, SHT_NOBITS, SHT_DYNSYM = 2, 4, 8, 11
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
STT_FUNC, STT_SECTION = 2, 3
EM_PPC64, EM_X86_64, EM_AARCH64, EM_RISCV = 21, 62, 183, 243
RELATIVE = {EM_X86_64: 8, EM_AARCH64: 1027, EM_RISCV: 3, EM_PPC64: 22}
MACHINE_NAME = {EM_X86_64: "x86_64", EM_AARCH64: "aarch64", EM_RISCV: "riscv64",
                EM_PPC64: "powerpc64le"}
# ld's names for powerpc64 PLT call stubs, which objdump prints: 0000004b.plt_call.NAME@VER
PPC_PLT_CALL = re.compile(r"^[0-9a-f]{8}\.plt_call\.([^@+]+)")


def ppc64_local_entry(other):
    """ELFv2 st_other bits 5-7: the local entry point's offset from the symbol."""
    v = (other >> 5) & 7
    return 1 << v if 2 <= v <= 6 else 0


class ElfError(Exception):
    pass


class Elf:
    """A minimal ELF64 little-endian reader (struct only), enough for the oracles."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if len(d) < 64 or d[:4] != b"\x7fELF":
            raise ElfError("%s: not an ELF file" % path)
        if d[4] != 2 or d[5] != 1:
            raise ElfError("%s: not ELF64 little-endian" % path)
        (self.type, self.machine, _ver, self.entry, self.phoff, self.shoff, _flags,
         self.ehsize, self.phentsize, self.phnum, self.shentsize, self.shnum,
         self.shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", d, 16)
        self.sections = []
        for i in range(self.shnum):
            off = self.shoff + i * self.shentsize
            (name, typ, flags, addr, offset, size, link, info, align,
             entsize) = struct.unpack_from("<IIQQQQIIQQ", d, off)
            self.sections.append(dict(index=i, name_off=name, type=typ, flags=flags,
                                      addr=addr, offset=offset, size=size, link=link,
                                      info=info, align=align, entsize=entsize))
        shstr = self.sections[self.shstrndx]
        for s in self.sections:
            s["name"] = self._str(shstr, s["name_off"])
        self.symtab = self._symbols(SHT_SYMTAB)
        self.dynsym = self._symbols(SHT_DYNSYM)

    def _str(self, strsec, off):
        start = strsec["offset"] + off
        end = self.data.index(b"\0", start)
        return self.data[start:end].decode()

    def contents(self, s):
        if s["type"] == SHT_NOBITS:
            return b"\0" * s["size"]
        return self.data[s["offset"]:s["offset"] + s["size"]]

    def _symbols(self, typ):
        for s in self.sections:
            if s["type"] == typ:
                strsec = self.sections[s["link"]]
                syms = []
                for i in range(s["size"] // 24):
                    name, info, other, shndx, value, size = struct.unpack_from(
                        "<IBBHQQ", self.data, s["offset"] + 24 * i)
                    syms.append(dict(index=i, name=self._str(strsec, name), type=info & 0xf,
                                     bind=info >> 4, other=other, shndx=shndx, value=value,
                                     size=size))
                return syms
        return []

    def by_name(self, name):
        return [s for s in self.sections if s["name"] == name]

    def relas_for(self, target_index):
        """RELA entries applying to section target_index, with their symbol table."""
        out = []
        for s in self.sections:
            if s["type"] == SHT_RELA and s["info"] == target_index and not (s["flags"] & SHF_ALLOC):
                out += self._relas(s)
        return out

    def _relas(self, s):
        syms = self.symtab if self.sections[s["link"]]["type"] == SHT_SYMTAB else self.dynsym
        out = []
        for i in range(s["size"] // 24):
            off, info, addend = struct.unpack_from("<QQq", self.data, s["offset"] + 24 * i)
            out.append(dict(offset=off, type=info & 0xffffffff, sym=syms[info >> 32] if syms else None,
                            addend=addend))
        return out

    def dynamic_relocs(self):
        """Allocated RELA sections (.rela.dyn, .rela.plt) of a linked image, by r_offset."""
        out = {}
        for s in self.sections:
            if s["type"] == SHT_RELA and (s["flags"] & SHF_ALLOC):
                for r in self._relas(s):
                    out[r["offset"]] = r
        return out

    def read_addr(self, addr, n=8):
        for s in self.sections:
            if (s["flags"] & SHF_ALLOC) and s["type"] != SHT_NOBITS and \
                    s["addr"] <= addr and addr + n <= s["addr"] + s["size"]:
                off = s["offset"] + addr - s["addr"]
                return int.from_bytes(self.data[off:off + n], "little")
        return None

    def func_symbols(self):
        return [s for s in self.symtab
                if s["type"] == STT_FUNC and s["size"] > 0 and s["shndx"] not in (0, 0xfff1, 0xfff2)]


def read_meta(image):
    meta = {}
    with open(image + ".meta") as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                meta[k] = v
    meta["pre"] = int(meta["pre"])
    meta["targets"] = set(t for t in meta.get("targets", "-").split(",") if t != "-")
    return meta


def table_slots(elf, secname):
    """Values of the 8-byte slots of table section(s) SECNAME.

    Linked image: list of addresses.  ET_REL: list of (section index, offset).
    """
    out = []
    if elf.type == ET_REL:
        for s in elf.by_name(secname):
            for r in sorted(elf.relas_for(s["index"]), key=lambda r: r["offset"]):
                sym = r["sym"]
                out.append((sym["shndx"], sym["value"] + r["addend"]))
        return out
    relative = RELATIVE[elf.machine]
    dyn = elf.dynamic_relocs()
    for s in elf.by_name(secname):
        data = elf.contents(s)
        for i in range(len(data) // 8):
            slot = s["addr"] + 8 * i
            val = int.from_bytes(data[8 * i:8 * i + 8], "little")
            r = dyn.get(slot)
            if r is not None and r["type"] == relative:
                val = r["addend"]
            elif r is not None and r["sym"] is not None and r["sym"]["name"]:
                val = r["sym"]["value"] + r["addend"]
            if val:
                out.append(val)
    return out


INSN = re.compile(r"^\s*([0-9a-f]+):\s+((?:[0-9a-f]{2,8} )+)\s*(.*)$")
RELOC = re.compile(r"(?:^|\t)\s*([0-9a-f]+): (R_[A-Z0-9_]+)\s+(\S+)")
TARGET = re.compile(r"\b([0-9a-f]+) <([^>]+)>")
CALL_RELOCS = {"R_X86_64_PLT32", "R_X86_64_PC32", "R_X86_64_GOTPCREL", "R_X86_64_GOTPCRELX",
               "R_X86_64_REX_GOTPCRELX", "R_AARCH64_CALL26", "R_AARCH64_JUMP26",
               "R_RISCV_CALL", "R_RISCV_CALL_PLT", "R_PPC64_REL24", "R_PPC64_REL24_NOTOC"}


def objdump(meta, args, image):
    return subprocess.run([meta["objdump"]] + args + [image], check=True, stdout=subprocess.PIPE,
                          universal_newlines=True).stdout


def calls_linked(elf, meta, image):
    targets = meta["targets"]
    names_at = {}
    local_at = {}
    for s in elf.symtab + elf.dynsym:
        if s["shndx"] != 0 and s["name"]:
            names_at.setdefault(s["value"], set()).add(s["name"].split("@")[0])
            # powerpc64: a call from code with the same TOC goes to the local entry,
            # which objdump prints as NAME+0xOFF
            off = ppc64_local_entry(s["other"]) if elf.machine == EM_PPC64 else 0
            if off:
                local_at.setdefault(s["value"] + off, set()).add(s["name"].split("@")[0])
    dyn = elf.dynamic_relocs()

    def is_target(addr, label):
        base = label.split("@")[0]
        m = PPC_PLT_CALL.match(label) if elf.machine == EM_PPC64 else None
        if m:
            return m.group(1) in targets
        if "+" in label and local_at.get(addr, set()) & targets:
            return True
        if "+" in label or "-" in label:
            return False
        if label.endswith("@plt"):
            return base in targets
        return bool(names_at.get(addr, set()) & targets)

    sites = []
    prev = None
    for line in objdump(meta, ["-d", "-w"], image).splitlines():
        m = INSN.match(line)
        if not m:
            prev = None
            continue
        addr, text = int(m.group(1), 16), m.group(3)
        words = text.split()
        while words and words[0] in ("addr32", "notrack", "bnd", "data16"):
            words.pop(0)
        mn = words[0] if words else ""
        t = TARGET.search(text)
        if mn in ("call", "callq") and "*" in text and "(%rip)" in text and "#" in text:
            slot = int(text.split("#")[1].split()[0], 16)
            r = dyn.get(slot)
            if r is not None and r["sym"] is not None and r["sym"]["name"] in targets:
                sites.append(addr)
            elif r is None:
                val = elf.read_addr(slot)
                if val is not None and names_at.get(val, set()) & targets:
                    sites.append(addr)
        elif mn in ("call", "callq", "bl", "jal") and t:
            if is_target(int(t.group(1), 16), t.group(2)):
                sites.append(addr)
        elif mn == "jalr" and "#" in text and t:
            if is_target(int(t.group(1), 16), t.group(2)):
                if prev is None or not re.match(r"auipc\s+ra,", prev[1]):
                    raise SystemExit("oracle: %s: jalr to mcount at %#x not after auipc ra"
                                     % (image, addr))
                sites.append(prev[0])
        prev = (addr, text)
    return sites


def calls_rel(elf, meta, image):
    targets = meta["targets"]
    index = {}
    for s in elf.sections:
        if s["flags"] & SHF_EXECINSTR:
            if s["name"] in index:
                raise SystemExit("oracle: %s: two sections named %s" % (image, s["name"]))
            index[s["name"]] = s["index"]
    sites = []
    section = None
    last = None
    for line in objdump(meta, ["-dr", "-w"], image).splitlines():
        if line.startswith("Disassembly of section "):
            section = line[len("Disassembly of section "):].rstrip(":")
            last = None
            continue
        m = INSN.match(line)
        if m:
            last = (int(m.group(1), 16), m.group(3).split("\t")[0])
        for r in RELOC.finditer(line):
            off, typ, sym = int(r.group(1), 16), r.group(2), r.group(3)
            base = re.sub(r"[+-]0x[0-9a-f]+$", "", sym)
            if typ in CALL_RELOCS and base in targets:
                if last is None or last[0] > off or not re.match(r"(call|bl|auipc)\b", last[1].strip()):
                    raise SystemExit("oracle: %s: %s %s at %s+%#x is not in a call"
                                     % (image, typ, sym, section, off))
                sites.append((index[section], last[0]))
    return sites


def containing(elf, meta, site):
    """Sized function symbols that own SITE (the sorttable rule)."""
    pre = meta["pre"]
    out = []
    for s in elf.func_symbols():
        if elf.type == ET_REL:
            shndx, off = site
            if s["shndx"] == shndx and s["value"] - pre <= off < s["value"] + s["size"]:
                out.append(s)
        elif s["value"] - pre <= site < s["value"] + s["size"]:
            out.append(s)
    return out


def assembler_ranges(meta, image):
    """[lo, hi) of every DWARF unit the assembler produced, from readelf."""
    readelf = meta["objdump"].replace("objdump", "readelf")
    out = subprocess.run([readelf, "--debug-dump=info", image], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    ranges, unit = [], None
    for line in out.splitlines():
        if "DW_TAG_compile_unit" in line:
            unit = {}
            continue
        if unit is None:
            continue
        if "DW_TAG_" in line and "compile_unit" not in line:
            if unit.get("asm") and "lo" in unit and "len" in unit:
                ranges.append((unit["lo"], unit["lo"] + unit["len"]))
            unit = None
            continue
        f = line.split()
        if "DW_AT_producer" in line:
            unit["asm"] = "GNU AS" in line
        elif "DW_AT_low_pc" in line:
            unit["lo"] = int(f[-1], 16)
        elif "DW_AT_high_pc" in line:
            unit["len"] = int(f[-1], 0) if not f[-1].startswith("0x") else int(f[-1], 16)
    return ranges


def expected(image):
    meta = read_meta(image)
    elf = Elf(image)
    if meta["oracle"] == "pfe":
        raw = table_slots(elf, "__patchable_function_entries")
    elif meta["oracle"] == "mcountloc":
        raw = table_slots(elf, "__mcount_loc")
    elif meta["oracle"] == "calls":
        raw = calls_rel(elf, meta, image) if elf.type == ET_REL else calls_linked(elf, meta, image)
    else:
        raise SystemExit("oracle: %s: unknown oracle %s" % (image, meta["oracle"]))
    asm = []
    if elf.type != ET_REL and meta["oracle"] in ("pfe", "mcountloc"):
        asm = assembler_ranges(meta, image)
    sites = []
    for site in sorted(set(raw)):
        funcs = containing(elf, meta, site)
        if funcs and not any(lo <= f["value"] < hi for f in funcs for lo, hi in asm):
            sites.append((site, funcs))
    return elf, meta, raw, sites


def fmt(elf, site):
    if elf.type == ET_REL:
        return "%s+0x%x" % (elf.sections[site[0]]["name"], site[1])
    return "0x%x" % site


def detail(image):
    elf, meta, raw, sites = expected(image)
    out = []
    for site, funcs in sites:
        off = site[1] if elf.type == ET_REL else site
        out.append({
            "site": fmt(elf, site),
            "section": elf.sections[site[0]]["name"] if elf.type == ET_REL else None,
            "section_offset": site[1] if elf.type == ET_REL else None,
            "address": None if elf.type == ET_REL else site,
            "functions": {f["name"]: off - f["value"] for f in funcs},
        })
    kept = set(site for site, _ in sites)
    dropped = [fmt(elf, s) for s in sorted(set(raw)) if s not in kept]
    return {
        "image": image,
        "machine": MACHINE_NAME[elf.machine],
        "type": {ET_REL: "REL", ET_EXEC: "EXEC", ET_DYN: "DYN"}[elf.type],
        "flavour": meta["flavour"],
        "oracle": meta["oracle"],
        "sites": out,
        "dropped": dropped,
    }


def selfcheck(image):
    """Compare this reader's view with readelf's: sized FUNC symbols and table sections."""
    meta = read_meta(image)
    elf = Elf(image)
    readelf = meta["objdump"].replace("objdump", "readelf")
    out = subprocess.run([readelf, "-sW", image], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    theirs = set()
    in_symtab = False
    for line in out.splitlines():
        if line.startswith("Symbol table"):
            in_symtab = "'.symtab'" in line
            continue
        # powerpc64: readelf shows st_other's local entry as `[<localentry>: 8]`
        f = re.sub(r"\[<localentry>: \d+\]", "", line).split()
        if in_symtab and len(f) >= 8 and f[0].endswith(":") and f[3] == "FUNC" and f[6] != "UND":
            size = int(f[2], 0) if not f[2].startswith("0x") else int(f[2], 16)
            if size > 0:
                theirs.add((f[7].split("@")[0], int(f[1], 16), size))
    ours = set((s["name"], s["value"], s["size"]) for s in elf.func_symbols())
    problems = []
    if ours != theirs:
        problems.append("symbols differ: only ours %s, only readelf %s"
                        % (sorted(ours - theirs)[:5], sorted(theirs - ours)[:5]))
    # the table section bytes, as readelf -x dumps them
    for name in ("__patchable_function_entries", "__mcount_loc"):
        for s in elf.by_name(name):
            hx = subprocess.run([readelf, "-x", str(s["index"]), image], check=True,
                                stdout=subprocess.PIPE, universal_newlines=True).stdout
            raw = b""
            for line in hx.splitlines():
                m = re.match(r"\s+0x[0-9a-f]+ ((?:[0-9a-f]{2,8} ){1,4})", line)
                if m:
                    raw += bytes.fromhex(m.group(1).replace(" ", ""))
            if raw[:s["size"]] != elf.contents(s):
                problems.append("section %s [%d] bytes differ from readelf -x" % (name, s["index"]))
    return problems


def main(argv):
    if len(argv) == 3 and argv[1] == "--detail":
        json.dump(detail(argv[2]), sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif len(argv) == 3 and argv[1] == "--selfcheck":
        problems = selfcheck(argv[2])
        for p in problems:
            print("selfcheck: %s: %s" % (argv[2], p))
        return 1 if problems else 0
    elif len(argv) == 2:
        elf, _meta, _raw, sites = expected(argv[1])
        for site, _funcs in sites:
            print(fmt(elf, site))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
