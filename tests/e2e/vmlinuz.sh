#!/bin/sh
# tests/e2e/vmlinuz.sh - audit a kernel as it ships: a bzImage whose payload
# is the kernel stripped of its symbols, and arm64 and riscv64 Images, with
# the symbols only in their kallsyms tables (or a System.map).  The images are made here from the minikernel
# fixtures by tests/e2e/mkvmlinuz.py (kallsyms laid out as scripts/kallsyms.c
# writes them, 6.12 and 6.1 layouts; payload stripped with objcopy -S;
# gzip, xz, lzma and zstd payloads).  The oracle is the ELF the image was
# made from: its __start_mcount_loc..__stop_mcount_loc bytes read here in
# Python (not patchsite), and record/audit on the ELF itself.
#
#   from kallsyms       record from the bzImage = the ELF's table bytes,
#                       and = record --symbolize of the ELF (names too)
#   audit               the same summary as on the ELF; a payload whose
#                       table was cleared: every site named missing, exit 1
#   System.map          --system-map=FILE, and a real map beside the image;
#                       Debian's stub beside it is skipped
#   config              an unsorted table: a note without a config; a finding
#                       when --config, config-VERSION beside it or IKCONFIG
#                       says CONFIG_BUILDTIME_MCOUNT_SORT=y; none if it is off.
#                       The ftrace layout the config names: a boot image takes
#                       it (refused in one line where the code has another),
#                       vmlinux's is checked against it (a "shifted" finding)
#   audit DIR           the boot image in a directory is found and audited
#   bad input           truncated bzImage, a payload that is not a
#                       compressed stream, a decompression bomb, a map of
#                       another build, no symbols at all, corrupt kallsyms,
#                       record --in-place: each exit 2 and one line
#
#   stripped vmlinux    an ELF with no .symtab: kallsyms or a System.map;
#                       an overridden weak function's leftover (its symbol
#                       stripped): stale, as on the ELF, not a site of the
#                       function whose sizeless extent runs over it
#   Images              arm64 and riscv64 Image and Image.gz made from the
#                       aarch64 and riscv64-norelax minikernels (kallsyms,
#                       or a System.map): table, names and audit = the ELF's;
#                       the table cleared: every site missing; bad input
#   relocatable riscv64 linked -pie here (-fpatchable-function-entry=4): the
#                       table only in R_RISCV_RELATIVE addends (readelf),
#                       an overridden weak function's leftover: record and
#                       audit's findings from the Image = the ELF's
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/vmlinuz.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-vmlinuz.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"
ps_need_patchsite
mk="python3 $here/mkvmlinuz.py"
fx=$root/fixtures/minikernel/out

# table ELF: the 8-byte entries between __start_mcount_loc and __stop_mcount_loc,
# read from the file's bytes, one hex address a line (sorted, as record prints)
table() {
	python3 - "$1" <<'EOF'
import struct, subprocess, sys
elf = sys.argv[1]
sym = {}
for line in subprocess.run(["nm", elf], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3:
        sym[f[2]] = int(f[0], 16)
b = open(elf, "rb").read()
shoff, = struct.unpack_from("<Q", b, 0x28)
shnum, = struct.unpack_from("<H", b, 0x3c)
lo, hi = sym["__start_mcount_loc"], sym["__stop_mcount_loc"]
secs = [struct.unpack_from("<IIQQQQ", b, shoff + 64 * i) for i in range(shnum)]
# arm64 (--no-apply-dynamic-relocs): a slot's value is the addend of the
# R_AARCH64_RELATIVE entry of .rela.dyn at it
rel = {}
for name, typ, flags, addr, off, size in secs:
    if typ == 4 and flags & 2:
        for k in range(size // 24):
            o, info, add = struct.unpack_from("<QQq", b, off + 24 * k)
            if lo <= o < hi and info & 0xffffffff == 1027:
                rel[o] = add & (2**64 - 1)
for name, typ, flags, addr, off, size in secs:
    if addr <= lo < addr + size and typ != 8:
        v = [struct.unpack_from("<Q", b, off + lo - addr + 8 * k)[0] or rel.get(lo + 8 * k, 0)
             for k in range((hi - lo) // 8)]
        for x in sorted(x for x in v if x):
            print("0x%x" % x)
        break
EOF
}

# one_line FILE: exactly one line, "patchsite: " first
one_line() {
	[ "$(wc -l <"$1")" -eq 1 ] && grep -q '^patchsite: ' "$1"
}

for k in x86_64-pad x86_64; do
	elf=$fx/$k.elf
	if ! [ -f "$elf" ]; then
		not_ok "$k: fixture $elf (make -C fixtures/minikernel)"
		continue
	fi
	table "$elf" >"$tmp/$k.want"
	ps_check "$k: record ELF" 0 "$tmp/$k.elf.sym" -- record --symbolize "$elf" &&
		ps_check "$k: audit ELF" 0 "$tmp/$k.elf.audit" -- audit "$elf"
	check "$k: oracle table has entries" test -s "$tmp/$k.want"
	for z in gzip xz lzma zstd bzip2 lzo; do
		for l in 6.12 6.1; do
			img=$tmp/$k-$z-$l
			if ! $mk "$elf" "$img" --comp "$z" --layout "$l" 2>"$tmp/mk.err"; then
				not_ok "$k $z $l: mkvmlinuz" "$tmp/mk.err"
				continue
			fi
			if ps_run 0 "$tmp/got" -- record "$img" && cmp -s "$tmp/got" "$tmp/$k.want"; then
				ok "$k $z $l: table from kallsyms = the ELF's bytes"
			else
				{ cat "$ps_msg"; diff "$tmp/got" "$tmp/$k.want"; } >"$tmp/d" 2>&1
				not_ok "$k $z $l: table from kallsyms = the ELF's bytes" "$tmp/d"
			fi
		done
	done
	img=$tmp/$k-gzip-6.12
	if ps_run 0 "$tmp/got" -- record --symbolize "$img" && cmp -s "$tmp/got" "$tmp/$k.elf.sym"; then
		ok "$k: record --symbolize from kallsyms = from the ELF's symbols"
	else
		{ cat "$ps_msg"; diff "$tmp/got" "$tmp/$k.elf.sym"; } >"$tmp/d" 2>&1
		not_ok "$k: record --symbolize from kallsyms = from the ELF's symbols" "$tmp/d"
	fi
	if ps_run 0 "$tmp/got" -- audit "$img" && cmp -s "$tmp/got" "$tmp/$k.elf.audit"; then
		ok "$k: audit from the bzImage = on the ELF"
	else
		{ cat "$ps_msg"; diff "$tmp/got" "$tmp/$k.elf.audit"; } >"$tmp/d" 2>&1
		not_ok "$k: audit from the bzImage = on the ELF" "$tmp/d"
	fi
done

# arm64 and riscv64 Images (raw, and Image.gz): the Image's bytes are the
# kernel's, its symbols kallsyms'; the same table, names and audit as the ELF
for ka in aarch64:arm64 riscv64-norelax:riscv64; do
	k=${ka%:*} f=${ka#*:}
	elf=$fx/$k.elf
	if ! [ -f "$elf" ]; then
		not_ok "$f: fixture $elf (make -C fixtures/minikernel)"
		continue
	fi
	table "$elf" >"$tmp/$k.want"
	check "$f: oracle table has entries" test -s "$tmp/$k.want"
	ps_check "$f: record ELF" 0 "$tmp/$k.elf.sym" -- record --symbolize "$elf" &&
		ps_check "$f: audit ELF" 0 "$tmp/$k.elf.audit" -- audit "$elf"
	tail -n +2 "$tmp/$k.elf.audit" >"$tmp/$f.audit.tail"
	for z in none gzip; do
		img=$tmp/$f-Image-$z
		if ! $mk "$elf" "$img" --format "$f" --comp "$z" 2>"$tmp/mk.err"; then
			not_ok "$f Image ($z): mkvmlinuz" "$tmp/mk.err"
			continue
		fi
		if ps_run 0 "$tmp/got" -- record "$img" && cmp -s "$tmp/got" "$tmp/$k.want"; then
			ok "$f Image ($z): table from kallsyms = the ELF's"
		else
			{ cat "$ps_msg"; diff "$tmp/got" "$tmp/$k.want"; } >"$tmp/d" 2>&1
			not_ok "$f Image ($z): table from kallsyms = the ELF's" "$tmp/d"
		fi
	done
	img=$tmp/$f-Image-gzip
	if ps_run 0 "$tmp/got" -- record --symbolize "$img" && cmp -s "$tmp/got" "$tmp/$k.elf.sym"; then
		ok "$f Image: record --symbolize from kallsyms = from the ELF's symbols"
	else
		{ cat "$ps_msg"; diff "$tmp/got" "$tmp/$k.elf.sym"; } >"$tmp/d" 2>&1
		not_ok "$f Image: record --symbolize from kallsyms = from the ELF's symbols" "$tmp/d"
	fi
	# (the first line says where the layout came from: DWARF in the ELF,
	# the code in the Image; the findings and the summary are the same)
	if ps_run 0 "$tmp/got" -- audit "$img" && tail -n +2 "$tmp/got" >"$tmp/got2" &&
		tail -n +2 "$tmp/$k.elf.audit" | cmp -s "$tmp/got2" - &&
		grep -q "^$f image: " "$tmp/got"; then
		ok "$f Image: audit = on the ELF"
	else
		{ cat "$ps_msg"; diff "$tmp/got" "$tmp/$k.elf.audit"; } >"$tmp/d" 2>&1
		not_ok "$f Image: audit = on the ELF" "$tmp/d"
	fi
	n=$(wc -l <"$tmp/$k.want")
	$mk "$elf" "$tmp/$f-cleared" --format "$f" --comp gzip --clear-table
	if ps_run 1 "$tmp/got" -- audit "$tmp/$f-cleared" &&
		grep -q "summary: 0 misaligned, 0 stale, $n missing" "$tmp/got" &&
		[ "$(grep -c '^missing: .* site is not in the table$' "$tmp/got")" = "$n" ]; then
		ok "$f Image, table cleared: audit names all $n sites missing"
	else
		{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
		not_ok "$f Image, table cleared: audit names all $n sites missing" "$tmp/d"
	fi
	$mk "$elf" "$tmp/$f-nok" --format "$f" --comp none --no-kallsyms --map "$tmp/$f.map"
	if ps_run 0 "$tmp/got" -- record --system-map="$tmp/$f.map" "$tmp/$f-nok" &&
		cmp -s "$tmp/got" "$tmp/$k.want"; then
		ok "$f Image without kallsyms, --system-map: table = the ELF's"
	else
		not_ok "$f Image without kallsyms, --system-map: table = the ELF's" "$ps_msg"
	fi
done

# A relocatable riscv64 kernel (CONFIG_RELOCATABLE: -fPIE, linked -pie):
# the table's slots are zero in the Image, their values only in the
# R_RISCV_RELATIVE relocations of .rela.dyn; its patch areas are
# -fpatchable-function-entry=4 (entries at the symbols, as Debian's riscv64
# kernels), and an overridden weak function's code and entry are left with
# no symbol.  Oracle: readelf's relocations (the table) and audit of the
# ELF, whose sizes end the function before the leftover (its findings, the
# DWARF unit dropped).
rv=$tmp/rvrel
mkdir -p "$rv"
python3 - "$rv" <<'EOF'
import sys
d = sys.argv[1]
a = ["int sink;"]
a += ["void f%02d(int x) { sink += x * %d; }" % (i, i + 3) for i in range(24)]
a += ["__attribute__((weak)) int hook(int x) { return x + 1; }",
      "int g(int x) { return hook(x) * 2; }",
      "void kmain(void) { for (;;) sink += g(sink); }"]
open(d + "/a.c", "w").write("\n".join(a) + "\n")
open(d + "/b.c", "w").write("int hook(int x) { return x * 7; }\n")
open(d + "/rv.lds", "w").write("""ENTRY(kmain)
SECTIONS
{
	. = 0x100000;
	.text : { _stext = .; *(.text .text.*) _etext = .; }
	.rodata : { *(.rodata .rodata.*) }
	. = ALIGN(0x1000);
	.data : {
		*(.data .data.* .sdata .sdata.*)
		. = ALIGN(8);
		__start_mcount_loc = .;
		KEEP(*(__patchable_function_entries))
		__stop_mcount_loc = .;
	}
	.bss : { *(.sbss .sbss.* .bss .bss.* COMMON) }
	/DISCARD/ : { *(.eh_frame .eh_frame_hdr .note.GNU-stack .comment .riscv.attributes) }
}
""")
EOF
rvcc=$(arch_var CC_riscv64) rvld=$(arch_var LD_riscv64) rvx=$(arch_var CROSS_riscv64)
rvcf="-O2 -g -march=rv64gc -mabi=lp64d -mcmodel=medany -fPIE -nostdlib -ffreestanding -fpatchable-function-entry=4"
if $rvcc $rvcf -c -o "$rv/a.o" "$rv/a.c" 2>"$rv/err" && $rvcc $rvcf -c -o "$rv/b.o" "$rv/b.c" 2>>"$rv/err" &&
	$rvld -pie --no-dynamic-linker -z notext --no-warn-rwx-segments -T "$rv/rv.lds" \
		-o "$rv/rv.elf" "$rv/a.o" "$rv/b.o" 2>>"$rv/err"; then
	ok "relocatable riscv64: linked -pie"
else
	not_ok "relocatable riscv64: linked -pie" "$rv/err"
fi
# the table from readelf: the addends of the relocations whose offsets lie in it
python3 - "$rv/rv.elf" "${rvx}readelf" "${rvx}nm" >"$rv/want" 2>"$rv/oracle.err" <<'EOF'
import subprocess, sys
elf, readelf, nm = sys.argv[1:]
sym = {}
for line in subprocess.run([nm, elf], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3:
        sym[f[2]] = int(f[0], 16)
lo, hi = sym["__start_mcount_loc"], sym["__stop_mcount_loc"]
vals = {}
for line in subprocess.run([readelf, "-rW", elf], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 4 and f[2] == "R_RISCV_RELATIVE" and lo <= int(f[0], 16) < hi:
        vals[int(f[0], 16)] = int(f[3], 16)
if len(vals) != (hi - lo) // 8:
    sys.exit("%d of %d slots have a R_RISCV_RELATIVE relocation" % (len(vals), (hi - lo) // 8))
for v in sorted(vals.values()):
    print("%#x" % v)
EOF
if [ -s "$rv/want" ] && [ "$(wc -l <"$rv/want")" -ge 16 ]; then
	ok "relocatable riscv64: every table slot filled by a R_RISCV_RELATIVE relocation (readelf)"
else
	not_ok "relocatable riscv64: every table slot filled by a R_RISCV_RELATIVE relocation (readelf)" "$rv/oracle.err"
fi
ps_check "relocatable riscv64: audit ELF" 1 "$rv/elf.audit" -- audit "$rv/rv.elf"
tail -n +2 "$rv/elf.audit" | sed 's/ \[[^]]*\]$//' >"$rv/elf.findings"
# record prints the sites: the table's entries but the stale ones
sed -n 's/^stale: \(0x[0-9a-f]*\) .*/\1/p' "$rv/elf.findings" >"$rv/stale"
grep -vxF -f "$rv/stale" "$rv/want" >"$rv/want.sites"
check "relocatable riscv64: the ELF's audit names the weak leftover outside every sized function" \
	grep -q '^stale: 0x[0-9a-f]* ?: table entry is outside every sized function' "$rv/elf.findings"
for z in none gzip; do
	img=$rv/Image-$z
	if ! $mk "$rv/rv.elf" "$img" --format riscv64 --comp "$z" 2>"$tmp/mk.err"; then
		not_ok "relocatable riscv64 Image ($z): mkvmlinuz" "$tmp/mk.err"
		continue
	fi
	if ps_run 0 "$tmp/got" -- record "$img" && cmp -s "$tmp/got" "$rv/want.sites"; then
		ok "relocatable riscv64 Image ($z): sites from the relocations = readelf's table less the stale entry"
	else
		{ cat "$ps_msg"; diff "$tmp/got" "$rv/want.sites"; } >"$tmp/d" 2>&1
		not_ok "relocatable riscv64 Image ($z): sites from the relocations = readelf's table less the stale entry" "$tmp/d"
	fi
	if ps_run 1 "$tmp/got" -- audit "$img" && tail -n +2 "$tmp/got" | cmp -s - "$rv/elf.findings"; then
		ok "relocatable riscv64 Image ($z): audit's findings = on the ELF (the weak leftover too)"
	else
		{ cat "$ps_msg"; tail -n +2 "$tmp/got" | diff - "$rv/elf.findings"; } >"$tmp/d" 2>&1
		not_ok "relocatable riscv64 Image ($z): audit's findings = on the ELF (the weak leftover too)" "$tmp/d"
	fi
done
n=$(wc -l <"$rv/want.sites")
$mk "$rv/rv.elf" "$rv/cleared" --format riscv64 --comp none --clear-table
if ps_run 1 "$tmp/got" -- audit "$rv/cleared" &&
	[ "$(grep -c '^missing: .* site is not in the table$' "$tmp/got")" = "$n" ] &&
	grep -q "^summary: 0 misaligned, 0 stale, $n missing" "$tmp/got"; then
	ok "relocatable riscv64 Image, relocations' addends cleared: every site missing"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "relocatable riscv64 Image, relocations' addends cleared: every site missing" "$tmp/d"
fi

# the table cleared in the ELF (its bytes zeroed), then packed: every site missing
k=x86_64-pad
elf=$fx/$k.elf
n=$(wc -l <"$tmp/$k.want")
python3 - "$elf" "$tmp/cleared.elf" <<'EOF'
import subprocess, struct, sys
src, dst = sys.argv[1:]
sym = {l.split()[2]: int(l.split()[0], 16) for l in subprocess.run(["nm", src], capture_output=True, text=True).stdout.splitlines() if len(l.split()) == 3}
b = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shnum, = struct.unpack_from("<H", b, 0x3c)
lo, hi = sym["__start_mcount_loc"], sym["__stop_mcount_loc"]
for i in range(shnum):
    name, typ, flags, addr, off, size = struct.unpack_from("<IIQQQQ", b, shoff + 64 * i)
    if addr <= lo < addr + size and typ != 8:
        b[off + lo - addr: off + hi - addr] = bytes(hi - lo)
open(dst, "wb").write(b)
EOF
$mk "$tmp/cleared.elf" "$tmp/cleared.bz" --comp zstd
if ps_run 1 "$tmp/got" -- audit "$tmp/cleared.bz" &&
	grep -q "summary: .* $n missing" "$tmp/got"; then
	ok "cleared table: audit from the bzImage names all $n sites missing"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "cleared table: audit from the bzImage names all $n sites missing" "$tmp/d"
fi
# (the ELF's lines end with the DWARF unit that made the site, " [src/...]":
# the stripped payload has no DWARF, and that is all that differs)
if ps_run 1 "$tmp/got2" -- audit "$tmp/cleared.elf" &&
	sed 's/ \[src\/[^]]*\]$//' "$tmp/got2" >"$tmp/got3" && diff -q "$tmp/got" "$tmp/got3" >/dev/null; then
	ok "cleared table: the same report as on the cleared ELF"
else
	{ cat "$ps_msg"; diff "$tmp/got" "$tmp/got3"; } >"$tmp/d" 2>&1
	not_ok "cleared table: the same report as on the cleared ELF" "$tmp/d"
fi

# System.map: given, beside the image, and Debian's stub (skipped)
$mk "$elf" "$tmp/nok" --no-kallsyms --map "$tmp/good.map"
if ps_run 0 "$tmp/got" -- record --system-map="$tmp/good.map" "$tmp/nok" &&
	cmp -s "$tmp/got" "$tmp/$k.want"; then
	ok "--system-map: table = the ELF's bytes"
else
	not_ok "--system-map: table = the ELF's bytes" "$ps_msg"
fi
mkdir -p "$tmp/boot"
cp "$tmp/nok" "$tmp/boot/vmlinuz-6.12.0-mini"
cp "$tmp/good.map" "$tmp/boot/System.map-6.12.0-mini"
if ps_run 0 "$tmp/got" -- record --symbolize "$tmp/boot/vmlinuz-6.12.0-mini" &&
	cmp -s "$tmp/got" "$tmp/$k.elf.sym"; then
	ok "System.map beside the image: read unasked, names = the ELF's"
else
	not_ok "System.map beside the image: read unasked, names = the ELF's" "$ps_msg"
fi
echo "ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package" \
	>"$tmp/boot/System.map-6.12.0-mini"
cp "$tmp/$k-zstd-6.12" "$tmp/boot/vmlinuz-6.12.0-mini"
if ps_run 0 "$tmp/got" -- record "$tmp/boot/vmlinuz-6.12.0-mini" && cmp -s "$tmp/got" "$tmp/$k.want"; then
	ok "Debian's stub System.map beside the image: skipped, kallsyms read"
else
	not_ok "Debian's stub System.map beside the image: skipped, kallsyms read" "$ps_msg"
fi

# a vmlinux stripped of its symbols (what a powerpc64le package installs;
# here the powerpc64le minikernel with kallsyms and an .init.text added):
# symbols from its kallsyms, or a System.map; an unstripped ELF is not touched
sk=powerpc64le
table "$fx/$sk.elf" >"$tmp/$sk.want"
check "stripped: oracle table has entries" test -s "$tmp/$sk.want"
ps_check "stripped: record --symbolize of the ELF" 0 "$tmp/$sk.elf.sym" -- record --symbolize "$fx/$sk.elf"
$mk "$fx/$sk.elf" "$tmp/stripped" --format stripped
$mk "$fx/$sk.elf" "$tmp/stripped-nok" --format stripped --no-kallsyms --map "$tmp/stripped.map"
if ps_run 0 "$tmp/got" -- record --symbolize "$tmp/stripped" && cmp -s "$tmp/got" "$tmp/$sk.elf.sym"; then
	ok "stripped vmlinux: record --symbolize from its kallsyms = from the ELF's symbols"
else
	{ cat "$ps_msg"; diff "$tmp/got" "$tmp/$sk.elf.sym"; } >"$tmp/d" 2>&1
	not_ok "stripped vmlinux: record --symbolize from its kallsyms = from the ELF's symbols" "$tmp/d"
fi
if ps_run 0 "$tmp/got" -- record --system-map="$tmp/stripped.map" "$tmp/stripped-nok" &&
	cmp -s "$tmp/got" "$tmp/$sk.want"; then
	ok "stripped vmlinux without kallsyms, --system-map: table = the ELF's bytes"
else
	not_ok "stripped vmlinux without kallsyms, --system-map: table = the ELF's bytes" "$ps_msg"
fi

# an overridden weak function's leftover: the code stays, the symbol goes
# (b_mix's, stripped from the linked ELF as ld drops a weak definition's).
# Oracles: objdump (its `mflr r0; bl _mcount` at b_mix+12, after the TOC
# setup), nm (no symbol left for it), the table's bytes (it is an entry).
# On the ELF, b_square's size ends before it: stale, outside every sized
# function.  From the stripped image (kallsyms or a System.map: no sizes)
# b_square's extent runs over it; -mprofile-kernel's call sits at a fixed
# place from its symbol, so it is no site of b_square: the same finding.
ppc_objcopy=powerpc64le-linux-gnu-objcopy
w=$(nm "$fx/$sk.elf" | sed -n 's/^0*\([0-9a-f]*\) T b_mix$/\1/p')
w=$(printf '%x' $((0x$w + 12)))
$ppc_objcopy --strip-symbol=b_mix "$fx/$sk.elf" "$tmp/weak.elf" || exit 1
$mk "$tmp/weak.elf" "$tmp/weak" --format stripped
$mk "$tmp/weak.elf" "$tmp/weak-nok" --format stripped --no-kallsyms --map "$tmp/weak.map"
table "$tmp/weak.elf" >"$tmp/weak.want"
if grep -qx "0x$w" "$tmp/weak.want" && ! nm "$tmp/weak.elf" | grep -q ' b_mix$' &&
	powerpc64le-linux-gnu-objdump -d "$tmp/weak.elf" | grep -A1 "^ *$(printf '%x' $((0x$w - 4))):.*mflr" |
	grep -q "^ *$w:.*bl .*<_mcount>"; then
	ok "weak leftover: 0x$w is \`mflr r0; bl _mcount\` with no symbol, and a table entry (objdump, nm)"
else
	not_ok "weak leftover: 0x$w is \`mflr r0; bl _mcount\` with no symbol, and a table entry (objdump, nm)"
fi
ps_check "weak leftover: audit of the ELF" 1 "$tmp/weak.elf.audit" -- audit "$tmp/weak.elf"
ps_check "weak leftover: record of the ELF" 0 "$tmp/weak.elf.rec" -- record "$tmp/weak.elf"
for how in kallsyms map; do
	case $how in
	kallsyms) img=$tmp/weak; set -- ;;
	map) img=$tmp/weak-nok; set -- --system-map="$tmp/weak.map" ;;
	esac
	if ps_run 1 "$tmp/got" -- audit "$@" "$img" &&
		grep -q "^stale: 0x$w ?: table entry is outside every sized function (code of an overridden weak function" "$tmp/got" &&
		[ "$(grep -c '^[a-z]*: 0x' "$tmp/got")" = 1 ] &&
		[ "$(grep '^summary' "$tmp/got")" = "$(grep '^summary' "$tmp/weak.elf.audit")" ]; then
		ok "weak leftover, stripped vmlinux ($how): stale as on the ELF, in the same words, not a site"
	else
		{ cat "$ps_msg"; diff "$tmp/got" "$tmp/weak.elf.audit"; } >"$tmp/d" 2>&1
		not_ok "weak leftover, stripped vmlinux ($how): stale as on the ELF, in the same words, not a site" "$tmp/d"
	fi
	if ps_run 0 "$tmp/got" -- record "$@" "$img" && cmp -s "$tmp/got" "$tmp/weak.elf.rec" &&
		! grep -qx "0x$w" "$tmp/got"; then
		ok "weak leftover, stripped vmlinux ($how): record = the ELF's, without it"
	else
		{ cat "$ps_msg"; diff "$tmp/got" "$tmp/weak.elf.rec"; } >"$tmp/d" 2>&1
		not_ok "weak leftover, stripped vmlinux ($how): record = the ELF's, without it" "$tmp/d"
	fi
done
if ps_run 0 "$tmp/got" -- audit --ignore=weak "$tmp/weak" &&
	grep -q "ignored: 1 stale (1 of them weak leftovers)" "$tmp/got"; then
	ok "weak leftover, stripped vmlinux: --ignore=weak passes it as on vmlinux"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "weak leftover, stripped vmlinux: --ignore=weak passes it as on vmlinux" "$tmp/d"
fi

# the build's config decides whether an unsorted table is a finding
printf 'CONFIG_FTRACE=y\nCONFIG_BUILDTIME_MCOUNT_SORT=y\n' >"$tmp/sorts.config"
printf 'CONFIG_FTRACE=y\n# CONFIG_BUILDTIME_MCOUNT_SORT is not set\n' >"$tmp/nosort.config"
$mk "$elf" "$tmp/uns" --unsorted
$mk "$elf" "$tmp/unsik" --unsorted --ikconfig "$tmp/sorts.config"
if ps_run 0 "$tmp/got" -- audit "$tmp/uns" && grep -q "0 unsorted" "$tmp/got" &&
	one_line "$ps_err" && grep -q "note: table '__start_mcount_loc' is not sorted" "$ps_err"; then
	ok "unsorted, no config: a note on stderr, not a finding (exit 0)"
else
	{ cat "$ps_msg"; cat "$tmp/got" "$ps_err"; } >"$tmp/d" 2>&1
	not_ok "unsorted, no config: a note on stderr, not a finding (exit 0)" "$tmp/d"
fi
if ps_run 1 "$tmp/got" -- audit --config="$tmp/sorts.config" "$tmp/uns" &&
	grep -q "^unsorted: .*not sorted (1 descents" "$tmp/got"; then
	ok "unsorted, --config with CONFIG_BUILDTIME_MCOUNT_SORT=y: a finding (exit 1)"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "unsorted, --config with CONFIG_BUILDTIME_MCOUNT_SORT=y: a finding (exit 1)" "$tmp/d"
fi
if ps_run 0 "$tmp/got" -- audit --config="$tmp/nosort.config" "$tmp/uns" &&
	grep -q "0 unsorted" "$tmp/got" && ! [ -s "$ps_err" ]; then
	ok "unsorted, a config without it: the kernel sorts at boot, no finding, no note"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "unsorted, a config without it: the kernel sorts at boot, no finding, no note" "$tmp/d"
fi
if ps_run 1 "$tmp/got" -- audit "$tmp/unsik" && grep -q "1 unsorted" "$tmp/got"; then
	ok "unsorted, the image's own IKCONFIG says the build sorts: a finding"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "unsorted, the image's own IKCONFIG says the build sorts: a finding" "$tmp/d"
fi
mkdir -p "$tmp/boot2"
cp "$tmp/uns" "$tmp/boot2/vmlinuz-6.12.0-mini"
cp "$tmp/sorts.config" "$tmp/boot2/config-6.12.0-mini"
if ps_run 1 "$tmp/got" -- audit "$tmp/boot2/vmlinuz-6.12.0-mini" && grep -q "1 unsorted" "$tmp/got"; then
	ok "unsorted, config-VERSION beside the image says the build sorts: a finding"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "unsorted, config-VERSION beside the image says the build sorts: a finding" "$tmp/d"
fi

# the build's config also says which ftrace layout the kernel expects
printf 'CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_DYNAMIC_FTRACE_WITH_ARGS=y\n' \
	>"$tmp/a64-args.config"
printf 'CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS=y\n' \
	>"$tmp/a64-callops.config"
printf 'CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_HAVE_FENTRY=y\n' >"$tmp/x86-calls.config"
printf 'CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_HAVE_FENTRY=y\nCONFIG_FTRACE_MCOUNT_USE_OBJTOOL=y\nCONFIG_HAVE_OBJTOOL_NOP_MCOUNT=y\n' \
	>"$tmp/x86-nop.config"
printf 'CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n# CONFIG_RISCV_ISA_C is not set\n' \
	>"$tmp/rv-noc.config"
img=$tmp/arm64-Image-gzip
if ps_run 0 "$tmp/got" -- audit --config="$tmp/a64-args.config" "$img" &&
	grep -q "^arm64 image: .*(-fpatchable-function-entry=2,0), as the build's config states (CONFIG_DYNAMIC_FTRACE_WITH_ARGS=y in " "$tmp/got" &&
	tail -n +2 "$tmp/got" | cmp -s - "$tmp/arm64.audit.tail" && ! [ -s "$ps_err" ]; then
	ok "config layout: an Image takes the layout its config states (WITH_ARGS: 2,0), the same findings"
else
	{ cat "$ps_msg"; cat "$tmp/got" "$ps_err"; } >"$tmp/d" 2>&1
	not_ok "config layout: an Image takes the layout its config states (WITH_ARGS: 2,0), the same findings" "$tmp/d"
fi
if ps_run 2 "$tmp/got" -- audit --config="$tmp/a64-callops.config" "$img" && one_line "$ps_err" &&
	grep -q "the build's config (CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS=y in .*-fpatchable-function-entry=4,2) does not match the code" "$ps_err" &&
	! [ -s "$tmp/got" ]; then
	ok "config layout: an Image whose code has another layout than its config (CALL_OPS): refused in one line"
else
	{ cat "$ps_msg"; cat "$tmp/got" "$ps_err"; } >"$tmp/d" 2>&1
	not_ok "config layout: an Image whose code has another layout than its config (CALL_OPS): refused in one line" "$tmp/d"
fi
if ps_run 2 "$tmp/got" -- audit --config="$tmp/rv-noc.config" "$tmp/riscv64-Image-none" && one_line "$ps_err" &&
	grep -q "the build's config (CONFIG_DYNAMIC_FTRACE=y, no CONFIG_RISCV_ISA_C .*-fpatchable-function-entry=2,0) does not match the code" "$ps_err"; then
	ok "config layout: a riscv64 Image built with C, a config without RISCV_ISA_C: refused in one line"
else
	{ cat "$ps_msg"; cat "$tmp/got" "$ps_err"; } >"$tmp/d" 2>&1
	not_ok "config layout: a riscv64 Image built with C, a config without RISCV_ISA_C: refused in one line" "$tmp/d"
fi
# an ELF kernel (vmlinux) has its layout from its DWARF; the config checks it: a finding
kelf=$fx/aarch64.elf
if ps_run 1 "$tmp/got" -- audit --config="$tmp/a64-callops.config" "$kelf" &&
	grep -q "^shifted: .*the build's config (CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS=y in .*) gives the compiler call-ops, 8 bytes of NOP before the symbol and 8 after (-fpatchable-function-entry=4,2), which ftrace expects; the 12 sites are patchable, 0 bytes of NOP before the symbol and 8 after (-fpatchable-function-entry=2,0)" "$tmp/got" &&
	grep -q "^summary: .* 1 shifted" "$tmp/got"; then
	ok "config layout: vmlinux (DWARF: 2,0) with a config that says CALL_OPS (4,2): one finding, in record's words"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "config layout: vmlinux (DWARF: 2,0) with a config that says CALL_OPS (4,2): one finding, in record's words" "$tmp/d"
fi
if ps_run 0 "$tmp/got" -- audit --config="$tmp/a64-args.config" "$kelf" && grep -q "^summary: .* 0 shifted" "$tmp/got"; then
	ok "config layout: vmlinux with a config that agrees (WITH_ARGS): no finding"
else
	not_ok "config layout: vmlinux with a config that agrees (WITH_ARGS): no finding" "$ps_msg"
fi
kelf=$fx/x86_64.elf
if ps_run 1 "$tmp/got" -- audit --config="$tmp/x86-nop.config" "$kelf" &&
	grep -q "^shifted: .*HAVE_OBJTOOL_NOP_MCOUNT=y in .*which ftrace expects; the [0-9]* sites are calls" "$tmp/got" &&
	ps_run 0 "$tmp/got2" -- audit --config="$tmp/x86-calls.config" "$kelf" && grep -q "^summary: .* 0 shifted" "$tmp/got2"; then
	ok "config layout: x86 calls to __fentry__ where the config says objtool NOPs them: a finding; HAVE_FENTRY alone: none"
else
	{ cat "$ps_msg"; cat "$tmp/got" "$tmp/got2"; } >"$tmp/d" 2>&1
	not_ok "config layout: x86 calls to __fentry__ where the config says objtool NOPs them: a finding; HAVE_FENTRY alone: none" "$tmp/d"
fi
if ps_run 0 "$tmp/got" -- audit "$tmp/x86_64-pad-gzip-6.12" && one_line "$ps_err" &&
	grep -q "note: no build config says which ftrace layout the kernel expects" "$ps_err"; then
	ok "config layout: a boot image with no config: one note, no finding"
else
	{ cat "$ps_msg"; cat "$ps_err"; } >"$tmp/d" 2>&1
	not_ok "config layout: a boot image with no config: one note, no finding" "$tmp/d"
fi

# a package in one call: boot/vmlinuz-* found in the directory
if ps_run 0 "$tmp/got" -- audit -v "$tmp/boot" && grep -q "vmlinuz-6.12.0-mini" "$tmp/got" &&
	grep -q "^total: 1 images" "$tmp/got"; then
	ok "audit DIR: the boot image in it is audited"
else
	{ cat "$ps_msg"; cat "$tmp/got"; } >"$tmp/d" 2>&1
	not_ok "audit DIR: the boot image in it is audited" "$tmp/d"
fi

# bad input: exit 2, one line, nothing on stdout
$mk "$elf" "$tmp/trunc" --truncate 3000
$mk "$elf" "$tmp/garbage" --payload-garbage
$mk "$elf" "$tmp/bomb" --bomb
$mk "$elf" "$tmp/corrupt" --corrupt-kallsyms
$mk "$elf" "$tmp/other" --no-kallsyms --map "$tmp/other.map" --map-shift 0x1000
bad() { # bad NAME WORDS IMAGE [OPTION]
	_n=$1 _w=$2 _i=$3
	shift 3
	if ps_run 2 "$tmp/got" -- audit "$@" "$_i" && one_line "$ps_err" && grep -q "$_w" "$ps_err" &&
		! [ -s "$tmp/got" ]; then
		ok "bad input: $_n (exit 2, one line)"
	else
		{ cat "$ps_msg"; cat "$ps_err"; } >"$tmp/d" 2>&1
		not_ok "bad input: $_n (exit 2, one line)" "$tmp/d"
	fi
}
bad "truncated bzImage" "truncated bzImage" "$tmp/trunc"
bad "payload not a compressed stream" "not a compressed stream" "$tmp/garbage"
bad "decompression bomb" "decompression bomb" "$tmp/bomb"
bad "corrupt kallsyms" "corrupt kallsyms" "$tmp/corrupt"
bad "no symbols" "no symbols" "$tmp/nok"
bad "System.map of another build" "not this image's" "$tmp/other" --system-map="$tmp/other.map"
$mk "$fx/riscv64-norelax.elf" "$tmp/rv-corrupt" --format riscv64 --comp none --corrupt-kallsyms
$mk "$fx/aarch64.elf" "$tmp/a64-other" --format arm64 --comp gzip --no-kallsyms \
	--map "$tmp/a64-other.map" --map-banner-shift 64
$mk "$elf" "$tmp/textonly" --text-only
bad "kallsyms of a build without KALLSYMS_ALL" "text symbols only .*--system-map" "$tmp/textonly"
bad "riscv64 Image, corrupt kallsyms" "corrupt kallsyms" "$tmp/rv-corrupt"
bad "riscv64 Image, no symbols" "no symbols" "$tmp/riscv64-nok"
bad "arm64 Image.gz, System.map of another build" "another build" "$tmp/a64-other" \
	--system-map="$tmp/a64-other.map"
cp "$tmp/$k-gzip-6.12" "$tmp/inplace"
cp "$tmp/inplace" "$tmp/inplace.orig"
if ps_run 2 /dev/null -- record --in-place "$tmp/inplace" && one_line "$ps_err" &&
	grep -q "boot image cannot be written in place" "$ps_err" && cmp -s "$tmp/inplace" "$tmp/inplace.orig"; then
	ok "record --in-place on a bzImage: refused in one line, file unchanged"
else
	{ cat "$ps_msg"; cat "$ps_err"; } >"$tmp/d" 2>&1
	not_ok "record --in-place on a bzImage: refused in one line, file unchanged" "$tmp/d"
fi
finish
