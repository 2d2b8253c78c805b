#!/bin/sh
# End-to-end test of the near misses that must never count as patch sites
# (SPEC "Where the truth comes from"), on the linked programs of
# fixtures/nearmiss built with the real arm64 and riscv64 cross compilers,
# without DWARF, so that the code alone tells the layout:
#
#   make -C fixtures/nearmiss && PATCHSITE=/path/to/patchsite sh tests/e2e/nearmiss.sh
#
# (the script runs the make itself too; it does nothing when the fixtures
# are built).
#
# Oracle (not patchsite): the linker's own __patchable_function_entries of
# each image, read with Python's struct, restricted to the entries of the
# functions named traced_* (the owner of an entry is the sized function
# that holds it, else the first one after it), checked against objdump's
# disassembly.  The near misses are named nm_*; a64-mixed's =2 half other_*.
#
# Per image of the layouts the code decides (a64-callops, a64-callops-bti,
# a64-pfe2-align64, rv-pfe4, rv-callops):
#   run        the program exits 0 under qemu-user and prints "ok"
#   elf        ET_EXEC, a .symtab, no .debug_info (the code alone decides)
#   features   objdump shows what the image claims: every traced_* has the
#              image's patch area (and the compiler listed it at func-PRE,
#              after BTI C where M=0); the near misses are real: nm_asm_alt*
#              begin with [BTI C] and two NOPs (riscv64: two 4-byte nops),
#              nm_notrace_key* with a single static-key NOP, nm_attr* with
#              another number of NOPs and are listed by the compiler in
#              __patchable_function_entries; BTI C, PACIASP and functions
#              without BTI C where claimed; a64-pfe2-align64: alignment
#              padding puts 8 bytes of NOPs or more before several traced_*
#   record     `record IMAGE`: exit 0, stdout is exactly the oracle, sorted
#              and unique; stderr is one line that says the layout comes
#              from the code
#   symbolize  `record --symbolize`: only traced_* functions, no nm_*, the
#              flavour (call-ops or patchable) and offset of each site
#              (-0x8; +0x0, or +0x4 after BTI C)
#   audit      `audit IMAGE`: exit 1, the only findings are `stale` entries,
#              exactly the compiler's entries of the nm_attr* functions
#   audit-cleared    the table zeroed (Python): exit 1, every traced site
#              `missing`, nothing else
#   inplace-cleared  `record --in-place` on the zeroed table: exit 0, the
#              table read back holds exactly the oracle, sorted, the other
#              slots zero
#   audit-refilled   audit of that image: exit 0
# a64-small (three traced functions, too few for a vote): record, audit
# and record --in-place either refuse (exit 2, one line naming the
# ambiguity and --patchable, nothing on stdout, the image byte-identical)
# or give exactly the oracle; never another set; record --patchable=4,2
# gives the oracle.
# a64-mixed (=4,2 and =2 objects, equal numbers): record, record
# --in-place and audit exit 2 with one line containing "ambiguous" and
# "--patchable", nothing on stdout, the image byte-identical, no file left
# behind; record --patchable=4,2 exits 0 with the traced_* oracle plus
# func-8 of exactly the other_* functions that alignment padding gave 8
# bytes of NOPs before (they have the stated layout's bytes).
#
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`; exits
# nonzero when a case fails.  A missing tool is a failure, never a skip.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fixdir=$root/fixtures/nearmiss
fix=$fixdir/out
PATCHSITE=${PATCHSITE:-$root/build-san/patchsite}
OBJDUMP_A64=${OBJDUMP_A64:-aarch64-linux-gnu-objdump}
OBJDUMP_RV=${OBJDUMP_RV:-riscv64-linux-gnu-objdump}
QEMU_A64=${QEMU_A64:-qemu-aarch64}
QEMU_RV=${QEMU_RV:-qemu-riscv64}
SYSROOT_A64=${SYSROOT_A64:-/usr/aarch64-linux-gnu}
SYSROOT_RV=${SYSROOT_RV:-/usr/riscv64-linux-gnu}
if [ -n "${PYTHON3:-}" ]; then
	py=$PYTHON3
elif [ -x /usr/bin/python3 ]; then
	py=/usr/bin/python3
else
	py=python3
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-nearmiss.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"

# ---------------------------------------------------------------- helper
# ELF reading (struct), the oracle, clearing the table, and the checks of
# objdump's disassembly.
nm_py=$tmp/nm.py
cat >"$nm_py" <<'PYEOF'
import re
import struct
import sys

PFE = b'__patchable_function_entries'

def load(path):
    return open(path, 'rb').read()

def sections(d):
    if d[:4] != b'\x7fELF' or d[4] != 2 or d[5] != 1:
        raise SystemExit('not an ELF64 little-endian file')
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    secs = []
    for i in range(shnum):
        secs.append(list(struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize)))
    stro = secs[shstrndx][4]
    for s in secs:
        s.append(d[stro + s[0]:d.index(b'\0', stro + s[0])])
    return secs        # name, type, flags, addr, offset, size, link, info, align, entsize, NAME

def pfe_section(d):
    found = [s for s in sections(d) if s[10] == PFE]
    if len(found) != 1:
        raise SystemExit('%d sections named __patchable_function_entries' % len(found))
    return found[0]

def slots(d):
    s = pfe_section(d)
    return [struct.unpack_from('<Q', d, s[4] + k)[0] for k in range(0, s[5], 8)]

def funcs(d):
    """sized STT_FUNC symbols: [(addr, size, name)], sorted"""
    secs = sections(d)
    out = []
    for s in secs:
        if s[1] != 2:          # SHT_SYMTAB
            continue
        strtab = secs[s[6]]
        for k in range(0, s[5], 24):
            name, info, other, shndx, value, size = struct.unpack_from('<IBBHQQ', d, s[4] + k)
            if info & 0xf != 2 or shndx == 0 or size == 0:
                continue
            o = strtab[4] + name
            out.append((value, size, d[o:d.index(b'\0', o)].decode()))
    return sorted(out)

def owner(fs, v):
    """the sized function holding v, else the first one after it (the bytes
    before a symbol belong to it); None if v is not next to one"""
    for a, sz, n in fs:
        if a <= v < a + sz:
            return (a, sz, n)
    after = [f for f in fs if f[0] >= v]
    if after and after[0][0] - v <= 64:
        return after[0]
    return None

def owned(d, prefix):
    fs = funcs(d)
    vals = set()
    for v in slots(d):
        o = owner(fs, v) if v else None
        if o and o[2].startswith(prefix):
            vals.add(v)
    return sorted(vals)

def read_list(path):
    vals = []
    for line in open(path):
        if line.strip():
            vals.append(int(line.split()[0], 16))
    return vals

# --- objdump -d
NOP_A64, BTI_C, PACIASP = 'd503201f', 'd503245f', 'd503233f'
CNOP, NOP_RV = '0001', '00000013'

def disasm(path):
    ins = {}
    rx = re.compile(r'^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t(\S+)')
    for line in open(path):
        m = rx.match(line)
        if m:
            ins[int(m.group(1), 16)] = m.group(2).replace(' ', '')
    return ins

def after(ins, a, k):
    """the raw encodings of k instructions from a"""
    out = []
    for _ in range(k):
        r = ins.get(a)
        if r is None:
            break
        out.append(r)
        a += len(r) // 2
    return out

def nops_before(ins, fs, a, nop):
    """bytes of `nop` just before a, not below the end of the functions before it"""
    lo = max([f[0] + f[1] for f in fs if f[0] < a] + [0])
    n, w = 0, len(nop) // 2
    while a - n - w >= lo and ins.get(a - n - w) == nop:
        n += w
    return n

def features(kind, image, dis):
    d = load(image)
    fs = funcs(d)
    ins = disasm(dis)
    errs = []
    a64 = kind.startswith('a64')
    nop = NOP_A64 if a64 else CNOP
    entry = NOP_A64 if a64 else CNOP
    pre, post = {'a64-callops': (8, 8), 'a64-callops-bti': (8, 8), 'a64-pfe2-align64': (0, 8),
                 'rv-pfe4': (0, 8), 'rv-callops': (8, 8), 'a64-small': (8, 8),
                 'a64-mixed': (8, 8)}[kind]
    unitw = len(entry) // 2
    allvals = set(slots(d))
    named = lambda p: [f for f in fs if f[2].startswith(p)]

    def land(a):
        return 4 if a64 and ins.get(a) == BTI_C else 0

    def run(a, code):
        n = 0
        while ins.get(a + n) == code:
            n += len(code) // 2
        return n

    traced = named('traced_')
    want = {'a64-small': 3}.get(kind, 26)
    if len(traced) != want:
        errs.append('%d traced_* functions, expected %d' % (len(traced), want))
    for a, sz, n in traced:
        l = land(a)
        if run(a + l, entry) != post:
            errs.append('%s: %d bytes of NOPs at the entry, expected %d' % (n, run(a + l, entry), post))
        if pre and nops_before(ins, fs, a, nop) < pre:
            errs.append('%s: fewer than %d bytes of NOPs before it' % (n, pre))
        rec = a - pre if pre else a + l
        if rec not in allvals:
            errs.append('%s: the compiler did not list 0x%x' % (n, rec))
    bti = [f for f in traced if ins.get(f[0]) == BTI_C]
    if kind in ('a64-callops-bti', 'a64-pfe2-align64'):
        if not bti or len(bti) == len(traced):
            errs.append('%d of %d traced_* begin with BTI C: want some with, some without'
                        % (len(bti), len(traced)))
        pac = [f for f in traced if ins.get(f[0] + land(f[0]) + post) == PACIASP]
        if not pac:
            errs.append('no traced_* has PACIASP after its area')
    elif bti:
        errs.append('%d traced_* begin with BTI C in an image built without it' % len(bti))

    if kind == 'a64-pfe2-align64':
        padded = [f[2] for f in traced if nops_before(ins, fs, f[0], NOP_A64) >= 8]
        if len(padded) < 5:
            errs.append('only %d traced_* have 8 bytes of padding NOPs before them' % len(padded))
        else:
            print('padding of 8+ NOP bytes before %d of %d traced_*' % (len(padded), len(traced)))

    if kind == 'a64-mixed':
        other = named('other_')
        padded = [f for f in other if nops_before(ins, fs, f[0], NOP_A64) >= 8]
        if len(other) != 26 or not padded or len(padded) == len(other):
            errs.append('%d other_*, %d of them with 8+ NOP bytes before' % (len(other), len(padded)))
        for a, sz, n in other:
            if run(a + land(a), NOP_A64) != 8 or a + land(a) not in allvals:
                errs.append('%s: not a -fpatchable-function-entry=2 function' % n)

    if kind in ('a64-small', 'a64-mixed'):
        return errs

    # near misses
    keyw = NOP_A64 if a64 else NOP_RV
    checks = [('nm_notrace_key', keyw, 4, 5, False), ('nm_attr1_', entry, unitw, 3, True)]
    if kind != 'a64-pfe2-align64':
        checks += [('nm_asm_alt', NOP_A64 if a64 else NOP_RV, 8, 4, False),
                   ('nm_attr2_', entry, 2 * unitw, 3, True)]
    for p, code, nbytes, count, listed in checks:
        fl = named(p)
        if len(fl) != count:
            errs.append('%d %s* functions, expected %d' % (len(fl), p, count))
        for a, sz, n in fl:
            l = land(a)
            if p == 'nm_asm_alt' and a64 and l != 4:
                errs.append('%s does not begin with BTI C' % n)
            if p == 'nm_notrace_key' and kind == 'a64-callops' and l:
                errs.append('%s: BTI C before the NOP in an image without BTI' % n)
            if run(a + l, code) != nbytes:
                errs.append('%s: %d bytes of %s at the entry, expected %d'
                            % (n, run(a + l, code), code, nbytes))
            nxt = after(ins, a + l + nbytes, 1)
            if not nxt or nxt[0] in (NOP_A64, CNOP, NOP_RV):
                errs.append('%s: the NOPs go on past %d bytes' % (n, nbytes))
            if nops_before(ins, fs, a, nop) >= (pre or 1) and pre:
                errs.append('%s: %d bytes of NOPs before it' % (n, nops_before(ins, fs, a, nop)))
            if listed and (a + l) not in allvals:
                errs.append('%s: not listed in __patchable_function_entries' % n)
            if not listed and any(owner(fs, v) and owner(fs, v)[0] == a for v in allvals if v):
                errs.append('%s: listed in __patchable_function_entries' % n)
    return errs

def main():
    cmd = sys.argv[1]
    if cmd == 'owned':                  # IMAGE PREFIX: the oracle
        for v in owned(load(sys.argv[2]), sys.argv[3]):
            print('0x%x' % v)
    elif cmd == 'padded':               # IMAGE DISASM PREFIX: func-8 of PREFIX* with 8+ NOP bytes before
        d = load(sys.argv[2])
        fs, ins = funcs(d), disasm(sys.argv[3])
        for a, sz, n in fs:
            if n.startswith(sys.argv[4]) and nops_before(ins, fs, a, NOP_A64) >= 8:
                print('0x%x' % (a - 8))
    elif cmd == 'slots':                # IMAGE: every slot, in order
        for v in slots(load(sys.argv[2])):
            print('0x%x' % v)
    elif cmd == 'clear':                # IMAGE: zero the table
        d = load(sys.argv[2])
        s = pfe_section(d)
        with open(sys.argv[2], 'r+b') as f:
            f.seek(s[4])
            f.write(bytes(s[5]))
    elif cmd == 'elf':                  # IMAGE: ET_EXEC, .symtab, no DWARF
        d = load(sys.argv[2])
        names = [s[10] for s in sections(d)]
        et, = struct.unpack_from('<H', d, 16)
        errs = []
        if et != 2:
            errs.append('e_type %d, not ET_EXEC' % et)
        if b'.symtab' not in names:
            errs.append('no .symtab')
        if [n for n in names if n.startswith(b'.debug_')]:
            errs.append('has DWARF: %s' % [n for n in names if n.startswith(b'.debug_')])
        pfe_section(d)
        print('\n'.join(errs))
        sys.exit(1 if errs else 0)
    elif cmd == 'features':             # KIND IMAGE DISASM
        errs = features(sys.argv[2], sys.argv[3], sys.argv[4])
        print('\n'.join(errs))
        sys.exit(1 if errs else 0)
    elif cmd == 'same':                 # GOT WANT [unordered]: GOT (sorted,) unique, equal to WANT
        got, want = read_list(sys.argv[2]), read_list(sys.argv[3])
        errs = []
        if len(sys.argv) > 4 and len(got) != len(set(got)):
            errs.append('duplicates')
        elif len(sys.argv) == 4 and got != sorted(set(got)):
            errs.append('not sorted and unique')
        for v in sorted(set(want) - set(got)):
            errs.append('missing 0x%x' % v)
        for v in sorted(set(got) - set(want)):
            errs.append('extra 0x%x' % v)
        if not want:
            errs.append('the oracle is empty')
        print('\n'.join(errs))
        sys.exit(1 if errs else 0)
    elif cmd == 'table':                # IMAGE WANT: nonzero slots == WANT in order, rest zero
        vals = slots(load(sys.argv[2]))
        want = sorted(read_list(sys.argv[3]))
        nz = [v for v in vals if v]
        errs = []
        if nz != want:
            errs.append('table holds %s, expected %s' % ([hex(v) for v in nz], [hex(v) for v in want]))
        if vals[:len(nz)] != nz:
            errs.append('zero slots among the entries')
        print('\n'.join(errs))
        sys.exit(1 if errs else 0)
    else:
        raise SystemExit('unknown command ' + cmd)

main()
PYEOF

# ---------------------------------------------------------------- tools
ps_need_patchsite
for t in "$py" aarch64-linux-gnu-gcc riscv64-linux-gnu-gcc "$OBJDUMP_A64" "$OBJDUMP_RV" \
	"$QEMU_A64" "$QEMU_RV" cmp make sed; do
	if command -v "$t" >/dev/null 2>&1; then
		ok "tool $t"
	else
		echo "install it: sh scripts/install-deps.sh" >"$tmp/msg"
		not_ok "tool $t" "$tmp/msg"
	fi
done

if make -s -C "$fixdir" >"$tmp/make.log" 2>&1; then
	ok "build fixtures/nearmiss"
else
	not_ok "build fixtures/nearmiss" "$tmp/make.log"
	finish
fi

# ---------------------------------------------------------------- helpers
# run_prog IMAGE OUT: the program under qemu-user
run_prog() {
	case $1 in
	*/rv-*) "$QEMU_RV" -L "$SYSROOT_RV" "$1" >"$2" 2>&1 ;;
	*) "$QEMU_A64" -L "$SYSROOT_A64" "$1" >"$2" 2>&1 ;;
	esac
}

objdump_for() {
	case $1 in
	*/rv-*) echo "$OBJDUMP_RV" ;;
	*) echo "$OBJDUMP_A64" ;;
	esac
}

# ps STATUS ARGS...: run patchsite (ps_run), stdout in $t/out, stderr in
# $t/err, status in $rc; returns 1 when the status is not STATUS
ps() {
	_want=$1
	shift
	ps_run -e "$t/err" "$_want" "$t/out" -- "$@"
	_r=$?
	rc=$ps_rc
	return $_r
}

# msg TEXT: $t/msg = TEXT, the status, stderr and the head of stdout
msg() {
	{
		echo "$1 (exit status $rc)"
		sed 's/^/stderr: /' "$t/err"
		head -n 10 "$t/out" | sed 's/^/stdout: /'
	} >"$t/msg"
}

# one_line FILE: exactly one line
one_line() {
	[ "$(wc -l <"$1")" -eq 1 ]
}

# refused NAME IMAGE: after a run of ps: exit 2, one line `patchsite: ...`
# naming the ambiguity and --patchable, nothing on stdout
refused() {
	if [ "$rc" -eq 2 ] && one_line "$t/err" && [ ! -s "$t/out" ] &&
		grep -q "^patchsite: .*ambiguous.*--patchable" "$t/err"; then
		ok "$1"
	else
		msg "want exit 2, one line with 'ambiguous' and '--patchable', no output"
		not_ok "$1" "$t/msg"
	fi
}

# findings FILE: the finding lines of an audit's output
findings() {
	grep -E '^(misaligned|stale|missing|duplicate|unsorted|short|shifted):' "$1"
}

# ---------------------------------------------------------------- images the code decides
for name in a64-callops a64-callops-bti a64-pfe2-align64 rv-pfe4 rv-callops; do
	img=$fix/$name
	t=$tmp/$name
	mkdir -p "$t"
	case $name in
	a64-pfe2-align64 | rv-pfe4) flavour=patchable ;;
	*) flavour=call-ops ;;
	esac

	if run_prog "$img" "$t/run.out" && [ "$(cat "$t/run.out")" = ok ]; then
		ok "run $name"
	else
		not_ok "run $name" "$t/run.out"
	fi

	if $py "$nm_py" elf "$img" >"$t/msg" 2>&1; then
		ok "elf $name"
	else
		not_ok "elf $name" "$t/msg"
	fi

	"$(objdump_for "$img")" -d "$img" >"$t/dis" 2>"$t/msg" || not_ok "objdump $name" "$t/msg"
	if $py "$nm_py" features "$name" "$img" "$t/dis" >"$t/msg" 2>&1; then
		ok "features $name$(sed -n 's/^padding/: padding/p' "$t/msg")"
	else
		not_ok "features $name" "$t/msg"
	fi

	if ! $py "$nm_py" owned "$img" traced_ >"$t/oracle" 2>"$t/msg" || [ ! -s "$t/oracle" ]; then
		not_ok "oracle $name" "$t/msg"
		continue
	fi
	$py "$nm_py" owned "$img" nm_ >"$t/oracle-nm" 2>"$t/msg" || not_ok "oracle nm_ $name" "$t/msg"
	n=$(wc -l <"$t/oracle")

	# record
	if ! ps 0 record -v "$img"; then
		msg "record"
		not_ok "record $name" "$t/msg"
	elif ! one_line "$t/err" || ! grep -q "from the code" "$t/err"; then
		msg "want one line on stderr saying the layout comes from the code"
		not_ok "record $name" "$t/msg"
	elif $py "$nm_py" same "$t/out" "$t/oracle" >"$t/msg" 2>&1; then
		ok "record $name ($n sites)"
	else
		not_ok "record $name" "$t/msg"
	fi

	# --symbolize: traced_* only, flavour and offset
	if ! ps 0 record --symbolize "$img"; then
		msg "record --symbolize"
		not_ok "symbolize $name" "$t/msg"
	elif grep -q ' nm_' "$t/out"; then
		grep ' nm_' "$t/out" >"$t/msg"
		not_ok "symbolize $name: near misses recorded" "$t/msg"
	elif awk -v fl="$flavour" -v n="$n" '
		{
			if (NF != 3 || $3 != fl || $2 !~ /^traced_/) { print "bad line: " $0; bad = 1 }
			else if (fl == "call-ops" && $2 !~ /-0x8$/) { print "offset: " $0; bad = 1 }
			else if (fl == "patchable" && $2 !~ /\+0x[04]$/) { print "offset: " $0; bad = 1 }
		}
		END { if (NR != n) { print NR " lines, " n " sites"; bad = 1 } exit bad }' \
		"$t/out" >"$t/msg" 2>&1; then
		ok "symbolize $name"
	else
		not_ok "symbolize $name" "$t/msg"
	fi

	# audit of the image as linked: the compiler's nm_attr* entries are stale
	if ! ps 1 audit "$img"; then
		msg "audit: want exit 1 (the nm_attr* entries are stale)"
		not_ok "audit $name" "$t/msg"
	elif findings "$t/out" >"$t/findings"
		grep -v '^stale:' "$t/findings" >"$t/other"
		[ -s "$t/other" ]; then
		not_ok "audit $name: findings other than stale" "$t/other"
	elif awk '{ print $2 }' "$t/findings" >"$t/stale" &&
		$py "$nm_py" same "$t/stale" "$t/oracle-nm" unordered >"$t/msg" 2>&1; then
		ok "audit $name ($(wc -l <"$t/stale") stale nm_attr* entries)"
	else
		not_ok "audit $name: stale entries are not the nm_attr* ones" "$t/msg"
	fi

	# the table cleared
	if ! cp "$img" "$t/cleared" 2>"$t/msg" || ! $py "$nm_py" clear "$t/cleared" >>"$t/msg" 2>&1; then
		not_ok "clear $name" "$t/msg"
		continue
	fi
	if ! ps 1 audit "$t/cleared"; then
		msg "audit of the cleared table: want exit 1"
		not_ok "audit-cleared $name" "$t/msg"
	elif findings "$t/out" >"$t/findings"
		grep -v '^missing:' "$t/findings" >"$t/other"
		[ -s "$t/other" ]; then
		not_ok "audit-cleared $name: findings other than missing" "$t/other"
	elif awk '{ print $2 }' "$t/findings" >"$t/missing" &&
		$py "$nm_py" same "$t/missing" "$t/oracle" unordered >"$t/msg" 2>&1; then
		ok "audit-cleared $name"
	else
		not_ok "audit-cleared $name: missing is not every traced site" "$t/msg"
	fi

	cp "$t/cleared" "$t/refilled" || not_ok "copy $name"
	if ! ps 0 record --in-place "$t/refilled" || [ -s "$t/out" ]; then
		msg "record --in-place"
		not_ok "inplace-cleared $name" "$t/msg"
	elif $py "$nm_py" table "$t/refilled" "$t/oracle" >"$t/msg" 2>&1; then
		ok "inplace-cleared $name"
	else
		not_ok "inplace-cleared $name" "$t/msg"
	fi

	if ps 0 audit "$t/refilled" && [ -z "$(findings "$t/out")" ]; then
		ok "audit-refilled $name"
	else
		msg "audit of the refilled table: want exit 0, no findings"
		not_ok "audit-refilled $name" "$t/msg"
	fi
done

# ---------------------------------------------------------------- too small for a vote
name=a64-small
img=$fix/$name
t=$tmp/$name
mkdir -p "$t"
if run_prog "$img" "$t/run.out" && [ "$(cat "$t/run.out")" = ok ]; then
	ok "run $name"
else
	not_ok "run $name" "$t/run.out"
fi
if $py "$nm_py" elf "$img" >"$t/msg" 2>&1; then
	ok "elf $name"
else
	not_ok "elf $name" "$t/msg"
fi
"$OBJDUMP_A64" -d "$img" >"$t/dis" 2>"$t/msg" || not_ok "objdump $name" "$t/msg"
if $py "$nm_py" features "$name" "$img" "$t/dis" >"$t/msg" 2>&1; then
	ok "features $name"
else
	not_ok "features $name" "$t/msg"
fi
$py "$nm_py" owned "$img" traced_ >"$t/oracle" 2>"$t/msg" || not_ok "oracle $name" "$t/msg"

# refused, or exactly the oracle: never a guess
if ! ps '[02]' record "$img"; then
	msg "want exit 2 (too few for a vote) or 0"
	not_ok "record $name" "$t/msg"
elif [ "$rc" -eq 2 ]; then
	refused "record $name (refused)"
elif $py "$nm_py" same "$t/out" "$t/oracle" >"$t/msg" 2>&1; then
	ok "record $name (decided, the oracle)"
else
	msg "want exit 2 (too few for a vote) or exactly the 3 traced sites; oracle: $(tr '\n' ' ' <"$t/oracle")"
	not_ok "record $name: a guess" "$t/msg"
fi

if ! ps '[02]' audit "$img"; then
	msg "want exit 2 (too few for a vote) or 0"
	not_ok "audit $name" "$t/msg"
elif [ "$rc" -eq 2 ]; then
	refused "audit $name (refused)"
elif [ -z "$(findings "$t/out")" ]; then
	ok "audit $name (decided, clean)"
else
	msg "want exit 2 (too few for a vote) or a clean audit of the compiler's table"
	not_ok "audit $name: a guess" "$t/msg"
fi

cp "$img" "$t/inplace" || not_ok "copy $name"
if ! ps '[02]' record --in-place "$t/inplace"; then
	msg "want exit 2 (too few for a vote) or 0"
	not_ok "inplace $name" "$t/msg"
elif [ "$rc" -eq 2 ]; then
	if cmp -s "$img" "$t/inplace"; then
		refused "inplace $name (refused, unchanged)"
	else
		not_ok "inplace $name: refused but the image changed"
	fi
elif $py "$nm_py" table "$t/inplace" "$t/oracle" >"$t/msg" 2>&1; then
	ok "inplace $name (decided, the oracle)"
else
	{
		msg "want exit 2 and the image unchanged, or the 3 traced sites written"
		cat "$t/msg"
		echo "table after:"
		$py "$nm_py" slots "$t/inplace"
	} >"$t/msg2" 2>&1
	not_ok "inplace $name: wrote a guess" "$t/msg2"
fi

if ! ps 0 record --patchable=4,2 "$img"; then
	msg "record --patchable=4,2"
	not_ok "stated $name" "$t/msg"
elif $py "$nm_py" same "$t/out" "$t/oracle" >"$t/msg" 2>&1; then
	ok "stated $name"
else
	not_ok "stated $name" "$t/msg"
fi

# ---------------------------------------------------------------- ambiguous
name=a64-mixed
img=$fix/$name
t=$tmp/$name
mkdir -p "$t"
if run_prog "$img" "$t/run.out" && [ "$(cat "$t/run.out")" = ok ]; then
	ok "run $name"
else
	not_ok "run $name" "$t/run.out"
fi
if $py "$nm_py" elf "$img" >"$t/msg" 2>&1; then
	ok "elf $name"
else
	not_ok "elf $name" "$t/msg"
fi
"$OBJDUMP_A64" -d "$img" >"$t/dis" 2>"$t/msg" || not_ok "objdump $name" "$t/msg"
if $py "$nm_py" features "$name" "$img" "$t/dis" >"$t/msg" 2>&1; then
	ok "features $name"
else
	not_ok "features $name" "$t/msg"
fi
$py "$nm_py" owned "$img" traced_ >"$t/oracle" 2>"$t/msg" || not_ok "oracle $name" "$t/msg"

ps 2 record "$img"
refused "record $name"

ps 2 audit "$img"
refused "audit $name"

mkdir -p "$t/dir"
cp "$img" "$t/dir/image" || not_ok "copy $name"
ps 2 record --in-place "$t/dir/image"
refused "inplace $name"
if [ "$rc" -eq 2 ] && cmp -s "$img" "$t/dir/image" && [ "$(ls -A "$t/dir")" = image ]; then
	ok "inplace $name: image byte-identical, no file left"
else
	ls -A "$t/dir" >"$t/msg"
	not_ok "inplace $name: image changed or a file left" "$t/msg"
fi

# stated: the traced_* sites, and the other_* functions that alignment
# padding gave the stated layout's bytes
$py "$nm_py" padded "$img" "$t/dis" other_ >"$t/padded" 2>"$t/msg" || not_ok "padded $name" "$t/msg"
sort -u "$t/oracle" "$t/padded" >"$t/want" || not_ok "sort $name"
if ! ps 0 record --patchable=4,2 "$img"; then
	msg "record --patchable=4,2"
	not_ok "stated $name" "$t/msg"
elif $py "$nm_py" same "$t/out" "$t/want" >"$t/msg" 2>&1; then
	ok "stated $name ($(wc -l <"$t/oracle") traced, $(wc -l <"$t/padded") padded other_*)"
else
	not_ok "stated $name" "$t/msg"
fi

finish
