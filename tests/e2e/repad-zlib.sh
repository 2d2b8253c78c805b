#!/bin/sh
# End-to-end test of `patchsite repad` (arm64 CALL_OPS, issue 4) on a program
# none of us wrote: Debian's own zlib source package.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/repad-zlib.sh  (as root, or with sudo)
#
# Needs a Debian 12 machine with what scripts/install-deps.sh installs plus
# dpkg-dev (apt-get source unpacks with dpkg-source).  The source is fetched
# with `apt-get source zlib` once and cached in build/zlib-src (ZLIB_CACHE)
# by tests/e2e/debsrc.sh (which adds a deb-src entry when there is none).
#
# zlib is configured and built with its own configure and Makefile for arm64
# (CC=aarch64-linux-gnu-gcc, CFLAGS=-Os -g -fpatchable-function-entry=4,2,
# static), then every object is repadded and example and minigzip are linked
# again from the padded objects, the way zlib's Makefile links them.
#
# Misaligned CALL_OPS literals are counted by tests/e2e/literals.py, from the
# compiler's and linker's own __patchable_function_entries, not by patchsite;
# wherever patchsite audit or record runs, its exit status is checked (audit:
# 0 clean, 1 findings, anything else fails; record: 0).
#
# Cases:
#   source              zlib's source is there (apt-get source, or the cache)
#   configure, build    zlib's configure and `make libz.a example minigzip`
#   misaligned-unpadded P  literals.py: the programs linked from the original
#                       objects have misaligned CALL_OPS literals (a nonzero
#                       count)
#   audit-unpadded P    patchsite audit exits 1 and reports as many misaligned
#                       literals as literals.py counts
#   repad O             repad succeeds on each of the 17 objects
#   in-place O          repad --in-place of a copy gives the same bytes as -o;
#                       a second --in-place pads nothing, changes nothing
#   elflint O           eu-elflint --gnu-ld accepts each padded object
#   misaligned-padded O literals.py: the padded object has literals, none
#                       misaligned
#   audit-padded O      patchsite audit exits 0, no misaligned literal
#   code O              objdump: the padded code is the original code with
#                       NOPs inserted only before literals (branch targets
#                       compared by symbol+offset)
#   link-padded P       example and minigzip link from the padded objects
#   misaligned-padded P ... and literals.py counts no misaligned literal
#   audit-padded P      ... and patchsite audit exits 0, none misaligned
#   sites P             ... and record (exit 0) finds as many sites as before,
#                       as many as literals.py counts literals
#   example             zlib's example prints the same (and exits 0) padded
#                       and unpadded, under qemu-aarch64
#   minigzip ...        round trips under qemu-aarch64: compress and
#                       decompress several files (empty, small, binary, a
#                       16 MiB one) at several levels and strategies; the
#                       padded minigzip's .gz is byte-identical to the
#                       unpadded one's, gunzip (host) reads it, and the
#                       padded minigzip reads what the host gzip writes
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`; exits
# nonzero on any failure.  Nothing is skipped: a failing apt-get is a failure.
# About 1 minute (plain build) to 2 minutes (ASan build) once the source is
# cached, on a shared 2-core machine; fetching the source adds a few seconds.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
CC_A64=${CC_A64:-aarch64-linux-gnu-gcc}
CROSS=${CROSS:-aarch64-linux-gnu-}
OBJDUMP=${OBJDUMP:-${CROSS}objdump}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
ZLIB_CACHE=${ZLIB_CACHE:-$root/build/zlib-src}
CFLAGS_A64=${CFLAGS_A64:--Os -g -fpatchable-function-entry=4,2}
PY=/usr/bin/python3

. "$here/lib.sh"
showlog() { sed 's/^/# /' "$1" | tail -n "${2:-30}"; }

for t in "$PATCHSITE" "$CC_A64" "${CROSS}ar" "$OBJDUMP" "$QEMU" eu-elflint "$PY" \
	apt-get dpkg-source gzip cmp make; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"
. "$here/repadlib.sh"	# count_literals, audit_agrees, elflint, ps_ok

# ---------------------------------------------------------------- source
# debsrc.sh: the cache, or apt-get source (adding a deb-src entry if needed)
. "$here/debsrc.sh"
if debsrc zlib "$ZLIB_CACHE" configure zlib.h test/minigzip.c; then
	src=$debsrc_dir
	ok "source: $debsrc_how"
else
	not_ok "source: apt-get source zlib"
	finish
fi

# ---------------------------------------------------------------- build
# A private copy, so a build never writes into the cache.
cp -R "$src" "$work/src"
mkdir "$work/orig" "$work/pad"
if (cd "$work/orig" && CC=$CC_A64 AR=${CROSS}ar RANLIB=${CROSS}ranlib CFLAGS=$CFLAGS_A64 LDFLAGS=-static \
	"$work/src/configure" --static) >"$work/configure.log" 2>&1; then
	ok "configure (CC=$CC_A64 CFLAGS=$CFLAGS_A64 --static)"
else
	showlog "$work/configure.log"; not_ok "configure"; finish
fi
# Without the MAKEFLAGS of a calling make: its variable overrides (CFLAGS=...)
# would otherwise replace zlib's own.
if env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL nice make -C "$work/orig" -j2 \
	libz.a example minigzip >"$work/make.log" 2>&1; then
	ok "build: make libz.a example minigzip"
else
	showlog "$work/make.log"; not_ok "build"; finish
fi

# The objects zlib's Makefile built, in its own order.
libobjs=$(sed -n 's/^OBJC *= *//p' "$work/orig/Makefile")
[ "$libobjs" = '$(OBJZ) $(OBJG)' ] &&
	libobjs="$(sed -n 's/^OBJZ *= *//p' "$work/orig/Makefile") $(sed -n 's/^OBJG *= *//p' "$work/orig/Makefile")"
objs="$libobjs example.o minigzip.o"
n=0
for o in $objs; do [ -f "$work/orig/$o" ] && n=$((n + 1)); done
check "build: $n objects (zlib's OBJC, example.o, minigzip.o)" [ "$n" -ge 17 ]

sites() { # IMAGE: `patchsite record IMAGE` exits 0; its lines in $nsite
	nsite='?'
	ps_ok -e "$work/record.err" 0 "$work/record.out" -- record "$1" || return 1
	nsite=$(wc -l <"$work/record.out")
}

for p in example minigzip; do
	has_misaligned "$work/orig/$p"; r=$?
	check "misaligned-unpadded $p: literals.py: $nmis of $nlit literals misaligned (want > 0)" [ "$r" -eq 0 ]
	check "audit-unpadded $p: exit 1, $nmis misaligned as literals.py" audit_agrees "$work/orig/$p"
done

# ---------------------------------------------------------------- repad
in_place_idempotent() { # OUT: repad --in-place of $work/inplace.o gives OUT, a second run pads nothing
	ps_ok 0 /dev/null -- repad --in-place "$work/inplace.o" && cmp -s "$work/inplace.o" "$1" &&
		ps_ok 0 "$work/inplace.log" -- repad -v --in-place "$work/inplace.o" &&
		grep -q ': padded 0 functions, 0 bytes added' "$work/inplace.log" &&
		cmp -s "$work/inplace.o" "$1"
}
for o in $objs; do
	in=$work/orig/$o
	out=$work/pad/$o
	if ps_run -e "$work/repad.log" 0 "$work/repad.log" -- repad -v "$in" -o "$out"; then
		ok "repad $o: $(sed -n 's/^.*: padded \([0-9]*\) functions, \([0-9]*\) bytes added.*/\1 functions, \2 bytes/p' "$work/repad.log")"
	else
		not_ok "repad $o" "$ps_msg"; continue
	fi
	# --in-place on a copy of the original gives the same bytes as -o, and
	# a second run on the padded object pads nothing and changes nothing.
	cp "$in" "$work/inplace.o"
	check "in-place $o: same bytes as -o, then idempotent" in_place_idempotent "$out"
	# (eu-elflint passes a file that does not exist)
	check "elflint $o" sh -c "[ -s '$out' ] && eu-elflint --gnu-ld --quiet '$out'"
	check "misaligned-padded $o" none_misaligned "$out"
	check "audit-padded $o: exit 0, none misaligned as literals.py" audit_agrees "$out"
	"$OBJDUMP" -dr -t --no-show-raw-insn "$in" >"$work/$o.orig.dis"
	"$OBJDUMP" -dr -t --no-show-raw-insn "$out" >"$work/$o.pad.dis"
	check "code $o" "$PY" - "$work/$o.orig.dis" "$work/$o.pad.dis" <<'PYEOF'
import bisect, re, sys

def load(path):
    """{section: [instruction, targets as <function+off>]}

    A branch that the assembler resolved is shown by objdump as `<sym+off>`.
    A relocated one is shown with a meaningless target; its relocation is
    used instead, with `.text+0x10c` turned into `<function+off>` through
    the symbol table, so that both objects name the same instruction."""
    lines = open(path).read().split('\n')
    syms = {}                       # section -> sorted [(value, name)]
    for line in lines:
        m = re.match(r'([0-9a-f]{16}) (.{7}) (\S+)\t[0-9a-f]+ (\S+)$', line)
        if m and 'F' in m.group(2):
            syms.setdefault(m.group(3), []).append((int(m.group(1), 16), m.group(4)))
    for v in syms.values():
        v.sort()

    def name(target):
        m = re.match(r'(\.text[\w.]*)(?:\+0x([0-9a-f]+))?$', target)
        if not m or m.group(1) not in syms:
            return target
        off = int(m.group(2) or '0', 16)
        tab = syms[m.group(1)]
        i = bisect.bisect_right(tab, (off, '\uffff')) - 1
        if i < 0:
            return target
        return '%s+0x%x' % (tab[i][1], off - tab[i][0])

    secs, cur = {}, None
    for line in lines:
        m = re.match(r'Disassembly of section (\S+):', line)
        if m:
            cur = secs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        m = re.match(r'\s+[0-9a-f]+: (R_\w+)\s+(\S+)$', line)
        if m and cur:
            cur[-1] = re.sub(r'<[^>]*>', '', cur[-1]).strip() + ' {%s %s}' % (m.group(1), name(m.group(2)))
            continue
        m = re.match(r'\s+[0-9a-f]+:\t(.*)$', line)
        if m:
            ins = m.group(1).split('//')[0].strip()
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
            j += 1          # an inserted NOP, just before literal + entry NOPs
        elif i < len(a) and j < len(b) and a[i] == b[j]:
            i += 1; j += 1
        else:
            sys.exit('%s: differs at %d/%d: %r vs %r' % (sec, i, j,
                     a[i] if i < len(a) else None, b[j] if j < len(b) else None))
PYEOF
done

# Link the padded objects the way zlib's Makefile links the originals.
(cd "$work/pad" && rm -f libz.a && "${CROSS}ar" rc libz.a $libobjs && "${CROSS}ranlib" libz.a) >"$work/ar.log" 2>&1 ||
	{ showlog "$work/ar.log"; not_ok "ar libz.a (padded)"; }
for p in example minigzip; do
	if (cd "$work/pad" && $CC_A64 $CFLAGS_A64 -o $p $p.o -static -L. libz.a) >"$work/ld.log" 2>&1; then
		ok "link-padded $p"
	else
		showlog "$work/ld.log"; not_ok "link-padded $p"; continue
	fi
	check "misaligned-padded $p: no misaligned literal" none_misaligned "$work/pad/$p"
	check "audit-padded $p: exit 0, none misaligned as literals.py" audit_agrees "$work/pad/$p"
	count_literals "$work/orig/$p"; l1=$nlit
	count_literals "$work/pad/$p"; l2=$nlit
	sites "$work/orig/$p"; r1=$?; s1=$nsite
	sites "$work/pad/$p"; r2=$?; s2=$nsite
	check "sites $p: record (exit 0) lists $s2 padded, $s1 unpadded; literals.py counts $l2 and $l1" \
		sh -c "[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ '$l1' -gt 0 ] && [ '$s1' -eq '$l1' ] && [ '$s2' -eq '$l2' ] && [ '$s1' -eq '$s2' ]"
done

# ---------------------------------------------------------------- run
# qrun PROGRAM ARG...: a program of the target under qemu-user
qrun() { "$QEMU" -L "$SYSROOT" "$@"; }

# zlib's example writes foo.gz into its working directory.
mkdir "$work/ex1" "$work/ex2"
(cd "$work/ex1" && qrun "$work/orig/example") >"$work/ex1.out" 2>&1
rc1=$?
(cd "$work/ex2" && qrun "$work/pad/example") >"$work/ex2.out" 2>&1
rc2=$?
check "example: padded prints what unpadded prints, both exit 0" \
	sh -c "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q 'large_inflate(): OK' '$work/ex2.out' && cmp -s '$work/ex1.out' '$work/ex2.out'"
[ "$rc2" -eq 0 ] || showlog "$work/ex2.out"

# DWARF: the padded programs' line rows, location and range lists,
# DW_AT_call_return_pc, unit DW_AT_high_pc and aranges name the same
# symbol+offset as the unpadded ones' (bench/repad/dwarfcheck.py, with
# llvm-dwarfdump; before repad_dwarf.c 84% of the line rows were off)
for p in example minigzip; do
	check "dwarf: $p's line rows, location/range lists, call_return_pc, high_pc, aranges agree" \
		"$PY" "$root/bench/repad/dwarfcheck.py" "$work/orig/$p" "$work/pad/$p" --show 3 \
		--only 'line-table row,DW_AT_location list entry,DW_AT_ranges list entry,DW_AT_call_return_pc,DW_AT_high_pc,aranges entry'
done

# Test data: empty, small text, zlib's own sources, a binary, and 16 MiB of
# text, binary and random bytes mixed.
d=$work/data
mkdir "$d"
: >"$d/empty"
printf 'hello, hello!\n' >"$d/small"
cat "$work/src"/*.c "$work/src"/*.h >"$d/sources"
cp "$work/pad/minigzip" "$d/binary"
"$PY" - "$d/large" "$d/sources" "$d/binary" <<'PYEOF'
import random, sys
rnd = random.Random(4)
text, binary = open(sys.argv[2], 'rb').read(), open(sys.argv[3], 'rb').read()
out, size = bytearray(), 16 << 20
while len(out) < size:
    k = rnd.randrange(3)
    if k == 0:
        o = rnd.randrange(len(text)); out += text[o:o + rnd.randrange(1, 65536)]
    elif k == 1:
        o = rnd.randrange(len(binary)); out += binary[o:o + rnd.randrange(1, 65536)]
    else:
        out += rnd.randbytes(rnd.randrange(1, 8192))
open(sys.argv[1], 'wb').write(out[:size])
PYEOF

roundtrip() { # FILE OPT -> 0 when every check holds
	rf=$1 opt=$2 t=$work/rt
	qrun "$work/pad/minigzip" $opt <"$rf" >"$t.pad.gz" || { echo "# padded minigzip $opt failed"; return 1; }
	qrun "$work/orig/minigzip" $opt <"$rf" >"$t.orig.gz" || { echo "# unpadded minigzip $opt failed"; return 1; }
	cmp -s "$t.pad.gz" "$t.orig.gz" || { echo "# .gz differs from the unpadded minigzip's"; return 1; }
	qrun "$work/pad/minigzip" -d <"$t.pad.gz" >"$t.out" && cmp -s "$rf" "$t.out" ||
		{ echo "# padded minigzip -d does not give the input back"; return 1; }
	gzip -dc <"$t.pad.gz" >"$t.out" && cmp -s "$rf" "$t.out" ||
		{ echo "# gzip -d does not give the input back"; return 1; }
}

for f in empty small sources binary large; do
	for opt in -6 -1 -9; do
		check "minigzip $opt $f ($(wc -c <"$d/$f") bytes): round trip, same .gz as unpadded, gunzip agrees" roundtrip "$d/$f" "$opt"
	done
done
for opt in -f -h -r; do
	check "minigzip $opt large: round trip, same .gz as unpadded, gunzip agrees" roundtrip "$d/large" "$opt"
done
# Inflate of a stream that zlib did not write.
gzip -9c <"$d/large" >"$work/host.gz"
check "minigzip -d of host gzip -9 output of large" sh -c \
	"'$QEMU' -L '$SYSROOT' '$work/pad/minigzip' -d <'$work/host.gz' >'$work/host.out' && cmp -s '$d/large' '$work/host.out'"
# The file mode (minigzip FILE -> FILE.gz, minigzip -d FILE.gz -> FILE).
cp "$d/sources" "$work/fm"
check "minigzip FILE / minigzip -d FILE.gz" sh -c \
	"'$QEMU' -L '$SYSROOT' '$work/pad/minigzip' '$work/fm' && [ ! -e '$work/fm' ] && [ -s '$work/fm.gz' ] &&
	 '$QEMU' -L '$SYSROOT' '$work/pad/minigzip' -d '$work/fm.gz' && cmp -s '$d/sources' '$work/fm'"

finish
