#!/usr/bin/env python3
"""Comparisons for tests/e2e/run.sh.  Each subcommand exits 0 when the check
passes, 1 with an explanation on stdout when it fails.

  check.py features IMAGE DETAIL            the fixture really has what it claims
  check.py record IMAGE DETAIL GOT          `record` output equals the oracle
  check.py symbolize IMAGE DETAIL GOT       `record --symbolize` output
  check.py json IMAGE DETAIL GOT            `record --format=json` output
  check.py readback IMAGE DETAIL TABLE OUT  __mcount_loc of a second link OUT
                                            (linked: OUT is the relinked image;
                                            ET_REL: `ld -r -o OUT TABLE IMAGE`)
  check.py mkbad KIND SRC DST               write a broken copy of SRC

DETAIL is the output of `oracle.py --detail IMAGE`.
"""

import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

MACHINES = {"x86_64": {"x86_64", "x86-64", "amd64"}, "aarch64": {"aarch64", "arm64"},
            "riscv64": {"riscv64", "riscv"}, "powerpc64le": {"powerpc64le", "ppc64le"}}

# Functions of src/ that have a site in every fixture (lib.o: the lib.c ones).
LIB_SITES = {"helper_static", "helper_static_addr", "lib_add", "many_args", "float_args",
             "alias_target", "alias_one", "alias_two", "weak_overridden", "weak_kept",
             "call_weak", "cold_fn", "call_through_pointer"}
PROGRAM_SITES = LIB_SITES | {"main", "os_helper", "os_one", "os_two", "os_three", "os_cold",
                             "os_dispatch", "asm_traced"}
NO_SITES = {"notrace_fn", "nop_start", "asm_plain", "asm_nosize"}


class Fail(Exception):
    pass


def load(detail_path):
    with open(detail_path) as f:
        return json.load(f)


def lines(path):
    with open(path) as f:
        return f.read().splitlines()


def names_for(detail):
    return {s["site"]: s["functions"] for s in detail["sites"]}


def describe(elf, site_text):
    """func+off of an address for messages (nearest preceding symbol)."""
    try:
        if elf.type == oracle.ET_REL:
            sec, off = site_text.rsplit("+", 1)
            off = int(off, 16)
            idx = [s["index"] for s in elf.sections if s["name"] == sec]
            cands = [s for s in elf.symtab if idx and s["shndx"] == idx[0] and s["value"] <= off
                     and s["type"] == oracle.STT_FUNC]
        else:
            off = int(site_text, 16)
            cands = [s for s in elf.symtab if s["value"] <= off and s["type"] == oracle.STT_FUNC
                     and s["shndx"] != 0]
        if not cands:
            return "no function"
        s = max(cands, key=lambda s: s["value"])
        return "%s+0x%x%s" % (s["name"], off - s["value"],
                              "" if off < s["value"] + s["size"] else " (outside its size)")
    except (ValueError, IndexError):
        return "?"


# ------------------------------------------------------------------ record
def cmd_record(image, detail, got_path):
    exp = [s["site"] for s in detail["sites"]]
    got = lines(got_path)
    if got == exp:
        return
    elf = oracle.Elf(image)
    msg = []
    missing = [s for s in exp if s not in got]
    extra = [s for s in got if s not in exp]
    for s in missing:
        msg.append("missing %s (%s)" % (s, ", ".join(names_for(detail)[s])))
    for s in extra:
        why = " [oracle dropped it: outside every sized function]" if s in detail["dropped"] else ""
        msg.append("extra %s (%s)%s" % (s, describe(elf, s), why))
    if not missing and not extra:
        if len(set(got)) != len(got):
            msg.append("duplicate lines")
        else:
            msg.append("same set, wrong order")
    raise Fail("\n".join(msg))


# ------------------------------------------------------------------ symbolize
def check_func_off(where, func, off, funcs):
    if func not in funcs:
        raise Fail("%s: function %s, expected one of %s" % (where, func, sorted(funcs)))
    if off != funcs[func]:
        raise Fail("%s: offset %d in %s, expected %d" % (where, off, func, funcs[func]))


def cmd_symbolize(image, detail, got_path):
    got = lines(got_path)
    exp = detail["sites"]
    cols = [l.split(" ")[0] for l in got]
    want = [s["site"] for s in exp]
    if cols != want:
        raise Fail("site column differs from the oracle: missing %s, extra %s%s"
                   % ([s for s in want if s not in cols], [s for s in cols if s not in want],
                      "" if set(cols) != set(want) else ", order or duplicates differ"))
    for line, s in zip(got, exp):
        f = line.split(" ")
        if len(f) == 4 and f[3] == "misaligned":
            # The CALL_OPS literal tag: in a linked image it must be there
            # exactly when the literal (the site) is not 8-byte aligned.
            if f[2] != "call-ops":
                raise Fail("%s: only call-ops sites can be misaligned" % line)
            f = f[:3]
            tagged = True
        else:
            tagged = False
        if len(f) != 3:
            raise Fail("not `ADDR FUNC+0xOFF FLAVOUR [misaligned]`: %r" % line)
        if f[0].startswith("0x") and f[2] == "call-ops" and tagged != (int(f[0], 16) % 8 != 0):
            raise Fail("%s: misaligned tag %s, but the literal is at %d mod 8"
                       % (line, "present" if tagged else "absent", int(f[0], 16) % 8))
        m = re.match(r"^(.+?)([+-])0x([0-9a-f]+)$", f[1])
        if not m:
            raise Fail("not FUNC+0xOFF: %r" % line)
        off = int(m.group(3), 16) * (-1 if m.group(2) == "-" else 1)
        check_func_off(line, m.group(1), off, s["functions"])
        if f[2] != detail["flavour"]:
            raise Fail("%s: flavour %s, expected %s" % (line, f[2], detail["flavour"]))


# ------------------------------------------------------------------ json
def cmd_json(image, detail, got_path):
    with open(got_path) as f:
        try:
            doc = json.load(f)
        except ValueError as e:
            raise Fail("not JSON: %s" % e)
    if not isinstance(doc, dict):
        raise Fail("top level is not an object")
    if doc.get("machine") not in MACHINES[detail["machine"]]:
        raise Fail("machine %r, expected %s" % (doc.get("machine"), detail["machine"]))
    if doc.get("type") != detail["type"]:
        raise Fail("type %r, expected %s" % (doc.get("type"), detail["type"]))
    sites = doc.get("sites")
    if not isinstance(sites, list):
        raise Fail("no sites array")
    exp = detail["sites"]
    if len(sites) != len(exp):
        raise Fail("%d sites, expected %d" % (len(sites), len(exp)))
    for j, s in zip(sites, exp):
        where = s["site"]
        if detail["type"] == "REL":
            so = j.get("section_offset")
            if isinstance(so, str):
                so = int(so, 16) if so.startswith("0x") else None
            if j.get("section") != s["section"] or so != s["section_offset"]:
                raise Fail("%s: section %r section_offset %r" % (where, j.get("section"),
                                                                 j.get("section_offset")))
        elif j.get("address") != s["site"]:
            raise Fail("address %r, expected %s" % (j.get("address"), s["site"]))
        if not isinstance(j.get("offset"), int):
            raise Fail("%s: offset %r is not an integer" % (where, j.get("offset")))
        check_func_off(where, j.get("function"), j["offset"], s["functions"])
        if j.get("flavour") != detail["flavour"]:
            raise Fail("%s: flavour %r, expected %s" % (where, j.get("flavour"), detail["flavour"]))


# ------------------------------------------------------------------ readback
def table_entries(elf):
    """Number of 8-byte __mcount_loc slots of a table object."""
    secs = elf.by_name("__mcount_loc")
    if not secs:
        raise Fail("table object has no __mcount_loc section")
    return sum(s["size"] for s in secs) // 8


def layout(elf, owners):
    """Where code starts and where the functions with sites are.

    Not every function: the table object may bring an empty .text whose
    alignment pads the end of the fixture's .text and moves the libc.a code
    that a static link places after it.
    """
    text = sorted((s["name"], s["addr"]) for s in elf.sections
                  if s["flags"] & oracle.SHF_EXECINSTR)
    funcs = sorted((s["name"], s["value"], s["size"]) for s in elf.func_symbols()
                   if s["name"] in owners)
    return text, funcs


def cmd_readback(image, detail, table_path, out_path):
    exp = [s["site"] for s in detail["sites"]]
    table = oracle.Elf(table_path)
    k = table_entries(table)
    out = oracle.Elf(out_path)
    if detail["type"] == "REL":
        # table.o was linked first: its slots are the first k of the output
        secs = out.by_name("__mcount_loc")
        if len(secs) != 1:
            raise Fail("%d __mcount_loc sections in the ld -r output" % len(secs))
        relas = sorted(out.relas_for(secs[0]["index"]), key=lambda r: r["offset"])
        mine = [r for r in relas if r["offset"] < 8 * k]
        if len(mine) != k:
            raise Fail("%d relocations for %d table slots" % (len(mine), k))
        got = ["%s+0x%x" % (out.sections[r["sym"]["shndx"]]["name"], r["sym"]["value"] + r["addend"])
               if r["sym"]["shndx"] not in (0, 0xfff1) else "%s(undefined)" % r["sym"]["name"]
               for r in mine]
    else:
        orig = oracle.Elf(image)
        owners = set(f for s in detail["sites"] for f in s["functions"])
        if layout(orig, owners) != layout(out, owners):
            raise Fail("test setup: the second link moved code, cannot compare")
        slots = raw_slots(out, "__mcount_loc")
        # table.o was linked last: its slots are the last k of the output section
        got = ["0x%x" % v for v in slots[len(slots) - k:]]
    if got != exp:
        missing = [s for s in exp if s not in got]
        extra = [s for s in got if s not in exp]
        raise Fail("table read back differs: %d entries, expected %d; missing %s; extra %s%s"
                   % (len(got), len(exp), missing[:6], extra[:6],
                      "" if missing or extra else "; order differs"))


def raw_slots(elf, secname):
    """All slots, zeros included, of a linked image's table section."""
    relative = oracle.RELATIVE[elf.machine]
    dyn = elf.dynamic_relocs()
    out = []
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
            out.append(val)
    return out


# ------------------------------------------------------------------ features
def site_bytes(elf, detail, s, n, delta=0):
    if detail["type"] == "REL":
        sec = [x for x in elf.sections if x["name"] == s["section"]][0]
        off = s["section_offset"] + delta
        return elf.contents(sec)[off:off + n]
    addr = s["address"] + delta
    for sec in elf.sections:
        if (sec["flags"] & oracle.SHF_ALLOC) and sec["type"] != oracle.SHT_NOBITS and \
                sec["addr"] <= addr < sec["addr"] + sec["size"]:
            off = sec["offset"] + addr - sec["addr"]
            return elf.data[off:off + n]
    raise Fail("%s: not in any section" % s["site"])


def func_bytes(elf, name, n):
    for sym in elf.symtab:
        if sym["name"] == name and sym["type"] == oracle.STT_FUNC and sym["shndx"] not in (0, 0xfff1):
            sec = elf.sections[sym["shndx"]]
            off = sym["value"] - (0 if elf.type == oracle.ET_REL else sec["addr"])
            return elf.contents(sec)[off:off + n]
    raise Fail("no function %s" % name)


PPC_NOP, PPC_MFLR_R0, PPC_LD_R2_24_R1 = 0x60000000, 0x7c0802a6, 0xe8410018


def u32s(b):
    return list(struct.unpack("<%dI" % (len(b) // 4), b[:len(b) // 4 * 4]))


def cmd_features(image, detail):
    meta = oracle.read_meta(image)
    elf = oracle.Elf(image)
    kind = os.path.basename(image)
    arch, flav, sites = meta["arch"], meta["flavour"], detail["sites"]
    fixture = os.path.basename(os.path.dirname(image))
    is_lib = kind in ("lib.o", "lib-fs.o")
    problems = []

    def need(cond, what):
        if not cond:
            problems.append(what)

    # which functions have sites, aliases, dropped leftovers
    owners = set()
    for s in sites:
        owners |= set(s["functions"])
    want = LIB_SITES if is_lib else PROGRAM_SITES
    # hand-written assembly has no compiler-made NOP area: not a site in a
    # linked image (its DWARF unit is the assembler's), its entry dropped
    asm_dropped = not is_lib and elf.type != oracle.ET_REL and meta["oracle"] in ("pfe", "mcountloc")
    if asm_dropped:
        want = want - {"asm_traced"}
    need(owners == want, "functions with a site: missing %s, unexpected %s"
         % (sorted(want - owners), sorted(owners - want)))
    need(not owners & NO_SITES, "notrace/asm functions have sites: %s" % sorted(owners & NO_SITES))
    need(any({"alias_target", "alias_one", "alias_two"} <= set(s["functions"]) for s in sites),
         "no site shared by the three aliases")
    ndrop = 0 if is_lib else 3 if asm_dropped else 2
    need(len(detail["dropped"]) == ndrop,
         "expected %d dropped candidates (weak leftover, asm_nosize%s), got %s"
         % (ndrop, ", asm_traced" if asm_dropped else "", detail["dropped"]))
    if not is_lib:
        # one dropped candidate is asm_nosize's site, the other the leftover of
        # lib.c's weak_overridden, whose symbol the link dropped
        nosize = [x["value"] for x in elf.symtab if x["name"] == "asm_nosize"][0]
        pos = [int(d.rsplit("+", 1)[-1], 16) for d in detail["dropped"]]
        need(any(nosize - meta["pre"] <= p < nosize + 32 for p in pos), "asm_nosize's site not dropped")
        need(sum(1 for x in elf.symtab if x["name"] == "weak_overridden") == 1,
             "weak_overridden should have one symbol (the strong one)")

    # the site-like NOP at the start of nop_start (after a landing pad)
    nb = func_bytes(elf, "nop_start", 12)
    if arch == "x86_64":
        need(b"\x66\x90" in nb[:6], "nop_start does not start with a 2-byte NOP")
    elif arch == "aarch64":
        need(0xd503201f in u32s(nb)[:2], "nop_start does not start with a NOP")
    elif arch == "powerpc64le":
        # at the symbol, or at the local entry after the TOC setup
        need(PPC_NOP in (u32s(nb)[0], u32s(nb)[2]), "nop_start does not start with a nop")
    else:
        need(b"\x13\x00\x00\x00" in (nb[0:4], nb[2:6], nb[4:8]),
             "nop_start does not start with a 4-byte NOP")

    ofs = [list(s["functions"].values())[0] for s in sites]

    if arch == "x86_64":
        if flav in ("fentry", "mcount"):
            first = [site_bytes(elf, detail, s, 2) for s in sites]
            if kind == "pie":
                need(all(b == b"\xff\x15" for b in first), "pie: not all sites are call *GOT(%rip)")
            elif kind == "pie-local":
                need(all(b == b"\x67\xe8" for b in first), "pie-local: not all sites are addr32 call")
            else:
                need(all(b[:1] == b"\xe8" for b in first), "not all sites are E8 calls")
            if flav == "fentry":
                need(all(o in (0, 4) for o in ofs), "fentry sites not at entry (+ENDBR64)")
                if "cet" in fixture or "callpad" in fixture:
                    need(4 in ofs and 0 in ofs, "-fcf-protection: want sites after ENDBR64 and without")
                    need(all(site_bytes(elf, detail, s, 4, -4) == b"\xf3\x0f\x1e\xfa"
                             for s, o in zip(sites, ofs) if o == 4), "site+4 without ENDBR64 before it")
                else:
                    need(all(o == 0 for o in ofs), "fentry without CET: sites not at entry")
            else:
                need(all(o > 0 for o in ofs), "mcount sites should be in the prologue")
            if "callpad" in fixture:
                pfe = oracle.table_slots(elf, "__patchable_function_entries")
                exp = set(s["site"] for s in sites)
                need(len(pfe) >= len(sites), "call padding: no __patchable_function_entries")
                need(not any(oracle.fmt(elf, p) in exp for p in pfe),
                     "call padding entries coincide with sites")
        elif flav == "fentry-nop":
            need(all(site_bytes(elf, detail, s, 5) == b"\x0f\x1f\x44\x00\x00" for s in sites),
                 "nop-mcount sites are not 5-byte NOPs")
        elif flav == "patchable":
            n = int(re.search(r"pfe-(\d+)-(\d+)", fixture).group(1))
            m = meta["pre"]
            need(all(o == -m or o in (0, 4) for o in ofs), "patchable sites not at func-M/entry")
            for s in sites:
                b = site_bytes(elf, detail, s, n + 4)
                if m:
                    ok = b[:m] == b"\x90" * m and (b[m:m + n - m] == b"\x90" * (n - m) or
                                                   b[m:m + 4] == b"\xf3\x0f\x1e\xfa")
                else:
                    ok = b[:n] == b"\x90" * n
                need(ok, "%s: not %d NOPs" % (s["site"], n))
            if "cet" in fixture:
                need(4 in ofs and 0 in ofs, "-fcf-protection: want sites after ENDBR64 and without")
    elif arch == "aarch64":
        if flav == "mcount":
            need(all((u32s(site_bytes(elf, detail, s, 4))[0] >> 26) == 0x25 for s in sites),
                 "mcount sites are not BL")
            need(all(o > 0 for o in ofs), "mcount sites should be in the prologue")
            if "pac" in fixture:
                need(any(0xd503233f in u32s(site_bytes(elf, detail, s, o, -o)) for s, o in zip(sites, ofs)),
                     "no PACIASP before an mcount call")
        else:
            pre = meta["pre"]
            for s, o in zip(sites, ofs):
                w = u32s(site_bytes(elf, detail, s, 16))
                if pre:
                    ok = o == -8 and w[:2] == [0xd503201f] * 2 and (
                        w[2:4] == [0xd503201f] * 2 or (w[2] == 0xd503245f and w[3] == 0xd503201f))
                else:
                    ok = o in (0, 4) and w[:2] == [0xd503201f] * 2
                need(ok, "%s: not a %s patch area" % (s["site"], flav))
            bti = "bti" in fixture
            if pre:
                entry = [u32s(site_bytes(elf, detail, s, 4, 8))[0] for s in sites]
            else:
                entry = [u32s(site_bytes(elf, detail, s, 4, -o))[0] if o else 0 for s, o in zip(sites, ofs)]
            nbti = sum(1 for w in entry if w == 0xd503245f)
            need((nbti > 0 and nbti < len(sites)) if bti else nbti == 0,
                 "BTI C at %d of %d functions" % (nbti, len(sites)))
            if bti:
                need(any(0xd503233f in u32s(site_bytes(elf, detail, s, 24)) for s in sites),
                     "no PACIASP after a patch area")
            if pre and not is_lib:
                mis = sum(1 for s in sites if (s["address"] if s["address"] is not None
                                               else s["section_offset"]) % 8)
                need(0 < mis < len(sites), "CALL_OPS: %d misaligned literal slots of %d" % (mis, len(sites)))
            if kind == "pie-noapply":
                secs = elf.by_name("__patchable_function_entries")
                need(all(b == 0 for b in elf.contents(secs[0])), "--no-apply-dynamic-relocs: table not zero")
    elif arch == "powerpc64le":
        if flav == "mcount":
            # -mprofile-kernel: `mflr r0; bl _mcount` at the local entry (after the
            # global entry's 8-byte TOC setup, or at the symbol); -pg: `bl _mcount`
            # after the frame, then `nop`, which the link turns into the TOC restore
            # `ld r2,24(r1)` after a PLT call stub
            mprofile = "mprofile" in fixture
            words = [u32s(site_bytes(elf, detail, s, 8)) for s in sites]
            need(all((w[0] & 0xfc000003) == 0x48000001 for w in words), "mcount sites are not bl")
            if mprofile:
                need(all(u32s(site_bytes(elf, detail, s, 4, -4))[0] == PPC_MFLR_R0 for s in sites),
                     "-mprofile-kernel: a site without mflr r0 before it")
                need(set(ofs) == {4, 12}, "-mprofile-kernel: sites at offsets %s, want 4 (one entry) "
                     "and 12 (local entry after the TOC setup)" % sorted(set(ofs)))
            else:
                plt = kind in ("exec", "pie")
                after = PPC_LD_R2_24_R1 if plt else PPC_NOP
                need(all(w[1] == after for w in words), "-pg: a site not followed by %s"
                     % ("ld r2,24(r1)" if plt else "nop"))
                need(all(o > 12 for o in ofs), "-pg: mcount sites should be after the frame")
        else:
            # GCC 12: two nops before the global entry's TOC setup; the hand-written
            # asm_traced has them at its local entry (8), as the kernel asks
            for s, o in zip(sites, ofs):
                need(u32s(site_bytes(elf, detail, s, 8)) == [PPC_NOP] * 2, "%s: not 2 nops" % s["site"])
                need(o in (0, 8), "%s: offset %d" % (s["site"], o))
            if "asm_traced" in owners:
                need(any(o == 8 for o in ofs), "asm_traced's area at its local entry not recorded")
    elif arch == "riscv64":
        if flav == "mcount":
            relaxed = detail["type"] != "REL" and "norelax" not in kind
            for s in sites:
                w = u32s(site_bytes(elf, detail, s, 8))
                if relaxed:
                    ok = (w[0] & 0xfff) == 0x0ef  # jal ra
                else:
                    ok = (w[0] & 0xfff) == 0x097 and (w[1] & 0xfff) == 0x0e7  # auipc ra; jalr ra
                need(ok, "%s: not %s" % (s["site"], "jal ra" if relaxed else "auipc ra + jalr ra"))
            need(all(o > 0 for o in ofs), "mcount sites should be in the prologue")
        else:
            # -fpatchable-function-entry=8[,4] with C, =4[,2] without
            n = 8 if fixture.endswith("-c") else 4
            unit = b"\x01\x00" if fixture.endswith("-c") else b"\x13\x00\x00\x00"
            for s, o in zip(sites, ofs):
                b = site_bytes(elf, detail, s, n * len(unit))
                need(b == unit * n, "%s: not %d %s" % (s["site"], n, "c.nop" if len(unit) == 2 else "nop"))
                need(o == -meta["pre"], "%s: offset %d" % (s["site"], o))
            if meta["pre"] and not is_lib:
                mis = sum(1 for s in sites if (s["address"] if s["address"] is not None
                                               else s["section_offset"]) % 8)
                need(mis > 0, "CALL_OPS: no misaligned literal slot")
    else:
        raise Fail("features: no checks for arch %s" % arch)
    if kind == "pie-relr":
        need(any(s["name"] == ".relr.dyn" for s in elf.sections), "no .relr.dyn")
    if problems:
        raise Fail("\n".join(problems))


# ------------------------------------------------------------------ bad input
def cmd_mkbad(kind, src, dst):
    data = bytearray(open(src, "rb").read()) if src != "-" else bytearray()
    e = oracle.Elf(src) if src != "-" and data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1 else None

    def symtab():
        return [s for s in e.sections if s["type"] == oracle.SHT_SYMTAB][0]

    def shdr_field(sec, fmt_off, value):
        off = e.shoff + sec["index"] * e.shentsize + fmt_off
        struct.pack_into("<Q", data, off, value)

    if kind.startswith("trunc-"):
        what = kind[6:]
        cut = {
            "ident": 8, "ehdr": 40, "ehsize": e.ehsize,
            "mid-phdr": e.phoff + e.phentsize // 2,
            "last-phdr": e.phoff + e.phnum * e.phentsize - 1,
            "shdrs": e.shoff, "mid-shdr": e.shoff + e.shentsize * 2 + e.shentsize // 2,
            "last-shdr": e.shoff + e.shnum * e.shentsize - 1,
            "symtab": symtab()["offset"] if e else 0,
            "mid-symtab": symtab()["offset"] + symtab()["size"] // 2 if e else 0,
        }[what]
        data = data[:cut]
    elif kind == "bigendian-flip":
        data[5] = 2
    elif kind.startswith("machine-"):
        struct.pack_into("<H", data, 18, int(kind[8:]))
    elif kind == "symtab-offset-outside":
        shdr_field(symtab(), 24, len(data) + 4096)  # sh_offset
    elif kind == "symtab-size-outside":
        shdr_field(symtab(), 32, len(data))  # sh_size: offset + size > file size
    elif kind == "symtab-offset-wraps":
        shdr_field(symtab(), 24, 0xfffffffffffffff0)
    elif kind == "shoff-outside":
        struct.pack_into("<Q", data, 40, len(data) + 64)
    elif kind == "elf32-crafted":
        # a valid ELF32 little-endian ET_REL header for EM_386 with no sections
        data = bytearray(b"\x7fELF\x01\x01\x01" + b"\0" * 9)
        data += struct.pack("<HHIIIIIHHHHHH", 1, 3, 1, 0, 0, 0, 0, 52, 0, 0, 40, 0, 0)
    else:
        raise SystemExit("mkbad: unknown kind %s" % kind)
    with open(dst, "wb") as f:
        f.write(bytes(data))


def main(argv):
    try:
        cmd = argv[1]
        if cmd == "mkbad":
            cmd_mkbad(argv[2], argv[3], argv[4])
            return 0
        image, detail = argv[2], load(argv[3])
        if cmd == "features":
            cmd_features(image, detail)
        elif cmd == "record":
            cmd_record(image, detail, argv[4])
        elif cmd == "symbolize":
            cmd_symbolize(image, detail, argv[4])
        elif cmd == "json":
            cmd_json(image, detail, argv[4])
        elif cmd == "readback":
            cmd_readback(image, detail, argv[4], argv[5])
        else:
            raise SystemExit(__doc__)
    except Fail as f:
        print(str(f))
        return 1
    except oracle.ElfError as f:
        print(str(f))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
