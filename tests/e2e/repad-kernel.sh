#!/bin/sh
# End-to-end test of `patchsite repad` on objects laid out as an arm64
# kernel's (fixtures/repad-kernel, built from the Linux 6.12 macros): every
# special section kind a kernel object holds, compiled -Os
# -fpatchable-function-entry=4,2 so that CALL_OPS literals land at 4 mod 8
# and repad must pad in front of them.  Checked with tools that are not
# patchsite: eu-elflint, readelf, objdump, llvm-dwarfdump, the linker, and
# user-space stand-ins for the kernel code that reads the tables, run under
# qemu-aarch64.
#
#   make -C fixtures/repad-kernel && PATCHSITE=/path/to/patchsite sh tests/e2e/repad-kernel.sh
#
# Per object (alt.o .altinstructions, jump.o __jump_table, extable.o
# __ex_table, bug.o __bug_table, sections.o the other text sections with
# initcalls, switch.o jump tables and code addresses in data; see the
# fixture Makefile for which carry DWARF, .eh_frame and BTF):
#   misaligned-unpadded  literals.py (the compiler's own
#                    __patchable_function_entries) counts misaligned literals
#   repad            `repad IN -o OUT` exits 0 (a refusal would be exit 2 with
#                    one line naming the section and offset: none is expected)
#   elflint          eu-elflint --gnu-ld --quiet passes on OUT
#   misaligned-padded  literals.py: as many literals, none misaligned
#   code             objdump -dr: the instruction streams of every text
#                    section are the original's with NOPs inserted, each in
#                    a run of NOPs that holds a literal of the padded object,
#                    as many per section as aligning its literals in order
#                    takes; branch targets and relocation targets compared
#                    as function+offset; same functions with the same sizes
#   tables           every relocation of every section (readelf -rW: symbol
#                    + addend) resolved to function+offset (or the literal
#                    before a function, or behind a function's end for
#                    replacements in .subsection 1) names the same place in
#                    both, the same instruction is there (objdump), and every
#                    section other than text, debug and ELF bookkeeping keeps
#                    its bytes (the tables' constant fields, .eh_frame, .BTF)
#   KIND             the same, one table kind at a time (the lines of
#                    `tables`), so that each shows up by name
#   idempotent       repadding OUT inserts nothing
#   in-place         `repad --in-place` writes the bytes of `-o`
# Checker self-test: mutant-KIND  OUT with one table relocation moved by 4
#   bytes (what a repad that forgot it would leave) fails `tables`.
# entry.o, hand-written assembly with no site (alternatives, __ex_table,
# __bug_table, a literal pool): no literal; `repad -o` writes the input's
# bytes; `repad --in-place` leaves the file alone (bytes, mtime, inode).
# Programs: harness.o linked with the original and with the padded objects:
#   link-*           literals.py and `patchsite audit` on the programs
#   run              both print expected-run.txt under qemu-aarch64: static
#                    keys patched NOP <-> B through __jump_table, alternatives
#                    applied through .altinstructions (callbacks included),
#                    faults fixed up through __ex_table, BRKs reported
#                    through __bug_table, PREL32 initcalls run, switch and
#                    function-pointer tables
#   run-mutant-KIND  the padded program with one table relocation 4 bytes
#                    off (alternatives, jump labels, extable, BUG) does not
#                    print expected-run.txt
#   dwarf            llvm-dwarfdump: line rows, low/high_pc, call_return_pc,
#                    range and location lists, aranges, .eh_frame and
#                    .debug_frame FDEs name the same object:function+offset
#                    in both programs, each address read through the link map
#   addr2line        the same file:line at every function entry and entry+8
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/repad-kernel
PATCHSITE=${PATCHSITE:-$root/patchsite}
CC_A64=${CC_A64:-aarch64-linux-gnu-gcc}
OBJDUMP=${OBJDUMP:-aarch64-linux-gnu-objdump}
READELF=${READELF:-aarch64-linux-gnu-readelf}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
PY=/usr/bin/python3
export OBJDUMP READELF

. "$here/lib.sh"

# llvm-dwarfdump: an install step, never a skip
if ! command -v llvm-dwarfdump >/dev/null 2>&1 && [ ! -x /usr/lib/llvm-14/bin/llvm-dwarfdump ]; then
	apt-get install -y -q llvm-14 >/dev/null 2>&1 || not_ok "apt-get install llvm-14 (llvm-dwarfdump)"
fi
DWARFDUMP=$(command -v llvm-dwarfdump || echo /usr/lib/llvm-14/bin/llvm-dwarfdump)
export DWARFDUMP
for t in "$CC_A64" "$OBJDUMP" "$READELF" aarch64-linux-gnu-objcopy aarch64-linux-gnu-nm \
	aarch64-linux-gnu-addr2line "$QEMU" eu-elflint "$PY" "$DWARFDUMP"; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done

work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
ps_init "$work"
. "$here/repadlib.sh"	# count_literals, audit_agrees, elflint, ps_ok

make -s -C "$fix" >"$work/make.log" 2>&1 || { cat "$work/make.log"; not_ok "build fixtures"; }
objs="alt jump extable bug sections switch"

# The checker: readelf and objdump only, nothing of patchsite's.
cat >"$work/kcheck.py" <<'PYEOF' || not_ok "write kcheck.py"
"""kcheck.py: tests/e2e/repad-kernel.sh's checker (code, refs, dwarf, mutate)."""
import os, re, subprocess, sys

READELF = os.environ.get('READELF', 'aarch64-linux-gnu-readelf')
OBJDUMP = os.environ.get('OBJDUMP', 'aarch64-linux-gnu-objdump')
PFE = '__patchable_function_entries'


def run(*args):
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


class Obj:
    """An object as readelf and objdump show it: sections, symbols,
    relocations (symbol index and addend, as `readelf -rW` prints them) and
    the disassembly of its text sections."""

    def __init__(self, path):
        self.path = path
        self.secs = {}      # index -> dict(name, flags, off, size)
        for m in re.finditer(r'^\s*\[\s*(\d+)\]\s+(\S*)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+'
                             r'([0-9a-f]+)\s+([0-9a-f]+)\s+([A-Za-z]*)\s+\d+\s+(\d+)\s+(\d+)\s*$',
                             run(READELF, '-SW', path), re.M):
            i = int(m.group(1))
            self.secs[i] = dict(name=m.group(2), type=m.group(3), off=int(m.group(5), 16),
                                size=int(m.group(6), 16), flags=m.group(8),
                                info=int(m.group(9)), align=int(m.group(10)))
        self.byname = {s['name']: i for i, s in self.secs.items()}
        self.syms = {}
        for m in re.finditer(r'^\s*(\d+): ([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+(\S+)\s+(\S+)\s+\S+\s+(\S+) ?(.*)$',
                             run(READELF, '-sW', path), re.M):
            self.syms[int(m.group(1))] = dict(value=int(m.group(2), 16), size=int(m.group(3), 0),
                                              type=m.group(4), bind=m.group(5), ndx=m.group(6),
                                              name=m.group(7))
        self.funcs = {}     # section index -> [(start, end, name)] sorted
        for s in self.syms.values():
            if s['type'] == 'FUNC' and s['ndx'].isdigit():
                self.funcs.setdefault(int(s['ndx']), []).append(
                    (s['value'], s['value'] + s['size'], s['name']))
        for v in self.funcs.values():
            v.sort()
        self.relas = {}     # target section name -> [(r_offset, type, symidx, addend)]
        cur = None
        for line in run(READELF, '-rW', path).splitlines():
            m = re.match(r"Relocation section '\.rela(.*)' at offset", line)
            if m:
                cur = self.relas.setdefault(m.group(1), [])
                continue
            m = re.match(r'^([0-9a-f]{16})\s+([0-9a-f]{16})\s+(\S+)\s*(?:[0-9a-f]{16}\s+(.*?)\s*([+-])\s*([0-9a-f]+))?\s*$', line)
            if m and cur is not None:
                add = int(m.group(6), 16) if m.group(6) else 0
                if m.group(5) == '-':
                    add = -add
                cur.append((int(m.group(1), 16), m.group(3), int(m.group(2), 16) >> 32, add))
        with open(path, 'rb') as f:
            self.data = f.read()
        self._dis = None
        self._insns = {}
        self._at = {}

    def is_text(self, idx):
        return 'X' in self.secs[idx]['flags']

    def contents(self, idx):
        s = self.secs[idx]
        return b'' if s['type'] == 'NOBITS' else self.data[s['off']:s['off'] + s['size']]

    def names(self, idx, off):
        """The names of offset OFF of section IDX, best first.  In a text
        section: F+off inside function F; else G-d in the 8 bytes before
        function G (its ops literal) and F+END at the end of F; else F+END+k
        behind the last function F (a replacement in .subsection 1).
        Elsewhere: SECTION+off."""
        sec = self.secs[idx]['name']
        if not self.is_text(idx):
            return ['%s+%#x' % (sec, off)]
        inside, out, ends, after = [], [], [], None
        for a, b, n in self.funcs.get(idx, []):
            if a <= off < b:
                inside.append('%s+%#x' % (n, off - a))
            elif a - 8 <= off < a:
                out.append('%s-%#x' % (n, a - off))
            if b == off:
                ends.append('%s+END' % n)
            if b <= off and (after is None or b >= after[0]):
                after = (b, n)
        if inside:
            return inside
        out += ends
        if not out and after:
            out.append('%s+END+%#x' % (after[1], off - after[0]))
        return out or ['%s+%#x' % (sec, off)]

    def target(self, symidx, addend):
        """(section index or None, offset or name) of a relocation's S + A."""
        s = self.syms[symidx]
        if not s['ndx'].isdigit():
            return None, '%s%+#x' % (s['name'] or '*ABS*', addend)
        return int(s['ndx']), s['value'] + addend

    def dis(self):
        """{section name: [(offset, insn text, reloc)]} with branch targets as
        <symbol+off> and relocated operands as the relocation's target."""
        if self._dis is not None:
            return self._dis
        self._dis, cur = {}, None
        for line in run(OBJDUMP, '-dr', '--no-show-raw-insn', self.path).splitlines():
            m = re.match(r'Disassembly of section (\S+):', line)
            if m:
                cur = self._dis.setdefault(m.group(1), [])
                continue
            m = re.match(r'^\t\t\t([0-9a-f]+): (R_\S+)\t(.*)$', line)
            if m and cur:
                off, text, _ = cur[-1]
                cur[-1] = (off, text, (m.group(2), m.group(3)))
                continue
            m = re.match(r'^\s+([0-9a-f]+):\t(.*)$', line)
            if m and cur is not None:
                ins = m.group(2).split('//')[0].strip()
                ins = re.sub(r'\b[0-9a-f]+ (<[^>]+>)', r'\1', ins)
                cur.append((int(m.group(1), 16), re.sub(r'\s+', ' ', ins), None))
        return self._dis

    def reloc_name(self, sec_name, rtext):
        """objdump's `sym+0xadd` of a relocation in section SEC_NAME, by name."""
        m = re.match(r'^(.*?)([+-]0x[0-9a-f]+)?$', rtext)
        sym, add = m.group(1), int(m.group(2), 16) if m.group(2) else 0
        if sym in self.byname:
            idx = self.byname[sym]
            return self.names(idx, add)[0]
        return '%s%+#x' % (sym, add)

    def insns(self, sec):
        """[(offset, normalized insn)] of text section SEC."""
        if sec in self._insns:
            return self._insns[sec]
        out = self._insns[sec] = []
        for off, text, rel in self.dis().get(sec, []):
            if rel:
                text = re.sub(r'<[^>]+>', '', text).strip().rstrip(',')
                text = '%s [%s %s]' % (text, rel[0], self.reloc_name(sec, rel[1]))
            out.append((off, text))
        return out

    def insn_at(self, idx, off):
        sec = self.secs[idx]['name']
        if sec not in self._at:
            self._at[sec] = dict(self.insns(sec))
        return self._at[sec].get(off, '(no instruction)')

    def literals(self):
        """{text section index: [offsets of CALL_OPS literals]} from the
        compiler's __patchable_function_entries relocations."""
        out = {}
        for secname, rels in self.relas.items():
            if not secname.startswith(PFE):
                continue
            for _, typ, si, add in rels:
                idx, off = self.target(si, add)
                if idx is not None and any(a == off + 8 for a, _, _ in self.funcs.get(idx, [])):
                    out.setdefault(idx, []).append(off)
        return {k: sorted(v) for k, v in out.items()}


def code(orig_path, pad_path):
    """The padded code is the original with NOPs inserted, only next to a
    literal's NOPs, as many per section as aligning its literals takes."""
    a_obj, b_obj = Obj(orig_path), Obj(pad_path)
    ok = True
    lits, b_lits = a_obj.literals(), b_obj.literals()
    texts = sorted(a_obj.secs[i]['name'] for i in a_obj.secs if a_obj.is_text(i))
    if texts != sorted(b_obj.secs[i]['name'] for i in b_obj.secs if b_obj.is_text(i)):
        print('# text sections differ')
        return False
    fa = sorted((a_obj.secs[i]['name'], n, e - s) for i, v in a_obj.funcs.items() for s, e, n in v)
    fb = sorted((b_obj.secs[i]['name'], n, e - s) for i, v in b_obj.funcs.items() for s, e, n in v)
    if fa != fb:
        print('# functions (section, name, size) differ: %s' % sorted(set(fa) ^ set(fb))[:4])
        ok = False
    total = 0
    for sec in texts:
        idx = a_obj.byname[sec]
        shift = 0
        for off in lits.get(idx, []):
            if (off + shift) % 8:
                shift += 4
        want = shift // 4
        a = [t for _, t in a_obj.insns(sec)]
        b = [t for _, t in b_obj.insns(sec)]
        boff = [o for o, _ in b_obj.insns(sec)]
        blits = b_lits.get(b_obj.byname[sec], [])
        i = j = ins = 0
        while i < len(a) or j < len(b):
            if i < len(a) and j < len(b) and a[i] == b[j]:
                i += 1; j += 1
            elif j < len(b) and b[j] == 'nop':
                # an inserted NOP: its run of NOPs must end in a literal of
                # the padded object, with the NOP before it
                lo = j
                while lo > 0 and b[lo - 1] == 'nop':
                    lo -= 1
                hi = j
                while hi < len(b) and b[hi] == 'nop':
                    hi += 1
                first, last = boff[lo], boff[hi - 1]
                if not any(first + 4 <= lit <= last - 4 for lit in blits):
                    print('# %s: a NOP inserted at %#x, in a run of NOPs [%#x, %#x] that holds no literal'
                          % (sec, boff[j], first, last + 4))
                    ok = False
                ins += 1; j += 1
            else:
                print('# %s: differs at insn %d/%d: %r vs %r' % (sec, i, j, a[i] if i < len(a) else None,
                                                              b[j] if j < len(b) else None))
                ok = False
                break
        if ins != want:
            print('# %s: %d NOPs inserted, aligning its %d literals takes %d'
                  % (sec, ins, len(lits.get(idx, [])), want))
            ok = False
        total += ins
    print('# %d NOPs inserted' % total)
    return ok


def refs(orig_path, pad_path, listing, only=()):
    """Every relocation of every section names the same place and the same
    target (function+offset, or section+offset outside the text) in both,
    the same instruction is there, and every section that is not text,
    debug information or ELF bookkeeping has the same bytes."""
    a, b = Obj(orig_path), Obj(pad_path)
    ok = True
    out = open(listing, 'w')
    if sorted(a.relas) != sorted(b.relas):
        print('# relocation sections differ')
        return False
    for want in only:
        if not a.relas.get(want):
            print('# no relocations in .rela%s' % want)
            ok = False
    for sec in sorted(a.relas):
        if only and sec not in only:
            continue
        ra, rb = a.relas[sec], b.relas[sec]
        debug = sec.startswith('.debug')
        if len(ra) != len(rb):
            print('# .rela%s: %d relocations, then %d' % (sec, len(ra), len(rb)))
            ok = False
            continue
        sidx_a, sidx_b = a.byname[sec], b.byname[sec]
        into_text = same_insn = bad = 0
        for (oa, ta, sa, aa), (ob, tb, sb, ab) in zip(ra, rb):
            pa, pb = a.names(sidx_a, oa), b.names(sidx_b, ob)
            ia, xa = a.target(sa, aa)
            ib, xb = b.target(sb, ab)
            na = a.names(ia, xa) if ia is not None else [xa]
            nb = b.names(ib, xb) if ib is not None else [xb]
            text = ia is not None and a.is_text(ia)
            if debug:
                same = bool(set(na) & set(nb))
            else:
                same = na[0] == nb[0] and (pa[0] == pb[0])
            line = '%s %s: %s %s -> %s | %s' % (sec, pa[0], ta, '/'.join(na), '/'.join(nb),
                                                 'same' if same else 'DIFFERS')
            into_text += text
            if text and not debug:
                insa, insb = a.insn_at(ia, xa), b.insn_at(ib, xb)
                line += ' | %s' % insa
                if insa == insb:
                    same_insn += 1
                else:
                    line += ' -> %s DIFFERS' % insb
                    same = False
            if ta != tb:
                same = False
            out.write(line + '\n')
            if not same:
                bad += 1
                if bad <= 3:
                    print('# ' + line)
        if bad:
            ok = False
        if only:
            print('# .rela%s: %d relocations, %d of them into text; %d differ'
                  % (sec, len(ra), into_text, bad))
        out.write('# .rela%s: %d relocations, %d of them into text (%d with the same instruction '
                  'there), %d differ\n' % (sec, len(ra), into_text, same_insn, bad))
    for i, s in a.secs.items():
        if only:
            break
        name = s['name']
        if a.is_text(i) or name.startswith(('.debug', '.rela')) or s['type'] in ('SYMTAB', 'STRTAB', 'NULL', 'NOBITS'):
            continue
        if name not in b.byname or a.contents(i) != b.contents(b.byname[name]):
            print('# section %s: bytes differ' % name)
            ok = False
    out.close()
    return ok



DWARFDUMP = os.environ.get('DWARFDUMP', 'llvm-dwarfdump')
ADDR = re.compile(r'0x[0-9a-f]{16}')


class Prog:
    """A linked program with the GNU ld map that says which input section
    of which object every address comes from."""

    def __init__(self, path, mapfile):
        self.path = path
        self.inputs = []     # (start, size, file, section)
        pend = None
        for line in open(mapfile):
            line = line.rstrip('\n')
            m = re.match(r'^ (\S+)$', line)
            if m and not line.startswith(' *'):
                pend = m.group(1)
                continue
            m = re.match(r'^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+) (\S.*)$', line)
            if m and (m.group(1) or pend) and not line.startswith(' *'):
                sec = m.group(1) or pend
                size = int(m.group(3), 16)
                if size and not sec.startswith('*'):
                    self.inputs.append((int(m.group(2), 16), size, m.group(4), sec))
            pend = None
        self.inputs.sort()
        self.objs = {}

    def obj(self, f):
        if f not in self.objs:
            try:
                self.objs[f] = Obj(f) if os.path.exists(f) else None
            except subprocess.CalledProcessError:
                self.objs[f] = None
        return self.objs[f]

    def names(self, a, end=False):
        """Names of address A: object:section:function+offset (see Obj.names);
        an END address may also be the end of the input section before it."""
        inside, ending = [], []
        for start, size, f, sec in self.inputs:
            if start <= a < start + size:
                inside.append((f, sec, a - start))
            elif a == start + size:
                ending.append((f, sec, size))
        # an address where one input section ends and the next begins is
        # either (a tail call's return address ends its function); in the
        # other link, alignment may have put a gap there
        cands = inside[:1] + ending[:1]
        if not cands:
            return {'?%#x' % a}
        out = set()
        for f, sec, off in cands:
            o = self.obj(f)
            base = os.path.basename(f.split('(')[0])
            if o is None or sec not in o.byname:
                out.add('%s:%s+%#x' % (base, sec, off))
                continue
            idx = o.byname[sec]
            nm = o.names(idx, off)
            nm = ['%s+END' % n for a_, b_, n in o.funcs.get(idx, []) if b_ == off and end] + nm
            out |= set('%s:%s' % (base, n) for n in nm)
        return out


def dwarf_rows(prog):
    """[(kind, text with addresses as @, [name sets])] from llvm-dwarfdump."""
    rows = []
    for section in ('--debug-line', '--debug-info', '--debug-aranges', '--eh-frame', '--debug-frame'):
        out = run(DWARFDUMP, section, prog.path)
        attr = None
        for line in out.splitlines():
            ends = []
            if section == '--debug-line':
                if not re.match(r'0x[0-9a-f]{16} ', line):
                    continue
                kind = 'line-table row'
                ends = [True] if 'end_sequence' in line else [False]
            elif section in ('--eh-frame', '--debug-frame'):
                m = re.search(r' FDE .*pc=([0-9a-f]+)\.\.\.([0-9a-f]+)', line)
                if not m:
                    continue
                line = 'FDE [0x%016x, 0x%016x)' % (int(m.group(1), 16), int(m.group(2), 16))
                kind = section[2:] + ' FDE'
                ends = [False, True]
            elif section == '--debug-aranges':
                if not line.startswith('['):
                    continue
                kind = 'aranges entry'
                ends = [False, True]
            else:
                m = re.match(r'\s+(DW_AT_\w+)', line)
                if m:
                    attr = m.group(1)
                    kind = attr
                    if attr == 'DW_AT_high_pc':
                        ends = [True]
                    elif not ADDR.search(line):
                        continue
                elif re.match(r'\s+\[0x', line) and attr:
                    kind = attr + ' list entry'
                    ends = [False, True]
                else:
                    if re.search(r'DW_TAG_\w+', line):
                        attr = None
                    continue
            addrs = [int(x, 16) for x in ADDR.findall(line)]
            if not addrs:
                continue
            ends = (ends + [False] * len(addrs))[:len(addrs)]
            rows.append((kind, ADDR.sub('@', line.strip()),
                         [prog.names(a, e) for a, e in zip(addrs, ends)]))
    return rows


def dwarf(orig, orig_map, pad, pad_map):
    """The padded program's DWARF (line rows, DW_AT_low_pc/high_pc,
    call_return_pc, range and location lists, aranges, .eh_frame and
    .debug_frame FDEs) names the same object:function+offset as the
    original's, each address read through the link map."""
    ra, rb = dwarf_rows(Prog(orig, orig_map)), dwarf_rows(Prog(pad, pad_map))
    if len(ra) != len(rb):
        print('# %d DWARF values, then %d' % (len(ra), len(rb)))
        return False
    total, bad = {}, {}
    shown = 0
    for (ka, ta, na), (kb, tb, nb) in zip(ra, rb):
        total[ka] = total.get(ka, 0) + 1
        if ka != kb or ta != tb or any(not (x & y) for x, y in zip(na, nb)) or \
                any(n.startswith('?') for x in na for n in x):
            bad[ka] = bad.get(ka, 0) + 1
            if shown < 5:
                print('# %s: %s %s vs %s' % (ka, ta, sorted(map(sorted, na)), sorted(map(sorted, nb))))
                shown += 1
    for k in sorted(total):
        print('# %-28s %5d values, %d differ' % (k, total[k], bad.get(k, 0)))
    return not bad and bool(total)



def mutate(src, dst, secname):
    """A copy of SRC whose first relocation in .rela<SECNAME> that points
    into a text section points 4 bytes further: what a repad that forgot to
    move it would leave."""
    import struct
    o = Obj(src)
    data = bytearray(o.data)
    idx = o.byname['.rela' + secname]
    off = o.secs[idx]['off']
    for k, (_, _, si, add) in enumerate(o.relas[secname]):
        ti, _ = o.target(si, add)
        if ti is not None and o.is_text(ti):
            pos = off + 24 * k + 16
            struct.pack_into('<q', data, pos, struct.unpack_from('<q', data, pos)[0] + 4)
            open(dst, 'wb').write(data)
            return 0
    print('# .rela%s: no relocation into text' % secname)
    return 1

if __name__ == '__main__':
    if sys.argv[1] == 'code':
        sys.exit(0 if code(sys.argv[2], sys.argv[3]) else 1)
    if sys.argv[1] == 'refs':
        sys.exit(0 if refs(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]) else 1)
    if sys.argv[1] == 'mutate':
        sys.exit(mutate(*sys.argv[2:5]))
    if sys.argv[1] == 'dwarf':
        sys.exit(0 if dwarf(*sys.argv[2:6]) else 1)
    sys.exit(2)
PYEOF
kcheck() { "$PY" "$work/kcheck.py" "$@"; }

show() { [ ! -s "$1" ] || sed 's/^/# /' "$1"; }
repad() { # IN OUT: `patchsite repad IN -o OUT` exits 0, its line kept in OUT.log
	ps_ok 0 "$2.log" -- repad -v "$1" -o "$2"
}

idempotent() { # OUT
	ps_ok 0 "$1.again.log" -- repad -v "$1" -o "$1.again" &&
		"$OBJDUMP" -dr "$1" | tail -n +3 >"$work/1" &&
		"$OBJDUMP" -dr "$1.again" | tail -n +3 >"$work/2" && cmp -s "$work/1" "$work/2" &&
		grep -q 'padded 0 functions, 0 bytes added' "$1.again.log"
}
in_place() { # IN OUT
	cp "$1" "$2.inplace" && ps_ok 0 /dev/null -- repad --in-place "$2.inplace" &&
		cmp "$2.inplace" "$2"
}

# The table kinds, as OBJECT:SECTION (the relocation section's target), with
# the name they are shown under.
kinds="alt:.altinstructions sections:.altinstructions jump:__jump_table sections:__jump_table
	extable:__ex_table bug:__bug_table sections:__bug_table sections:.initcall1.init
	sections:.initcall6.init sections:.discard.addressable switch:.rodata switch:.data
	switch:.export_symbol jump:.eh_frame extable:.eh_frame sections:.eh_frame alt:.debug_frame
	switch:.debug_frame alt:.debug_info alt:.debug_line alt:.debug_rnglists alt:.debug_loclists
	alt:.debug_aranges sections:.debug_line sections:.debug_info extable:.debug_line
	switch:.debug_line alt:__patchable_function_entries sections:__patchable_function_entries
	sections:.text switch:.text"

for o in $objs; do
	in=$fix/out/$o.o
	out=$work/$o.o
	check "misaligned-unpadded $o.o" has_misaligned "$in"
	rm -f "$out"
	check "repad $o.o" repad "$in" "$out"
	show "$out.log"
	check "elflint $o.o" elflint "$out"
	check "misaligned-padded $o.o: as many literals, none misaligned" none_misaligned "$in" "$out"
	check "code $o.o: only NOPs inserted, before literals, as many as aligning them takes" \
		kcheck code "$in" "$out"
	check "tables $o.o: every relocation names the same function+offset and instruction" \
		kcheck refs "$in" "$out" "$work/$o.refs"
	check "idempotent $o.o" idempotent "$out"
	check "in-place $o.o: the bytes of -o" in_place "$in" "$out"
done

# each kind by name, from the listing of `tables` above
kind_same() { # OBJ SECTION
	_l=$(grep -F "# .rela$2: " "$work/$1.refs" 2>/dev/null)
	echo "$_l"
	echo "$_l" | grep -q '^# [^ ]*: [1-9][0-9]* relocations, .* 0 differ$'
}
for k in $kinds; do
	o=${k%%:*} sec=${k#*:}
	check "$sec $o.o: entries name the same function+offset (and instruction)" kind_same "$o" "$sec"
done

# BTF (sections.o, -gbtf) holds types, no address: kept byte for byte.
btf_same() {
	aarch64-linux-gnu-objcopy --dump-section .BTF="$work/btf.1" "$fix/out/sections.o" "$work/btf.o1" &&
		aarch64-linux-gnu-objcopy --dump-section .BTF="$work/btf.2" "$work/sections.o" "$work/btf.o2" &&
		[ -s "$work/btf.1" ] && cmp -s "$work/btf.1" "$work/btf.2"
}
check ".BTF sections.o: present and kept byte for byte" btf_same

# The checker is not vacuous: a table relocation left 4 bytes off fails it.
for k in alt:.altinstructions jump:__jump_table extable:__ex_table bug:__bug_table \
	sections:.initcall6.init switch:.rodata switch:.data jump:.eh_frame; do
	o=${k%%:*} sec=${k#*:}
	check "mutant-$sec $o.o: a relocation 4 bytes off fails the tables check" sh -c \
		"'$PY' '$work/kcheck.py' mutate '$work/$o.o' '$work/mutant.o' '$sec' &&
		 ! '$PY' '$work/kcheck.py' refs '$fix/out/$o.o' '$work/mutant.o' '$work/mutant.refs' '$sec' >/dev/null"
done

# entry.o: hand-written assembly, no site.  Left as it is: the same bytes,
# and --in-place does not rewrite the file.
e_in=$fix/out/entry.o e_out=$work/entry.o
check "no-site entry.o: literals.py finds no literal" sh -c \
	"[ \"\$('$PY' '$here/literals.py' counts --allow-none '$e_in')\" = '0 0' ]"
rm -f "$e_out"
check "no-site entry.o: repad -o exits 0" repad "$e_in" "$e_out"
show "$e_out.log"
check "no-site entry.o: repad -o writes the input's bytes" cmp "$e_in" "$e_out"
check "no-site entry.o: elflint" elflint "$e_out"
check "no-site entry.o: code unchanged" kcheck code "$e_in" "$e_out"
check "no-site entry.o: tables unchanged" kcheck refs "$e_in" "$e_out" "$work/entry.refs"
before=missing
cp "$e_in" "$work/entry-inplace.o" && touch -d '2001-02-03 04:05:06' "$work/entry-inplace.o" &&
	before=$(stat -c '%Y %i' "$work/entry-inplace.o") || not_ok "no-site entry.o: an old copy to repad in place"
ps_check "no-site entry.o: repad --in-place exits 0" 0 "$work/entry-inplace.log" -- \
	repad -v --in-place "$work/entry-inplace.o"
rc=$ps_rc
after=$(stat -c '%Y %i' "$work/entry-inplace.o") || after=missing
check "no-site entry.o: repad --in-place leaves the file alone (bytes, mtime, inode)" sh -c \
	"[ $rc -eq 0 ] && cmp -s '$e_in' '$work/entry-inplace.o' && [ '$before' = '$after' ] ||
	 { echo '# mtime and inode: $before, then $after'; exit 1; }"

# Programs: the stand-ins linked with the original and the padded objects.
link() { # OUT MAP OBJ...
	_o=$1 _m=$2; shift 2
	"$CC_A64" -no-pie -Wl,-T,"$fix/tables.lds" -Wl,-Map,"$_m" -o "$_o" "$fix/out/harness.o" "$@" \
		2>"$_o.ld" || { cat "$_o.ld"; return 1; }
}
check "link unpadded" link "$work/prog.orig" "$work/orig.map" \
	$(for o in $objs entry; do echo "$fix/out/$o.o"; done)
check "link padded" link "$work/prog.pad" "$work/pad.map" \
	$(for o in $objs entry; do echo "$work/$o.o"; done)
check "link-unpadded has misaligned literals" has_misaligned "$work/prog.orig"
check "link-unpadded: audit exits 1, as many misaligned as literals.py" audit_agrees "$work/prog.orig"
check "link-padded: as many literals, none misaligned" none_misaligned "$work/prog.orig" "$work/prog.pad"
check "link-padded: audit exits 0, none misaligned as literals.py" audit_agrees "$work/prog.pad"
"$QEMU" -L "$SYSROOT" "$work/prog.orig" >"$work/out.orig" 2>&1
rc1=$?
"$QEMU" -L "$SYSROOT" "$work/prog.pad" >"$work/out.pad" 2>&1
rc2=$?
check "run-unpadded: the stand-ins print expected-run.txt" sh -c \
	"[ $rc1 -eq 0 ] && diff '$fix/expected-run.txt' '$work/out.orig'"
check "run-padded: the stand-ins print what they print unpadded" sh -c \
	"[ $rc2 -eq 0 ] && diff '$work/out.orig' '$work/out.pad'"
# The stand-ins are not vacuous either: the padded program with one table
# relocation 4 bytes off prints something else, or dies.
run_mutant() { # OBJ SECTION
	mkdir -p "$work/mut" && "$PY" "$work/kcheck.py" mutate "$work/$1.o" "$work/mut/$1.o" "$2" &&
		link "$work/prog.mut" "$work/mut.map" \
			$(for o in $objs entry; do [ "$o" = "$1" ] && echo "$work/mut/$o.o" || echo "$work/$o.o"; done) ||
		return 1
	"$QEMU" -L "$SYSROOT" "$work/prog.mut" >"$work/out.mut" 2>&1
	_rc=$?
	! cmp -s "$work/out.mut" "$work/out.orig" ||
		{ echo "# the mutant printed the same, exit $_rc"; return 1; }
	echo "# exit $_rc: $(diff "$work/out.orig" "$work/out.mut" | grep -m1 '^>')"
}
for k in jump:__jump_table extable:__ex_table bug:__bug_table alt:.altinstructions; do
	o=${k%%:*} sec=${k#*:}
	check "run-mutant-$sec $o.o: the stand-ins notice a relocation 4 bytes off" run_mutant "$o" "$sec"
done
check "dwarf: line rows, pc values, lists, aranges, FDEs name the same object:function+offset" \
	kcheck dwarf "$work/prog.orig" "$work/orig.map" "$work/prog.pad" "$work/pad.map"

# addr2line at every function entry of the fixture objects, and 8 bytes in
entry_lines() { # PROG -> "name file:line file:line" lines
	for o in $objs; do aarch64-linux-gnu-nm --defined-only "$fix/out/$o.o"; done |
		awk '$2 ~ /^[Tt]$/ && $3 !~ /^[$.]/ { print $3 }' | sort -u >"$work/funcs"
	aarch64-linux-gnu-nm --defined-only "$1" | awk 'NR == FNR { want[$1] = 1; next }
		$2 ~ /^[Tt]$/ && ($3 in want) && !seen[$3]++ { print $1, $3 }' "$work/funcs" - |
	while read -r addr name; do
		echo "$name" $(aarch64-linux-gnu-addr2line -e "$1" "0x$addr" \
			"$(printf '0x%x' $((0x$addr + 8)))" | sed 's/ (discriminator [0-9]*)//')
	done | sort
}
same_entry_lines() {
	entry_lines "$work/prog.orig" >"$work/a2l.orig"
	entry_lines "$work/prog.pad" >"$work/a2l.pad"
	grep -q ' [^ ?][^ ]*:[0-9][0-9]*$' "$work/a2l.orig" && diff "$work/a2l.orig" "$work/a2l.pad"
}
check "addr2line: same file:line at every function entry" same_entry_lines

# Archives, as a build that cannot hook every object hands them over: a
# regular one, linked through its symbol index (the linker pulls the
# members harness.o needs by it, so a stale index shows as a failed link
# or a different run), and a thin one (vmlinux.a, lib.a), whose members are
# files repadded in place.  Each member must come out as `repad -o` makes
# that object, and the one-line report must add up the objects' own.
AR=aarch64-linux-gnu-ar
functions_of() { # LOG...: the sum of "padded N functions"
	cat "$@" | sed -n 's/.*: padded \([0-9]*\) functions.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}
want=$(functions_of $(for o in $objs; do echo "$work/$o.o.log"; done))
members_are_repad_o() { # DIR: each member file there = repad -o of it (entry.o: itself)
	for o in $objs entry; do
		[ "$o" = entry ] && ref=$fix/out/entry.o || ref=$work/$o.o
		cmp "$ref" "$1/$o.o" || return 1
	done
}
run_same() { # PROG: prints what the unpadded program printed, under qemu
	"$QEMU" -L "$SYSROOT" "$1" >"$1.out" 2>&1 && diff "$work/out.orig" "$1.out"
}
link_ar() { # OUT ARCHIVE: harness.o and the archive, nothing else
	"$CC_A64" -no-pie -Wl,-T,"$fix/tables.lds" -o "$1" "$fix/out/harness.o" "$2" 2>"$1.ld" ||
		{ cat "$1.ld"; return 1; }
}
link_run() { link_ar "$1" "$2" && run_same "$1"; }
extract_members() { (cd "$1" && $AR x "$2") && members_are_repad_o "$1"; }
mkdir -p "$work/ar/x" "$work/thin"
$AR rcs "$work/ar/k.a" $(for o in $objs entry; do echo "$fix/out/$o.o"; done) ||
	not_ok "ar rcs k.a"
ps_check "archive: repad k.a -o k.pad.a exits 0" 0 "$work/ar/k.log" -- \
	repad -v "$work/ar/k.a" -o "$work/ar/k.pad.a"
show "$work/ar/k.log"
check "archive: the same members in the same order" sh -c \
	"[ \"\$($AR t '$work/ar/k.a')\" = \"\$($AR t '$work/ar/k.pad.a')\" ]"
check "archive: every member is what repad -o makes of that object" \
	extract_members "$work/ar/x" "$work/ar/k.pad.a"
check "archive: the report adds up the objects' ($want functions)" \
	[ "$(functions_of "$work/ar/k.log")" = "$want" ]
check "archive: linked through its index, the program runs as unpadded" \
	link_run "$work/prog.ar" "$work/ar/k.pad.a"
check "archive: linked, as many literals as unpadded, none misaligned" \
	none_misaligned "$work/prog.orig" "$work/prog.ar"

for o in $objs entry; do cp "$fix/out/$o.o" "$work/thin/$o.o"; done
(cd "$work/thin" && $AR rcsT t.a $(for o in $objs entry; do echo "$o.o"; done)) || not_ok "ar rcsT t.a"
cp "$work/thin/t.a" "$work/thin/t.a.orig"
ps_run -e "$work/thin/refuse.err" 2 "$work/thin/refuse.out" -- repad "$work/thin/t.a" -o "$work/thin/t2.a"
rc=$ps_rc
check "thin archive: -o is refused (exit 2, one line, nothing written)" sh -c \
	"[ $rc -eq 2 ] && [ \$(wc -l <'$work/thin/refuse.err') -eq 1 ] && [ ! -s '$work/thin/refuse.out' ] && [ ! -e '$work/thin/t2.a' ]"
ps_check "thin archive: repad --in-place exits 0" 0 "$work/thin/t.log" -- \
	repad -v --in-place "$work/thin/t.a"
show "$work/thin/t.log"
check "thin archive: every member file is what repad -o makes of it" members_are_repad_o "$work/thin"
check "thin archive: the archive itself is unchanged" cmp "$work/thin/t.a.orig" "$work/thin/t.a"
check "thin archive: the report adds up the objects' ($want functions)" \
	[ "$(functions_of "$work/thin/t.log")" = "$want" ]
check "thin archive: linked, the program runs as unpadded" \
	link_run "$work/prog.thin" "$work/thin/t.a"
check "thin archive: linked, as many literals as unpadded, none misaligned" \
	none_misaligned "$work/prog.orig" "$work/prog.thin"

# An archive in which nothing changes is not written.
$AR rcs "$work/ar/e.a" "$fix/out/entry.o" && touch -d '2001-02-03 04:05:06' "$work/ar/e.a" &&
	cp -p "$work/ar/e.a" "$work/ar/e.a.orig" || not_ok "ar rcs e.a"
before=$(stat -c '%Y %i' "$work/ar/e.a")
ps_check "archive with no site: repad --in-place exits 0" 0 /dev/null -- repad --in-place "$work/ar/e.a"
check "archive with no site: not rewritten (bytes, mtime, inode)" sh -c \
	"[ $ps_rc -eq 0 ] && cmp -s '$work/ar/e.a.orig' '$work/ar/e.a' && [ \"\$(stat -c '%Y %i' '$work/ar/e.a')\" = '$before' ]"

finish
