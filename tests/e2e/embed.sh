#!/bin/sh
# End-to-end test of `patchsite embed` (arm64 CALL_OPS trampoline, site table
# and runtime) on the programs of fixtures/embed, checked with tools that are
# not patchsite: eu-elflint, objdump/nm, and running under qemu-aarch64.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/embed.sh
#
# EMBED, if set, is a command run as `$EMBED IN OUT` instead of
# `$PATCHSITE embed IN -o OUT` (for testing embed_image() through a driver).
#
# Cases (for the static program `prog` and the dynamic `prog-dyn`, both -no-pie):
#   embed          embed succeeds and reports the misaligned site mis_seven
#   elflint        eu-elflint --gnu-ld finds nothing in the output it did not
#                  find in the input (prog-dyn: no errors at all)
#   layout         every traced function starts with [BTI C] MOV X9, X30; NOP,
#                  its literal holds &ps_default_ops, mis_seven is unchanged,
#                  only bytes of those sites, .patchsite.tramp and
#                  .patchsite.sites changed
#   run            the embedded program prints what the original prints
#   count          ps_attach_all with a counting ops: counts equal calls;
#                  ps_detach_all: counts stop; attach/detach of one function
#   two-ops        two ops on two functions each see only their own ip
#   parent         parent_ip lies in the caller; regs->x[0] is the argument
#   passthrough    8 register args, struct return, FP args with a callback
#                  that clobbers FP/SIMD registers
#   threads        3 threads call traced functions while main attaches and
#                  detaches in a loop
#   misaligned     the misaligned site is not attachable and still runs
#   not-embedded   the runtime refuses in the original program
#   deterministic  two embeds are byte-identical; in place (-o IMAGE) too
#   again          embedding an embedded image is refused
#   bad-*          x86, no patchable entries, no reserved space, PIE: exit != 0,
#                  one line `patchsite: FILE: ...`, no output file
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/embed
PATCHSITE=${PATCHSITE:-$root/patchsite}
OBJDUMP=${OBJDUMP:-aarch64-linux-gnu-objdump}
NM=${NM:-aarch64-linux-gnu-nm}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
PY=/usr/bin/python3

pass=0
fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() { echo "not ok - $1"; fail=$((fail + 1)); }
check() { name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }

embed() {
	if [ -n "${EMBED:-}" ]; then
		$EMBED "$1" "$2"
	else
		"$PATCHSITE" embed "$1" -o "$2"
	fi
}

for t in aarch64-linux-gnu-gcc "$OBJDUMP" "$NM" "$QEMU" eu-elflint "$PY" cc; do
	command -v "$t" >/dev/null 2>&1 || notok "tool $t is installed"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fx=$work/fx

make -s -C "$fix" O="$fx" >"$work/make.log" 2>&1 || { cat "$work/make.log"; notok "build fixtures"; }

# layout ORIG EMB: the sites as documented, nothing else changed (python, not patchsite)
layout() {
	$NM "$2" >"$work/nm.txt" && $PY - "$1" "$2" "$work/nm.txt" <<'PYEOF'
import struct, sys
orig, emb = (open(p, 'rb').read() for p in sys.argv[1:3])
syms = {}
for line in open(sys.argv[3]):
    f = line.split()
    if len(f) == 3:
        syms[f[2]] = int(f[0], 16)
shoff, = struct.unpack_from('<Q', emb, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', emb, 0x3a)
secs = []
for i in range(shnum):
    name, typ, flags, addr, off, size = struct.unpack_from('<IIQQQQ', emb, shoff + i * shentsize)
    secs.append([name, typ, flags, addr, off, size])
stro = secs[shstrndx][4]
for s in secs:
    s[0] = emb[stro + s[0]:emb.index(b'\0', stro + s[0])].decode()
def off(a):
    for n, typ, flags, addr, o, size in secs:
        if flags & 2 and typ != 8 and addr <= a < addr + size:
            return o + a - addr
    raise SystemExit('address %x not in the file' % a)
u32 = lambda b, a: struct.unpack_from('<I', b, off(a))[0]
u64 = lambda b, a: struct.unpack_from('<Q', b, off(a))[0]
NOP, BTI, MOV = 0xd503201f, 0xd503245f, 0xaa1e03e9
traced = ['add', 'mul', 'sum8', 'make_big', 'fma3', 'call_add', 'fib', 'bti_add',
          'bti_sum8', 'bti_make_big', 'bti_call_add']
allowed = []
bad = []
for fn in traced:
    f = syms[fn]
    e = f + 4 if u32(emb, f) == BTI else f
    if u32(emb, e) != MOV or u32(emb, e + 4) != NOP:
        bad.append('%s: entry is not MOV X9, X30; NOP' % fn)
    if u64(emb, f - 8) != syms['ps_default_ops']:
        bad.append('%s: literal %x is not ps_default_ops' % (fn, u64(emb, f - 8)))
    allowed.append((off(f - 8), off(e + 8)))
if not any(u32(emb, syms['bti_add']) == BTI for _ in [0]):
    bad.append('bti_add has no BTI C: the fixture does not cover the BTI layout')
m = syms['mis_seven']
if emb[off(m - 12):off(m + 8)] != orig[off(m - 12):off(m + 8)]:
    bad.append('mis_seven changed')
for n, typ, flags, addr, o, size in secs:
    if n in ('.patchsite.tramp', '.patchsite.sites'):
        allowed.append((o, o + size))
if len(orig) != len(emb):
    bad.append('file size changed')
else:
    i = 0
    for i in range(len(orig)):
        if orig[i] != emb[i] and not any(a <= i < b for a, b in allowed):
            bad.append('byte at file offset 0x%x changed outside the sites and reserved sections' % i)
            break
if bad:
    print('\n'.join(bad))
    sys.exit(1)
PYEOF
}

for p in prog prog-dyn; do
	in=$fx/$p out=$work/$p.emb
	embed "$in" "$out" >"$work/$p.embed.out" 2>"$work/$p.embed.err"
	check "$p: embed" sh -c "[ -e '$out' ] && [ ! -s '$work/$p.embed.err' ] &&
		grep -q 'mis_seven' '$work/$p.embed.out'"
	eu-elflint --gnu-ld "$in" >"$work/$p.lint.in" 2>&1
	eu-elflint --gnu-ld "$out" >"$work/$p.lint.out" 2>&1
	lrc=$?
	if [ "$p" = prog-dyn ]; then
		check "$p: elflint" [ "$lrc" -eq 0 ]
	else
		# static glibc has eu-elflint complaints of its own (IRELATIVE in
		# .rela.plt, __ehdr_start): the output must add none
		check "$p: elflint (no new findings)" cmp -s "$work/$p.lint.in" "$work/$p.lint.out"
	fi
	check "$p: layout" layout "$in" "$out"
	$QEMU -L "$SYSROOT" "$in" >"$work/$p.run.in" 2>&1
	$QEMU -L "$SYSROOT" "$out" >"$work/$p.run.out" 2>&1
	check "$p: run (same output)" sh -c "[ -s '$work/$p.run.in' ] && cmp -s '$work/$p.run.in' '$work/$p.run.out'"
	for t in count two-ops parent passthrough threads misaligned; do
		check "$p: $t" $QEMU -L "$SYSROOT" "$out" test "$t"
	done
	check "$p: not-embedded" $QEMU -L "$SYSROOT" "$in" test not-embedded
done

embed "$fx/prog" "$work/again.emb" >/dev/null 2>&1
cp "$fx/prog" "$work/inplace"
embed "$work/inplace" "$work/inplace" >/dev/null 2>&1
check "deterministic (and in place)" sh -c "cmp -s '$work/prog.emb' '$work/again.emb' &&
	cmp -s '$work/prog.emb' '$work/inplace'"
rm -f "$work/twice"
embed "$work/prog.emb" "$work/twice" >/dev/null 2>"$work/twice.err"
rc=$?
check "again: embedded image refused" sh -c "[ $rc -ne 0 ] && [ ! -e '$work/twice' ] &&
	[ \$(wc -l <'$work/twice.err') -eq 1 ]"

for bad in x86 noentries noreserve pie; do
	rm -f "$work/bad.out"
	embed "$fx/$bad" "$work/bad.out" >"$work/bad.stdout" 2>"$work/bad.stderr"
	rc=$?
	check "bad-$bad: refused with one line" sh -c "[ $rc -ne 0 ] && [ ! -e '$work/bad.out' ] &&
		[ \$(wc -l <'$work/bad.stderr') -eq 1 ] && grep -q '^patchsite: $fx/$bad: ' '$work/bad.stderr'"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
