#!/bin/sh
# End-to-end test of `patchsite embed` on x86_64: the programs of
# fixtures/embed-x86 (gcc and clang; -pg -mfentry, -mnop-mcount,
# -fpatchable-function-entry=5; with and without -fcf-protection; static,
# dynamic, PIE and static PIE), checked with tools that are not patchsite:
# the linker's own records of the sites, objdump, readelf, eu-elflint, and
# running the programs natively.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/embed-x86.sh
#
# Cases, for each program P of the fixtures:
#   P: embed       embed exits 0, writes the output, says nothing
#   P: sites       the sites the link recorded, independently of the code:
#                  the relocations of the calls to __fentry__ (linked -q),
#                  __mcount_loc (-mrecord-mcount) or
#                  __patchable_function_entries; each is at a function's
#                  entry or after its ENDBR64, and the functions are exactly
#                  the fixture's nine
#   P: nops        objdump -d of the output shows the 5-byte NOP
#                  0f 1f 44 00 00 at every one of those sites (then 0x90
#                  after a 6-byte call), and the functions whose entry
#                  (after ENDBR64) is that NOP are exactly those functions;
#                  of the input's bytes only the sites, the ELF header and
#                  the program headers changed; every added non-zero byte is
#                  in a section or the section header table
#   P: table       the segment, read from the file (python): magic, self,
#                  count, the table (function, literal 0, call slot) is
#                  exactly those sites, each with its function's symbol
#                  address, sorted; default_ops 0; the room
#                  (header.tramp, tramp_size 128 KiB) page aligned, zero in
#                  the file, inside the segment, every site within rel32
#                  reach of all of it
#   P: segment     readelf -lW: one PT_LOAD more, one PT_NOTE less, the new
#                  one R E, align 0x1000, offset == vaddr mod 4 KiB, above
#                  every other, covering the header and the room; readelf -SW:
#                  .patchsite.sites at the header, .patchsite.tramp (AX) the
#                  room
#   P: elflint     eu-elflint --gnu-ld finds nothing in the output it did not
#                  find in the input, and exits no worse
#   P: run         the output run natively prints what the input prints
# And:
#   deterministic  two embeds are byte-identical; in place (-o IMAGE) too
#   refusals       an embedded image (also with its sections renamed), a
#                  program without sites, one with 3 GiB of bss between its
#                  text and the new segment (out of rel32 reach): exit 2, one
#                  line `patchsite: FILE: ...`, no output
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/embed-x86
PATCHSITE=${PATCHSITE:-$root/patchsite}
PY=/usr/bin/python3

. "$here/lib.sh"

for t in gcc clang objdump readelf eu-elflint "$PY"; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"
ps_need_patchsite
fx=$work/fx

make -s -C "$fix" O="$fx" >"$work/make.log" 2>&1 || { cat "$work/make.log"; not_ok "build fixtures"; finish; }
progs=$(make -s --no-print-directory -C "$fix" O="$fx" print-PROGS)

# sites ORIG FLAVOUR: the sites the link recorded, one `SITE LEN FUNC-ADDR NAME` a line (python)
sites() {
	$PY - "$1" "$2" <<'PYEOF'
import struct, sys
path, flavour = sys.argv[1], sys.argv[2]
b = open(path, 'rb').read()
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
secs = []
for i in range(shnum):
    secs.append(list(struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize)))
def cstr(off):
    return b[off:b.index(b'\0', off)].decode()
for s in secs:
    s.append(cstr(secs[shstrndx][4] + s[0]))
def by_name(n):
    return [s for s in secs if s[10] == n]
def off(a):
    for s in secs:
        if s[2] & 2 and s[1] != 8 and s[3] <= a < s[3] + s[5]:
            return s[4] + a - s[3]
    raise SystemExit('address %x not in the file' % a)
symtab = by_name('.symtab')[0]
strtab = secs[symtab[6]]
syms = []
for i in range(symtab[5] // 24):
    name, info, other, shndx, value, size = struct.unpack_from('<IBBHQQ', b, symtab[4] + 24 * i)
    syms.append((cstr(strtab[4] + name), info, value, size))
relative = {}
for s in by_name('.rela.dyn'):
    for k in range(s[5] // 24):
        o, info, add = struct.unpack_from('<QQq', b, s[4] + 24 * k)
        if info & 0xffffffff == 8:	# R_X86_64_RELATIVE
            relative[o] = add
def table(name):
    out = []
    for s in by_name(name):
        for k in range(s[5] // 8):
            v, = struct.unpack_from('<Q', b, s[4] + 8 * k)
            out.append(v or relative.get(s[3] + 8 * k, 0))
    if not out or 0 in out:
        raise SystemExit('%s: missing, or an entry the link left empty' % name)
    return out
found = []	# (site, bytes)
if flavour == 'fentry':
    # the relocations ld -q kept for the calls to __fentry__: call rel32
    # (e8, disp at +1), call *GOT(%rip) (ff 15, +2), addr32 call (67 e8, +2)
    for s in secs:
        if s[1] != 4 or not secs[s[7]][2] & 4:
            continue
        sym = secs[s[6]]
        for k in range(s[5] // 24):
            o, info, add = struct.unpack_from('<QQq', b, s[4] + 24 * k)
            name = cstr(secs[sym[6]][4] + struct.unpack_from('<I', b, sym[4] + 24 * (info >> 32))[0])
            if name.split('@')[0] != '__fentry__':
                continue
            if b[off(o) - 2:off(o)] in (b'\xff\x15', b'\x67\xe8'):
                found.append((o - 2, 6))
            elif b[off(o) - 1] == 0xe8:
                found.append((o - 1, 5))
            else:
                raise SystemExit('a relocation for __fentry__ at %x is not in a call' % o)
elif flavour == 'nop':
    found = [(a, 5) for a in table('__mcount_loc')]
else:
    found = [(a, 5) for a in table('__patchable_function_entries')]
funcs = {}
for site, n in found:
    f = [(name, value) for name, info, value, size in syms if info & 0xf == 2 and
         (value == site or (value == site - 4 and b[off(value):off(value) + 4] == b'\xf3\x0f\x1e\xfa'))]
    if len(f) != 1:
        raise SystemExit('site %x is not at the entry of one function: %r' % (site, f))
    funcs[f[0][0]] = (site, n, f[0][1])
want = {'main', 'add', 'mul', 'sum8', 'make_big', 'fma3', 'call_add', 'fib', 'vsum'}
if set(funcs) != want or len(found) != len(want):
    raise SystemExit('the link recorded sites in %r, want one in each of %r' % (sorted(funcs), sorted(want)))
for name, (site, n, value) in sorted(funcs.items()):
    print('%x %d %x %s' % (site, n, value, name))
PYEOF
}

# nops ORIG EMB SITES: objdump -d of EMB against the sites; nothing else changed (python)
nops() {
	objdump -d -w "$2" >"$work/dump" && $PY - "$1" "$2" "$3" "$work/dump" <<'PYEOF'
import re, struct, sys
orig, emb = (open(p, 'rb').read() for p in sys.argv[1:3])
sites = {}
for line in open(sys.argv[3]):
    a, n, func, name = line.split()
    sites[int(a, 16)] = (int(n), name)
insn, first = {}, {}
cur = None
for line in open(sys.argv[4]):
    m = re.match(r'^([0-9a-f]+) <(.*)>:$', line)
    if m:
        cur = int(m.group(1), 16)
        first[cur] = m.group(2)
        continue
    m = re.match(r'^\s*([0-9a-f]+):\t([0-9a-f ]+)\t', line)
    if m:
        insn[int(m.group(1), 16)] = m.group(2).strip()
NOP5, ENDBR = '0f 1f 44 00 00', 'f3 0f 1e fa'
bad = []
for a, (n, name) in sorted(sites.items()):
    if insn.get(a) != NOP5:
        bad.append('%s: %x holds %r, not the 5-byte NOP' % (name, a, insn.get(a)))
    if n == 6 and insn.get(a + 5) != '90':
        bad.append('%s: %x holds %r, not 0x90 after the NOP' % (name, a + 5, insn.get(a + 5)))
# every function whose entry, after ENDBR64, is the 5-byte NOP
seen = set()
for a, name in first.items():
    e = a + 4 if insn.get(a) == ENDBR else a
    if insn.get(e) == NOP5:
        seen.add(name)
want = {name for n, name in sites.values()}
if seen != want:
    bad.append('objdump shows the NOP at the entry of %r, the link recorded %r' % (sorted(seen), sorted(want)))
# nothing else changed
phoff, = struct.unpack_from('<Q', emb, 0x20)
phentsize, phnum = struct.unpack_from('<HH', emb, 0x36)
shoff, = struct.unpack_from('<Q', emb, 0x28)
shentsize, shnum = struct.unpack_from('<HH', emb, 0x3a)
secs = [struct.unpack_from('<IIQQQQ', emb, shoff + i * shentsize) for i in range(shnum)]
def off(a):
    for name, typ, flags, addr, o, size in secs:
        if flags & 2 and typ != 8 and addr <= a < addr + size:
            return o + a - addr
    raise SystemExit('address %x not in the file' % a)
allowed = [(0, 64), (phoff, phoff + phnum * phentsize)] + [(off(a), off(a) + n) for a, (n, name) in sites.items()]
for i in range(len(orig)):
    if orig[i] != emb[i] and not any(x <= i < y for x, y in allowed):
        bad.append('byte at file offset 0x%x changed outside the sites and headers' % i)
        break
cover = [(o, o + size) for name, typ, flags, addr, o, size in secs if typ != 8] + [(shoff, shoff + shnum * shentsize)]
for i in range(len(orig), len(emb)):
    if emb[i] and not any(x <= i < y for x, y in cover):
        bad.append('added byte at 0x%x is in no section' % i)
        break
if bad:
    print('\n'.join(bad)); sys.exit(1)
PYEOF
}

# table EMB SITES: the segment as the runtime reads it (python)
table() {
	$PY - "$1" "$2" <<'PYEOF'
import struct, sys
emb = open(sys.argv[1], 'rb').read()
sites = {}
for line in open(sys.argv[2]):
    a, n, func, name = line.split()
    sites[int(a, 16)] = int(func, 16)
phoff, = struct.unpack_from('<Q', emb, 0x20)
phentsize, phnum = struct.unpack_from('<HH', emb, 0x36)
seg = [struct.unpack_from('<IIQQQQQQ', emb, phoff + i * phentsize) for i in range(phnum)]
seg = [p for p in seg if p[0] == 1 and emb[p[2]:p[2] + 8] == b'CALLSOP1']
if len(seg) != 1:
    raise SystemExit('%d PT_LOADs start with the segment magic' % len(seg))
typ, flags, o, va, pa, fsz, msz, align = seg[0]
magic, self_, count, first, tramp, dops, tsize, res = struct.unpack_from('<8Q', emb, o)
bad = []
if self_ != va: bad.append('self %x, the PT_LOAD is at %x' % (self_, va))
if first != va + 64: bad.append('sites at %x, want %x' % (first, va + 64))
if dops != 0 or res != 0: bad.append('default_ops %x reserved %x, want 0' % (dops, res))
if tsize != 128 * 1024: bad.append('tramp_size %#x, want 128 KiB' % tsize)
if tramp % 4096: bad.append('the room at %x is not page aligned' % tramp)
if tramp < first + 32 * count or tramp + tsize > va + fsz or fsz != msz:
    bad.append('the room [%x, %x) is not inside the segment after the table' % (tramp, tramp + tsize))
elif any(emb[o + tramp - va:o + tramp - va + tsize]):
    bad.append('the room is not zero-filled')
tab = [struct.unpack_from('<4Q', emb, o + 64 + 32 * i) for i in range(count)]
want = sorted(sites)
if [t[2] for t in tab] != want:
    bad.append('the table has call slots %s, the link recorded %s' % ([hex(t[2]) for t in tab], [hex(a) for a in want]))
for func, lit, call, r in tab:
    if lit or r: bad.append('%x: literal %x reserved %x, want 0' % (func, lit, r))
    if sites.get(call) != func: bad.append('%x: call slot %x is in the function at %x' % (func, call, sites.get(call, 0)))
    if not (-2**31 <= tramp - (call + 5) and tramp + tsize - (call + 5) < 2**31):
        bad.append('%x: the room is out of rel32 reach' % call)
if [t[0] for t in tab] != sorted(t[0] for t in tab):
    bad.append('the table is not sorted by function')
if bad:
    print('\n'.join(bad)); sys.exit(1)
PYEOF
}

# segment ORIG EMB: readelf's view of the new PT_LOAD and its sections
segment() {
	readelf -lW "$1" >"$work/seg.in" && readelf -lW "$2" >"$work/seg.out" &&
	readelf -SW "$2" >"$work/sec.out" &&
	$PY - "$work/seg.in" "$work/seg.out" "$work/sec.out" "$2" <<'PYEOF'
import re, struct, sys
def phdrs(path):
    out = []
    for line in open(path):
        f = line.split()
        if f and re.match(r'^[A-Z_]+$', f[0]) and len(f) >= 8 and f[1].startswith('0x'):
            out.append((f[0], int(f[1], 16), int(f[2], 16), int(f[4], 16), int(f[5], 16), ' '.join(f[6:-1]), int(f[-1], 16)))
    return out
a, b = phdrs(sys.argv[1]), phdrs(sys.argv[2])
emb = open(sys.argv[4], 'rb').read()
bad = []
la = [p for p in a if p[0] == 'LOAD']
lb = [p for p in b if p[0] == 'LOAD']
na = sum(p[0] == 'NOTE' for p in a)
nb = sum(p[0] == 'NOTE' for p in b)
if len(lb) != len(la) + 1 or len(b) != len(a) or nb != na - 1:
    bad.append('want one PT_LOAD more, one PT_NOTE less: LOAD %d/%d, NOTE %d/%d, headers %d/%d' % (len(la), len(lb), na, nb, len(a), len(b)))
new = [p for p in lb if p not in la]
if len(new) != 1:
    bad.append('cannot tell the new PT_LOAD: %r' % new)
else:
    t, off, va, fsz, msz, flags, align = new[0]
    tramp, tsize = struct.unpack_from('<QQ', emb, off + 32)[0], struct.unpack_from('<Q', emb, off + 48)[0]
    if emb[off:off + 8] != b'CALLSOP1': bad.append('the new PT_LOAD does not start with the header')
    if flags != 'R E': bad.append('flags %r, want R E' % flags)
    if align != 0x1000: bad.append('align %#x, want 0x1000' % align)
    if off % align != va % align: bad.append('offset %#x and vaddr %#x not congruent' % (off, va))
    if lb[-1] != new[0]: bad.append('the new PT_LOAD is not the last one')
    if any(p[2] + p[4] > va for p in la): bad.append('the new PT_LOAD overlaps an old one')
    if not (va < tramp and tramp + tsize <= va + msz): bad.append('the room [%x, %x) is not in the PT_LOAD' % (tramp, tramp + tsize))
    secs = {}
    for line in open(sys.argv[3]):
        m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+(\S*)\s', line)
        if m:
            secs[m.group(1)] = (int(m.group(3), 16), int(m.group(4), 16), int(m.group(5), 16), m.group(6))
    s, t2 = secs.get('.patchsite.sites'), secs.get('.patchsite.tramp')
    if not s or not t2:
        bad.append('no .patchsite.sites/.patchsite.tramp section')
    else:
        if s[0] != va or s[1] != off or s[0] + s[2] != tramp or t2[0] != tramp or t2[2] != tsize or t2[0] + t2[2] != va + fsz:
            bad.append('the two sections are not the header and table, then the room: %r %r' % (s, t2))
        if s[3] != 'A' or t2[3] != 'AX':
            bad.append('section flags %r %r, want A and AX' % (s[3], t2[3]))
if bad:
    print('\n'.join(bad)); sys.exit(1)
PYEOF
}

# lint IN OUT: eu-elflint finds nothing new in OUT, and exits no worse
lint() {
	eu-elflint --gnu-ld "$1" >"$work/lint.raw" 2>&1
	lin=$?
	sed "s|$1|FILE|g" "$work/lint.raw" >"$work/lint.in"
	eu-elflint --gnu-ld "$2" >"$work/lint.raw" 2>&1
	lout=$?
	sed "s|$2|FILE|g" "$work/lint.raw" >"$work/lint.out"
	[ "$lout" -le "$lin" ] || { echo "eu-elflint exits $lout, on the input $lin"; cat "$work/lint.out"; return 1; }
	if grep -vxFf "$work/lint.in" "$work/lint.out"; then
		echo "(new findings above)"
		return 1
	fi
}

for p in $progs; do
	in=$fx/$p out=$work/$p.emb
	case $p in
	*-fentry-*) fl=fentry ;;
	*-nop-*) fl=nop ;;
	*) fl=pfe ;;
	esac
	if ! ps_run -e "$work/$p.embed.err" 0 "$work/$p.embed.out" -- embed "$in" -o "$out"; then
		# every check of the output below fails on its absence
		rm -f "$out"
		not_ok "$p: embed" "$ps_msg"
	else
		check "$p: embed" sh -c "[ -e '$out' ] && [ ! -s '$work/$p.embed.out' ] && [ ! -s '$work/$p.embed.err' ]"
	fi
	if sites "$in" "$fl" >"$work/$p.sites" 2>&1; then
		ok "$p: sites"
	else
		not_ok "$p: sites" "$work/$p.sites"
	fi
	check "$p: nops" nops "$in" "$out" "$work/$p.sites"
	check "$p: table" table "$out" "$work/$p.sites"
	check "$p: segment" segment "$in" "$out"
	check "$p: elflint" lint "$in" "$out"
	"$in" >"$work/$p.run.in" 2>&1
	rin=$?
	"$out" >"$work/$p.run.out" 2>&1
	rout=$?
	check "$p: run (same output)" sh -c "[ $rin -eq 0 ] && [ $rout -eq 0 ] && [ -s '$work/$p.run.in' ] &&
		cmp '$work/$p.run.in' '$work/$p.run.out'"
done

p=gcc-pfe-cet-pie
cp "$fx/$p" "$work/inplace"
if ps_run 0 /dev/null -- embed "$fx/$p" -o "$work/again.emb" &&
	ps_run 0 /dev/null -- embed "$work/inplace" -o "$work/inplace"; then
	check "deterministic (and in place)" sh -c "cmp '$work/$p.emb' '$work/again.emb' &&
		cmp '$work/$p.emb' '$work/inplace'"
else
	not_ok "deterministic (and in place)" "$ps_msg"
fi

refused() {	# refused NAME IN PATTERN
	rm -f "$work/bad.out"
	if ps_run -e "$work/bad.stderr" 2 "$work/bad.stdout" -- embed "$2" -o "$work/bad.out"; then
		check "$1: refused with one line" sh -c "[ ! -e '$work/bad.out' ] &&
			[ \$(wc -l <'$work/bad.stderr') -eq 1 ] && grep -q '^patchsite: $2: $3' '$work/bad.stderr'"
	else
		not_ok "$1: refused with one line" "$ps_msg"
	fi
}
refused "again: embedded image" "$work/gcc-fentry-cet-static.emb" "already embedded"
$PY -c 'import sys; b = open(sys.argv[1], "rb").read().replace(b".patchsite.", b".renamed..."); open(sys.argv[2], "wb").write(b)' \
	"$work/clang-pfe-nocet-dyn.emb" "$work/nosec.emb"
refused "again: embedded image, sections renamed" "$work/nosec.emb" "already embedded (a PT_LOAD"
refused "no sites" "$fx/plain" "no patch sites at function entries: build with"
refused "far (out of rel32 reach)" "$fx/far" "main at 0x[0-9a-f]* is out of rel32 reach (2 GiB) of the trampoline room"

finish
