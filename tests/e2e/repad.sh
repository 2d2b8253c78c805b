#!/bin/sh
# End-to-end test of `patchsite repad` (arm64 CALL_OPS, issue 4) on the
# objects of fixtures/repad, checked with tools that are not patchsite where
# possible: eu-elflint, objdump, the linker, and running under qemu-user.
#
#   make -C fixtures/repad && PATCHSITE=/path/to/patchsite sh tests/e2e/repad.sh
#
# REPAD, if set, is a command run as `$REPAD IN OUT` instead of
# `$PATCHSITE repad IN -o OUT` (for testing repad_object() through a driver).
#
# Cases:
#   audit-unpadded   the objects as compiled have misaligned literals
#   repad            repad succeeds on each object
#   elflint          eu-elflint --gnu-ld accepts each padded object
#   audit-padded     audit finds no misaligned literal in the padded objects
#   code             objdump: the padded code is the original code with NOPs
#                    inserted only before literals (branch targets compared
#                    by symbol+offset)
#   link-unpadded    the program linked from the original objects has misaligned sites
#   link-padded      the program linked from the padded objects has none
#   run              both programs print the same under qemu-aarch64
#   idempotent       repadding a padded object inserts nothing
#   bad-*            x86 object, linked program, not ELF: exit != 0, one line
#                    `patchsite: FILE: ...`, no output file
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/repad
PATCHSITE=${PATCHSITE:-$root/patchsite}
CC_A64=${CC_A64:-aarch64-linux-gnu-gcc}
OBJDUMP=${OBJDUMP:-aarch64-linux-gnu-objdump}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
PY=/usr/bin/python3

pass=0
fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() { echo "not ok - $1"; fail=$((fail + 1)); }
check() { name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }

repad() {
	if [ -n "${REPAD:-}" ]; then
		$REPAD "$1" "$2"
	else
		"$PATCHSITE" repad "$1" -o "$2"
	fi
}

for t in "$CC_A64" "$OBJDUMP" "$QEMU" eu-elflint "$PY" cc; do
	command -v "$t" >/dev/null 2>&1 || notok "tool $t is installed"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -s -C "$fix" >"$work/make.log" 2>&1 || { cat "$work/make.log"; notok "build fixtures"; }
objs="a b c"

misaligned() { # IMAGE -> number of misaligned findings
	"$PATCHSITE" audit "$1" 2>/dev/null | grep -c '^misaligned:'
}

for o in $objs; do
	in=$fix/out/$o.o
	out=$work/$o.o
	check "audit-unpadded $o.o" [ "$(misaligned "$in")" -gt 0 ]
	check "repad $o.o" repad "$in" "$out"
	check "elflint $o.o" eu-elflint --gnu-ld --quiet "$out"
	check "audit-padded $o.o" [ "$(misaligned "$out")" -eq 0 ]
	# Code: same instruction stream, NOPs inserted only just before a
	# literal (the 2 NOPs before a function), branch targets by symbol.
	"$OBJDUMP" -d --no-show-raw-insn "$in" >"$work/$o.orig.dis"
	"$OBJDUMP" -d --no-show-raw-insn "$out" >"$work/$o.pad.dis"
	check "code $o.o" "$PY" - "$work/$o.orig.dis" "$work/$o.pad.dis" <<'PYEOF'
import re, sys

def load(path):
    """{section: [(mnemonic and operands with addresses replaced by symbol+off)]}"""
    secs, cur = {}, None
    for line in open(path):
        m = re.match(r'Disassembly of section (\S+):', line)
        if m:
            cur = secs.setdefault(m.group(1), [])
            continue
        m = re.match(r'\s+[0-9a-f]+:\t(.*)$', line)
        if m and cur is not None:
            ins = m.group(1).split('//')[0].strip()
            # `bl 28 <tri>` -> `bl <tri>`: the address moves, the symbol does not
            ins = re.sub(r'\b[0-9a-f]+ (<[^>]+>)', r'\1', ins)
            cur.append(re.sub(r'\s+', ' ', ins))
    return secs

orig, pad = load(sys.argv[1]), load(sys.argv[2])
if orig.keys() != pad.keys():
    sys.exit('sections differ: %s %s' % (sorted(orig), sorted(pad)))
for sec in orig:
    a, b = orig[sec], pad[sec]
    i = j = 0
    while i < len(a) or j < len(b):
        if (j < len(b) and (j == 0 or b[j - 1] != 'nop') and b[j:j + 5] == ['nop'] * 5 and
                a[i:i + 5] != ['nop'] * 5):
            # an inserted NOP: after the previous function's code and before
            # the literal (NOP NOP) and the entry NOPs (NOP NOP) of the next
            j += 1
        elif i < len(a) and j < len(b) and a[i] == b[j]:
            i += 1; j += 1
        else:
            sys.exit('%s: differs at %d/%d: %r vs %r' % (sec, i, j,
                     a[i] if i < len(a) else None, b[j] if j < len(b) else None))
PYEOF
	check "idempotent $o.o" sh -c "$(if [ -n "${REPAD:-}" ]; then echo "$REPAD"; else echo "'$PATCHSITE' repad"; fi) '$out' $([ -n "${REPAD:-}" ] || echo -o) '$work/$o.again.o' >/dev/null &&
		'$OBJDUMP' -d '$out' | tail -n +3 >'$work/1' && '$OBJDUMP' -d '$work/$o.again.o' | tail -n +3 >'$work/2' && cmp -s '$work/1' '$work/2'"
done

"$CC_A64" -o "$work/prog.orig" $(for o in $objs; do echo "$fix/out/$o.o"; done) 2>"$work/ld1" ||
	{ cat "$work/ld1"; notok "link unpadded"; }
"$CC_A64" -o "$work/prog.pad" $(for o in $objs; do echo "$work/$o.o"; done) 2>"$work/ld2" ||
	{ cat "$work/ld2"; notok "link padded"; }
check "link-unpadded has misaligned sites" [ "$(misaligned "$work/prog.orig")" -gt 0 ]
check "link-padded has no misaligned site" [ "$(misaligned "$work/prog.pad")" -eq 0 ]
"$QEMU" -L "$SYSROOT" "$work/prog.orig" >"$work/out.orig" 2>&1
rc1=$?
"$QEMU" -L "$SYSROOT" "$work/prog.pad" >"$work/out.pad" 2>&1
rc2=$?
check "run: padded program prints what the original prints" \
	sh -c "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ -s '$work/out.orig' ] && cmp -s '$work/out.orig' '$work/out.pad'"

# Bad input: one line `patchsite: FILE: ...`, nonzero status, nothing written.
printf 'int f(int x) { return x + 1; }\n' >"$work/x86.c"
cc -c -o "$work/x86.o" "$work/x86.c"
printf 'not an ELF file\n' >"$work/junk.o"
for bad in "$work/x86.o" "$work/prog.pad" "$work/junk.o"; do
	name=$(basename "$bad")
	rm -f "$work/bad.out"
	repad "$bad" "$work/bad.out" >"$work/bad.stdout" 2>"$work/bad.stderr"
	rc=$?
	check "bad-$name: refused with one line" sh -c "[ $rc -ne 0 ] && [ ! -e '$work/bad.out' ] &&
		[ \$(wc -l <'$work/bad.stderr') -eq 1 ] && grep -q '^patchsite: $bad: ' '$work/bad.stderr'"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
