#!/bin/sh
# End-to-end test of `patchsite repad` (CALL_OPS, issue 4) on the
# objects of fixtures/repad, checked with tools that are not patchsite where
# possible: eu-elflint, objdump, the linker, and running under qemu-user.
#
#   make -C fixtures/repad && PATCHSITE=/path/to/patchsite sh tests/e2e/repad.sh
#
# REPAD, if set, is a command run as `$REPAD IN OUT` instead of
# `$PATCHSITE repad IN -o OUT` (for testing repad_object() through a driver).
#
# Misaligned literals are counted by tests/e2e/literals.py, from the
# compiler's and linker's own __patchable_function_entries, never from
# patchsite's output; a count that literals.py cannot make fails the case.
#
# Cases:
#   misaligned-unpadded  literals.py: the objects as compiled have misaligned
#                    literals
#   audit-unpadded   patchsite audit exits 1 and reports as many misaligned
#                    literals as literals.py counts (exit 2 fails)
#   repad            repad succeeds on each object
#   elflint          eu-elflint --gnu-ld accepts each padded object (which
#                    must exist: eu-elflint passes a missing file)
#   misaligned-padded  literals.py: the padded objects have literals, none
#                    misaligned
#   audit-padded     patchsite audit exits 0 and reports no misaligned literal
#   code             objdump: the padded code is the original code with NOPs
#                    inserted only before literals (branch targets compared
#                    by symbol+offset)
#   link-unpadded    the program linked from the original objects has misaligned
#                    literals (literals.py), and audit agrees (exit 1, same count)
#   link-padded      the program linked from the padded objects has none, and
#                    audit agrees (exit 0)
#   run              both programs print the same under qemu-aarch64
#   idempotent       repadding a padded object inserts nothing
#   dwarf            bench/repad/dwarfcheck.py (llvm-dwarfdump): the padded
#                    program's line-table rows, DW_AT_call_return_pc, unit
#                    DW_AT_high_pc, .debug_aranges, range and location lists name the
#                    same symbol+offset as the original's (riscv64: what
#                    each variant's toolchain leaves to repad, see below)
#   addr2line        the same file:line at every function entry of the
#                    fixture objects, padded and unpadded
#   dwarf-grow       grow.o: .debug_line grows where an advance no longer
#                    fits a special opcode, the relocation behind it moves,
#                    rows agree, llvm-dwarfdump reads it cleanly
#   bad-debug-line   a .debug_line unit longer than its section: exit 2,
#                    one line naming it, nothing written
#   bad-*            x86 object, linked program, not ELF: exit != 0, one line
#                    `patchsite: FILE: ...`, no output file
# The same per-object and per-program cases run for arm64 (out/*.o) and for
# each riscv64 variant (out/rv-VARIANT/*.o, see fixtures/repad/Makefile),
# named `... rv-VARIANT/x.o`; the programs run under qemu-riscv64.  riscv64
# adds:
#   link-padded-norelax  the padded objects of a relaxed variant linked with
#                    --no-relax: still no misaligned site, same output
#   rv-range fits.o  a resolved c.beqz re-encoded to its limit, target kept
#   rv-secsym        a `.text + N` addend in .data moves with the code
#                    (-mno-relax)
#   bad-rv-*         refused with the reason: a resolved branch out of range
#                    after padding, an auipc with neither relocation nor
#                    %pcrel_lo use, or read again after it, a resolved branch across padding in a
#                    relaxed section (ld -r of relaxed and -mno-relax code),
#                    a `.text + N` addend across padding in a relaxed section
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/repad
PATCHSITE=${PATCHSITE:-$root/patchsite}
CC_A64=${CC_A64:-aarch64-linux-gnu-gcc}
CC_RV=${CC_RV:-riscv64-linux-gnu-gcc}
OBJDUMP_RV=${OBJDUMP_RV:-riscv64-linux-gnu-objdump}
READELF_RV=${READELF_RV:-riscv64-linux-gnu-readelf}
READELF_A64=${READELF_A64:-aarch64-linux-gnu-readelf}
QEMU_RV=${QEMU_RV:-qemu-riscv64}
SYSROOT_RV=${SYSROOT_RV:-/usr/riscv64-linux-gnu}
OBJDUMP=${OBJDUMP:-aarch64-linux-gnu-objdump}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
PY=/usr/bin/python3

. "$here/lib.sh"

# repad STATUS IN OUT [STDOUT [STDERR]]: `patchsite repad -v IN -o OUT` (or
# $REPAD IN OUT) must exit STATUS; when it does not, 1, and the command, its
# status and stderr in $ps_msg and on stderr
repad() {
	_rp_want=$1 _rp_o=${4:-/dev/stdout} _rp_e=${5:-$ps_dir/repad.err}
	if [ -n "${REPAD:-}" ]; then
		$REPAD "$2" "$3" >"$_rp_o" 2>"$_rp_e"
		ps_rc=$?
		[ "$ps_rc" -eq "$_rp_want" ] && return 0
		echo "$REPAD $2 $3: exit status $ps_rc, expected $_rp_want" | cat - "$_rp_e" >"$ps_msg"
	elif ps_run -e "$_rp_e" "$_rp_want" "$_rp_o" -- repad -v "$2" -o "$3"; then
		return 0
	fi
	sed 's/^/# /' "$ps_msg" >&2
	return 1
}

# llvm-dwarfdump for dwarfcheck.py: an install step, never a skip
if ! command -v llvm-dwarfdump >/dev/null 2>&1 && [ ! -x /usr/lib/llvm-14/bin/llvm-dwarfdump ]; then
	apt-get install -y -q llvm-14 >/dev/null 2>&1 || not_ok "apt-get install llvm-14 (llvm-dwarfdump)"
fi
DWARFDUMP=$(command -v llvm-dwarfdump || echo /usr/lib/llvm-14/bin/llvm-dwarfdump)
for t in "$CC_A64" "$OBJDUMP" "$READELF_A64" aarch64-linux-gnu-ld "$QEMU" "$CC_RV" "$OBJDUMP_RV" "$READELF_RV" "$QEMU_RV" clang eu-elflint "$PY" cc \
	aarch64-linux-gnu-nm aarch64-linux-gnu-addr2line riscv64-linux-gnu-nm riscv64-linux-gnu-addr2line; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"
. "$here/repadlib.sh"	# count_literals, audit_agrees, elflint, ps_ok

make -s -C "$fix" >"$work/make.log" 2>&1 || { cat "$work/make.log"; not_ok "build fixtures"; }
objs="a b c"


idempotent_a64() { # PADDED AGAIN: repad of PADDED exits 0 and changes no instruction
	repad 0 "$1" "$2" /dev/null || return 1
	"$OBJDUMP" -d "$1" | tail -n +3 >"$work/1" && "$OBJDUMP" -d "$2" | tail -n +3 >"$work/2" &&
		cmp -s "$work/1" "$work/2"
}

for o in $objs; do
	in=$fix/out/$o.o
	out=$work/$o.o
	check "misaligned-unpadded $o.o" has_misaligned "$in"
	check "audit-unpadded $o.o: exit 1, as many misaligned as literals.py" audit_agrees "$in"
	check "repad $o.o" repad 0 "$in" "$out"
	check "elflint $o.o" elflint "$out"
	check "misaligned-padded $o.o" none_misaligned "$out"
	check "audit-padded $o.o: exit 0, none misaligned as literals.py" audit_agrees "$out"
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
	check "idempotent $o.o" idempotent_a64 "$out" "$work/$o.again.o"
done

"$CC_A64" -o "$work/prog.orig" $(for o in $objs; do echo "$fix/out/$o.o"; done) 2>"$work/ld1" ||
	{ cat "$work/ld1"; not_ok "link unpadded"; }
"$CC_A64" -o "$work/prog.pad" $(for o in $objs; do echo "$work/$o.o"; done) 2>"$work/ld2" ||
	{ cat "$work/ld2"; not_ok "link padded"; }
check "link-unpadded has misaligned literals" has_misaligned "$work/prog.orig"
check "link-unpadded: audit exits 1, as many misaligned as literals.py" audit_agrees "$work/prog.orig"
check "link-padded has no misaligned literal" none_misaligned "$work/prog.pad"
check "link-padded: audit exits 0, none misaligned as literals.py" audit_agrees "$work/prog.pad"
"$QEMU" -L "$SYSROOT" "$work/prog.orig" >"$work/out.orig" 2>&1
rc1=$?
"$QEMU" -L "$SYSROOT" "$work/prog.pad" >"$work/out.pad" 2>&1
rc2=$?
check "run: padded program prints what the original prints" \
	sh -c "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ -s '$work/out.orig' ] && cmp -s '$work/out.orig' '$work/out.pad'"

# DWARF: the padded program's debug information names the same code as the
# original's (symbol+offset), for the values repad corrects.
dwarf_same() { # NM KINDS ORIG PAD
	NM=$1 "$PY" "$root/bench/repad/dwarfcheck.py" --only "$2" "$3" "$4" >"$work/dwarf.log" 2>&1 ||
		{ cat "$work/dwarf.log"; return 1; }
}
# addr2line at the entry of every function of the fixture objects, and 8
# bytes in, past the entry NOPs, where GCC's DW_AT_low_pc is (the entry
# itself of a section's first function is in no unit's range: ??:?)
entry_lines() { # CROSS PROG OBJ... -> "name file:line file:line" lines
	cross=$1 prog=$2; shift 2
	"${cross}nm" --defined-only "$@" | awk '$2 ~ /^[Tt]$/ && $3 !~ /^[$.]/ { print $3 }' | sort -u >"$work/funcs"
	"${cross}nm" --defined-only "$prog" | awk 'NR == FNR { want[$1] = 1; next }
		$2 ~ /^[Tt]$/ && ($3 in want) && !seen[$3]++ { print $1, $3 }' "$work/funcs" - |
	while read -r addr name; do
		echo "$name" $("${cross}addr2line" -e "$prog" "0x$addr" \
			"$(printf '0x%x' $((0x$addr + 8)))" | sed 's/ (discriminator [0-9]*)//')
	done | sort
}
same_entry_lines() { # CROSS ORIG PAD OBJ...
	cross=$1 o=$2 p=$3; shift 3
	entry_lines "$cross" "$o" "$@" >"$work/a2l.orig"
	entry_lines "$cross" "$p" "$@" >"$work/a2l.pad"
	grep -q ' [^ ?][^ ]*:[0-9][0-9]*$' "$work/a2l.orig" && diff "$work/a2l.orig" "$work/a2l.pad"
}
check "dwarf: line rows, call_return_pc, CU high_pc, aranges, range and location lists as in the original" \
	dwarf_same aarch64-linux-gnu-nm 'line-table row,DW_AT_call_return_pc,DW_AT_high_pc,aranges entry,DW_AT_ranges list entry,DW_AT_location list entry' \
	"$work/prog.orig" "$work/prog.pad"
check "addr2line: same file:line at every function entry" \
	same_entry_lines aarch64-linux-gnu- "$work/prog.orig" "$work/prog.pad" $(for o in $objs; do echo "$fix/out/$o.o"; done)

# .debug_line that must grow (fixtures/repad/grow.S): the advance to gb's
# first row no longer fits a special opcode; the section grows, the
# .text.hot sequence's DW_LNE_set_address relocation moves behind it, and
# the rows of the linked programs agree.
g_in=$fix/out/grow.o g_out=$work/grow.o
check "repad grow.o" repad 0 "$g_in" "$g_out" /dev/null
check "elflint grow.o" elflint "$g_out"
lsize() { "$READELF_A64" -SW "$1" | awk '$2 == ".debug_line" { print $6 }'; }
lrel() { "$READELF_A64" -rW "$1" | sed -n '/.rela.debug_line/,/^$/p' | awk '/\.text\.hot/ { print $1 }'; }
check "dwarf-grow: .debug_line grew, the set_address behind it moved as much" sh -c \
	"[ \$((0x$(lsize "$g_out") - 0x$(lsize "$g_in"))) -gt 0 ] &&
	 [ \$((0x$(lrel "$g_out") - 0x$(lrel "$g_in"))) -eq \$((0x$(lsize "$g_out") - 0x$(lsize "$g_in"))) ]"
aarch64-linux-gnu-ld -e _start -o "$work/grow.orig" "$g_in" 2>"$work/ld.grow" &&
	aarch64-linux-gnu-ld -e _start -o "$work/grow.pad" "$g_out" 2>>"$work/ld.grow" ||
	{ cat "$work/ld.grow"; not_ok "link grow"; }
check "dwarf-grow: line rows as in the original" \
	dwarf_same aarch64-linux-gnu-nm 'line-table row' "$work/grow.orig" "$work/grow.pad"
check "dwarf-grow: llvm-dwarfdump reads the padded line table without complaint" sh -c \
	"'$DWARFDUMP' --debug-line '$g_out' 2>&1 >/dev/null | grep -q . && exit 1; exit 0"

# --- riscv64 -----------------------------------------------------------------
# code check: same instruction stream; NOPs inserted only at the start of a
# run of at least K NOPs (the literal and the entry NOPs), at most 3 of them
# (6 bytes); branch and auipc-pair targets compared by symbol+offset.
cat >"$work/rvcode.py" <<'PYEOF'
import re, sys

def load(path):
    secs, cur, prev = {}, None, ''
    for line in open(path):
        m = re.match(r'Disassembly of section (\S+):', line)
        if m:
            cur = secs.setdefault(m.group(1), [])
            continue
        m = re.match(r'\s+[0-9a-f]+:\t(.*)$', line)
        if m and cur is not None:
            ins, _, comment = m.group(1).partition('#')
            ins = re.sub(r'\s+', ' ', ins.strip())
            sym = re.search(r'<[^>]+>', comment)
            if sym and prev.startswith('auipc'):
                # `jalr 56(ra) # 4c <c4>`: the target, not the immediate
                ins = ins.split(' ')[0] + ' ' + sym.group(0)
            prev = ins
            ins = re.sub(r'^auipc (\w+),.*', r'auipc \1', ins)
            ins = re.sub(r'\b[0-9a-f]+ (<[^>]+>)', r'\1', ins)
            cur.append(ins)
    return secs

def run(v, k):
    n = 0
    while k + n < len(v) and v[k + n] == 'nop':
        n += 1
    return n

orig, pad, K = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
if orig.keys() != pad.keys():
    sys.exit('sections differ: %s %s' % (sorted(orig), sorted(pad)))
inserted = 0
for sec in orig:
    a, b = orig[sec], pad[sec]
    i = j = 0
    while i < len(a) or j < len(b):
        if j < len(b) and b[j] == 'nop' and (j == 0 or b[j - 1] != 'nop'):
            ra, rb = run(a, i), run(b, j)
            if rb != ra:
                if rb < ra or rb - ra > 3 or ra < K:
                    sys.exit('%s: %d NOPs at %d became %d at %d' % (sec, ra, i, rb, j))
                i += ra; j += rb; inserted += 1
                continue
        if i < len(a) and j < len(b) and a[i] == b[j]:
            i += 1; j += 1
        else:
            sys.exit('%s: differs at %d/%d: %r vs %r' % (sec, i, j,
                     a[i] if i < len(a) else None, b[j] if j < len(b) else None))
if len(sys.argv) > 4 and inserted != int(sys.argv[4]):
    sys.exit('%d insertions, repad reported %s' % (inserted, sys.argv[4]))
PYEOF

rv_object_cases() { # VARIANT OBJ K: the per-object cases for out/rv-VARIANT/OBJ.o
	in=$fix/out/rv-$1/$2.o
	out=$work/rv-$1/$2.o
	on=rv-$1/$2.o
	mkdir -p "$work/rv-$1"
	check "misaligned-unpadded $on" has_misaligned "$in"
	check "audit-unpadded $on: exit 1, as many misaligned as literals.py" audit_agrees "$in"
	check "repad $on" repad 0 "$in" "$out" "$out.log"
	cat "$out.log"
	check "elflint $on" elflint "$out"
	check "misaligned-padded $on" none_misaligned "$out"
	check "audit-padded $on: exit 0, none misaligned as literals.py" audit_agrees "$out"
	"$OBJDUMP_RV" -d --no-show-raw-insn "$in" >"$out.orig.dis"
	"$OBJDUMP_RV" -d --no-show-raw-insn "$out" >"$out.pad.dis"
	# as many NOP runs grew as repad says it padded functions
	check "code $on" "$PY" "$work/rvcode.py" "$out.orig.dis" "$out.pad.dis" "$3" \
		"$(sed -n 's/.*padded \([0-9]*\) functions.*/\1/p' "$out.log")"
	rm -f "$out.again"
	if repad 0 "$out" "$out.again" "$out.again.log" 2>/dev/null; then
		"$OBJDUMP_RV" -d "$out" | tail -n +3 >"$work/1"
		"$OBJDUMP_RV" -d "$out.again" 2>&1 | tail -n +3 >"$work/2"
		check "idempotent $on" sh -c "cmp -s '$work/1' '$work/2' &&
			grep -q 'padded 0 functions, 0 bytes added' '$out.again.log'"
	else
		not_ok "idempotent $on" "$ps_msg"
	fi
}

rv_run() { # PROG OUTFILE -> status
	"$QEMU_RV" -L "$SYSROOT_RV" "$1" >"$2" 2>&1
}

for v in gc-relax gc-norelax g-relax g-norelax cl-gc cl-g; do
	case $v in *gc*) k=8 ;; *) k=4 ;; esac	# NOP lines in literal + entry
	for o in a b c d; do
		rv_object_cases "$v" "$o" "$k"
	done
	"$CC_RV" -o "$work/rv-$v/prog.orig" $(for o in a b c d; do echo "$fix/out/rv-$v/$o.o"; done) \
		2>"$work/ld1" || { cat "$work/ld1"; not_ok "link unpadded rv-$v"; }
	"$CC_RV" -o "$work/rv-$v/prog.pad" $(for o in a b c d; do echo "$work/rv-$v/$o.o"; done) \
		2>"$work/ld2" || { cat "$work/ld2"; not_ok "link padded rv-$v"; }
	check "link-unpadded rv-$v has misaligned literals" has_misaligned "$work/rv-$v/prog.orig"
	check "link-unpadded rv-$v: audit exits 1, as many misaligned as literals.py" audit_agrees "$work/rv-$v/prog.orig"
	check "link-padded rv-$v has no misaligned literal" none_misaligned "$work/rv-$v/prog.pad"
	check "link-padded rv-$v: audit exits 0, none misaligned as literals.py" audit_agrees "$work/rv-$v/prog.pad"
	rv_run "$work/rv-$v/prog.orig" "$work/rv-$v/out.orig"
	rc1=$?
	rv_run "$work/rv-$v/prog.pad" "$work/rv-$v/out.pad"
	rc2=$?
	check "run rv-$v: padded program prints what the original prints" \
		sh -c "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q '^rv_sum=' '$work/rv-$v/out.orig' &&
			cmp -s '$work/rv-$v/out.orig' '$work/rv-$v/out.pad'"
	# relaxed: the linker computes high_pc from label differences, and a
	# function's end label at an insertion point moves with the padding
	# (not repad_dwarf.c's business): rows only.  LLVM's range lists go
	# and location lists go through .debug_addr (DW_RLE_startx_length), which
	# repad leaves alone.
	case $v in *-relax) kinds='line-table row,DW_AT_call_return_pc' ;;
		cl-*) kinds='line-table row,DW_AT_call_return_pc,DW_AT_high_pc' ;;
		*) kinds='line-table row,DW_AT_call_return_pc,DW_AT_high_pc,DW_AT_ranges list entry,DW_AT_location list entry' ;; esac
	check "dwarf rv-$v: $kinds as in the original" \
		dwarf_same riscv64-linux-gnu-nm "$kinds" \
		"$work/rv-$v/prog.orig" "$work/rv-$v/prog.pad"
	check "addr2line rv-$v: same file:line at every function entry" \
		same_entry_lines riscv64-linux-gnu- "$work/rv-$v/prog.orig" "$work/rv-$v/prog.pad" \
		$(for o in a b c d; do echo "$fix/out/rv-$v/$o.o"; done)
	case $v in *-relax)
		"$CC_RV" -Wl,--no-relax -o "$work/rv-$v/prog.norelax" \
			$(for o in a b c d; do echo "$work/rv-$v/$o.o"; done) 2>"$work/ld3" ||
			{ cat "$work/ld3"; not_ok "link padded --no-relax rv-$v"; }
		rv_run "$work/rv-$v/prog.norelax" "$work/rv-$v/out.norelax"
		rc3=$?
		check "link-padded-norelax rv-$v: no misaligned literal" none_misaligned "$work/rv-$v/prog.norelax"
		check "link-padded-norelax rv-$v: audit exits 0, none misaligned as literals.py" \
			audit_agrees "$work/rv-$v/prog.norelax"
		check "link-padded-norelax rv-$v: same output" \
			sh -c "[ $rc3 -eq 0 ] && cmp -s '$work/rv-$v/out.orig' '$work/rv-$v/out.norelax'"
	esac
done
# the programs differ between variants only in code, not in what they print
check "run rv: all variants print the same" sh -c "for v in gc-norelax g-relax g-norelax cl-gc cl-g; do
	cmp -s '$work/rv-gc-relax/out.orig' \"$work/rv-\$v/out.orig\" || exit 1; done"

# A resolved c.beqz that reaches its limit (+254) after padding.
mkdir -p "$work/rv-range"
check "repad rv-range/fits.o" repad 0 "$fix/out/rv-range/fits.o" "$work/rv-range/fits.o"
"$OBJDUMP_RV" -d --no-show-raw-insn "$fix/out/rv-range/fits.o" >"$work/rv-range/fits.orig.dis"
"$OBJDUMP_RV" -d --no-show-raw-insn "$work/rv-range/fits.o" >"$work/rv-range/fits.pad.dis"
check "code rv-range/fits.o: c.beqz keeps its target" sh -c \
	"'$PY' '$work/rvcode.py' '$work/rv-range/fits.orig.dis' '$work/rv-range/fits.pad.dis' 8 1 &&
	 grep -q 'beqz.*a0,fe <g+0xe6>' '$work/rv-range/fits.pad.dis'"
check "misaligned-padded rv-range/fits.o" none_misaligned "$work/rv-range/fits.o"
check "audit-padded rv-range/fits.o: exit 0, none misaligned as literals.py" audit_agrees "$work/rv-range/fits.o"

# Refused with the reason: exit 2, one line, nothing written.
rv_refused() { # NAME INPUT PATTERN
	rm -f "$work/bad.out"
	repad 2 "$2" "$work/bad.out" "$work/bad.stdout" "$work/bad.stderr" 2>/dev/null
	rc=$ps_rc
	check "bad-rv-$1: refused with the reason" sh -c "[ $rc -eq 2 ] && [ ! -e '$work/bad.out' ] &&
		[ \$(wc -l <'$work/bad.stderr') -eq 1 ] && grep -q '^patchsite: $2: .*$3' '$work/bad.stderr'"
}
rv_refused out-of-range "$fix/out/rv-range/overflow.o" 'c.beqz to .text+0xfa: displacement 256 no longer fits'
rv_refused lone-auipc "$fix/out/rv-range/auipc.o" 'auipc without a relocation'
rv_refused reused-auipc "$fix/out/rv-range/reused.o" 'auipc without a relocation whose value may be used again'
rv_refused resolved-in-relaxed "$fix/out/rv-mixed.o" 'c.beqz .*crosses alignment padding that linker relaxation may shrink'
rv_refused section-addend-relaxed "$fix/out/rv-secsym/relax.o" "in ..rela.data. against .text+0x1a crosses alignment padding"

# Without relaxation the same `.text + 0x1a` moves with the code (6 bytes).
mkdir -p "$work/rv-secsym"
check "repad rv-secsym/norelax.o" repad 0 "$fix/out/rv-secsym/norelax.o" "$work/rv-secsym/norelax.o"
check "rv-secsym/norelax.o: section-symbol addend moved" sh -c \
	"'$READELF_RV' -rW '$fix/out/rv-secsym/norelax.o' | grep -q 'R_RISCV_64 .* \.text + 1a\$' &&
	 '$READELF_RV' -rW '$work/rv-secsym/norelax.o' | grep -q 'R_RISCV_64 .* \.text + 20\$'"

# A line program whose unit_length runs past .debug_line: refused, never
# rewritten into a corrupt table.
"$PY" - "$fix/out/a.o" "$work/badline.o" <<'PYEOF'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
shoff, = struct.unpack_from('<Q', d, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
sh = lambda i: struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize)
stro = sh(shstrndx)[4]
for i in range(shnum):
    s = sh(i)
    if d[stro + s[0]:d.index(b'\0', stro + s[0])] == b'.debug_line':
        struct.pack_into('<I', d, s[4], s[5] + 100)
open(sys.argv[2], 'wb').write(d)
PYEOF
rm -f "$work/bad.out"
repad 2 "$work/badline.o" "$work/bad.out" "$work/bad.stdout" "$work/bad.stderr" 2>/dev/null
rc=$ps_rc
check "bad-debug-line: unit past the section refused with the reason" sh -c "[ $rc -eq 2 ] &&
	[ ! -e '$work/bad.out' ] && [ \$(wc -l <'$work/bad.stderr') -eq 1 ] &&
	grep -q '^patchsite: $work/badline.o: .debug_line: unit at 0 runs past the end' '$work/bad.stderr'"

# x86_64 has no ops literal to align: an object built as an x86 kernel
# builds its objects (-mfentry, call padding, IBT) is left byte for byte,
# -o a copy and --in-place not written at all (make sees it unchanged), so
# that contrib/linux's PATCHSITE= works on an x86_64 build.
printf 'int f(int x) { return x + 1; }\nint g(int y) { return f(y) * 2; }\n' >"$work/x86.c"
cc -O2 -pg -mfentry -mrecord-mcount -fpatchable-function-entry=16,16 -fcf-protection=branch \
	-c -o "$work/x86.o" "$work/x86.c" || { echo "cannot compile $work/x86.c"; exit 1; }
rm -f "$work/x86.out"
ps_run -e "$work/x86.stderr" 0 "$work/x86.stdout" -- repad "$work/x86.o" -o "$work/x86.out"
rc=$ps_rc
check "x86_64 object: repad -o exits 0 and copies it byte for byte" sh -c "[ $rc -eq 0 ] &&
	cmp -s '$work/x86.o' '$work/x86.out'"
cp -p "$work/x86.o" "$work/x86.inplace.o"
touch -d @1000000000 "$work/x86.inplace.o"
ps_run -e "$work/x86.stderr" 0 "$work/x86.stdout" -- repad --in-place "$work/x86.inplace.o"
rc=$ps_rc
check "x86_64 object: repad --in-place exits 0 and writes nothing" sh -c "[ $rc -eq 0 ] &&
	cmp -s '$work/x86.o' '$work/x86.inplace.o' &&
	[ \$(stat -c %Y '$work/x86.inplace.o') -eq 1000000000 ]"

# Bad input: one line `patchsite: FILE: ...`, nonzero status, nothing written.
cc -o "$work/x86.prog" "$work/x86.c" -nostdlib -Wl,-e,f 2>/dev/null ||
	{ echo "cannot link $work/x86.prog"; exit 1; }
printf 'not an ELF file\n' >"$work/junk.o"
for bad in "$work/x86.prog" "$work/prog.pad" "$work/junk.o" "$work/rv-gc-relax/prog.pad"; do
	name=${bad#"$work"/}
	rm -f "$work/bad.out"
	repad 2 "$bad" "$work/bad.out" "$work/bad.stdout" "$work/bad.stderr" 2>/dev/null
	rc=$ps_rc
	check "bad-$name: refused with one line, exit 2" sh -c "[ $rc -eq 2 ] && [ ! -e '$work/bad.out' ] &&
		[ \$(wc -l <'$work/bad.stderr') -eq 1 ] && grep -q '^patchsite: $bad: ' '$work/bad.stderr'"
done

finish
