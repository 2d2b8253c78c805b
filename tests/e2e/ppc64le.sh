#!/bin/sh
# powerpc64le (ELFv2) beyond what run.sh's fixture loop covers:
#
#   minikernel  fixtures/minikernel/out/powerpc64le.elf (-pg -mprofile-kernel,
#               `mflr r0; bl _mcount` at each local entry, the per-object
#               table recordmcount's way) under qemu-ppc64le: the oracle
#               build's counts are expected.txt; `record` equals objdump's
#               `bl _mcount` sites, each after `mflr r0`; audit is clean;
#               with the table cleared audit finds every site missing (exit
#               1), `record --in-place` gives back the linked file byte for
#               byte, and the image traces again with exact counts; a second
#               run changes nothing; a region too small is refused (exit 2,
#               one line, the file untouched)
#   localentry  an all-assembly program whose functions have the kernel's
#               -fpatchable-function-entry=2 form (gcc-check-fpatchable-
#               function-entry.sh): the TOC setup at the symbol, the two nops
#               at the local entry (st_other): `record` equals the linker's
#               __patchable_function_entries, `record --in-place` on a copy
#               with that table cleared gives back the file, the program runs
#   bigendian   a big-endian ELFv1 object (function descriptors in .opd) made
#               by the cross compiler: exit 2, one line naming the file
#
#   make -C fixtures/minikernel && PATCHSITE=$PWD/build-san/patchsite sh tests/e2e/ppc64le.sh
#
# A missing tool or fixture is a failure, never a skip.  Prints ok/not ok
# lines and `N passed, M failed` (tests/e2e/lib.sh's harness: every
# patchsite run through ps_run, its exit status asserted before its output
# is read).

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mk=$root/fixtures/minikernel
out=$mk/out
expected=$mk/expected.txt
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=python3; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-ppc64le.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"

ps_need_patchsite

# the toolchain and runner come from fixtures/arches.mk, the one list
cross=$(arch_var CROSS_powerpc64le)
cc=$(arch_var CC_powerpc64le)
run=$(arch_var RUN_powerpc64le)
if [ -z "$cross" ] || [ -z "$cc" ] || [ -z "$run" ]; then
	not_ok "fixtures/arches.mk names powerpc64le's tools"
	finish
fi
tools_ok=1
for tool in "$py" cmp timeout "${cross}objdump" "${cross}readelf" "${cross}as" "$cc" ${run%% *}; do
	command -v "$tool" >/dev/null 2>&1 || { echo "missing $tool" >>"$tmp/tools"; tools_ok=0; }
done
if [ "$tools_ok" = 1 ]; then ok "tools"; else not_ok "tools" "$tmp/tools"; finish; fi
for f in powerpc64le.elf powerpc64le-small.elf powerpc64le-oracle.elf; do
	[ -f "$out/$f" ] || { echo "missing $out/$f" >>"$tmp/imgs"; }
done
if [ -s "$tmp/imgs" ]; then not_ok "fixtures built (make -C fixtures/minikernel)" "$tmp/imgs"; finish; fi
ok "fixtures built"

# run_img IMAGE MODE OUT: stdout+stderr in OUT, exit status in $run_rc
run_img() {
	timeout "$RUN_TIMEOUT" $run "$1" $2 >"$3" 2>&1
	run_rc=$?
}

counts_of() { grep -E '^(result=|count |unknown )' "$1"; }

# counts_exact OUT: the run exited 0 and printed expected.txt's lines
counts_exact() {
	[ "$run_rc" -eq 0 ] || { echo "exit status $run_rc"; cat "$1"; return 1; }
	counts_of "$1" | cmp - "$expected"
}

# one_line_error ERR FILE: exactly one line, `patchsite: FILE...`
one_line_error() {
	[ "$(wc -l <"$1")" -eq 1 ] && grep -q "^patchsite: $2" "$1"
}

# ================================================================ minikernel
img=$out/powerpc64le.elf
run_img "$out/powerpc64le-oracle.elf" "" "$tmp/oracle"
check "minikernel: the oracle build (manual counts) prints expected.txt" counts_exact "$tmp/oracle"
run_img "$img" trace "$tmp/trace"
check "minikernel: traced through its own table, the counts are exact" counts_exact "$tmp/trace"

# objdump's sites: every `bl ... <_mcount>`, and the instruction before it
"${cross}objdump" -d -w "$img" >"$tmp/dis"
awk '/\tbl[ \t]+[0-9a-f]+ <_mcount>/ { sub(":", "", $1); print "0x" $1 }' "$tmp/dis" >"$tmp/objdump.sites"
nsites=$(wc -l <"$tmp/objdump.sites")
check "minikernel: objdump finds 12 calls to _mcount" test "$nsites" -eq 12
mflr_before() {
	"$py" - "$tmp/dis" "$tmp/objdump.sites" <<'EOF'
import re, sys
insns = {}
for line in open(sys.argv[1]):
    m = re.match(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} ){4}\s*(.*)$", line)
    if m:
        insns[int(m.group(1), 16)] = m.group(2).strip()
bad = [a for a in (int(x, 16) for x in open(sys.argv[2])) if not insns.get(a - 4, "").startswith("mflr")]
print("sites without mflr r0 before them:", [hex(a) for a in bad])
sys.exit(1 if bad else 0)
EOF
}
check "minikernel: each _mcount call follows mflr r0 (-mprofile-kernel)" mflr_before

if ps_run -e "$tmp/rec.err" 0 "$tmp/rec" -- record "$img" &&
	cmp -s "$tmp/rec" "$tmp/objdump.sites"; then
	ok "minikernel: record = objdump's sites"
else
	{ cat "$ps_msg" "$tmp/rec.err"; [ -s "$ps_msg" ] || diff "$tmp/rec" "$tmp/objdump.sites"; } >"$tmp/msg"
	not_ok "minikernel: record = objdump's sites" "$tmp/msg"
fi
if ps_run -e "$tmp/audit.err" 0 "$tmp/audit" -- audit "$img" &&
	grep -q "0 stale, 0 missing" "$tmp/audit"; then
	ok "minikernel: audit of the linked table is clean (exit 0)"
else
	{ cat "$ps_msg" "$tmp/audit" "$tmp/audit.err"; } >"$tmp/msg"
	not_ok "minikernel: audit of the linked table is clean (exit 0)" "$tmp/msg"
fi

# cleared table: mkelf.py zeroes the region's slots (and any .rela.dyn addends)
cleared=$tmp/cleared.elf
if "$py" "$mk/tools/mkelf.py" clear "$img" "$cleared" >"$tmp/msg" 2>&1 && ! cmp -s "$img" "$cleared"; then
	ok "minikernel: table cleared (mkelf.py)"
else
	not_ok "minikernel: table cleared (mkelf.py)" "$tmp/msg"
fi
if ps_run -e "$tmp/audit2.err" 1 "$tmp/audit2" -- audit "$cleared" &&
	grep -q "0 stale, 12 missing" "$tmp/audit2"; then
	ok "minikernel: audit of the cleared table: exit 1, 12 missing"
else
	{ cat "$ps_msg" "$tmp/audit2" "$tmp/audit2.err"; } >"$tmp/msg"
	not_ok "minikernel: audit of the cleared table: exit 1, 12 missing" "$tmp/msg"
fi
run_img "$cleared" trace "$tmp/cleared.trace"
if [ "$run_rc" -eq 0 ] && grep -q "^count a_step 0$" "$tmp/cleared.trace" &&
	grep -q "nonzero=0 patched=0" "$tmp/cleared.trace"; then
	ok "minikernel: with the table cleared nothing is traced"
else
	not_ok "minikernel: with the table cleared nothing is traced" "$tmp/cleared.trace"
fi
if ps_run -e "$tmp/ip.err" 0 "$tmp/ip" -- record --in-place "$cleared" &&
	cmp "$img" "$cleared" >"$tmp/cmp" 2>&1; then
	ok "minikernel: record --in-place refills the table: the linked file, byte for byte"
else
	{ cat "$ps_msg" "$tmp/ip.err"; [ -s "$ps_msg" ] || cat "$tmp/cmp"; } >"$tmp/msg"
	not_ok "minikernel: record --in-place refills the table: the linked file, byte for byte" "$tmp/msg"
fi
run_img "$cleared" trace "$tmp/refilled.trace"
check "minikernel: the refilled image traces with exact counts" counts_exact "$tmp/refilled.trace"
cp "$cleared" "$tmp/before2"
if ps_run -e "$tmp/ip2.err" 0 "$tmp/ip2" -- record --in-place "$cleared" &&
	cmp -s "$tmp/before2" "$cleared"; then
	ok "minikernel: a second record --in-place changes nothing"
else
	{ cat "$ps_msg" "$tmp/ip2.err"; } >"$tmp/msg"
	not_ok "minikernel: a second record --in-place changes nothing" "$tmp/msg"
fi
cp "$out/powerpc64le-small.elf" "$tmp/small.elf"
if ps_run -e "$tmp/sm.err" 2 "$tmp/sm" -- record --in-place "$tmp/small.elf" &&
	one_line_error "$tmp/sm.err" "$tmp/small.elf" &&
	grep -q "too small" "$tmp/sm.err" && cmp -s "$out/powerpc64le-small.elf" "$tmp/small.elf"; then
	ok "minikernel: a region of 2 slots for 12 sites: exit 2, one line, file untouched"
else
	{ cat "$ps_msg" "$tmp/sm.err"; } >"$tmp/msg"
	not_ok "minikernel: a region of 2 slots for 12 sites: exit 2, one line, file untouched" "$tmp/msg"
fi

# ================================================================ localentry
# ten functions in the form the kernel's check asks of the compiler: TOC
# setup at the global entry, .localentry, then the two nops
le=$tmp/le
mkdir -p "$le"
{
	printf '\t.abiversion 2\n\t.text\n'
	for i in 0 1 2 3 4 5 6 7 8 9; do
		printf '\t.globl f%s\n\t.type f%s, @function\n\t.p2align 4\nf%s:\n' "$i" "$i" "$i"
		printf '0:\taddis 2, 12, .TOC.-0b@ha\n\taddi 2, 2, .TOC.-0b@l\n\t.localentry f%s, .-f%s\n' "$i" "$i"
		printf '.Lpfe%s:\n\tnop\n\tnop\n\taddis 9, 2, val@toc@ha\n\tld 9, val@toc@l(9)\n' "$i"
		printf '\tadd 3, 3, 9\n\tblr\n\t.size f%s, .-f%s\n' "$i" "$i"
		printf '\t.section __patchable_function_entries, "awo", @progbits, f%s\n\t.p2align 3\n' "$i"
		printf '\t.8byte .Lpfe%s\n\t.text\n' "$i"
	done
	# _start: r3 = f0(..f9(1)), exit(r3 - 11) -> 0
	printf '\t.globl _start\n\t.type _start, @function\n\t.p2align 4\n_start:\n'
	printf '0:\tbl 1f\n1:\tmflr 12\n\taddis 2, 12, .TOC.-1b@ha\n\taddi 2, 2, .TOC.-1b@l\n\tli 3, 1\n'
	for i in 9 8 7 6 5 4 3 2 1 0; do
		printf '\tbl f%s\n\tnop\n' "$i"
	done
	printf '\taddi 3, 3, -11\n\tli 0, 1\n\tsc\n\t.size _start, .-_start\n'
	printf '\t.data\n\t.p2align 3\nval:\t.8byte 1\n'
	printf '\t.section .note.GNU-stack, "", @progbits\n'
} >"$le/le.S"
if "$cc" -c -o "$le/le.o" "$le/le.S" >"$tmp/msg" 2>&1 &&
	"$cc" -nostdlib -static -no-pie -o "$le/le" "$le/le.o" >>"$tmp/msg" 2>&1; then
	ok "localentry: the program assembles and links"
else
	not_ok "localentry: the program assembles and links" "$tmp/msg"
fi
timeout "$RUN_TIMEOUT" $run "$le/le" >"$tmp/msg" 2>&1
check "localentry: it runs (qemu-ppc64le, exit 0)" test $? -eq 0
"${cross}readelf" -sW "$le/le" | grep -c 'localentry>: 8\]' >"$tmp/nle"
check "localentry: ten functions have a local entry 8 bytes in (st_other)" test "$(cat "$tmp/nle")" -eq 10
# the linker's table, from readelf's hex dump of the section
"${cross}readelf" -x __patchable_function_entries "$le/le" | "$py" -c '
import sys
b = bytearray()
for line in sys.stdin:
    f = line.split()
    if f and f[0].startswith("0x"):
        for w in f[1:5]:
            if all(c in "0123456789abcdef" for c in w) and len(w) % 2 == 0:
                b += bytes.fromhex(w)
for i in range(0, len(b) // 8 * 8, 8):
    print(hex(int.from_bytes(b[i:i + 8], "little")))
' | sort >"$tmp/le.table"
check "localentry: the linker's table has 10 entries" test "$(wc -l <"$tmp/le.table")" -eq 10
if ps_run -e "$tmp/le.err" 0 "$tmp/le.rec" -- record "$le/le" &&
	sort "$tmp/le.rec" | cmp -s - "$tmp/le.table"; then
	ok "localentry: record = the linker's __patchable_function_entries (nops at the local entry)"
else
	{ cat "$ps_msg" "$tmp/le.err"; [ -s "$ps_msg" ] || diff "$tmp/le.rec" "$tmp/le.table"; } >"$tmp/msg"
	not_ok "localentry: record = the linker's __patchable_function_entries (nops at the local entry)" "$tmp/msg"
fi
if ps_run -e "$tmp/le.sym.err" 0 "$tmp/le.sym" -- record --symbolize "$le/le" &&
	[ "$(grep -cE '^0x[0-9a-f]+ f[0-9]\+0x8 patchable$' "$tmp/le.sym")" -eq 10 ]; then
	ok "localentry: --symbolize: each site is FUNC+0x8, patchable"
else
	{ cat "$ps_msg" "$tmp/le.sym" "$tmp/le.sym.err"; } >"$tmp/msg"
	not_ok "localentry: --symbolize: each site is FUNC+0x8, patchable" "$tmp/msg"
fi
# a copy with the section's bytes zeroed (a static link has no .rela.dyn for it)
if "$py" - "$le/le" "$le/le.cleared" >"$tmp/msg" 2>&1 <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
sh = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
strs = sh[shstrndx][4]
name = lambda s: d[strs + s[0]:d.index(b"\0", strs + s[0])].decode()
sec = [s for s in sh if name(s) == "__patchable_function_entries"]
assert len(sec) == 1 and any(d[sec[0][4]:sec[0][4] + sec[0][5]])
d[sec[0][4]:sec[0][4] + sec[0][5]] = bytes(sec[0][5])
open(sys.argv[2], "wb").write(d)
EOF
then
	if ps_run -e "$tmp/le.ip.err" 0 "$tmp/le.ip" -- record --in-place "$le/le.cleared" &&
		cmp "$le/le" "$le/le.cleared" >"$tmp/cmp" 2>&1; then
		ok "localentry: record --in-place on the cleared table gives back the linked file"
	else
		{ cat "$ps_msg" "$tmp/le.ip.err"; [ -s "$ps_msg" ] || cat "$tmp/cmp"; } >"$tmp/msg"
		not_ok "localentry: record --in-place on the cleared table gives back the linked file" "$tmp/msg"
	fi
else
	not_ok "localentry: a copy with the table cleared" "$tmp/msg"
fi

# ================================================================ bigendian
echo 'int f(int x) { return x + 1; }' >"$tmp/be.c"
if "$cc" -mbig-endian -mabi=elfv1 -O2 -pg -c -o "$tmp/be.o" "$tmp/be.c" >"$tmp/msg" 2>&1 &&
	"${cross}readelf" -SW "$tmp/be.o" | grep -q ' \.opd '; then
	ok "bigendian: an ELFv1 object with .opd (the cross compiler, -mbig-endian -mabi=elfv1)"
else
	not_ok "bigendian: an ELFv1 object with .opd (the cross compiler, -mbig-endian -mabi=elfv1)" "$tmp/msg"
fi
if ps_run -e "$tmp/be.err" 2 "$tmp/be.out" -- record "$tmp/be.o" &&
	one_line_error "$tmp/be.err" "$tmp/be.o" && grep -q "big-endian" "$tmp/be.err" &&
	[ ! -s "$tmp/be.out" ]; then
	ok "bigendian: record refuses it: exit 2, one line naming the file, nothing on stdout"
else
	{ cat "$ps_msg" "$tmp/be.err"; } >"$tmp/msg"
	not_ok "bigendian: record refuses it: exit 2, one line naming the file, nothing on stdout" "$tmp/msg"
fi

finish
