#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""gen.py - the decoder test's table, from tests/arch/ARCH.cases.

    gen.py OUT.c WORKDIR CASEDIR ARCH=CROSS_PREFIX...

For every ARCH (fixtures/arches.mk's ARCHES, with its CROSS_ prefix) the
cases of CASEDIR/ARCH.cases are assembled by ${CROSS}as into
WORKDIR/ARCH.o, one section per case, the bytes read back out of that
object, and the object disassembled by ${CROSS}objdump; every case is
checked against the disassembly (tests/arch/README says what is checked)
before OUT.c, the table tests/check_arch.c runs, is written.  A case that
does not parse, does not assemble or that objdump contradicts is one line,
`FILE:LINE: problem`, and exit status 2, with OUT.c not written.
"""

import os
import re
import shlex
import struct
import subprocess
import sys

KINDS = ("call", "callmem", "branch", "nop", "landing")
C_KIND = {"other": "INSN_OTHER", "nop": "INSN_NOP", "landing": "INSN_LANDING",
          "call": "INSN_CALL", "callmem": "INSN_CALL_MEM", "branch": "INSN_BRANCH",
          "any": "ARCH_CASE_ANY"}
TARGETED = ("call", "callmem", "branch")
MASK = (1 << 64) - 1


class CaseError(Exception):
    def __init__(self, where, msg):
        super().__init__("%s: %s" % (where, msg))


def num(where, text):
    try:
        return int(text, 0)
    except ValueError:
        raise CaseError(where, "%r is not a number" % text) from None


def fields(where, words, allowed):
    """key=value words to a dict; a bare word is a flag (value True)."""
    out = {}
    for w in words:
        key, eq, val = w.partition("=")
        if key not in allowed:
            raise CaseError(where, "unknown field %r (known: %s)" % (key, " ".join(allowed)))
        if key in out:
            raise CaseError(where, "%s given twice" % key)
        out[key] = val if eq else True
    return out


class Case:
    def __init__(self, where, ctype, what, opts):
        self.where = where
        self.type = ctype
        self.what = what
        self.opts = opts
        self.body = []		# (where, "asm" | "hex", text)
        self.expect = []	# (where, words)


def parse(path):
    head = {"as": [], "kind": {}, "bad": None, "pcrel": None, "let": {}}
    cases = []
    cur = None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, raw in enumerate(lines, 1):
        where = "%s:%d" % (path, n)
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#") and not line[0].isspace():
            continue
        if line[0] in " \t":
            body = line.strip()
            if cur is None:
                raise CaseError(where, "an indented line before the first case")
            if cur.expect:
                raise CaseError(where, "a body line after the case's `=` lines")
            if body.startswith("#"):
                continue
            if body.startswith("hex:"):
                hx = body[4:].split("#")[0].split()
                if not hx or not all(re.fullmatch(r"[0-9a-fA-F]{2}", b) for b in hx):
                    raise CaseError(where, "hex: wants bytes as two hex digits each")
                cur.body.append((where, "hex", hx))
            else:
                cur.body.append((where, "asm", body))
            continue
        if line.startswith("="):
            if cur is None:
                raise CaseError(where, "an `=` line before the first case")
            undefined = [m.group(1) for m in re.finditer(r"\$(\w+)", line)
                         if m.group(1) not in head["let"]]
            if undefined or re.search(r"\$(?!\w)", line):
                raise CaseError(where, "undefined $%s" % (undefined[0] if undefined else ""))
            text = re.sub(r"\$(\w+)", lambda m: head["let"][m.group(1)], line[1:])
            try:
                cur.expect.append((where, shlex.split(text)))
            except ValueError as e:
                raise CaseError(where, "%s" % e) from None
            continue
        key = line.split()[0]
        if key in ("decode", "pcrel", "insnlen") and line.split(None, 1)[1:2] and \
                line.split(None, 1)[1].startswith('"'):
            try:
                words = shlex.split(line, comments=False)
            except ValueError as e:
                raise CaseError(where, "case header: %s" % e) from None
            if len(words) < 2 or not line.split(None, 1)[1].startswith('"'):
                raise CaseError(where, '%s wants "WHAT"' % key)
            if cases and not cases[-1].expect:
                raise CaseError(cases[-1].where, "a case without `=` lines")
            opts = fields(where, words[2:], ("at", "len", "short", "pad", "prefixes", "differs",
                                             "refused"))
            if key != "decode" and ("short" in opts or "pad" in opts or "prefixes" in opts):
                raise CaseError(where, "short, pad and prefixes are for decode cases")
            if "differs" in opts and (opts["differs"] is True or not opts["differs"].strip()):
                raise CaseError(where, "differs= wants the reason objdump disagrees")
            cur = Case(where, key, words[1], opts)
            cases.append(cur)
            continue
        if cases:
            raise CaseError(where, "a header directive after the first case: %r" % key)
        if key == "as":
            head["as"] += shlex.split(line)[1:]
        elif key == "kind" and len(line.split(None, 2)) == 3:
            _, kname, regex = line.split(None, 2)
            if kname not in KINDS + ("bad",):
                raise CaseError(where, "unknown kind %r" % kname)
            try:
                rx = re.compile(regex)
            except re.error as e:
                raise CaseError(where, "bad regex: %s" % e) from None
            if kname == "bad":
                head["bad"] = rx
            else:
                head["kind"][kname] = rx
        elif key == "pcrel" and len(line.split(None, 1)) == 2:
            try:
                head["pcrel"] = re.compile(line.split(None, 1)[1])
            except re.error as e:
                raise CaseError(where, "bad regex: %s" % e) from None
        elif key == "let" and re.fullmatch(r"let\s+\w+\s*=.*", line):
            name, _, val = line[3:].partition("=")
            head["let"][name.strip()] = val.strip()
        else:
            raise CaseError(where, "not a directive, case or expectation: %r" % line)
        continue
    if not cases:
        raise CaseError(path, "no cases")
    if not cases[-1].expect:
        raise CaseError(cases[-1].where, "a case without `=` lines")
    return head, cases


def run(argv, where):
    try:
        p = subprocess.run(argv, capture_output=True, text=True)
    except OSError as e:
        raise CaseError(where, "%s: %s" % (argv[0], e.strerror)) from None
    return p


def elf_sections(path):
    """e_machine and {name: bytes} of an ELF64 little-endian relocatable."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise CaseError(path, "not an ELF64 little-endian object")
    e_machine = struct.unpack_from("<H", data, 18)[0]
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    shdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = shdrs[shstrndx][4]
    out = {}
    for sh in shdrs:
        name = data[stroff + sh[0]:data.index(b"\0", stroff + sh[0])].decode()
        if sh[1] == 1:		# SHT_PROGBITS
            out[name] = data[sh[4]:sh[4] + sh[5]]
    return e_machine, out


INSN = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t(.*)$")


def disassemble(objdump, obj, where):
    p = run([objdump, "-d", "-z", "-w", obj], where)
    if p.returncode:
        raise CaseError(where, "%s: %s" % (objdump, p.stderr.strip()))
    out, sec = {}, None
    for line in p.stdout.split("\n"):
        m = re.match(r"^Disassembly of section (\S+):", line)
        if m:
            sec = out.setdefault(m.group(1), [])
            continue
        m = INSN.match(line)
        if m and sec is not None:
            raw = m.group(2).replace(" ", "")
            text = " ".join(m.group(3).split())
            sec.append((int(m.group(1), 16), len(raw) // 2, text))
    return out


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Arch:
    def __init__(self, name, cross, casedir, workdir, refused=False):
        self.name = name
        self.refused = refused
        self.path = os.path.join(casedir, name + ".cases")
        if not os.path.exists(self.path):
            raise CaseError(self.path, "missing: every architecture of fixtures/arches.mk "
                            "has its decoder cases (tests/arch/README)")
        self.head, self.cases = parse(self.path)
        self.cross = cross
        self.work = os.path.join(workdir, name)
        self.extra = os.path.exists(os.path.join(casedir, name + ".c"))

    def assemble(self):
        src, where_of = [], {}
        src.append("# generated by tests/arch/gen.py from %s" % self.path)
        for i, c in enumerate(self.cases):
            src.append('\t.section .text.c%d,"ax"' % i)
            for where, kind, text in c.body:
                src.append("\t.byte " + ",".join("0x" + b for b in text) if kind == "hex"
                           else "\t" + text)
                where_of[len(src)] = where
        asm = self.work + ".s"
        obj = self.work + ".o"
        with open(asm, "w") as f:
            f.write("\n".join(src) + "\n")
        p = run([self.cross + "as"] + self.head["as"] + ["-o", obj, asm], self.path)
        msgs = []
        for line in p.stderr.split("\n"):
            m = re.match(r"^%s:(\d+): (.*)$" % re.escape(asm), line)
            if m:
                msgs.append("%s: %s" % (where_of.get(int(m.group(1)), self.path), m.group(2)))
        if p.returncode or msgs:
            raise CaseError(self.path, "%sas: %s" % (self.cross, "\n".join(msgs) or p.stderr.strip()))
        # mapping symbols ($d after .byte) would make objdump print code as data
        dis = self.work + ".dis.o"
        p = run([self.cross + "strip", "--strip-unneeded", "-o", dis, obj], self.path)
        if p.returncode:
            raise CaseError(self.path, "%sstrip: %s" % (self.cross, p.stderr.strip()))
        self.machine, secs = elf_sections(obj)
        insns = disassemble(self.cross + "objdump", dis, self.path)
        for i, c in enumerate(self.cases):
            c.bytes = secs.get(".text.c%d" % i, b"")
            c.insns = insns.get(".text.c%d" % i, [])
            got = sum(n for _, n, _ in c.insns)
            if c.bytes and got != len(c.bytes):
                raise CaseError(c.where, "objdump covers %d of the %d bytes" % (got, len(c.bytes)))

    # --- expectations -------------------------------------------------
    def expectations(self, c):
        c.buflen = len(c.bytes)
        if "len" in c.opts:
            c.buflen = num(c.where, c.opts["len"])
            if c.buflen > len(c.bytes):
                raise CaseError(c.where, "len=%d, but the body is %d bytes" % (c.buflen, len(c.bytes)))
        c.addr = num(c.where, c.opts["at"]) & MASK if "at" in c.opts else 0
        c.pad = num(c.where, c.opts["pad"]) if "pad" in c.opts else -1
        if not 0 <= c.pad <= 0xff and c.pad != -1:
            raise CaseError(c.where, "pad= is one byte")
        getattr(self, "expect_" + c.type)(c)

    def expect_decode(self, c):
        c.steps = []
        off = 0
        for where, w in c.expect:
            if not w:
                raise CaseError(where, "an empty `=` line")
            if c.steps and c.steps[-1]["ret"] != "ARCH_DECODE_OK":
                raise CaseError(where, "a step after trunc or bad")
            if w[0] in ("trunc", "bad"):
                if len(w) != 1:
                    raise CaseError(where, "%s takes nothing more" % w[0])
                c.steps.append({"where": where, "ret": "ARCH_DECODE_" + w[0].upper(), "off": off,
                                "kind": w[0], "len": 0, "target": 0, "disp_off": 0})
                continue
            if w[0] not in C_KIND or len(w) < 2:
                raise CaseError(where, "want `= KIND LEN ...` with KIND one of %s, or trunc, bad"
                                % " ".join(C_KIND))
            f = fields(where, w[2:], ("target", "disp_off"))
            if ("target" in f) != (w[0] in TARGETED):
                raise CaseError(where, "target= is given exactly for %s" % ", ".join(TARGETED))
            n = num(where, w[1])
            if n <= 0:
                raise CaseError(where, "a length must be positive")
            c.steps.append({"where": where, "ret": "ARCH_DECODE_OK", "off": off, "kind": w[0],
                            "len": n, "target": num(where, f["target"]) & MASK if "target" in f else 0,
                            "disp_off": num(where, f.get("disp_off", "0"))})
            off += n
            if off > c.buflen:
                raise CaseError(where, "the steps run to byte %d of %d" % (off, c.buflen))
        if c.steps[-1]["ret"] == "ARCH_DECODE_OK" and off != c.buflen:
            raise CaseError(c.expect[-1][0], "the steps cover %d of the %d bytes" % (off, c.buflen))
        if ("short" in c.opts or "pad" in c.opts) and c.steps[0]["ret"] != "ARCH_DECODE_OK":
            raise CaseError(c.where, "short and pad need an OK first step")

    def expect_pcrel(self, c):
        if len(c.expect) != 1:
            raise CaseError(c.where, "a pcrel case has one `=` line")
        where, w = c.expect[0]
        res = w[0] if w else ""
        need = {"ok": ("name", "len", "disp", "min", "max", "step"), "page": ("name", "len"),
                "unpaired": ("name", "len"), "none": ()}
        if res not in need:
            raise CaseError(where, "want ok, page, unpaired or none")
        f = fields(where, w[1:], need[res] + (("lo_off", "flags") if res == "ok" else ()))
        for k in need[res]:
            if k not in f:
                raise CaseError(where, "%s wants %s=" % (res, k))
        if f.get("flags", "live") != "live":
            raise CaseError(where, "flags= knows only live")
        c.p = {"ret": "ARCH_PCREL_" + res.upper(), "name": f.get("name"),
               "len": num(where, f.get("len", "0")), "lo_off": num(where, f.get("lo_off", "0")),
               "flags": "ARCH_PCREL_LIVE" if "flags" in f else "0",
               "disp": num(where, f.get("disp", "0")), "min": num(where, f.get("min", "0")),
               "max": num(where, f.get("max", "0")), "step": num(where, f.get("step", "0"))}

    def expect_insnlen(self, c):
        if len(c.expect) != 1 or len(c.expect[0][1]) != 1:
            raise CaseError(c.where, "an insnlen case has one line `= N`")
        c.insn_len = num(c.expect[0][0], c.expect[0][1][0])

    # --- objdump's word ---------------------------------------------
    def span(self, c, where, off, n, kind=None):
        """
        objdump's text of the instructions covering [off, off + n), or a
        CaseError.  More than one instruction is one step only where the
        architecture fuses them: the kind's pattern matches them together
        and not the first alone (riscv auipc+jalr); `nop ; nop` is two.
        """
        texts, pos = [], off
        for o, ln, text in c.insns:
            if o < off:
                continue
            if o != pos or pos >= off + n:
                break
            texts.append(text)
            pos += ln
        if not texts or pos != off + n:
            raise CaseError(where, "objdump has no instruction boundary at %d and %d: %s"
                            % (off, off + n, self.listing(c)))
        joined = " ; ".join(texts)
        if len(texts) > 1:
            rx = self.head["kind"].get(kind) if kind else self.head["pcrel"]
            if rx is None or not rx.search(joined) or rx.search(texts[0]):
                raise CaseError(where, "bytes %d to %d are %d instructions to objdump, one "
                                "step here: %s" % (off, off + n, len(texts), joined))
        return joined

    @staticmethod
    def listing(c):
        return " | ".join("%x: [%d] %s" % i for i in c.insns) or "(no instructions)"

    def check_target(self, where, m, c, off, want, what):
        hit = [v for k, v in sorted(m.groupdict().items()) if re.fullmatch(r"t\d*", k) and v]
        if not hit:
            raise CaseError(where, "the %s pattern matched no target group (?P<t>...)" % what)
        got = (int(hit[0], 16) + c.addr) & MASK	# the section starts at 0
        if got != want:
            raise CaseError(where, "objdump's target is %#x (at at=), the case says %#x"
                            % (got, want))

    def check(self, c):
        if "refused" in c.opts and not self.refused:
            raise CaseError(c.where, "refused= belongs in tests/arch/refused/")
        if "differs" in c.opts:
            return
        getattr(self, "check_" + c.type)(c)

    def check_decode(self, c):
        kinds = self.head["kind"]
        for s in c.steps:
            where, off = s["where"], s["off"]
            if s["kind"] == "trunc":
                if off < len(c.bytes):
                    ins = [i for i in c.insns if i[0] == off]
                    if not ins or off + ins[0][1] <= c.buflen:
                        raise CaseError(where, "trunc, but objdump's instruction at %d ends "
                                        "within the %d bytes given: %s"
                                        % (off, c.buflen, self.listing(c)))
                continue
            if s["kind"] == "bad":
                if self.head["bad"] and off < len(c.bytes):
                    ins = [i for i in c.insns if i[0] == off]
                    if not ins or not self.head["bad"].search(ins[0][2]):
                        raise CaseError(where, "bad, but objdump decodes it: %s" % self.listing(c))
                continue
            text = self.span(c, where, off, s["len"], s["kind"])
            if s["kind"] == "any":
                continue
            matched = [k for k in KINDS if k in kinds and kinds[k].search(text)]
            if s["kind"] != "other" and s["kind"] not in kinds:
                raise CaseError(where, "no `kind %s` pattern in the header" % s["kind"])
            if s["kind"] == "other" and matched:
                raise CaseError(where, "other, but objdump's %r is a %s" % (text, matched[0]))
            if s["kind"] != "other":
                if matched != [s["kind"]]:
                    raise CaseError(where, "%s, but objdump's %r is %s" % (
                        s["kind"], text, " and ".join(matched) if matched else "none of "
                        + ", ".join(kinds)))
                if s["kind"] in TARGETED:
                    self.check_target(where, kinds[s["kind"]].search(text), c, off, s["target"],
                                      "kind " + s["kind"])

    def check_pcrel(self, c):
        where = c.expect[0][0]
        rx = self.head["pcrel"]
        if c.p["ret"] == "ARCH_PCREL_OK":
            if rx is None:
                raise CaseError(where, "no `pcrel` pattern in the header")
            text = self.span(c, where, 0, c.p["len"])
            m = rx.search(text)
            if not m:
                raise CaseError(where, "objdump's %r shows no PC-relative target" % text)
            saved, c.addr = c.addr, 0
            self.check_target(where, m, c, 0, c.p["disp"] & MASK, "pcrel")
            c.addr = saved
        elif c.p["ret"] == "ARCH_PCREL_NONE" and rx and c.insns and c.insns[0][1] <= c.buflen:
            if rx.search(c.insns[0][2]):
                raise CaseError(where, "none, but objdump's %r has a PC-relative target"
                                % c.insns[0][2])

    def check_insnlen(self, c):
        if c.insn_len and (not c.insns or c.insns[0][1] != c.insn_len):
            raise CaseError(c.expect[0][0], "insn_len %d, objdump: %s" % (c.insn_len, self.listing(c)))

    # --- C -----------------------------------------------------------
    def emit(self, first):
        out = []
        for i, c in enumerate(self.cases):
            out.append("static const uint8_t %s_b%d[] = { %s };" % (
                self.ident, i, ", ".join("0x%02x" % b for b in c.bytes[:c.buflen]) or "0"))
            if c.type == "decode":
                out.append("static const struct arch_case_step %s_s%d[] = {" % (self.ident, i))
                for s in c.steps:
                    out.append("\t{ %s, %d, %s, %#xull, %d }," % (
                        s["ret"], s["len"], C_KIND.get(s["kind"], "INSN_OTHER"), s["target"],
                        s["disp_off"]))
                out.append("};")
        rows = []
        for i, c in enumerate(self.cases):
            row = ["\t{ .where = %s, .what = %s, .type = ARCH_CASE_%s," % (
                cstr(c.where), cstr(c.what), c.type.upper()),
                "\t  .addr = %#xull, .bytes = %s_b%d, .len = %d," % (c.addr, self.ident, i, c.buflen)]
            if c.type == "decode":
                row.append("\t  .steps = %s_s%d, .nsteps = %d, .short_check = %d, .pad = %d,"
                           " .prefixes = %d," % (self.ident, i, len(c.steps), "short" in c.opts,
                                                 c.pad, "prefixes" in c.opts))
            elif c.type == "pcrel":
                p = c.p
                row.append("\t  .pc = { %s, %s, %d, %d, %s, %dll, %dll, %dll, %d }," % (
                    p["ret"], cstr(p["name"]) if p["name"] else "NULL", p["len"], p["lo_off"],
                    p["flags"], p["disp"], p["min"], p["max"], p["step"]))
            else:
                row.append("\t  .insn_len = %d," % c.insn_len)
            if "differs" in c.opts:
                row.append("\t  .differs = %s," % cstr(c.opts["differs"]))
            row.append("\t},")
            rows += row
        return out, rows, first + len(self.cases)


def refused(argv):
    """
    gen.py --refused STAMP WORKDIR DIR ARCH=CROSS...: every case of
    DIR/ARCH.cases (where there is one) must be refused, with a message
    holding its refused="TEXT": the checks above can fail.  STAMP is
    written when they all are.
    """
    stamp, workdir, casedir = argv[2:5]
    os.makedirs(workdir, exist_ok=True)
    errors, n = [], 0
    try:
        for spec in argv[5:]:
            name, _, cross = spec.partition("=")
            if not os.path.exists(os.path.join(casedir, name + ".cases")):
                continue
            a = Arch(name, cross, casedir, workdir, refused=True)
            a.assemble()
            for c in a.cases:
                want = c.opts.get("refused")
                if not isinstance(want, str) or not want:
                    errors.append("%s: a refused case says refused=\"why\"" % c.where)
                    continue
                try:
                    a.expectations(c)
                    a.check(c)
                    errors.append("%s: accepted, but should be refused: %s" % (c.where, want))
                except CaseError as e:
                    if want not in str(e):
                        errors.append("%s: refused for another reason: %s" % (c.where, e))
                n += 1
    except CaseError as e:
        errors.append(str(e))
    if errors:
        sys.stderr.write("".join("%s\n" % e for e in errors))
        return 2
    with open(stamp, "w") as f:
        f.write("%d wrong cases refused\n" % n)
    return 0


def main(argv):
    if len(argv) >= 6 and argv[1] == "--refused":
        return refused(argv)
    if len(argv) < 5:
        sys.stderr.write("usage: gen.py OUT.c WORKDIR CASEDIR ARCH=CROSS_PREFIX...\n"
                         "       gen.py --refused STAMP WORKDIR DIR ARCH=CROSS_PREFIX...\n")
        return 2
    out_c, workdir, casedir = argv[1:4]
    os.makedirs(workdir, exist_ok=True)
    errors = []
    try:
        arches = []
        for spec in argv[4:]:
            name, eq, cross = spec.partition("=")
            if not eq or not re.fullmatch(r"[A-Za-z0-9_]+", name):
                raise CaseError("gen.py", "%r is not ARCH=CROSS_PREFIX" % spec)
            a = Arch(name, cross, casedir, workdir)
            a.ident = "c_" + name
            a.assemble()
            for c in a.cases:
                try:
                    a.expectations(c)
                    a.check(c)
                except CaseError as e:
                    errors.append(str(e))
            arches.append(a)
    except CaseError as e:
        errors.append(str(e))
    if errors:
        sys.stderr.write("".join("%s\n" % e for e in errors))
        return 2
    text = ["/* generated by tests/arch/gen.py from tests/arch/ARCH.cases: do not edit */",
            "#include \"tests/arch/harness.h\"", ""]
    rows, sets, first = [], [], 0
    for a in arches:
        decls, r, nxt = a.emit(first)
        text += decls
        rows += r
        if a.extra:
            text.append("void arch_tests_%s(Suite *s);" % a.name)
        sets.append("\t{ %s, %d, %d, %d, %s }," % (cstr(a.name), a.machine, first, nxt - first,
                                                    "arch_tests_" + a.name if a.extra else "NULL"))
        first = nxt
    text += ["", "const struct arch_case arch_cases[] = {"] + rows + ["};", ""]
    text += ["const struct arch_case_set arch_case_sets[] = {"] + sets + ["};", ""]
    text += ["const size_t arch_case_nsets = %d;" % len(arches), ""]
    tmp = out_c + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(text))
    os.replace(tmp, out_c)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
