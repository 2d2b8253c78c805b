#!/bin/sh
# End-to-end test of `patchsite embed` (the CALL_OPS trampoline, site table
# and runtime of arm64 and riscv64) on the programs of fixtures/embed,
# checked with tools that are not patchsite: readelf, eu-elflint, nm, strip,
# and running under qemu-user.
#
#   PATCHSITE=/path/to/patchsite [ARCH=aarch64|riscv64 [VARIANT=noc]] sh tests/e2e/embed.sh
#
# ARCH (default aarch64) picks the fixtures' architecture (fixtures/embed/
# Makefile says what each builds): aarch64 =4,2 with and without BTI;
# riscv64 one program with both of Linux 6.16's layouts (=8,4 with the C
# extension and =4,2 without), VARIANT=noc only =4,2 without C.
#
# EMBED, if set, is a command run as `$EMBED IN OUT` instead of
# `$PATCHSITE embed IN -o OUT` (for testing embed_image() through a driver).
#
# Cases, for the test program as static -no-pie `prog`, dynamic -no-pie
# `prog-dyn`, PIE `prog-pie` and static PIE `prog-spie` (arm64 only: Debian's
# riscv64 glibc has no static PIE) (all linked with libpatchsite-callops.a):
#   embed          embed succeeds and reports the misaligned site mis_seven
#   segment        readelf -lW: one PT_LOAD more, the PT_NOTE gone, the new one
#                  R E, align 64 KiB (riscv64 4 KiB), offset == vaddr mod that, above every
#                  other PT_LOAD, holding exactly .patchsite.sites and
#                  .patchsite.tramp (readelf -SW)
#   elflint        eu-elflint --gnu-ld finds nothing in the output it did not
#                  find in the input (dynamic ones: no findings at all)
#   layout         every traced function starts with [BTI C] MOV X9, X30; NOP
#                  (riscv64: auipc t0 whose upper bits reach the trampoline;
#                  nop), its literal holds the segment's default ops, the
#                  original had the layouts the fixture promises (BTI C;
#                  riscv64 c.nop or nop literals), mis_seven is
#                  unchanged; of the input's bytes only those sites, the ELF
#                  header and the program header table changed; every byte
#                  added behind them is in a section or the section header table
#   run            the embedded program prints what the original prints
#   count          ps_attach_all with a counting ops: counts equal calls;
#                  ps_detach_all: counts stop; attach/detach of one function
#   count-each     the same, attaching with a loop of ps_attach
#   two-ops        two ops on two functions each see only their own ip; a
#                  second ops on a function: both see each call once, then
#                  ps_detach_ops, ps_detach_ops_all, a list naming it twice
#   many-ops       40 ops on one function joining one by one, half leaving:
#                  each sees exactly the calls made while it was attached
#   parent         parent_ip lies in the caller; regs' first argument register
#   passthrough    8 register args, struct return, FP args with a callback
#                  that clobbers FP/SIMD registers
#   threads        3 threads call traced functions while main attaches and
#                  detaches in a loop
#   misaligned     the misaligned site is not attachable and still runs
#   direct         an ops with a direct_call (fixtures/embed/direct.S) counts
#                  every call, ops->func is not called, results pass through;
#                  no other ops shares its function (-EBUSY both ways)
#   list           ps_attach_list/ps_detach_list: exact counts, a list with an
#                  untraced function changes nothing, partial detach
#   threads-list   the same batched calls in a loop while 3 threads call; then
#                  3 threads x 1000 calls with the list attached: all counted
#   pages N        (arm64) count, list and threads-list with qemu reporting a page
#                  size of 16 or 64 KiB (AT_PAGESZ, so sysconf in the runtime;
#                  qemu-user still protects 4 KiB pages underneath)
#   ld.so          (dynamic ones) run through glibc's ld.so as a command, which
#                  maps the segments itself: count and list pass
#   strip          after the cross strip: same output, count and list pass
#   not-embedded   the runtime refuses in the original program
# For `plain` and `plain-pie`, which do not link the runtime:
#   embed, segment, elflint, run, and
#   preload        LD_PRELOAD=preload.so (libpatchsite-callops.so) attaches to
#                  all and counts exactly add 10, mul 5, fib 25, at the
#                  addresses nm gives plus one load bias (0 for -no-pie)
#   preload-not-embedded  the preloaded runtime refuses the original (-ENODEV)
# And:
#   deterministic  two embeds are byte-identical; in place (-o IMAGE) too
#   again          embedding an embedded image is refused (also with its
#                  sections renamed: the segment's magic is found)
#   bad-*          powerpc64le (no embed), no patchable entries, a site out of
#                  the call's reach (arm64 BL: 200 MiB of bss; riscv64
#                  auipc+jalr: 3 GiB): exit 2, one line `patchsite: FILE: ...`,
#                  no output
#   repad          (riscv64, not noc) traced.c built =8,4 with C at -Os, where GCC
#                  leaves functions 2-aligned: linked as it is, nm shows
#                  literals off 8 and embed reports them misaligned; after
#                  `patchsite repad` of the object, nm shows every literal
#                  8-aligned, embed takes all of them, and count, list and
#                  threads pass
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/embed
PATCHSITE=${PATCHSITE:-$root/patchsite}
ARCH=${ARCH:-aarch64}
VARIANT=${VARIANT:-}
PY=/usr/bin/python3

. "$here/lib.sh"

# per architecture: the programs, the segment's alignment, the loader, the
# qemu page sizes to try, the call's reach as embed names it
case $ARCH in
aarch64)
	PROGS="prog prog-dyn prog-pie prog-spie" SEGALIGN=0x10000
	LDSO=ld-linux-aarch64.so.1 PAGES="16384 65536" REACH="BL range" QEMU=qemu-aarch64 ;;
riscv64)
	# Linux riscv64 maps 4 KiB pages only
	PROGS="prog prog-dyn prog-pie" SEGALIGN=0x1000
	LDSO=ld-linux-riscv64-lp64d.so.1 PAGES="" REACH="auipc+jalr range" QEMU=qemu-riscv64 ;;
*)	echo "embed.sh: no embed fixtures for ARCH=$ARCH" >&2; exit 2 ;;
esac
CROSS=$(arch_var CROSS_$ARCH)
CC=$(arch_var CC_$ARCH)
OBJDUMP=${CROSS}objdump NM=${CROSS}nm STRIP=${CROSS}strip READELF=${CROSS}readelf
SYSROOT=/usr/${CROSS%-}

# embed STATUS IN OUT STDOUT STDERR: `patchsite embed IN -o OUT` (or
# $EMBED IN OUT) must exit STATUS; 1 and $ps_msg when it does not
embed() {
	if [ -n "${EMBED:-}" ]; then
		$EMBED "$2" "$3" >"$4" 2>"$5"
		ps_rc=$?
		[ "$ps_rc" -eq "$1" ] && return 0
		echo "$EMBED $2 $3: exit status $ps_rc, expected $1" | cat - "$5" >"$ps_msg"
		return 1
	fi
	ps_run -e "$5" "$1" "$4" -- embed "$2" -o "$3"
}

for t in "$CC" powerpc64le-linux-gnu-gcc "$OBJDUMP" "$NM" "$STRIP" "$READELF" "$QEMU" eu-elflint "$PY" cc; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"
fx=$work/fx

make -s -C "$fix" O="$fx" ARCH="$ARCH" VARIANT="$VARIANT" >"$work/make.log" 2>&1 ||
	{ cat "$work/make.log"; not_ok "build fixtures"; }

# qrun PROGRAM ARG...: a program of the target under qemu-user
qrun() { $QEMU -L "$SYSROOT" "$@"; }

# segment ORIG EMB: readelf's view of the new PT_LOAD
segment() {
	$READELF -lW "$1" >"$work/seg.in" && $READELF -lW "$2" >"$work/seg.out" &&
	$READELF -SW "$2" >"$work/sec.out" &&
	$PY - "$work/seg.in" "$work/seg.out" "$work/sec.out" "$SEGALIGN" <<'PYEOF'
import re, sys
def phdrs(path):
    out = []
    for line in open(path):
        f = line.split()
        if f and re.match(r'^[A-Z_]+$', f[0]) and len(f) >= 8 and f[1].startswith('0x'):
            align = int(f[-1], 16)
            flags = ' '.join(f[6:-1])
            out.append((f[0], int(f[1], 16), int(f[2], 16), int(f[4], 16), int(f[5], 16), flags, align))
    return out
a, b = phdrs(sys.argv[1]), phdrs(sys.argv[2])
bad = []
la = [p for p in a if p[0] == 'LOAD']
lb = [p for p in b if p[0] == 'LOAD']
if len(lb) != len(la) + 1 or len(b) != len(a):
    bad.append('want one PT_LOAD more and as many program headers: %d/%d LOAD, %d/%d headers' % (len(la), len(lb), len(a), len(b)))
if any(p[0] == 'NOTE' for p in b) or not any(p[0] == 'NOTE' for p in a):
    bad.append('the PT_NOTE should have become the PT_LOAD')
new = [p for p in lb if p not in la]
if len(new) != 1:
    bad.append('cannot tell the new PT_LOAD: %r' % new)
else:
    t, off, va, fsz, msz, flags, align = new[0]
    if flags != 'R E': bad.append('flags %r, want R E' % flags)
    want = int(sys.argv[4], 16)
    if align != want: bad.append('align %#x, want %#x' % (align, want))
    if off % want != va % want: bad.append('offset %#x and vaddr %#x not congruent mod %#x' % (off, va, want))
    if fsz != msz: bad.append('filesz != memsz')
    if lb[-1] != new[0]: bad.append('the new PT_LOAD is not the last one')
    if any(p[2] + p[4] > va for p in la): bad.append('the new PT_LOAD overlaps an old one')
    if [p[2] for p in lb] != sorted(p[2] for p in lb): bad.append('PT_LOADs not sorted')
    secs = {}
    for line in open(sys.argv[3]):
        m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+(\S*)\s', line)
        if m:
            secs[m.group(1)] = (int(m.group(3), 16), int(m.group(4), 16), int(m.group(5), 16), m.group(6))
    s, t2 = secs.get('.patchsite.sites'), secs.get('.patchsite.tramp')
    if not s or not t2:
        bad.append('no .patchsite.sites/.patchsite.tramp section')
    else:
        if s[0] != va or s[1] != off or t2[0] != va + s[2] or t2[0] + t2[2] != va + fsz or t2[1] != off + s[2]:
            bad.append('the two sections do not cover the segment exactly: %r %r' % (s, t2))
        if s[3] != 'A' or t2[3] != 'AX':
            bad.append('section flags %r %r, want A and AX' % (s[3], t2[3]))
if bad:
    print('\n'.join(bad)); sys.exit(1)
PYEOF
}

# layout ORIG EMB: the sites as documented, nothing else changed (python, not patchsite)
layout() {
	$NM "$2" >"$work/nm.txt" && $PY - "$1" "$2" "$work/nm.txt" "$ARCH" "$VARIANT" <<'PYEOF'
import struct, sys
orig, emb = (open(p, 'rb').read() for p in sys.argv[1:3])
syms = {}
for line in open(sys.argv[3]):
    f = line.split()
    if len(f) == 3:
        syms[f[2]] = int(f[0], 16)
def sections(b):
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    secs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size = struct.unpack_from('<IIQQQQ', b, shoff + i * shentsize)
        secs.append([name, typ, flags, addr, off, size])
    stro = secs[shstrndx][4]
    for s in secs:
        s[0] = b[stro + s[0]:b.index(b'\0', stro + s[0])].decode()
    return secs, shoff, shnum * shentsize
secs, shoff, shsize = sections(emb)
def off(a):
    for n, typ, flags, addr, o, size in secs:
        if flags & 2 and typ != 8 and addr <= a < addr + size:
            return o + a - addr
    raise SystemExit('address %x not in the file' % a)
u32 = lambda b, a: struct.unpack_from('<I', b, off(a))[0]
u64 = lambda b, a: struct.unpack_from('<Q', b, off(a))[0]
NOP, BTI, MOV = 0xd503201f, 0xd503245f, 0xaa1e03e9
RV_NOP, RV_CNOP = 0x13, 0x0001
arch, variant = sys.argv[4], sys.argv[5]
u16 = lambda b, a: struct.unpack_from('<H', b, off(a))[0]
bad = []
# the segment header, found from the program headers as the runtime does
phoff, = struct.unpack_from('<Q', emb, 0x20)
phentsize, phnum = struct.unpack_from('<HH', emb, 0x36)
hdr = None
for i in range(phnum):
    t, fl, o, va = struct.unpack_from('<IIQQ', emb, phoff + i * phentsize)
    if t == 1 and emb[o:o + 8] == b'CALLSOP1':
        hdr = struct.unpack_from('<QQQQQQ', emb, o)
if not hdr:
    raise SystemExit('no PT_LOAD starts with the segment magic')
magic, self_, count, sites, tramp, dops = hdr
traced = ['add', 'mul', 'sum8', 'make_big', 'fma3', 'call_add', 'fib', 'bti_add',
          'bti_sum8', 'bti_make_big', 'bti_call_add']
traced = [t for t in traced if t in syms]
if count != len(traced):
    bad.append('table has %d sites, want %d' % (count, len(traced)))
table = [struct.unpack_from('<QQQ', emb, off(sites) + 32 * i) for i in range(count)]
if [t[0] for t in table] != sorted(syms[t] for t in traced):
    bad.append('table functions are not the traced functions, sorted')
allowed = [(0, 64), (phoff, phoff + phnum * phentsize)]
for fn in traced:
    f = syms[fn]
    if arch == 'riscv64':
        # auipc t0, hi20 with hi20 + the jalr's lo12 = tramp - f; then nop
        d = (tramp - f) & 0xffffffff
        e, w = f, u32(emb, f)
        if w & 0xfff != 0x297 or w >> 12 != ((d + 0x800) >> 12) & 0xfffff or u32(emb, f + 4) != RV_NOP:
            bad.append('%s: entry is not auipc t0, hi20(tramp); nop (%08x)' % (fn, w))
    else:
        e = f + 4 if u32(emb, f) == BTI else f
        if u32(emb, e) != MOV or u32(emb, e + 4) != NOP:
            bad.append('%s: entry is not MOV X9, X30; NOP' % fn)
    if u64(emb, f - 8) != dops:
        bad.append('%s: literal %x is not the default ops %x' % (fn, u64(emb, f - 8), dops))
    if (f, f - 8, e + 4) not in table:
        bad.append('%s: no table entry (func, literal, call)' % fn)
    allowed.append((off(f - 8), off(e + 8)))
if arch == 'aarch64' and 'bti_add' in syms and u32(emb, syms['bti_add']) != BTI:
    bad.append('bti_add has no BTI C: the fixture does not cover the BTI layout')
# riscv64: the original's literals are the layouts the fixture promises
want = {'add': RV_CNOP if variant != 'noc' else RV_NOP, 'bti_add': RV_NOP}
for fn, w in want.items():
    if arch == 'riscv64' and fn in syms and (u16(orig, syms[fn] - 8) if w == RV_CNOP else u32(orig, syms[fn] - 8)) != w:
        bad.append('%s: the original literal is not %s' % (fn, 'c.nop' if w == RV_CNOP else 'nop'))
if 'mis_seven' in syms:
    m = syms['mis_seven']
    if emb[off(m - 12):off(m + 8)] != orig[off(m - 12):off(m + 8)]:
        bad.append('mis_seven changed')
if len(emb) <= len(orig):
    bad.append('file did not grow')
for i in range(len(orig)):
    if orig[i] != emb[i] and not any(a <= i < b for a, b in allowed):
        bad.append('byte at file offset 0x%x changed outside the sites and headers' % i)
        break
cover = [(o, o + size) for n, typ, flags, addr, o, size in secs if typ != 8] + [(shoff, shoff + shsize)]
for i in range(len(orig), len(emb)):
    if emb[i] and not any(a <= i < b for a, b in cover):
        bad.append('added byte at 0x%x is in no section' % i)
        break
if bad:
    print('\n'.join(bad))
    sys.exit(1)
PYEOF
}

lint() {	# lint NAME IN OUT: no new findings (static glibc has its own)
	eu-elflint --gnu-ld "$2" >"$work/lint.in" 2>&1
	eu-elflint --gnu-ld "$3" >"$work/lint.out" 2>&1
	lrc=$?
	case $1 in
	prog|prog-spie)	# static glibc: IRELATIVE in .rela.plt, __ehdr_start
		check "$1: elflint (no new findings)" cmp -s "$work/lint.in" "$work/lint.out" ;;
	*)	check "$1: elflint" [ "$lrc" -eq 0 ] ;;
	esac
}

for p in $PROGS plain plain-pie; do
	in=$fx/$p out=$work/$p.emb
	if ! embed 0 "$in" "$out" "$work/$p.embed.out" "$work/$p.embed.err"; then
		# every check of the output below fails on its absence
		rm -f "$out"
		not_ok "$p: embed" "$ps_msg"
	else
		case $p in
		prog*)	check "$p: embed" sh -c "[ -e '$out' ] && [ ! -s '$work/$p.embed.err' ] &&
				grep -q 'mis_seven' '$work/$p.embed.out'" ;;
		*)	check "$p: embed" sh -c "[ -e '$out' ] && [ ! -s '$work/$p.embed.err' ]" ;;
		esac
	fi
	check "$p: segment" segment "$in" "$out"
	lint "$p" "$in" "$out"
	check "$p: layout" layout "$in" "$out"
	qrun "$in" >"$work/$p.run.in" 2>&1
	qrun "$out" >"$work/$p.run.out" 2>&1
	check "$p: run (same output)" sh -c "[ -s '$work/$p.run.in' ] && cmp -s '$work/$p.run.in' '$work/$p.run.out'"
	case $p in
	prog*)
		for t in count count-each two-ops many-ops parent passthrough threads threads-list misaligned direct list; do
			check "$p: $t" qrun "$out" test "$t"
		done
		for ps in $PAGES; do
			check "$p: pages $ps (count, list, threads-list)" sh -c "
				$QEMU -p $ps -L '$SYSROOT' '$out' test count &&
				$QEMU -p $ps -L '$SYSROOT' '$out' test list &&
				$QEMU -p $ps -L '$SYSROOT' '$out' test threads-list"
		done
		if [ "$p" = prog-dyn ] || [ "$p" = prog-pie ]; then
			# glibc's ld.so run as a command maps the program itself
			# (_dl_map_segments), a second loader besides qemu's
			check "$p: ld.so maps it (count, list)" sh -c "
				$QEMU '$SYSROOT/lib/$LDSO' --library-path '$SYSROOT/lib' '$out' test count &&
				$QEMU '$SYSROOT/lib/$LDSO' --library-path '$SYSROOT/lib' '$out' test list"
		fi
		check "$p: not-embedded" qrun "$in" test not-embedded
		$STRIP -o "$work/$p.str" "$out"
		qrun "$work/$p.str" >"$work/$p.run.str" 2>&1
		check "$p: strip (same output, count, list)" sh -c "cmp -s '$work/$p.run.in' '$work/$p.run.str' &&
			$QEMU -L '$SYSROOT' '$work/$p.str' test count &&
			$QEMU -L '$SYSROOT' '$work/$p.str' test list"
		;;
	plain*)
		qrun -E LD_PRELOAD="$fx/preload.so" "$out" >"$work/$p.pre.out" 2>"$work/$p.pre.err"
		prc=$?
		$NM "$in" >"$work/$p.nm"
		check "$p: preload (exact counts)" sh -c "[ $prc -eq 0 ] &&
			cmp -s '$work/$p.run.in' '$work/$p.pre.out' &&
			$PY - '$work/$p.nm' '$work/$p.pre.err' '$p' <<'PYEOF'
import sys
syms = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3: syms[f[2]] = int(f[0], 16)
got = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] != 'preload:': raise SystemExit('unexpected: ' + line)
    got[int(f[1], 16)] = int(f[2])
want = {'add': 10, 'mul': 5, 'fib': 25}
biases = {a - syms[n] for n in want for a in got if got[a] == want[n]}
if len(got) != 3 or len(biases) != 1:
    raise SystemExit('counts %r' % got)
bias = biases.pop()
if sorted((a - bias, c) for a, c in got.items()) != sorted((syms[n], c) for n, c in want.items()):
    raise SystemExit('counts %r' % got)
if (bias == 0) != (sys.argv[3] == 'plain'):
    raise SystemExit('bias %x' % bias)
PYEOF"
		qrun -E LD_PRELOAD="$fx/preload.so" "$in" >/dev/null 2>"$work/$p.pre.err"
		check "$p: preload-not-embedded" sh -c "[ $? -eq 3 ] && grep -q 'cannot attach (-19)' '$work/$p.pre.err'"
		;;
	esac
done

cp "$fx/prog-pie" "$work/inplace"
if embed 0 "$fx/prog-pie" "$work/again.emb" /dev/null /dev/null &&
	embed 0 "$work/inplace" "$work/inplace" /dev/null /dev/null; then
	check "deterministic (and in place)" sh -c "cmp -s '$work/prog-pie.emb' '$work/again.emb' &&
		cmp -s '$work/prog-pie.emb' '$work/inplace'"
else
	not_ok "deterministic (and in place)" "$ps_msg"
fi

refused() {	# refused NAME IN [PATTERN]
	rm -f "$work/bad.out"
	embed 2 "$2" "$work/bad.out" "$work/bad.stdout" "$work/bad.stderr"
	rc=$ps_rc
	check "$1: refused with one line" sh -c "[ $rc -eq 2 ] && [ ! -e '$work/bad.out' ] &&
		[ \$(wc -l <'$work/bad.stderr') -eq 1 ] && grep -q '^patchsite: $2: ${3:-}' '$work/bad.stderr'"
}
refused "again: embedded image" "$work/prog.emb" "already embedded"
# the same with the sections renamed: the segment's magic still tells
$PY -c 'import sys; b = open(sys.argv[1], "rb").read().replace(b".patchsite.", b".renamed..."); open(sys.argv[2], "wb").write(b)' \
	"$work/prog-dyn.emb" "$work/nosec.emb"
refused "again: embedded image, sections renamed" "$work/nosec.emb" "already embedded (a PT_LOAD"
# riscv64: repad then embed, on the =8,4 layout with compressed instructions
# (once: VARIANT=noc would run the same case again)
if [ "$ARCH" = riscv64 ] && [ "$VARIANT" != noc ]; then
	# link LABEL OBJ: the dynamic test program with OBJ for traced.o
	link() {
		$CC -no-pie -o "$work/$1" "$fx/main.o" "$fx/mis.o" "$fx/direct.o" "$2" \
			"$fx/traced_bti.o" "$fx/libpatchsite-callops.a" -lpthread
	}
	# aligned PROG WANT: nm's traced.c functions have 8-aligned literals (WANT
	# all) or not all of them (WANT some-off)
	aligned() {
		$NM "$1" >"$work/al.nm" && $PY - "$work/al.nm" "$2" <<'PYEOF'
import sys
fns = {'add', 'mul', 'sum8', 'make_big', 'fma3', 'call_add', 'fib'}
off = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3 and f[2] in fns:
        off[f[2]] = (int(f[0], 16) - 8) % 8
if set(off) != fns:
    raise SystemExit('missing functions: %r' % (fns - set(off)))
bad = sorted(n for n, o in off.items() if o)
if sys.argv[2] == 'all' and bad:
    raise SystemExit('literals off 8: %r' % bad)
if sys.argv[2] == 'some-off' and not bad:
    raise SystemExit('every literal is 8-aligned without repad: the case tests nothing')
PYEOF
	}
	link norepad "$fx/traced-os.o"
	check "repad: -Os leaves literals off 8 (nm)" aligned "$work/norepad" some-off
	if embed 0 "$work/norepad" "$work/norepad.emb" "$work/norepad.out" "$work/norepad.err"; then
		check "repad: without it, embed reports them misaligned" sh -c "
			[ \$(grep -c '^misaligned: ' '$work/norepad.out') -gt 1 ]"
	else
		not_ok "repad: without it, embed reports them misaligned" "$ps_msg"
	fi
	if ps_run 0 /dev/null -- repad "$fx/traced-os.o" -o "$work/traced-rp.o" && link repad "$work/traced-rp.o"; then
		check "repad: every literal 8-aligned after the link (nm)" aligned "$work/repad" all
		if embed 0 "$work/repad" "$work/repad.emb" "$work/repad.out" "$work/repad.err"; then
			check "repad: embed takes them all (only mis_seven misaligned)" sh -c "
				[ \$(grep -c '^misaligned: ' '$work/repad.out') -eq 1 ] &&
				grep -q '^misaligned: mis_seven ' '$work/repad.out'"
			check "repad: layout" layout "$work/repad" "$work/repad.emb"
			for t in count list threads; do
				check "repad: $t" qrun "$work/repad.emb" test $t
			done
		else
			not_ok "repad: embed" "$ps_msg"
		fi
	else
		not_ok "repad: repad and link" "$ps_msg"
	fi
fi

refused "bad-powerpc64le" "$fx/unsupported" "embed is not supported on powerpc64le (patchsite arches lists what each architecture supports)"
refused "bad-noentries" "$fx/noentries" "no CALL_OPS"
refused "bad-far (out of $REACH)" "$fx/far" ".*out of $REACH"

finish
