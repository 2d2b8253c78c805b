#!/usr/bin/env python3
"""How far is the DWARF of a repadded program off?  (issue 4, repad's limit)

    dwarfcheck.py PROG.orig PROG.pad [--show N] [--only KIND,KIND...]

PROG.orig is linked from the original objects, PROG.pad from the repadded
ones.  Both are dumped with llvm-dwarfdump (line table rows, .debug_info with
its resolved ranges and location lists, .debug_aranges, the .eh_frame FDEs), every address is
written as symbol+offset from the program's own symbol table, and the dumps
are compared line by line.  Wherever the padded program's DWARF is right,
the two agree: the code behind the symbol is the same, only moved.

Prints, per kind of value (a line-table row, DW_AT_high_pc, a location list
entry, ...), how many differ and how many there are, and a few examples.
Exits 0 when all agree, 1 when some differ.  With --only, only the named
kinds count (e.g. 'line-table row,DW_AT_call_return_pc'); a named kind that
does not occur at all is an error too (the check would prove nothing).

Where one object's text ends and the next one's begins, the two links leave
different gaps (the padded sections are 8-aligned), and an address there can
name the end of the one or the start of the other: a few DW_AT_low_pc,
DW_AT_high_pc, aranges and FDE differences at such places are not errors.
Needs llvm-dwarfdump (package llvm-14, which clang pulls in) and
aarch64-linux-gnu-nm (or $NM: riscv64-linux-gnu-nm for riscv64 programs).
"""
import bisect
import os
import collections
import re
import shutil
import subprocess
import sys

DWARFDUMP = shutil.which('llvm-dwarfdump') or '/usr/lib/llvm-14/bin/llvm-dwarfdump'
ADDR = r'0x[0-9a-f]{6,16}'
# Attributes whose value llvm-dwarfdump prints as an address of the program.
# Other attributes (DW_AT_type, DW_AT_sibling, DW_AT_location's list offset,
# ...) hold offsets into debug sections, which repad does not change: they
# are compared as they are.
ADDRESS_ATTRS = {'DW_AT_low_pc', 'DW_AT_high_pc', 'DW_AT_entry_pc', 'DW_AT_call_return_pc',
                 'DW_AT_call_pc'}
NM = os.environ.get('NM', 'aarch64-linux-gnu-nm')


def symbols(prog):
    """[(address, size, name)], sorted; symbols without a size get 0."""
    out = subprocess.run([NM, '-n', '-S', '--defined-only', prog], capture_output=True,
                         text=True, check=True).stdout
    tab = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3:
            f = [f[0], '0'] + f[1:]
        if len(f) != 4 or f[2] in 'aAU' or f[3].startswith(('$', '.L')):
            continue
        tab.append((int(f[0], 16), int(f[1], 16), f[3]))
    tab.sort()
    return tab


def dump(prog):
    """[(kind, text)] from llvm-dwarfdump, addresses as symbol+offset."""
    tab = symbols(prog)
    addrs = [a for a, _, _ in tab]
    lo = addrs[0] if addrs else 0

    def name(m, end=False, start=False):
        """Inside a symbol or at its end: sym+off.  In a gap between
        symbols (alignment, padding, a CALL_OPS literal): next-off, so that
        the start of an object's text names the function that follows.
        An end (end_sequence, high_pc, the end of a range) that is both the
        end of one symbol and the start of the next names the one it ends:
        where one object's text ends, the links differ in what follows.
        A start (low_pc, the start of a range) at the end of one symbol
        names the next symbol: where one object's text begins, the padded
        link may leave an alignment gap."""
        a = int(m.group(0), 16)
        if a < lo:
            return m.group(0)
        i = bisect.bisect_right(addrs, a) - 1
        if end:
            j = bisect.bisect_left(addrs, a) - 1
            if j >= 0 and tab[j][0] + tab[j][1] == a and tab[j][1]:
                i = j
        v, size, sym = tab[i]
        if start and a == v + size and size and i + 1 < len(tab):
            return '<%s-0x%x>' % (tab[i + 1][2], tab[i + 1][0] - a)
        if a <= v + size or i + 1 == len(tab):
            return '<%s+0x%x>' % (sym, a - v)
        return '<%s-0x%x>' % (tab[i + 1][2], tab[i + 1][0] - a)

    rows = []
    for section in ('--debug-line', '--debug-info', '--debug-aranges', '--eh-frame'):
        out = subprocess.run([DWARFDUMP, section, prog], capture_output=True, text=True,
                             check=True).stdout
        attr = None
        for line in out.splitlines():
            if section == '--debug-line':
                # only the rows: address line column file ...
                if not re.match(r'0x[0-9a-f]{16} ', line):
                    continue
                kind = 'line-table row'
            elif section == '--eh-frame':
                m = re.search(r' FDE .*pc=([0-9a-f]+)\.\.\.([0-9a-f]+)', line)
                if not m:
                    continue
                line = 'FDE [0x%s, 0x%s)' % m.groups()
                kind = 'eh_frame FDE'
            elif section == '--debug-aranges':
                if not line.startswith('['):
                    continue
                kind = 'aranges entry'
            else:
                m = re.match(r'\s+(DW_AT_\w+)', line)
                if m:
                    attr = m.group(1)
                    kind = attr
                    if attr in ADDRESS_ATTRS:
                        pass
                    elif 'DW_OP_addr ' in line:
                        # only the operand is an address; the rest are
                        # offsets into other sections, which stay as they are
                        line = re.sub(r'(DW_OP_addr )(0x[0-9a-f]+)',
                                      lambda m: m.group(1) + re.sub(ADDR, name, m.group(2)), line)
                        rows.append((kind, line.strip()))
                        continue
                    else:
                        rows.append((kind, line.strip()))
                        continue
                elif re.match(r'\s+\[0x', line) and attr:
                    kind = attr + ' list entry'
                elif re.search(r'DW_TAG_\w+', line):
                    attr = None
                    continue
                else:
                    continue
            line = line.strip()
            if kind == 'line-table row' and 'end_sequence' in line or kind == 'DW_AT_high_pc':
                line = re.sub(ADDR, lambda m: name(m, True), line)
            elif kind == 'DW_AT_low_pc':
                line = re.sub(ADDR, lambda m: name(m, start=True), line)
            else:
                # [start, end): the second address is an end
                line = re.sub(r'(\[)(%s)(, )(%s)(\))' % (ADDR, ADDR),
                              lambda m: '[%s, %s)' % (name(re.match(ADDR, m.group(2)), start=True),
                                                      name(re.match(ADDR, m.group(4)), True)),
                              line)
                line = re.sub(ADDR, name, line)
            rows.append((kind, line))
    return rows


def main():
    args = sys.argv[1:]
    show = 3
    if '--show' in args:
        k = args.index('--show')
        show = int(args[k + 1])
        del args[k:k + 2]
    only = None
    if '--only' in args:
        k = args.index('--only')
        only = set(args[k + 1].split(','))
        del args[k:k + 2]
    orig, pad = dump(args[0]), dump(args[1])
    if only is not None:
        orig = [r for r in orig if r[0] in only]
        pad = [r for r in pad if r[0] in only]
    if len(orig) != len(pad):
        print('the dumps differ in length: %d vs %d lines' % (len(orig), len(pad)))
    total = collections.Counter(k for k, _ in orig)
    bad = collections.Counter()
    examples = collections.defaultdict(list)
    for (k, a), (k2, b) in zip(orig, pad):
        if a != b:
            bad[k] += 1
            if len(examples[k]) < show:
                examples[k].append((a, b))
    for k in sorted(total, key=lambda k: (-bad[k], k)):
        if not bad[k]:
            continue
        print('%-34s %7d of %7d differ' % (k, bad[k], total[k]))
        for a, b in examples[k]:
            print('    orig: %s\n    pad:  %s' % (a, b))
    same = [k for k in total if not bad[k]]
    print('%d other kinds of value agree (%d values)' % (len(same), sum(total[k] for k in same)))
    missing = sorted(only - set(total)) if only is not None else []
    if missing:
        print('no values of kind %s' % ', '.join(missing))
    return 1 if bad or missing or len(orig) != len(pad) else 0


sys.exit(main())
